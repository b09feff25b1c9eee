// A 24-second chaos run in etcd mode (issue 32): the three-node cluster runs --coordination etcd on
// a three-member etcd started for the run, every node reaching etcd through proxies of its own.
// Seed 1571's faults, in order: SIGSTOP of the active for 2.9 s (longer than the 2 s etcd lease:
// a standby takes the role while the paused node still has clients), the active cut from etcd for
// 3.1 s (its lease runs out: it must stop granting before another node wins the role), kill -9 of
// the active, etcd's quorum lost (its leader and a follower killed) for 4.6 s; then, if the run
// has time left on a loaded machine, etcd's leader killed, a standby cut from etcd and the active
// cut from its peers (on a loaded machine the first four take the whole run). The checker
// excuses NO fault window in this mode: any two clients holding a lock at once, any token out of
// order or given twice, anywhere in the run, fails it. The run must really have exercised the
// cluster: etcd faults applied, failovers happened, grants of both protocols, writes.
// `npm run chaos -- --coordination etcd --seed N --duration 60s` runs longer ones with any seed.
import { describe, expect, it } from 'vitest';
import { runChaos } from './chaos-run.ts';
import { formatReport } from './report.ts';

const SEED = 1571;

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
    expect(counts.faultsByKind).toMatchObject({ pause: 1, 'etcd-cut': expect.any(Number), kill9: 1, 'etcd-quorum-loss': 1 });
    expect(counts.failovers, 'failovers on the timeline').toBeGreaterThanOrEqual(1);
    expect(counts.distinctTokens).toBe(counts.grants);
    expect(counts.keyedGrants).toBeGreaterThan(50);
    expect(counts.sessionGrants).toBeGreaterThan(50);
    expect(counts.writesAccepted).toBeGreaterThan(100);
  });
});
