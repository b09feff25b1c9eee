// A 20-second chaos run (issue 5): a three-node cluster on loopback, 20 clients of both protocols
// doing read-modify-write on the fenced resource, and a fixed seed's faults (a pause of the
// active longer than its lease, an API handoff, a client worker killed mid-hold, kill -9 of the
// active and a second one, each node restarted). The checker must find no violation, and the run
// must really have exercised the cluster: failovers happened, grants of both protocols, writes.
// `npm run chaos -- --seed N --duration 60s` runs longer ones with any seed.
import { describe, expect, it } from 'vitest';
import { runChaos } from './chaos-run.ts';
import { formatReport } from './report.ts';

const SEED = 20;

describe('chaos', () => {
  it('keeps fencing, mutual exclusion, token succession and liveness through 20 s of seeded faults', { timeout: 90_000 }, async () => {
    const result = await runChaos({ seed: SEED, durationMs: 20_000, requireSessionCarryover: true });
    console.log(formatReport(result, `npm run chaos -- --seed ${SEED} --duration 20s`));
    const { counts, violations } = result.verdict;
    expect(violations.map((v) => `[${v.property}] ${v.message}`)).toEqual([]);
    expect(result.unsettled).toEqual([]);
    expect(counts.faults, 'faults applied').toBeGreaterThanOrEqual(3);
    expect(counts.failovers, 'failovers on the timeline').toBeGreaterThanOrEqual(1);
    expect(counts.keyedGrants).toBeGreaterThan(50);
    expect(counts.sessionGrants).toBeGreaterThan(50);
    expect(counts.writesAccepted).toBeGreaterThan(100);
  });
});
