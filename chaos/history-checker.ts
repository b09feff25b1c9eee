// The chaos run's verdict: a pure function from the recorded history to the violations of the
// five properties and the counts printed with them. Definitions (also in the run's report):
//
// 1. Fencing held, and no token went backwards as the resource saw them: per lock, the tokens of
//    the accepted writes, in the order the resource accepted them, strictly increase, except the
//    same client writing again with its own token (an equal token from another client is a token
//    given twice); every write refused as stale had a token below the highest accepted at that
//    moment (the recorded history is checked, not the resource's word).
// 2. Mutual exclusion: per lock, no two client-observed holds (grant arrived -> release about to
//    be sent, loss noticed, or process killed) of different clients overlap, except where the
//    overlap lies inside partition windows (cut .. heal + peer timeout + the longest lease; a
//    split brain: no quorum; partition-windows.ts says why that bound): each such overlap is
//    counted in its window and printed, not failed. Or it is excused by a pause of the active: only a hold granted before
//    the pause began, overlapping a grant made after it began, from the pause's start until the
//    first holder's lease counted from there ran out (and no later than SIGCONT; see
//    pauseExemption in mutual-exclusion.ts). Grants made after a pause began get no other
//    exemption. kill -9, SIGTERM, API handoffs and killed clients are NOT excluded. A keyed hold also ends when its lease runs
//    out (from when the grant arrived). Two cases are reported apart, bounded, not hidden:
//    (a) a keyed holder whose process ran past its lease (a starved client) overlapping a grant
//    made when the server may already have expired it: no earlier than the earliest the server
//    could have granted the first hold (the later of its request and the end of the previous
//    hold of that lock that the server cannot have freed before: a release answered OK within
//    its lease, or a killed session) + the lease; (b) an overlap that a stall of a holder's
//    process (it did not run; STALL_SLACK_MS below) explains, the stall being at least the
//    overlap less the slack: for the first holder, only the part of its stalls within the
//    overlap or the slack before it (it noticed its loss late); for the second, only a stall that
//    contains its grant's arrival or ended within the slack before it (it read an old grant
//    late), counted from its request. Earlier stalls explain nothing.
//    The resource's evidence too: a write conflict (the value moved between a client's read and
//    its write) means another client's accepted write W landed while the conflicting client C
//    held the lock. W's token is never above C's (else C's write would be stale), so this is
//    what fencing lets through when W no longer held the lock and C had not written yet. A
//    conflict is reported in the notes, and is a violation unless, for every such W (by another
//    client): W or C's write lies in an excluded window; or W's hold and C's overlap and that
//    overlap is excluded or reported apart as (a) or (b) above; or W's hold ended before W
//    landed and W's keyed lease may have run out at the server by then (the bound of (a)).
//    An equal token of two clients, an overlap that is itself a violation, or a write landing
//    while the server still counted W's keyed lease, is a violation.
// 3. Tokens across failovers: for every failover on the nodes' timeline that is not a split
//    brain and did not happen in an excluded window, every token granted for a request made
//    after the failover (until the next pause or partition) is above every token any client had
//    received before it. Only requests made after it count: a grant the old active made before
//    it stopped may reach its client after the failover (seen 500 ms late on a loaded machine).
// 4. Nothing stranded: per lock, the time during which some client was waiting for it and no
//    client held it (nor could the server still hold it for someone: a keyed grant without an
//    OK release counts until its lease ends) never lasts longer than the longest lease + the
//    failover bound (2.5 peer timeouts + 500 ms: detection, discovery, promotion) + SLACK_MS,
//    not counting time inside excluded windows.
// 5. Final state: after every client stopped and the leases ran out, the active node shows no
//    holder and no waiter on any lock.
// 6. Token order (token-order.ts): per lock, a grant asked for after an earlier grant of it had
//    arrived has a higher token, over the whole run, pauses and failovers included (partitions
//    + a lease left out).
// 8. No token given twice (token-uniqueness.ts): no two grants of the run, on any locks, carry
//    the same token, partitions included.
// 7. Session carry-over (session-carryover.ts), only with `requireSessionCarryover`: no session
//    claim that spanned a planned handoff (SIGTERM, API handoff, priority return) was lost to it.
//    Without the option the counts are reported and nothing fails.
//
// etcd mode (history.coordination set, `--coordination etcd`): the cluster promises that a node
// cut off (from its peers or from etcd) stops granting before anyone else may, and answers only
// what an electable standby holds, so NO window is excused: partition windows and pauses of the
// active are not left out of properties 2, 3 and 6 (an overlap inside one is a violation, as is a
// token out of order there), and split-brain failovers are checked for succession like any other.
// What is still reported apart concerns the clients, not the cluster: a keyed holder that ran past
// its own lease (a), and a client process that did not run (b). Only the liveness check (4) leaves
// out the faults that make etcd unavailable to a node (a cut, a killed member, quorum lost: no
// grants is then the promise) plus a lease and the etcd lease TTL, and its failover bound adds the
// etcd lease TTL (a dead active's role frees only when its etcd lease runs out).
import type { FailoverView } from '../lib/ops-api/api-types.ts';
import { ETCD_FAULT_KINDS, type FaultKind, type History } from './history.ts';
import { foldClientEvents, type Hold } from './holds.ts';
import { covers, intersect, subtract, totalLength, union, type Interval } from './intervals.ts';
import { sessionCarryover, type Carryover } from './session-carryover.ts';
import { checkTokenOrder } from './token-order.ts';
import type { Violation } from './violation.ts';
import { byLock, checkMutualExclusion, classifyOverlap, earliestGrants, iso, type OverlapContext, type PartitionOverlap } from './mutual-exclusion.ts';
import { countPartitionOverlaps, partitionWindows, type PartitionWindow, windowIntervals } from './partition-windows.ts';
import { checkTokensUnique } from './token-uniqueness.ts';
import { checkFencing } from './fencing.ts';

export { STALL_SLACK_MS } from './mutual-exclusion.ts';
export type { Property, Violation } from './violation.ts';

/** Allowance on top of lease + failover for a loaded machine (see property 4). */
export const SLACK_MS = 2_000;

export interface CheckOptions {
  /** Fail the run on a session claim lost to a planned handoff (off until resumable sessions land). */
  requireSessionCarryover?: boolean;
}

export interface Counts {
  grants: number;
  keyedGrants: number;
  sessionGrants: number;
  acquireFailures: number;
  sessionLosses: number;
  /**
   * Keyed releases answered STALE though sent within the lease, outside excluded windows: a grant
   * the cluster lost (replication is asynchronous: a grant in the last batch before a kill -9), or
   * a release retried after its first attempt had released (its OK lost with the node). Not a
   * violation by itself (a lost grant that someone else got meanwhile is caught as an overlap).
   */
  staleKeyedReleases: number;
  writesAccepted: number;
  staleWritesRejected: number;
  conflicts: number;
  failovers: number;
  failoversByCause: Record<string, number>;
  faults: number;
  faultsByKind: Partial<Record<FaultKind, number>>;
  /** Overlaps of a keyed holder past its lease with a grant made once the server may have expired it. */
  keyedLeaseLapses: number;
  /** Write conflicts that the checker explained (excluded window, lease lapse, stall); the rest are violations. */
  conflictsExplained: number;
  /** Overlaps explained by a stall of either holder's process (STALL_SLACK_MS). */
  stalledClientOverlaps: number;
  /** Stall events reported by the client workers (one per client of the stalled process). */
  clientStalls: number;
  /** The longest stretch some client waited for a free lock (outside excluded windows), ms. */
  longestStrandedMs: number;
  strandBoundMs: number;
  /** Partition windows (cut .. heal + peer timeout + a lease), each with the overlaps counted in it. */
  partitionWindows: PartitionWindow[];
  /** Overlaps of two holders inside partition windows (allowed: no quorum), over all windows. */
  partitionOverlaps: number;
  /** Distinct tokens granted (property 8: each exactly once). */
  distinctTokens: number;
  /** Time of the run (clients start..stop) inside partition windows (excluded from the mutual-exclusion check), ms, and its share. */
  excludedMs: number;
  excludedShare: number;
  /** Time of the run left out of the stranding check (pauses + a lease, partition windows; in etcd mode also etcd faults + a lease + the etcd lease TTL), ms. */
  faultWindowMs: number;
  /** Checked as etcd mode: no window excused (partition windows, pauses) in the safety checks. */
  etcdMode: boolean;
  /** Overlaps excused by a pause of the active (granted before it, outlived within the first holder's lease). */
  pauseExcusedOverlaps: number;
  /** Grants whose token the per-lock order check compared with an earlier grant. */
  tokenOrderChecked: number;
  /** Per fault kind (that hit the active): session holds spanning it, carried over, lost. */
  sessionCarryover: Carryover['byKind'];
  /** Session claims lost to a planned handoff (SIGTERM, API handoff, priority return). */
  sessionLostToPlannedHandoff: number;
}

export interface Verdict {
  violations: Violation[];
  counts: Counts;
  /** Details worth printing that are not violations (e.g. lost keyed grants). */
  notes: string[];
}

export function checkHistory(history: History, options: CheckOptions = {}): Verdict {
  const violations: Violation[] = [];
  const notes: string[] = [];
  const { holds, waits, stalls } = foldClientEvents(history.clientEvents, history.runEnd);
  const withLease = (kinds: FaultKind[]) =>
    union(history.faults.filter((f) => kinds.includes(f.kind)).map((f) => ({ start: f.start, end: f.end + history.maxLeaseMs })));
  // Partition windows: excluded from the exclusion and order checks. Pauses (+ a lease) and
  // partition windows: from stranding (a lock a paused node holds waits for a failover) and the
  // failover succession check.
  const windows = partitionWindows(history);
  const etcdTtlMs = history.coordination?.leaseTtlMs;
  // etcd mode excuses no window (see the header): nothing is left out of the safety checks.
  const strict = etcdTtlMs !== undefined;
  const partitions = strict ? [] : windowIntervals(windows);
  const excluded = strict ? [] : union([...withLease(['pause']), ...partitions]);
  const pauses = strict ? [] : union(history.faults.filter((f) => f.kind === 'pause' && f.hitActive !== false));
  // Liveness only: where a node may rightly grant nothing (etcd out of its reach, a pause, a cut).
  const unavailable = strict
    ? union([
        ...withLease(['pause']),
        ...windowIntervals(windows),
        ...history.faults.filter((f) => ETCD_FAULT_KINDS.includes(f.kind)).map((f) => ({ start: f.start, end: f.end + history.maxLeaseMs + etcdTtlMs })),
      ])
    : excluded;
  const near = (t: number) => describeFaultsNear(history, t);

  checkFencing(history, violations);
  const lapses: string[] = [];
  const stalled: string[] = [];
  const paused: string[] = [];
  const ctx: OverlapContext = { excluded: partitions, pauses, near, stalls, earliestGrant: earliestGrants(holds) };
  const inPartitions: PartitionOverlap[] = [];
  checkMutualExclusion(holds, ctx, violations, lapses, stalled, paused, inPartitions);
  notes.push(...countPartitionOverlaps(windows, inPartitions));
  const distinctTokens = checkTokensUnique(history.clientEvents, violations);
  notes.push(...paused.map((l) => `overlap excused by a pause of the active (not a violation): ${l}`));
  notes.push(...lapses.map((l) => `keyed lease lapsed in a starved client (not a violation): ${l}`));
  notes.push(...stalled.map((l) => `client process stalled (not a violation): ${l}`));
  const conflictsExplained = checkConflicts(history, holds, ctx, violations, notes);
  checkTokenSuccession(history, holds, excluded, violations, strict);
  const strandBoundMs = history.maxLeaseMs + 2.5 * history.peerTimeoutMs + 500 + SLACK_MS + (etcdTtlMs ?? 0);
  const longestStrandedMs = checkStranded(holds, waits, unavailable, strandBoundMs, near, violations);
  checkFinal(history, violations);
  const tokenOrderChecked = checkTokenOrder(holds, partitions, violations);
  const carryover = sessionCarryover(holds, history.faults, history.failovers, history.maxLeaseMs);
  const lostPlanned = carryover.lost.filter((l) => l.planned);
  for (const l of lostPlanned) {
    const text = `${l.hold.lock}: session ${l.hold.client} (token ${l.hold.token}, held from ${iso(l.hold.start)}) lost its claim at ${iso(l.hold.end)} to a ${l.kind} at ${iso(l.faultStart)}..${iso(l.faultEnd)}`;
    if (options.requireSessionCarryover) violations.push({ property: 'session-carryover', message: text });
    else notes.push(`session claim lost to a planned handoff (not checked: --allow-session-loss): ${text}`);
  }

  let staleKeyedReleases = 0;
  for (const h of holds) {
    if (h.protocol !== 'keyed' || h.releaseOutcome !== 'stale' || h.leaseCapped || covers(unavailable, h.start) || covers(unavailable, h.end)) continue;
    staleKeyedReleases++;
    notes.push(
      `keyed release answered STALE within the lease: ${h.lock} token ${h.token} held by ${h.client} ${Math.round(h.end - h.start)} ms from ${iso(h.start)}, release sent at ${iso(h.end)} and answered STALE at ${h.releaseAnsweredAt === undefined ? '?' : iso(h.releaseAnsweredAt)}; ${near(h.start)}`,
    );
  }
  const failoversByCause: Record<string, number> = {};
  for (const f of history.failovers) failoversByCause[f.cause] = (failoversByCause[f.cause] ?? 0) + 1;
  const faultsByKind: Partial<Record<FaultKind, number>> = {};
  for (const f of history.faults) faultsByKind[f.kind] = (faultsByKind[f.kind] ?? 0) + 1;
  const grants = history.clientEvents.filter((e) => e.kind === 'grant');
  const runMs = history.runEnd - history.runStart;
  const inRun = (xs: Interval[]) => totalLength(xs.map((x) => intersect(x, { start: history.runStart, end: history.runEnd })).filter((x) => x !== null));
  const excludedMs = inRun(partitions);
  return {
    violations,
    notes,
    counts: {
      grants: grants.length,
      keyedGrants: grants.filter((g) => g.protocol === 'keyed').length,
      sessionGrants: grants.filter((g) => g.protocol === 'session').length,
      acquireFailures: history.clientEvents.filter((e) => e.kind === 'acquire-failed').length,
      sessionLosses: history.clientEvents.filter((e) => e.kind === 'lost').length,
      staleKeyedReleases,
      keyedLeaseLapses: lapses.length,
      stalledClientOverlaps: stalled.length,
      clientStalls: history.clientEvents.filter((e) => e.kind === 'stall').length,
      writesAccepted: history.writes.filter((w) => w.outcome === 'accepted').length,
      staleWritesRejected: history.writes.filter((w) => w.outcome === 'stale').length,
      conflicts: history.writes.filter((w) => w.outcome === 'conflict').length,
      conflictsExplained,
      failovers: history.failovers.length,
      failoversByCause,
      faults: history.faults.length,
      faultsByKind,
      longestStrandedMs: Math.round(longestStrandedMs),
      strandBoundMs,
      partitionWindows: windows,
      partitionOverlaps: inPartitions.length,
      distinctTokens,
      excludedMs: Math.round(excludedMs),
      excludedShare: runMs > 0 ? excludedMs / runMs : 0,
      faultWindowMs: Math.round(inRun(unavailable)),
      etcdMode: strict,
      pauseExcusedOverlaps: paused.length,
      tokenOrderChecked,
      sessionCarryover: carryover.byKind,
      sessionLostToPlannedHandoff: lostPlanned.length,
    },
  };
}

/**
 * Write conflicts (property 2, the resource's evidence): each is noted; it is a violation unless
 * every accepted write that moved the value between the conflicting client's read and its write
 * is explained (see the header). Returns how many conflicts were explained.
 */
function checkConflicts(history: History, holds: Hold[], ctx: OverlapContext, violations: Violation[], notes: string[]): number {
  const holdOf = new Map(holds.map((h) => [`${h.client} ${h.lock} ${h.token}`, h]));
  let explained = 0;
  for (const c of history.writes) {
    if (c.outcome !== 'conflict') continue;
    const hc = holdOf.get(`${c.client} ${c.lock} ${c.token}`);
    // The value was c.expected when c's client read it and only grows by one per accepted write:
    // the accepted writes before c with expected >= c.expected came after that read.
    const movers = history.writes.filter(
      (w) => w.lock === c.lock && w.outcome === 'accepted' && w.t < c.t && w.expected >= c.expected && w.client !== c.client,
    );
    const reasons: string[] = [];
    const problems: string[] = [];
    for (const w of movers) {
      const who = `${w.client} (token ${w.token}) wrote at ${iso(w.t)}`;
      if (covers(ctx.excluded, w.t) || covers(ctx.excluded, c.t)) {
        reasons.push(`${who} in an excluded window`);
        continue;
      }
      if (w.token === c.token) {
        problems.push(`${who} with the same token`);
        continue;
      }
      const hw = holdOf.get(`${w.client} ${w.lock} ${w.token}`);
      if (hw === undefined || hc === undefined) {
        problems.push(`${who}, and no hold of ${hw === undefined ? w.client : c.client} with that token was recorded`);
        continue;
      }
      const [first, second] = hw.start <= hc.start ? [hw, hc] : [hc, hw];
      const pair = classifyOverlap(first, second, ctx);
      if (pair.kind === 'excluded' || pair.kind === 'paused' || pair.kind === 'lapse' || pair.kind === 'stall') {
        reasons.push(`${who}; ${pair.kind === 'excluded' ? 'their holds overlapped in an excluded window' : pair.note}`);
        continue;
      }
      if (pair.kind === 'violation') {
        problems.push(`${who} while both held it (the overlap above)`);
        continue;
      }
      const lapseFrom = (ctx.earliestGrant.get(hw) ?? hw.requestedAt) + hw.leaseMs;
      if (hw.protocol === 'keyed' && w.t > hw.end && w.t >= lapseFrom) {
        reasons.push(
          `${who}, after its hold ended (${hw.endedBy}${hw.leaseCapped ? ', lease over' : ''}) and once the server may have expired its lease (from ${iso(lapseFrom)})`,
        );
        continue;
      }
      problems.push(`${who}, outside its hold (${iso(hw.start)}..${iso(hw.end)}, ended by ${hw.endedBy}) but while the server could still count it`);
    }
    const what = `${c.lock}: ${c.client} (token ${c.token}) read ${c.expected} and wrote at ${iso(c.t)}, but the value had moved`;
    if (movers.length === 0) problems.push('no accepted write by another client moved it');
    if (problems.length === 0) {
      explained++;
      notes.push(`write conflict (not a violation): ${what}: ${reasons.join('; ')}; ${ctx.near(c.t)}`);
    } else {
      notes.push(`write conflict (a violation): ${what}: ${[...problems, ...reasons].join('; ')}; ${ctx.near(c.t)}`);
      violations.push({ property: 'mutual-exclusion', message: `write conflict: ${what}: ${problems.join('; ')}; ${ctx.near(c.t)}` });
    }
  }
  return explained;
}

function checkTokenSuccession(history: History, holds: Hold[], excluded: Interval[], violations: Violation[], strict: boolean): void {
  const grants = holds
    .map((h) => ({ t: h.start, requestedAt: h.requestedAt, token: BigInt(h.token), client: h.client, lock: h.lock }))
    .sort((x, y) => x.t - y.t);
  const windowStarts = history.faults.filter((f) => f.kind === 'partition' || f.kind === 'pause').map((f) => f.start);
  for (const f of history.failovers) {
    if ((f.cause === 'split-brain' && !strict) || covers(excluded, f.at)) continue;
    // `at` is the successor's Date.now(), in whole ms: the promotion happened within [at, at + 1).
    const after = f.at + 1;
    const until = Math.min(Infinity, ...windowStarts.filter((t) => t > f.at));
    let before: (typeof grants)[number] | undefined;
    for (const g of grants) if (g.t < f.at && (before === undefined || g.token > before.token)) before = g;
    if (before === undefined) continue;
    for (const g of grants) {
      // Only a request made after the failover is sure to have been granted after it (a grant of
      // the old active may reach its client late: 500 ms was seen on a loaded machine).
      if (g.requestedAt < after || g.t >= until) continue;
      if (g.token <= before.token) {
        violations.push({
          property: 'token-succession',
          message: `failover ${describeFailover(f)}: ${g.client} asked for ${g.lock} at ${iso(g.requestedAt)} and got token ${g.token} at ${iso(g.t)}, not above token ${before.token} granted to ${before.client} at ${iso(before.t)}`,
        });
      }
    }
  }
}

function checkStranded(
  holds: Hold[],
  waits: ReturnType<typeof foldClientEvents>['waits'],
  excluded: Interval[],
  boundMs: number,
  near: (t: number) => string,
  violations: Violation[],
): number {
  let longest = 0;
  const holdsByLock = byLock(holds);
  for (const [lock, lockWaits] of byLock(waits)) {
    const waiting = union(lockWaits);
    const occupied = union((holdsByLock.get(lock) ?? []).map((h) => ({ start: h.start, end: Math.max(h.end, h.occupiedUntil) })));
    for (const gap of subtract(waiting, occupied)) {
      const counted = totalLength(subtract([gap], excluded));
      longest = Math.max(longest, counted);
      if (counted > boundMs) {
        violations.push({
          property: 'stranded',
          message: `${lock}: clients waited ${Math.round(counted)} ms (bound ${boundMs} ms) from ${iso(gap.start)} while nobody held it; ${near(gap.start)}`,
        });
      }
    }
  }
  return longest;
}

function checkFinal(history: History, violations: Violation[]): void {
  const final = history.final;
  if (final.error !== undefined || final.active === null) {
    violations.push({ property: 'final-state', message: `no final state: ${final.error ?? 'no active node'}` });
    return;
  }
  for (const lock of final.locks) {
    if (lock.holder !== null || lock.queueLength > 0) {
      violations.push({
        property: 'final-state',
        message: `${lock.name} on ${final.active} after the run: holder ${lock.holder ?? 'none'}, ${lock.queueLength} waiting`,
      });
    }
  }
}

function describeFailover(f: FailoverView): string {
  return `${f.from ?? '-'}->${f.to} ${f.cause} at ${iso(f.at)}`;
}

/** The faults and failovers within 3 s of `t`, for a violation's context. */
function describeFaultsNear(history: History, t: number): string {
  const faults = history.faults.filter((f) => f.start - 3_000 <= t && t <= f.end + 3_000).map((f) => `${f.kind} ${f.target} ${iso(f.start)}..${iso(f.end)}`);
  const failovers = history.failovers.filter((f) => Math.abs(f.at - t) <= 3_000).map(describeFailover);
  const all = [...faults, ...failovers];
  return all.length === 0 ? 'no fault or failover within 3 s' : `near: ${all.join('; ')}`;
}
