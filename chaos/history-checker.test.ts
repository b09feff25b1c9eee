import { describe, expect, it } from 'vitest';
import { checkHistory, type Property } from './history-checker.ts';
import type { ClientEvent, FaultWindow, History } from './history.ts';
import { failover, fault, history, hold, LEASE, lostSession, T0, write } from './history-fixtures.ts';

function properties(h: History): Property[] {
  return checkHistory(h).violations.map((v) => v.property);
}

describe('the chaos history checker', () => {
  it('finds nothing wrong in a clean history of handovers, writes, faults and a failover, and counts it', () => {
    const h = history({
      clientEvents: [...hold('k1', 'L', 10, 0, 100), ...hold('s1', 'L', 11, 100.5, 200, 'session'), ...hold('k2', 'L', 100_001, 3_000, 3_100)],
      writes: [write('L', 'k1', 10, 50, 'accepted', null, 0), write('L', 's1', 11, 150, 'accepted', 10, 1), write('L', 'k1', 10, 160, 'stale', 11, 2)],
      faults: [fault('kill9', 1_000, 2_000)],
      failovers: [failover(2_500, 'crash')],
    });
    const verdict = checkHistory(h);
    expect(verdict.violations).toEqual([]);
    expect(verdict.counts).toMatchObject({
      grants: 3,
      keyedGrants: 2,
      sessionGrants: 1,
      writesAccepted: 2,
      staleWritesRejected: 1,
      failovers: 1,
      faults: 1,
      faultsByKind: { kill9: 1 },
      excludedMs: 0,
      excludedShare: 0,
    });
  });

  describe('fencing', () => {
    it('fails when the resource accepted a token lower than one it accepted before', () => {
      const h = history({ writes: [write('L', 'k1', 20, 0, 'accepted', null), write('L', 'k2', 19, 10, 'accepted', 20, 1)] });
      expect(properties(h)).toEqual(['fencing']);
    });

    it('fails when a write was refused as stale though its token was not below the highest', () => {
      const h = history({ writes: [write('L', 'k1', 20, 0, 'accepted', null), write('L', 'k2', 21, 10, 'stale', 20, 1)] });
      expect(properties(h)).toEqual(['fencing']);
    });

    it('keeps each lock to its own highest token', () => {
      const h = history({ writes: [write('L', 'k1', 20, 0, 'accepted', null), write('M', 'k2', 5, 10, 'accepted', null)] });
      expect(properties(h)).toEqual([]);
    });
  });

  describe('mutual exclusion', () => {
    it('fails when two clients held the same lock at once', () => {
      const h = history({ clientEvents: [...hold('k1', 'L', 10, 0, 300), ...hold('s1', 'L', 11, 200, 400, 'session')] });
      const verdict = checkHistory(h);
      expect(verdict.violations.map((v) => v.property)).toEqual(['mutual-exclusion']);
      expect(verdict.violations[0]?.message).toMatch(/k1 .* and s1 .* held it at once for 100\.0 ms/);
    });

    it('does not fail an overlap inside a partition, or within peer timeout + a lease after the heal', () => {
      const h = history({
        clientEvents: [...hold('s1', 'L', 10, 1_000, 4_500, 'session'), ...hold('k2', 'L', 11, 4_000, 4_600)],
        faults: [fault('partition', 500, 3_000)],
      });
      expect(properties(h)).toEqual([]);
      // The same overlap with the partition a kill -9: not excluded.
      expect(properties(history({ ...h, faults: [fault('kill9', 500, 3_000)] }))).toEqual(['mutual-exclusion']);
    });

    it('counts the part of an overlap that lies past the excluded window', () => {
      const h = history({
        clientEvents: [...hold('s1', 'L', 10, 1_000, 6_500, 'session'), ...hold('s2', 'L', 11, 4_000, 6_900, 'session')],
        faults: [fault('partition', 500, 3_000)],
      });
      // The window ends at 3000 + 1000 (peer timeout) + 2000 (lease) = 6000.
      expect(checkHistory(h).violations[0]?.message).toMatch(/held it at once for 500\.0 ms/);
    });

    describe('pauses of the active', () => {
      /** s1 holds L from `from` until it notices its loss at `lostAt`; k2 holds it from `second` for 1 s. */
      const paused = (from: number, lostAt: number, second: number, pause: FaultWindow = fault('pause', 500, 3_500)): History =>
        history({
          clientEvents: [...lostSession('s1', 'L', 10, from, lostAt), ...hold('k2', 'L', 11, second, second + 1_000)],
          faults: [pause],
          failovers: [failover(1_500, 'crash')],
        });

      it('excuses only a hold granted before the pause, outlived by its own lease from the pause start, overlapping a grant made after it began', () => {
        // s1 granted at 400, the active paused at 500: s1 may count on it until 500 + 2000.
        const ok = checkHistory(paused(400, 2_450, 1_600));
        expect(ok.violations).toEqual([]);
        expect(ok.counts.pauseExcusedOverlaps).toBe(1);
        expect(ok.notes).toContainEqual(expect.stringMatching(/excused by a pause of the active .* s1 \(session, token 10, granted before the active paused/));
      });

      it('counts an overlap past the pause start + the lease, and one past SIGCONT', () => {
        expect(checkHistory(paused(400, 2_700, 1_600)).violations.map((v) => v.message)).toEqual([expect.stringMatching(/held it at once for 100\.0 ms/)]);
        // SIGCONT at 1800: the exemption ends there, even within the lease.
        expect(checkHistory(paused(400, 2_450, 1_600, fault('pause', 500, 1_800))).violations.map((v) => v.message)).toEqual([
          expect.stringMatching(/held it at once for 650\.0 ms/),
        ]);
      });

      it('gives no exemption to a grant made after the pause began, to two grants made before it, or to a pause of a standby', () => {
        // s1 granted at 600, after the pause began at 500 (by the paused node or anyone).
        expect(properties(paused(600, 2_450, 1_600))).toEqual(['mutual-exclusion']);
        // k2 granted at 450, before the pause: two grants of the node before it paused overlap.
        expect(properties(paused(400, 2_450, 450))).toEqual(['mutual-exclusion']);
        expect(properties(paused(400, 2_450, 1_600, { ...fault('pause', 500, 3_500), hitActive: false }))).toEqual(['mutual-exclusion']);
      });

      it('still leaves the pause out of the stranding check and of the count of excluded time', () => {
        const h = checkHistory(history({ faults: [fault('pause', 1_000, 3_000), fault('partition', 4_000, 5_000)] }));
        // Partition windows only: 4000..8000 (heal + peer timeout + lease). With pauses + a lease (for stranding): 1000..8000.
        expect(h.counts).toMatchObject({ excludedMs: 4_000, excludedShare: 4_000 / 60_000, faultWindowMs: 7_000 });
      });
    });

    it('ends a keyed hold at the end of its lease, and reports a starved holder past it apart only once the server may have expired it', () => {
      // k1 asked at 995, got it at 1000 and released only at 3500: its hold ends at 3000.
      const lapsed = hold('k1', 'L', 10, 1_000, 3_500);
      const verdict = checkHistory(history({ clientEvents: [...lapsed, ...hold('k2', 'L', 11, 2_998, 3_100)] }));
      expect(verdict.violations).toEqual([]);
      expect(verdict.counts.keyedLeaseLapses).toBe(1);
      expect(verdict.notes[0]).toMatch(/keyed lease lapsed .* k1 \(token 10\) .* k2 got token 11 2\.0 ms before/);
      // Before the request + the lease the server cannot have expired it: a violation.
      expect(properties(history({ clientEvents: [...lapsed, ...hold('k2', 'L', 11, 2_500, 2_600)] }))).toEqual(['mutual-exclusion']);
      // After its lease's end there is no overlap at all.
      expect(properties(history({ clientEvents: [...lapsed, ...hold('k2', 'L', 11, 3_050, 3_100)] }))).toEqual([]);
    });

    it("reports an overlap apart when the first holder's process stalled during it (or within the slack before), by at least the overlap less the slack", () => {
      // s1 held from 1000 and noticed its loss only at 1700; k2 got it at 1600: a 100 ms overlap.
      const firstStalled = (stall: [number, number] | null, client = 's1'): ClientEvent[] => [
        { kind: 'acquire', t: T0 + 995, client: 's1', lock: 'L', protocol: 'session' },
        { kind: 'grant', t: T0 + 1_000, client: 's1', lock: 'L', protocol: 'session', token: '10', leaseMs: LEASE },
        ...(stall === null ? [] : [{ kind: 'stall', t: T0 + stall[0], client, until: T0 + stall[1] } as ClientEvent]),
        { kind: 'lost', t: T0 + 1_700, client: 's1', lock: 'L', token: '10', reason: 'expired' },
        ...hold('k2', 'L', 11, 1_600, 1_800),
      ];
      const verdict = checkHistory(history({ clientEvents: firstStalled([1_400, 1_650]) }));
      expect(verdict.violations).toEqual([]);
      expect(verdict.counts.stalledClientOverlaps).toBe(1);
      expect(verdict.notes[0]).toMatch(
        /client process stalled .* s1 \(token 10\) did not run for 100 ms during .* 100\.0 ms overlap with k2 .* noticed its loss late/,
      );
      // Just inside: a stall of 1500..1600 counts 50 ms (1550..1600, the slack before the overlap): 50 + 50 >= 100.
      expect(properties(history({ clientEvents: firstStalled([1_500, 1_600]) }))).toEqual([]);
      // Just outside: 1500..1599 counts 49 ms.
      expect(properties(history({ clientEvents: firstStalled([1_500, 1_599]) }))).toEqual(['mutual-exclusion']);
      // No stall, or another client's stall, explains nothing.
      expect(properties(history({ clientEvents: firstStalled(null) }))).toEqual(['mutual-exclusion']);
      expect(properties(history({ clientEvents: firstStalled([1_400, 1_650], 'k9') }))).toEqual(['mutual-exclusion']);
    });

    it('does not let an early, unrelated stall of either holder excuse an overlap', () => {
      // k1 asked at 0 and stalled 100..1500, long before its grant (1600) and the overlap (1700..1800).
      const early: ClientEvent[] = [
        { kind: 'acquire', t: T0, client: 'k1', lock: 'L', protocol: 'keyed' },
        { kind: 'stall', t: T0 + 100, client: 'k1', until: T0 + 1_500 },
        { kind: 'grant', t: T0 + 1_600, client: 'k1', lock: 'L', protocol: 'keyed', token: '10', leaseMs: LEASE },
        { kind: 'release', t: T0 + 1_800, client: 'k1', lock: 'L', token: '10' },
      ];
      const k2 = (stall: [number, number] | null): ClientEvent[] => [
        { kind: 'acquire', t: T0 + 1_000, client: 'k2', lock: 'L', protocol: 'keyed' },
        ...(stall === null ? [] : [{ kind: 'stall', t: T0 + stall[0], client: 'k2', until: T0 + stall[1] } as ClientEvent]),
        { kind: 'grant', t: T0 + 1_700, client: 'k2', lock: 'L', protocol: 'keyed', token: '11', leaseMs: LEASE },
        { kind: 'release', t: T0 + 1_900, client: 'k2', lock: 'L', token: '11' },
      ];
      expect(properties(history({ clientEvents: [...early, ...k2(null)] }))).toEqual(['mutual-exclusion']);
      // The second holder's stall that ended 300 ms before its grant arrived explains nothing either.
      expect(properties(history({ clientEvents: [...early, ...k2([1_100, 1_400])] }))).toEqual(['mutual-exclusion']);
    });

    it("reports an overlap apart when the second holder stalled until (within the slack of) its grant's arrival: it read an old grant late", () => {
      const secondLate = (stallEnd: number | null): ClientEvent[] => [
        { kind: 'acquire', t: T0 + 1_000, client: 's2', lock: 'L', protocol: 'session' },
        ...(stallEnd === null ? [] : [{ kind: 'stall', t: T0 + 1_200, client: 's2', until: T0 + stallEnd } as ClientEvent]),
        { kind: 'grant', t: T0 + 1_650, client: 's2', lock: 'L', protocol: 'session', token: '9', leaseMs: LEASE },
        { kind: 'lost', t: T0 + 1_651, client: 's2', lock: 'L', token: '9', reason: 'REDIRECT' },
      ];
      const verdict = checkHistory(history({ clientEvents: [...hold('k1', 'L', 10, 1_500, 1_700), ...secondLate(1_650)] }));
      expect(verdict.violations).toEqual([]);
      expect(verdict.notes[0]).toMatch(/s2 \(token 9\) did not run for 450 ms until its grant arrived, 1\.0 ms overlap with k1 .* read an old grant late/);
      // Just inside: the stall ended 50 ms before the grant arrived. Just outside: 51 ms before.
      expect(properties(history({ clientEvents: [...hold('k1', 'L', 10, 1_500, 1_700), ...secondLate(1_600)] }))).toEqual([]);
      expect(properties(history({ clientEvents: [...hold('k1', 'L', 10, 1_500, 1_700), ...secondLate(1_599)] }))).toEqual(['mutual-exclusion']);
      expect(properties(history({ clientEvents: [...hold('k1', 'L', 10, 1_500, 1_700), ...secondLate(null)] }))).toEqual(['mutual-exclusion']);
    });

    it("counts a keyed lease lapse from the earliest the server could have granted: the later of the request and the previous hold's release", () => {
      // k1 asked at 50 and queued behind k0 (100..1200, released OK); its grant arrived at 1300 and
      // it ran past its lease (hold capped at 3300). The server cannot have granted it before 1200,
      // so it cannot have expired it before 3200 (the request + the lease would say 2050).
      const queued: ClientEvent[] = [
        ...hold('k0', 'L', 9, 100, 1_200),
        { kind: 'acquire', t: T0 + 50, client: 'k1', lock: 'L', protocol: 'keyed' },
        { kind: 'grant', t: T0 + 1_300, client: 'k1', lock: 'L', protocol: 'keyed', token: '10', leaseMs: LEASE },
        { kind: 'release', t: T0 + 3_500, client: 'k1', lock: 'L', token: '10' },
      ];
      const verdict = checkHistory(history({ clientEvents: [...queued, ...hold('k2', 'L', 11, 3_200, 3_400)] }));
      expect(verdict.violations).toEqual([]);
      expect(verdict.counts.keyedLeaseLapses).toBe(1);
      expect(properties(history({ clientEvents: [...queued, ...hold('k2', 'L', 11, 3_199, 3_400)] }))).toEqual(['mutual-exclusion']);
      expect(properties(history({ clientEvents: [...queued, ...hold('k2', 'L', 11, 2_500, 3_400)] }))).toEqual(['mutual-exclusion']);
    });

    describe('write conflicts (the resource saw two read-modify-writes interleave)', () => {
      // k1 (keyed, token 10) got L at 0 (asked at -5) and released only at 2500: its hold ends at
      // 2000 (the lease), and the server may have expired it from 1995. k2 (token 11) got L at
      // `k2At`, read 0; k1's late write (0 -> 1) landed at `k1WroteAt`; k2's write of 0 -> 1 at 2200
      // was refused as a conflict.
      const lapsed = (k2At: number, k1WroteAt: number): History =>
        history({
          clientEvents: [...hold('k1', 'L', 10, 0, 2_500), ...hold('k2', 'L', 11, k2At, 2_300)],
          writes: [write('L', 'k1', 10, k1WroteAt, 'accepted', null, 0), write('L', 'k2', 11, 2_200, 'conflict', 10, 0)],
        });

      it("notes a conflict whose other writer's keyed lease may have run out at the server (what fencing lets through), and counts it", () => {
        for (const [k2At, wroteAt] of [
          [1_996, 1_998],
          [2_050, 2_100],
        ] as const) {
          const verdict = checkHistory(lapsed(k2At, wroteAt));
          expect(verdict.violations, `${k2At}`).toEqual([]);
          expect(verdict.counts).toMatchObject({ conflicts: 1, conflictsExplained: 1 });
          expect(verdict.notes.find((n) => n.startsWith('write conflict'))).toMatch(
            /write conflict \(not a violation\): L: k2 \(token 11\) read 0 .* k1 \(token 10\) wrote at .*(lease ran out|may have expired its lease).*; no fault or failover within 3 s/,
          );
        }
      });

      it("makes a conflict a violation when the other writer's lease could not have run out yet, or nothing explains it", () => {
        // Just outside the lapse bound: k2 got it at 1994, before the server could expire k1's lease.
        const early = checkHistory(lapsed(1_994, 1_998));
        expect(early.violations.map((v) => v.property)).toEqual(['mutual-exclusion', 'mutual-exclusion']);
        expect(early.violations[1]?.message).toMatch(/^write conflict: L: k2 \(token 11\) read 0 .* k1 \(token 10\) wrote at .* while both held it/);
        expect(early.counts).toMatchObject({ conflicts: 1, conflictsExplained: 0 });
        // A killed keyed writer whose write landed after the kill, while the server still counted its lease.
        const killed: ClientEvent[] = [
          { kind: 'acquire', t: T0 - 5, client: 'k1', lock: 'L', protocol: 'keyed' },
          { kind: 'grant', t: T0, client: 'k1', lock: 'L', protocol: 'keyed', token: '10', leaseMs: LEASE },
          { kind: 'killed', t: T0 + 100, client: 'k1' },
        ];
        const inFlight = history({
          clientEvents: [...killed, ...hold('k2', 'L', 11, 120, 300)],
          writes: [write('L', 'k1', 10, 150, 'accepted', null, 0), write('L', 'k2', 11, 200, 'conflict', 10, 0)],
        });
        expect(checkHistory(inFlight).violations.map((v) => v.message)).toEqual([
          expect.stringMatching(/write conflict: .* outside its hold .* while the server could still count it/),
        ]);
        // Unrelated: two session holders that overlap outright, the conflict with them.
        const plain = history({
          clientEvents: [...hold('s1', 'L', 10, 0, 300, 'session'), ...hold('s2', 'L', 11, 200, 400, 'session')],
          writes: [write('L', 's1', 10, 250, 'accepted', null, 0), write('L', 's2', 11, 350, 'conflict', 10, 0)],
        });
        expect(properties(plain)).toEqual(['mutual-exclusion', 'mutual-exclusion']);
        // Two clients with one token.
        const same = history({
          clientEvents: [...hold('k1', 'L', 10, 0, 100), ...hold('k2', 'L', 10, 2_100, 2_300)],
          writes: [write('L', 'k1', 10, 2_150, 'accepted', null, 0), write('L', 'k2', 10, 2_200, 'conflict', 10, 0)],
        });
        expect(checkHistory(same).violations.map((v) => v.message)).toEqual([
          expect.stringMatching(/^token 10 was given twice: to k1 for L .* and to k2 for L/),
          expect.stringMatching(/with the same token/),
          expect.stringMatching(/k2 asked .* got token 10 .* not above token 10/),
        ]);
      });

      it('explains a conflict by a stall of the other writer during the overlap, within the same bound as the overlap', () => {
        // s1 (session, token 10) did not run from 1000 to `until` (its lease lapsed at the server), k2
        // got L at 1500 and read 0, s1 woke up, wrote 0 -> 1 at 1610 and noticed its loss at 1620.
        const stalled = (until: number): History =>
          history({
            clientEvents: [
              { kind: 'acquire', t: T0 - 5, client: 's1', lock: 'L', protocol: 'session' },
              { kind: 'grant', t: T0, client: 's1', lock: 'L', protocol: 'session', token: '10', leaseMs: LEASE },
              { kind: 'stall', t: T0 + 1_000, client: 's1', until: T0 + until },
              { kind: 'lost', t: T0 + 1_620, client: 's1', lock: 'L', token: '10', reason: 'expired' },
              ...hold('k2', 'L', 11, 1_500, 1_800),
            ],
            writes: [write('L', 's1', 10, 1_610, 'accepted', null, 0), write('L', 'k2', 11, 1_700, 'conflict', 10, 0)],
          });
        // The 120 ms overlap (1500..1620): the stall counts from 1450; to 1520 that is 70 ms, just enough.
        const inside = checkHistory(stalled(1_520));
        expect(inside.violations).toEqual([]);
        expect(inside.counts).toMatchObject({ conflicts: 1, conflictsExplained: 1, stalledClientOverlaps: 1 });
        expect(inside.notes).toContainEqual(expect.stringMatching(/write conflict \(not a violation\): .* s1 \(token 10\) did not run for 70 ms/));
        expect(properties(stalled(1_519))).toEqual(['mutual-exclusion', 'mutual-exclusion']);
      });

      it('does not count a conflict in an excluded window', () => {
        const h = history({
          clientEvents: [...hold('s1', 'L', 10, 0, 300, 'session'), ...hold('s2', 'L', 11, 200, 400, 'session')],
          writes: [write('L', 's1', 10, 250, 'accepted', null, 0), write('L', 's2', 11, 350, 'conflict', 10, 0)],
          faults: [fault('partition', 100, 150)],
        });
        const verdict = checkHistory(h);
        expect(verdict.violations).toEqual([]);
        expect(verdict.notes).toContainEqual(expect.stringMatching(/write conflict \(not a violation\): .* in an excluded window; near: partition a/));
      });
    });

    it('does not exclude a kill -9: an overlap across one is a violation', () => {
      const h = history({
        clientEvents: [...hold('k1', 'L', 10, 1_000, 2_500), ...hold('k2', 'L', 100_001, 2_200, 2_600)],
        faults: [fault('kill9', 1_100, 2_000)],
      });
      expect(properties(h)).toEqual(['mutual-exclusion']);
    });

    it('counts a session holder told of a handoff after the next grant as a violation (the old active ends its sessions before the successor can grant)', () => {
      const lostAt = (t: number): ClientEvent[] => [
        { kind: 'acquire', t: T0 + 900, client: 's1', lock: 'L', protocol: 'session' },
        { kind: 'grant', t: T0 + 1_000, client: 's1', lock: 'L', protocol: 'session', token: '10', leaseMs: LEASE },
        { kind: 'lost', t: T0 + t, client: 's1', lock: 'L', token: '10', reason: 'REDIRECT' },
      ];
      expect(
        properties(history({ clientEvents: [...lostAt(2_004), ...hold('k2', 'L', 100_001, 2_001, 2_100)], failovers: [failover(2_000, 'priority-return')] })),
      ).toEqual(['mutual-exclusion']);
      // Told before the next grant: no overlap.
      expect(
        properties(history({ clientEvents: [...lostAt(2_000), ...hold('k2', 'L', 100_001, 2_001, 2_100)], failovers: [failover(2_000, 'priority-return')] })),
      ).toEqual([]);
    });

    it('ends a hold when its client process was killed, and a session hold when its loss was noticed', () => {
      const killed: ClientEvent[] = [
        { kind: 'acquire', t: T0, client: 'k1', lock: 'L', protocol: 'keyed' },
        { kind: 'grant', t: T0 + 10, client: 'k1', lock: 'L', protocol: 'keyed', token: '10', leaseMs: LEASE },
        { kind: 'killed', t: T0 + 100, client: 'k1' },
      ];
      const lost: ClientEvent[] = [
        { kind: 'acquire', t: T0 + 2_000, client: 's1', lock: 'L', protocol: 'session' },
        { kind: 'grant', t: T0 + 2_010, client: 's1', lock: 'L', protocol: 'session', token: '12', leaseMs: LEASE },
        { kind: 'lost', t: T0 + 2_100, client: 's1', lock: 'L', token: '12', reason: 'gone' },
      ];
      const h = history({ clientEvents: [...killed, ...hold('k2', 'L', 11, 2_005, 2_050), ...lost, ...hold('k3', 'L', 13, 2_150, 2_200)] });
      // k2 (2005..2050) overlaps s1 (2010..2100): that one is real; k1's hold ended at its kill.
      expect(checkHistory(h).violations.map((v) => v.message)).toEqual([expect.stringMatching(/k2 .* and s1 .* for 40\.0 ms/)]);
    });
  });

  it('counts the share of the run excluded from the mutual-exclusion check (partition windows, each to heal + peer timeout + a lease, merged, within the run)', () => {
    const h = history({
      faults: [fault('partition', 1_000, 3_000), fault('partition', 4_000, 5_000), fault('kill9', 10_000, 12_000), fault('partition', 59_000, 61_000)],
    });
    // 1000..6000 and 4000..8000 (merged: 7000 ms) and 59000..60000 (the run ends at 60000): 8000 ms of 60000.
    expect(checkHistory(h).counts).toMatchObject({ excludedMs: 8_000, excludedShare: 8_000 / 60_000 });
  });

  describe('token succession', () => {
    it('fails when a token granted after a crash failover is not above every token granted before it', () => {
      // Two locks: the per-lock order check has nothing to compare; the succession check spans locks.
      const h = history({ clientEvents: [...hold('k1', 'L', 500, 0, 100), ...hold('k2', 'M', 400, 2_000, 2_100)], failovers: [failover(1_500, 'crash')] });
      expect(properties(h)).toEqual(['token-succession']);
    });

    it('checks handoffs too, but not a split brain or a failover during a partition', () => {
      const events = [...hold('k1', 'L', 500, 0, 100), ...hold('k2', 'M', 400, 2_000, 2_100)];
      expect(properties(history({ clientEvents: events, failovers: [failover(1_500, 'api-handoff')] }))).toEqual(['token-succession']);
      expect(properties(history({ clientEvents: events, failovers: [failover(1_500, 'split-brain')] }))).toEqual([]);
      expect(properties(history({ clientEvents: events, failovers: [failover(1_500, 'crash')], faults: [fault('partition', 1_000, 1_400)] }))).toEqual([]);
    });

    it('counts only grants asked for after the failover: an earlier request may get a token of the old active late', () => {
      // Token 400 of the old active, asked for before the failover, reached its client after it.
      const late: ClientEvent[] = [
        { kind: 'acquire', t: T0 + 1_300, client: 'k2', lock: 'M', protocol: 'keyed' },
        { kind: 'grant', t: T0 + 2_000, client: 'k2', lock: 'M', protocol: 'keyed', token: '400', leaseMs: LEASE },
        { kind: 'release', t: T0 + 2_050, client: 'k2', lock: 'M', token: '400' },
      ];
      const events = [...hold('k1', 'L', 401, 1_400, 1_450), ...late, ...hold('k3', 'L', 100_000, 1_600, 1_700)];
      expect(properties(history({ clientEvents: events, failovers: [failover(1_500, 'api-handoff')] }))).toEqual([]);
      // The same token for a request made after the failover cannot come from before it.
      expect(
        properties(
          history({
            clientEvents: [...hold('k1', 'L', 401, 1_400, 1_450), ...hold('k2', 'M', 400, 2_000, 2_050)],
            failovers: [failover(1_500, 'api-handoff')],
          }),
        ),
      ).toEqual(['token-succession']);
    });
  });

  describe('stranded locks', () => {
    it('fails when a client waited for a lock nobody held for longer than lease + failover bound + slack', () => {
      const waiting: ClientEvent[] = [
        { kind: 'acquire', t: T0 + 1_000, client: 'k2', lock: 'L', protocol: 'keyed' },
        { kind: 'grant', t: T0 + 9_000, client: 'k2', lock: 'L', protocol: 'keyed', token: '11', leaseMs: LEASE },
      ];
      const h = history({
        clientEvents: [...hold('k1', 'L', 10, 0, 500), ...waiting, { kind: 'release', t: T0 + 9_100, client: 'k2', lock: 'L', token: '11' }],
      });
      const verdict = checkHistory(h);
      expect(verdict.violations.map((v) => v.property)).toEqual(['stranded']);
      expect(verdict.counts.longestStrandedMs).toBe(8_000);
    });

    it('counts a failed acquire retried at once as one wait', () => {
      const events: ClientEvent[] = [
        { kind: 'acquire', t: T0, client: 'k2', lock: 'L', protocol: 'keyed' },
        { kind: 'acquire-failed', t: T0 + 4_000, client: 'k2', lock: 'L', reason: 'timeout' },
        { kind: 'acquire', t: T0 + 4_000, client: 'k2', lock: 'L', protocol: 'keyed' },
        { kind: 'acquire-failed', t: T0 + 8_000, client: 'k2', lock: 'L', reason: 'timeout' },
      ];
      expect(properties(history({ clientEvents: events }))).toEqual(['stranded']);
    });

    it('does not count the lease of a killed keyed holder, which the server keeps until it ends', () => {
      const killed: ClientEvent[] = [
        { kind: 'acquire', t: T0, client: 'k1', lock: 'L', protocol: 'keyed' },
        { kind: 'grant', t: T0 + 10, client: 'k1', lock: 'L', protocol: 'keyed', token: '10', leaseMs: LEASE },
        { kind: 'killed', t: T0 + 100, client: 'k1' },
      ];
      const waiting: ClientEvent[] = [
        { kind: 'acquire', t: T0 + 50, client: 'k2', lock: 'L', protocol: 'keyed' },
        { kind: 'grant', t: T0 + 6_500, client: 'k2', lock: 'L', protocol: 'keyed', token: '11', leaseMs: LEASE },
        { kind: 'release', t: T0 + 6_600, client: 'k2', lock: 'L', token: '11' },
      ];
      const verdict = checkHistory(history({ clientEvents: [...killed, ...waiting] }));
      expect(verdict.violations).toEqual([]);
      expect(verdict.counts.longestStrandedMs).toBe(4_490);
    });

    it('does not count time inside a pause', () => {
      const waiting: ClientEvent[] = [
        { kind: 'acquire', t: T0 + 1_000, client: 'k2', lock: 'L', protocol: 'keyed' },
        { kind: 'grant', t: T0 + 9_000, client: 'k2', lock: 'L', protocol: 'keyed', token: '11', leaseMs: LEASE },
        { kind: 'release', t: T0 + 9_100, client: 'k2', lock: 'L', token: '11' },
      ];
      expect(properties(history({ clientEvents: waiting, faults: [fault('pause', 1_000, 3_000)] }))).toEqual([]);
    });
  });

  describe('final state', () => {
    it('fails when a lock is still held or has waiters after the run', () => {
      expect(properties(history({ final: { active: 'a', locks: [{ name: 'L', holder: 'keyed 127.0.0.1:1 token 9', queueLength: 0 }] } }))).toEqual([
        'final-state',
      ]);
      expect(properties(history({ final: { active: 'a', locks: [{ name: 'L', holder: null, queueLength: 2 }] } }))).toEqual(['final-state']);
    });

    it('fails when there was no active node to ask', () => {
      expect(properties(history({ final: { active: null, locks: [], error: 'actives: []' } }))).toEqual(['final-state']);
    });
  });

  it('counts a keyed release answered STALE within its lease (a lost grant, or a retried release), with the faults near it', () => {
    const h = history({ clientEvents: hold('k1', 'L', 10, 1_000, 1_200, 'keyed', 'stale'), faults: [fault('kill9', 1_050, 2_000)] });
    const verdict = checkHistory(h);
    expect(verdict.counts.staleKeyedReleases).toBe(1);
    expect(verdict.notes[0]).toMatch(/keyed release answered STALE within the lease: L token 10 .* near: kill9 a/);
  });
});
