import { describe, expect, it } from 'vitest';
import { adminOpToWire, lockNameSchema } from '../ops-api/admin-request.ts';
import { decodePeerMessage, encodePeerMessage } from './peer-messages.ts';

describe('the peer protocol’s admin message', () => {
  it('arrives with its op read: the token a bigint again, the name checked', () => {
    const op = { op: 'force-release', lock: lockNameSchema.parse('jobs/nightly'), token: 18446744073709551615n } as const;
    const line = encodePeerMessage({ t: 'admin', req: 7, who: 'bearer:admin', op: adminOpToWire(op) }).trimEnd();
    expect(decodePeerMessage(line)).toEqual({ ok: true, message: { t: 'admin', req: 7, who: 'bearer:admin', op: { ok: true, op } } });
  });

  it('arrives with the refusal when its op does not read, so the active answers it instead of dropping the link', () => {
    const line = JSON.stringify({ t: 'admin', req: 8, who: 'bearer:admin', op: { op: 'force-release', lock: 'two words', token: null } });
    expect(decodePeerMessage(line)).toEqual({
      ok: true,
      message: {
        t: 'admin',
        req: 8,
        who: 'bearer:admin',
        op: { ok: false, error: 'invalid-input', detail: expect.stringMatching(/^unreadable admin operation: lock: /) },
      },
    });
  });
});
