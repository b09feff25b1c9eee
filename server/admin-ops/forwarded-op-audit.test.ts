// The active node's audit of a forwarded op, recorded into a plain list: the op's own entry
// under the standby's caller, then one force-release entry per lock a bulk release freed.
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../lib/ops-api/api-types.ts';
import { clientMatchTextSchema, lockNameSchema } from '../../lib/ops-api/admin-request.ts';
import { auditForwardedOp } from './forwarded-op-audit.ts';

function recorder() {
  const entries: Array<Omit<AuditEntry, 'at'>> = [];
  return { entries, audit: { record: (e: Omit<AuditEntry, 'at'>) => void entries.push(e) } };
}

describe('auditForwardedOp', () => {
  it('records a force-release under the caller the standby named, target and outcome as the standby records them', () => {
    const { entries, audit } = recorder();
    auditForwardedOp(
      audit,
      'bearer:admin',
      { op: 'force-release', lock: lockNameSchema.parse('jobs/a'), token: 7n },
      { ok: true, body: {}, detail: 'token 7' },
    );
    expect(entries).toEqual([{ who: 'bearer:admin', action: 'force-release', target: 'jobs/a', result: 'ok', detail: 'token 7' }]);
  });

  it('records a refused op with its error name', () => {
    const { entries, audit } = recorder();
    auditForwardedOp(audit, 'session:x1', { op: 'kick', lock: lockNameSchema.parse('b'), claimId: 4 }, { ok: false, error: 'not-found', detail: 'no claim 4' });
    expect(entries).toEqual([{ who: 'session:x1', action: 'kick', target: 'b', result: 'not-found', detail: 'no claim 4' }]);
  });

  it('records a bulk release by client, then one force-release per lock it freed', () => {
    const { entries, audit } = recorder();
    const client = { by: 'identity' as const, value: clientMatchTextSchema.parse('worker-7') };
    auditForwardedOp(
      audit,
      'bearer:admin',
      { op: 'release-client', client, tokens: [1n, 2n] },
      {
        ok: true,
        body: {},
        detail: 'released 2',
        audits: [
          { target: 'a', detail: 'token 1' },
          { target: 'b', detail: 'token 2' },
        ],
      },
    );
    expect(entries.map((e) => [e.action, e.result, e.detail])).toEqual([
      ['release-client', 'ok', 'released 2'],
      ['force-release', 'ok', 'token 1'],
      ['force-release', 'ok', 'token 2'],
    ]);
    expect(entries[0]?.target).toBe('identity worker-7');
    expect(entries.slice(1).map((e) => [e.who, e.target])).toEqual([
      ['bearer:admin', 'a'],
      ['bearer:admin', 'b'],
    ]);
  });
});
