// A 24-second chaos run in etcd mode (issue 32): the three-node cluster runs --coordination etcd on
// a three-member etcd started for the run, every node reaching etcd through proxies of its own.
// Seed 4926's faults, in order: the active black-holed from etcd for 4.1 s (its connections
// silent, only timeouts tell; the 2 s lease runs out: it must stop granting before another node
// wins the role), etcd's quorum lost (its leader and a follower killed) for 4.9 s, kill -9 of the
// active; then, when a loaded machine leaves the run time for it (each fault waits for the cluster
// to settle), the peers' messages to the active held one way for 1.8 s. The checker
// excuses NO fault window in this mode: any two clients holding a lock at once, any token out of
// order or given twice, anywhere in the run, fails it. The run must really have exercised the
// cluster: etcd faults applied, failovers happened, grants of both protocols, writes.
// `npm run chaos -- --coordination etcd --seed N --duration 60s` runs longer ones with any seed.
import { describe, expect, it } from 'vitest';
import { runChaos } from './chaos-run.ts';
import { formatReport } from './report.ts';

const SEED = 4926;

describe('chaos in etcd mode', () => {
  it('holds mutual exclusion, fencing, unique increasing tokens and liveness with no fault window excused, through 24 s of seeded faults', {
    timeout: 120_000,
  }, async () => {
    const result = await runChaos({ seed: SEED, durationMs: 24_000, requireSessionCarryover: true, coordination: 'etcd', etcdLeaseTtlS: 2 });
    const report = formatReport(result, `npm run chaos -- --coordination etcd --etcd-lease-ttl 2 --seed ${SEED} --duration 24s`);
    console.log(report);
    const { counts, violations } = result.verdict;
    expect(violations.map((v) => `[${v.property}] ${v.message}`)).toEqual([]);
    expect(result.unsettled).toEqual([]);
    expect(counts.etcdMode).toBe(true);
    expect(counts.excludedMs, 'nothing excused').toBe(0);
    expect(counts.partitionOverlaps + counts.pauseExcusedOverlaps).toBe(0);
    expect(counts.faultsByKind).toMatchObject({ 'etcd-cut': 1, 'etcd-quorum-loss': 1, kill9: 1 });
    expect(counts.failovers, 'failovers on the timeline').toBeGreaterThanOrEqual(1);
    expect(counts.distinctTokens).toBe(counts.grants);
    expect(counts.keyedGrants).toBeGreaterThan(50);
    expect(counts.sessionGrants).toBeGreaterThan(50);
    expect(counts.writesAccepted).toBeGreaterThan(100);
  });
});
