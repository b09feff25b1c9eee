import { describe, expect, it } from 'vitest';
import { faultSchedule, PARTITION_SHAPES, type ScheduledFault } from './fault-schedule.ts';

const options = (seed: number) => ({ seed, durationMs: 60_000, leaseMs: 2_000, clientGroups: 4, peerTimeoutMs: 1_000 });
const partitions = (faults: ScheduledFault[]) => faults.filter((f): f is Extract<ScheduledFault, { kind: 'partition' }> => f.kind === 'partition');

describe('the chaos fault schedule', () => {
  it('replays the same faults for the same seed, and others for another', () => {
    expect(faultSchedule(options(7))).toEqual(faultSchedule(options(7)));
    expect(faultSchedule(options(7))).not.toEqual(faultSchedule(options(8)));
  });

  it('draws every partition shape over some seeds: cuts both ways and one way, minority and majority, flapping, during a handoff', () => {
    const drawn = new Set<string>();
    for (let seed = 0; seed < 40; seed++) for (const p of partitions(faultSchedule(options(seed)))) drawn.add(p.shape);
    expect([...drawn].sort()).toEqual([...PARTITION_SHAPES].sort());
  });

  it('flaps with cuts both shorter and longer than the peer timeout, and cuts a handoff within 30 ms of its request', () => {
    const all = Array.from({ length: 40 }, (_, seed) => partitions(faultSchedule(options(seed)))).flat();
    const cuts = all.filter((p) => p.shape === 'flap').flatMap((p) => p.cycles.map((c) => c.cutMs));
    expect(cuts.some((ms) => ms < 1_000)).toBe(true);
    expect(cuts.some((ms) => ms > 1_000)).toBe(true);
    for (const p of all.filter((f) => f.shape === 'flap')) expect(p.forMs).toBe(p.cycles.reduce((t, c) => t + c.cutMs + c.healMs, 0));
    for (const p of all.filter((f) => f.shape === 'handoff')) expect(p.cutAfterMs).toBeLessThanOrEqual(30);
    for (const p of all.filter((f) => f.shape === 'minority')) expect([0, 1]).toContain(p.standby);
  });
});
