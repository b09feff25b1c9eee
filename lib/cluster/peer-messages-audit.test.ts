import { describe, expect, it } from 'vitest';
import { decodePeerMessage, encodePeerMessage, MAX_AUDIT_BATCH } from './peer-messages.ts';

const entry = (n: number) => ({ at: n, who: 'bearer:admin', action: 'kick', target: `t${n}`, result: 'ok', detail: null, node: 'a', id: `a/i/${n}` });
const line = (entries: unknown[]) => JSON.stringify({ t: 'audit', entries });

describe('the peer protocol’s audit message', () => {
  it('carries up to 200 entries and decodes as it was sent', () => {
    const entries = Array.from({ length: MAX_AUDIT_BATCH }, (_, i) => entry(i));
    const decoded = decodePeerMessage(line(entries));
    expect(decoded).toEqual({ ok: true, message: { t: 'audit', entries } });
    if (decoded.ok && decoded.message.t === 'audit') expect(decodePeerMessage(encodePeerMessage(decoded.message).trimEnd())).toEqual(decoded);
  });

  it('refuses a batch over 200 entries', () => {
    expect(decodePeerMessage(line(Array.from({ length: MAX_AUDIT_BATCH + 1 }, (_, i) => entry(i)))).ok).toBe(false);
  });

  it('refuses entries with an unbounded field, an unknown action, an extra field, or no node or id', () => {
    expect(decodePeerMessage(line([{ ...entry(1), detail: 'x'.repeat(2049) }])).ok).toBe(false);
    expect(decodePeerMessage(line([{ ...entry(1), target: 'x'.repeat(1025) }])).ok).toBe(false);
    expect(decodePeerMessage(line([{ ...entry(1), who: 'x'.repeat(257) }])).ok).toBe(false);
    expect(decodePeerMessage(line([{ ...entry(1), action: 'drop-table' }])).ok).toBe(false);
    expect(decodePeerMessage(line([{ ...entry(1), extra: 1 }])).ok).toBe(false);
    const { node: _node, ...noNode } = entry(1);
    expect(decodePeerMessage(line([noNode])).ok).toBe(false);
    const { id: _id, ...noId } = entry(1);
    expect(decodePeerMessage(line([noId])).ok).toBe(false);
  });
});
