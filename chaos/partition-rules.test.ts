// The checker's rules for partitions (issue 26): a token given twice, or a lock's tokens going
// backwards as the resource sees them, fails a run even inside a partition; an overlap of two
// holders is allowed only inside a partition window (cut .. heal + peer timeout + a lease), and
// each one is counted in its window and reported.
import { describe, expect, it } from 'vitest';
import { checkHistory } from './history-checker.ts';
import { fault, history, hold, LEASE, T0, write } from './history-fixtures.ts';
import { formatPartitionWindow } from './partition-windows.ts';

/** A partition cut at `from` and healed at `to` (ms from T0), with what the nodes made of it. */
const cut = (from: number, to: number, observed = 'actives a+b before the heal') => ({
  ...fault('partition', from, to, 'a: the active cut from every peer'),
  observed,
});

describe('the chaos checker in partitions', () => {
  describe('no token given twice', () => {
    it('fails a run in which the two actives of a partition gave the same token (the case before token slots), partition or not', () => {
      // a, cut off, and b, promoted, both give 300001 (a to k1 for L, b to s2 for M).
      const h = history({
        clientEvents: [
          ...hold('k1', 'L', 300_001, 1_000, 1_200),
          ...hold('s2', 'M', 300_001, 1_100, 1_300, 'session'),
          ...hold('k3', 'L', 300_002, 1_300, 1_400),
        ],
        faults: [cut(500, 3_000)],
      });
      const verdict = checkHistory(h);
      expect(verdict.violations.map((v) => v.property)).toEqual(['token-unique']);
      expect(verdict.violations[0]?.message).toMatch(/^token 300001 was given twice: to k1 for L at .* and to s2 for M at /);
      expect(verdict.counts.distinctTokens).toBe(2);
    });

    it('passes tokens of two actives that never coincide (token slots), and counts them', () => {
      const h = history({
        clientEvents: [...hold('k1', 'L', 300_001, 1_000, 1_200), ...hold('s2', 'M', 400_001, 1_100, 1_300, 'session')],
        faults: [cut(500, 3_000)],
      });
      expect(checkHistory(h).violations).toEqual([]);
      expect(checkHistory(h).counts.distinctTokens).toBe(2);
    });
  });

  describe("no token going backwards on a lock's grant order as the resource sees it", () => {
    it('fails when the resource accepted a lower token after a higher one, even inside a partition window', () => {
      const h = history({
        clientEvents: [...hold('k1', 'L', 400_001, 1_000, 1_200), ...hold('k2', 'L', 300_005, 1_300, 1_500)],
        writes: [write('L', 'k1', 400_001, 1_100, 'accepted', null, 0), write('L', 'k2', 300_005, 1_400, 'accepted', 400_001, 1)],
        faults: [cut(500, 3_000)],
      });
      const verdict = checkHistory(h);
      expect(verdict.violations.map((v) => v.property)).toEqual(['fencing']);
      expect(verdict.violations[0]?.message).toMatch(/the resource accepted token 300005 from k2 after accepting 400001/);
    });

    it('fails when the resource accepted an equal token from a second client (one token, two holders), and allows the same holder to write again', () => {
      const twice = history({
        writes: [write('L', 'k1', 300_001, 1_100, 'accepted', null, 0), write('L', 's2', 300_001, 1_400, 'accepted', 300_001, 1)],
        faults: [cut(500, 3_000)],
      });
      expect(checkHistory(twice).violations.map((v) => v.message)).toEqual([
        expect.stringMatching(/L: the resource accepted token 300001 from s2 after accepting it from k1: one token, two holders/),
      ]);
      const again = history({
        writes: [write('L', 'k1', 300_001, 1_100, 'accepted', null, 0), write('L', 'k1', 300_001, 1_400, 'accepted', 300_001, 1)],
      });
      expect(checkHistory(again).violations).toEqual([]);
    });

    it('passes the interleaving fencing allows: the lower side refused as stale once the higher side wrote', () => {
      const h = history({
        clientEvents: [...hold('k1', 'L', 300_001, 1_000, 1_900), ...hold('s2', 'L', 400_001, 1_100, 1_800, 'session')],
        writes: [write('L', 's2', 400_001, 1_200, 'accepted', null, 0), write('L', 'k1', 300_001, 1_300, 'stale', 400_001, 0)],
        faults: [cut(500, 3_000)],
      });
      const verdict = checkHistory(h);
      expect(verdict.violations).toEqual([]);
      expect(verdict.counts).toMatchObject({ staleWritesRejected: 1, partitionOverlaps: 1 });
    });
  });

  describe('overlaps only inside partition windows', () => {
    it('fails an overlap outside any partition window', () => {
      const h = history({
        clientEvents: [...hold('k1', 'L', 10, 10_000, 10_300), ...hold('s2', 'L', 11, 10_200, 10_400, 'session')],
        faults: [cut(500, 3_000)],
      });
      const verdict = checkHistory(h);
      expect(verdict.violations.map((v) => v.property)).toEqual(['mutual-exclusion']);
      expect(verdict.counts.partitionOverlaps).toBe(0);
      expect(verdict.counts.partitionWindows.map((w) => w.overlaps)).toEqual([0]);
    });

    it('counts and reports each overlap inside a window with its window, and fails none of them', () => {
      const h = history({
        clientEvents: [
          // Window 1 (cut 1000, healed 3000): two overlaps, on L and on M.
          ...hold('k1', 'L', 300_001, 1_200, 1_800),
          ...hold('s2', 'L', 400_001, 1_500, 2_000, 'session'),
          ...hold('k3', 'M', 300_002, 2_000, 2_500),
          ...hold('s4', 'M', 400_002, 2_100, 2_200, 'session'),
          // Window 2 (cut 20000, healed 21000): one overlap, after the heal but within peer timeout + a lease.
          ...hold('k1', 'L', 300_010, 21_500, 22_000),
          ...hold('s2', 'L', 400_010, 21_600, 21_700, 'session'),
        ],
        faults: [cut(1_000, 3_000), cut(20_000, 21_000, 'active a before the heal'), fault('kill9', 40_000, 41_000)],
      });
      const verdict = checkHistory(h);
      expect(verdict.violations).toEqual([]);
      expect(verdict.counts.partitionOverlaps).toBe(3);
      expect(verdict.counts.partitionWindows.map((w) => [w.overlaps, w.overlapMs])).toEqual([
        [2, 300 + 100],
        [1, 100],
      ]);
      expect(verdict.counts.partitionWindows[1]).toMatchObject({ start: T0 + 20_000, heal: T0 + 21_000, end: T0 + 21_000 + 1_000 + LEASE });
      expect(verdict.notes.filter((n) => n.startsWith('overlap inside partition window #1'))).toHaveLength(2);
      expect(verdict.notes).toContainEqual(
        expect.stringMatching(
          /^overlap inside partition window #2 .*: L: k1 \(keyed, token 300010\) and s2 \(session, token 400010\) held it at once for 100\.0 ms/,
        ),
      );
      expect(formatPartitionWindow(verdict.counts.partitionWindows[0] as never, 0, T0)).toBe(
        '#1 +1.0s..+3.0s (allowed until +6.0s) a: the active cut from every peer; actives a+b before the heal: 2 overlaps, 400.0 ms in all',
      );
    });

    it("counts an overlap that begins in one window's tail and the next one's cut with the later cut", () => {
      const h = history({
        clientEvents: [...hold('k1', 'L', 300_001, 4_000, 4_500), ...hold('s2', 'L', 400_001, 4_200, 4_300, 'session')],
        // The first window runs to 3000 + 1000 + 2000 = 6000; the second is cut at 3500.
        faults: [cut(1_000, 3_000), cut(3_500, 5_000, 'actives a+b+c before the heal')],
      });
      const verdict = checkHistory(h);
      expect(verdict.violations).toEqual([]);
      expect(verdict.counts.partitionWindows.map((w) => w.overlaps)).toEqual([0, 1]);
    });

    it('ends a window at heal + peer timeout + the longest lease: an overlap just past it fails', () => {
      // Healed at 3000: the window ends at 6000.
      const overlapUntil = (end: number) =>
        history({
          clientEvents: [...hold('s1', 'L', 10, 5_000, end, 'session'), ...hold('s2', 'L', 11, 5_500, end + 100, 'session')],
          faults: [cut(500, 3_000)],
        });
      expect(checkHistory(overlapUntil(6_000)).violations).toEqual([]);
      expect(checkHistory(overlapUntil(6_000)).counts.partitionOverlaps).toBe(1);
      expect(checkHistory(overlapUntil(6_010)).violations.map((v) => v.message)).toEqual([expect.stringMatching(/held it at once for 10\.0 ms/)]);
    });
  });
});
