// A 20-second chaos run (issues 5 and 26): a three-node cluster on loopback, 20 clients of both
// protocols doing read-modify-write on the fenced resource, and a fixed seed's faults (the active
// cut from every peer both ways, an API handoff, kill -9 of the active, a one-way cut of the
// peers' messages to the active, SIGTERM of the active; each undone). The checker must find no
// violation, and the run
// must really have exercised the cluster: failovers happened, the partitions were applied and
// made a split brain (so they cannot silently become no-ops), grants of both protocols, writes.
// `npm run chaos -- --seed N --duration 60s` runs longer ones with any seed.
import { describe, expect, it } from 'vitest';
import { runChaos } from './chaos-run.ts';
import { formatReport } from './report.ts';

// Seed 179 (a handoff cut off 11 ms after its request, then a one-way cut) served until the
// partial-table rule (docs/cluster.md, "A join cut short"): the old active, following its
// successor and not yet synced, no longer takes the role back with an empty table, so neither
// cut makes two actives any more. 320 cuts the active from every peer, which still does.
const SEED = 320;

describe('chaos', () => {
  it('keeps fencing, unique tokens, mutual exclusion outside partition windows, token succession and liveness through 20 s of seeded faults', {
    timeout: 90_000,
  }, async () => {
    const result = await runChaos({ seed: SEED, durationMs: 20_000, requireSessionCarryover: true });
    const report = formatReport(result, `npm run chaos -- --seed ${SEED} --duration 20s`);
    console.log(report);
    const { counts, violations } = result.verdict;
    expect(violations.map((v) => `[${v.property}] ${v.message}`)).toEqual([]);
    expect(result.unsettled).toEqual([]);
    expect(counts.faults, 'faults applied').toBeGreaterThanOrEqual(3);
    expect(counts.failovers, 'failovers on the timeline').toBeGreaterThanOrEqual(1);
    // The partitions happened: both windows are in the report with what the nodes made of them,
    // and at least one cut made two actives (a split brain, resolved at the heal).
    expect(counts.partitionWindows.map((w) => w.target)).toEqual([
      expect.stringMatching(/the active cut from every peer, both ways$/),
      expect.stringMatching(/one way: the peers' messages to the active held/),
    ]);
    for (const w of counts.partitionWindows) expect(w.observed).toMatch(/^(no active|actives? [a-c+]+) before the heal$/);
    expect(report).toMatch(/partition windows \(.*\): 2, overlaps inside them: \d+\n {2}#1 .*\n {2}#2 /);
    expect(counts.failoversByCause['split-brain'] ?? 0, 'split brains healed').toBeGreaterThanOrEqual(1);
    expect(counts.distinctTokens).toBe(counts.grants);
    expect(counts.keyedGrants).toBeGreaterThan(50);
    expect(counts.sessionGrants).toBeGreaterThan(50);
    expect(counts.writesAccepted).toBeGreaterThan(100);
  });
});
