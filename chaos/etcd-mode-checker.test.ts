// The checker in etcd mode (history.coordination set): the same histories that the default mode
// excuses (an overlap inside a partition window, one excused by a pause of the active, a token out
// of order in a partition, a split brain's token succession) are violations there, while the
// client-side reports (a starved keyed holder past its lease) stay as they are, and liveness still
// leaves out the time etcd was out of a node's reach.
import { describe, expect, it } from 'vitest';
import { checkHistory } from './history-checker.ts';
import type { History } from './history.ts';
import { failover, fault, history, hold, lostSession } from './history-fixtures.ts';

const ETCD = { mode: 'etcd', leaseTtlMs: 2_000 } as const;

/** The violated properties of `h` as the default mode checks it, and as etcd mode does. */
function bothModes(h: History): { peers: string[]; etcd: string[] } {
  const props = (x: History) => checkHistory(x).violations.map((v) => v.property);
  return { peers: props(h), etcd: props({ ...h, coordination: ETCD }) };
}

describe('the chaos checker in etcd mode', () => {
  it('fails an overlap inside a partition window, which the default mode allows', () => {
    const h = history({
      clientEvents: [...hold('s1', 'L', 10, 1_000, 4_500, 'session'), ...hold('k2', 'L', 11, 4_000, 4_600)],
      faults: [fault('partition', 500, 3_000)],
    });
    expect(bothModes(h)).toEqual({ peers: [], etcd: ['mutual-exclusion'] });
    const verdict = checkHistory({ ...h, coordination: ETCD });
    expect(verdict.counts.etcdMode).toBe(true);
    expect(verdict.counts.excludedMs).toBe(0);
    expect(verdict.violations[0]?.message).toMatch(/s1 .* and k2 .* held it at once for 500\.0 ms/);
  });

  it('fails an overlap that a pause of the active excuses in the default mode', () => {
    const h = history({
      clientEvents: [...lostSession('s1', 'L', 10, 400, 2_450), ...hold('k2', 'L', 11, 1_600, 2_600)],
      faults: [fault('pause', 500, 3_500)],
      failovers: [failover(1_500, 'crash')],
    });
    expect(bothModes(h)).toEqual({ peers: [], etcd: ['mutual-exclusion'] });
    expect(checkHistory({ ...h, coordination: ETCD }).counts.pauseExcusedOverlaps).toBe(0);
  });

  it('fails a token out of order inside a partition window', () => {
    // k2 asked at 1195, after k1's grant of token 20 arrived, and got 15.
    const h = history({ clientEvents: [...hold('k1', 'L', 20, 1_000, 1_100), ...hold('k2', 'L', 15, 1_200, 1_300)], faults: [fault('partition', 500, 3_000)] });
    expect(bothModes(h)).toEqual({ peers: [], etcd: ['token-order'] });
  });

  it("checks a split brain's failover for token succession, which the default mode leaves out", () => {
    // Different locks: only the succession across the failover at 2000 relates the two tokens.
    const h = history({
      clientEvents: [...hold('k1', 'L', 50, 1_000, 1_100), ...hold('k2', 'M', 40, 2_500, 2_600)],
      failovers: [failover(2_000, 'split-brain')],
    });
    expect(bothModes(h)).toEqual({ peers: [], etcd: ['token-succession'] });
  });

  it('still reports a starved keyed holder past its own lease apart', () => {
    const h = history({ clientEvents: [...hold('k1', 'L', 10, 1_000, 3_500), ...hold('k2', 'L', 11, 2_998, 3_100)] });
    expect(bothModes(h)).toEqual({ peers: [], etcd: [] });
    expect(checkHistory({ ...h, coordination: ETCD }).counts.keyedLeaseLapses).toBe(1);
  });

  it('leaves etcd out of reach (quorum lost) out of the liveness check only, and adds the etcd lease TTL to its bound', () => {
    // Waiting for L from 1000 to 16000 with nobody holding it: 15 s (the etcd-mode bound is 9 s).
    const waiting = [
      { kind: 'acquire', t: fault('kill9', 1_000, 0).start, client: 'w', lock: 'L', protocol: 'keyed' } as const,
      { kind: 'acquire-failed', t: fault('kill9', 16_000, 0).start, client: 'w', lock: 'L', reason: 'timeout' } as const,
    ];
    const quorumLost = history({ clientEvents: waiting, faults: [fault('etcd-quorum-loss', 900, 8_000)] });
    expect(bothModes(quorumLost)).toEqual({ peers: ['stranded'], etcd: [] });
    // A member killed for a moment excuses only its own window + a lease + the TTL.
    expect(bothModes({ ...quorumLost, faults: [fault('etcd-member-kill', 900, 1_000)] }).etcd).toEqual(['stranded']);
    const counts = checkHistory({ ...quorumLost, coordination: ETCD }).counts;
    expect(counts.strandBoundMs).toBe(checkHistory(quorumLost).counts.strandBoundMs + 2_000);
  });
});
