// The chaos run's verdict: a pure function from the recorded history to the violations of the
// five properties and the counts printed with them. Definitions (also in the run's report):
//
// 1. Fencing held: per lock, in the order the resource saw them, no accepted write carries a
//    token below one accepted before, and every write refused as stale had a token below the
//    highest accepted at that moment (the recorded history is checked, not the resource's word).
// 2. Mutual exclusion: per lock, no two client-observed holds (grant arrived -> release about to
//    be sent, loss noticed, or process killed) of different clients overlap, except where the
//    overlap lies inside an excluded window: a pause (SIGSTOP..SIGCONT) or a partition
//    (cut..heal), each extended by the longest lease after it ends. kill -9, SIGTERM, API
//    handoffs and killed clients are NOT excluded. A keyed hold also ends when its lease runs
//    out (from when the grant arrived). Three cases are reported apart, bounded, not hidden:
//    (a) a known server race at graceful handoffs (KNOWN_RACE_SHARE below); (b) a keyed holder
//    whose process ran past its lease (a starved client) overlapping a grant made when the
//    server may already have expired it (no earlier than the request + the lease); (c) an
//    overlap where either holder's process stalled (did not run, STALL_SLACK_MS below) between
//    its request and the overlap's end, by at least the overlap less the slack: what it
//    observed, it saw late.
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
import type { FailoverView } from '../lib/ops/api-types.ts';
import type { FaultKind, History } from './history.ts';
import { foldClientEvents, type Hold } from './holds.ts';
import { covers, intersect, subtract, totalLength, union, type Interval } from './intervals.ts';

/**
 * A known gap, reported apart rather than as a violation (see the report of issue 5): at a
 * graceful handoff the successor drops the old active's session claims when it promotes and may
 * grant those locks at once, while the old active tells its session clients (REDIRECT) only after
 * the successor said it promoted, and the client reads it when its process gets to it (seen: 3 ms
 * to 270 ms on a loaded machine). So a session holder can learn of its loss after the lock's next
 * holder got it. An overlap counts as this race only if the earlier hold is a session hold that
 * ended by its loss no later than KNOWN_RACE_SHARE of its lease after a handoff (signal, API,
 * priority return) that came before the overlap: the client library's own deadline (it gives up a
 * lease that nothing confirmed for 0.8 of the lease). Anything else is a violation.
 */
export const KNOWN_RACE_SHARE = 0.8;
/** A client-process stall explains an overlap up to its length plus this much (ms). */
export const STALL_SLACK_MS = 50;
const HANDOFFS = new Set(['signal', 'api-handoff', 'priority-return']);

/** Allowance on top of lease + failover for a loaded machine (see property 4). */
export const SLACK_MS = 2_000;

export type Property = 'fencing' | 'mutual-exclusion' | 'token-succession' | 'stranded' | 'final-state';

export interface Violation {
  property: Property;
  message: string;
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
  /** Overlaps explained by the known session-handoff race (KNOWN_RACE_SHARE), not counted as violations. */
  sessionHandoffOverlaps: number;
  /** The longest of them, ms. */
  longestSessionHandoffOverlapMs: number;
  /** Overlaps of a keyed holder past its lease with a grant made once the server may have expired it. */
  keyedLeaseLapses: number;
  /** Overlaps explained by a stall of the first holder's process (STALL_SLACK_MS). */
  stalledClientOverlaps: number;
  /** Stall events reported by the client workers (one per client of the stalled process). */
  clientStalls: number;
  /** The longest stretch some client waited for a free lock (outside excluded windows), ms. */
  longestStrandedMs: number;
  strandBoundMs: number;
}

export interface Verdict {
  violations: Violation[];
  counts: Counts;
  /** Details worth printing that are not violations (e.g. lost keyed grants). */
  notes: string[];
}

export function checkHistory(history: History): Verdict {
  const violations: Violation[] = [];
  const notes: string[] = [];
  const { holds, waits, stalls } = foldClientEvents(history.clientEvents, history.runEnd);
  const excluded = union(history.faults.filter((f) => f.kind === 'pause' || f.kind === 'partition').map((f) => ({ start: f.start, end: f.end + history.maxLeaseMs })));
  const near = (t: number) => describeFaultsNear(history, t);

  checkFencing(history, violations);
  const knownRace: string[] = [];
  const knownRaceMs: number[] = [];
  const handoffTimes = history.failovers.filter((f) => HANDOFFS.has(f.cause)).map((f) => f.at);
  const lapses: string[] = [];
  const stalled: string[] = [];
  checkMutualExclusion(holds, excluded, handoffTimes, near, violations, knownRace, knownRaceMs, lapses, stalls, stalled);
  notes.push(...lapses.map((l) => `keyed lease lapsed in a starved client (not a violation): ${l}`));
  notes.push(...stalled.map((l) => `client process stalled (not a violation): ${l}`));
  notes.push(...knownRace.map((k) => `known session-handoff race (not a violation): ${k}`));
  checkTokenSuccession(history, holds, excluded, violations);
  const strandBoundMs = history.maxLeaseMs + 2.5 * history.peerTimeoutMs + 500 + SLACK_MS;
  const longestStrandedMs = checkStranded(holds, waits, excluded, strandBoundMs, near, violations);
  checkFinal(history, violations);

  let staleKeyedReleases = 0;
  for (const h of holds) {
    if (h.protocol !== 'keyed' || h.releaseOutcome !== 'stale' || h.leaseCapped || covers(excluded, h.start) || covers(excluded, h.end)) continue;
    staleKeyedReleases++;
    notes.push(`keyed release answered STALE within the lease: ${h.lock} token ${h.token} held by ${h.client} ${Math.round(h.end - h.start)} ms, release answered STALE; ${near(h.start)}`);
  }
  const failoversByCause: Record<string, number> = {};
  for (const f of history.failovers) failoversByCause[f.cause] = (failoversByCause[f.cause] ?? 0) + 1;
  const faultsByKind: Partial<Record<FaultKind, number>> = {};
  for (const f of history.faults) faultsByKind[f.kind] = (faultsByKind[f.kind] ?? 0) + 1;
  const grants = history.clientEvents.filter((e) => e.kind === 'grant');
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
      sessionHandoffOverlaps: knownRace.length,
      keyedLeaseLapses: lapses.length,
      stalledClientOverlaps: stalled.length,
      clientStalls: history.clientEvents.filter((e) => e.kind === 'stall').length,
      longestSessionHandoffOverlapMs: Math.round(knownRaceMs.reduce((m, x) => Math.max(m, x), 0)),
      writesAccepted: history.writes.filter((w) => w.outcome === 'accepted').length,
      staleWritesRejected: history.writes.filter((w) => w.outcome === 'stale').length,
      conflicts: history.writes.filter((w) => w.outcome === 'conflict').length,
      failovers: history.failovers.length,
      failoversByCause,
      faults: history.faults.length,
      faultsByKind,
      longestStrandedMs: Math.round(longestStrandedMs),
      strandBoundMs,
    },
  };
}

function checkFencing(history: History, violations: Violation[]): void {
  const highest = new Map<string, bigint>();
  for (const w of history.writes) {
    const token = BigInt(w.token);
    const top = highest.get(w.lock);
    if (w.outcome === 'stale') {
      if (top === undefined || token >= top) violations.push({ property: 'fencing', message: `${w.lock}: write by ${w.client} with token ${w.token} was refused as stale, but the highest accepted was ${top ?? 'none'}` });
      continue;
    }
    if (top !== undefined && token < top) {
      violations.push({ property: 'fencing', message: `${w.lock}: the resource ${w.outcome === 'accepted' ? 'accepted' : 'let through'} token ${w.token} from ${w.client} after accepting ${top}` });
    }
    if (w.outcome === 'accepted' && (top === undefined || token > top)) highest.set(w.lock, token);
  }
}

/** Whether `first` lost a session to a handoff just before `second` got the lock (see KNOWN_RACE_SHARE). */
function isSessionHandoffRace(first: Hold, overlap: Interval, handoffTimes: number[]): boolean {
  if (first.protocol !== 'session' || first.endedBy !== 'lost') return false;
  // `at` is the successor's Date.now(), whole ms: 1 ms of slack against our sub-ms times.
  return handoffTimes.some((at) => at <= overlap.start + 1 && first.end >= at && first.end - at <= KNOWN_RACE_SHARE * first.leaseMs);
}

function checkMutualExclusion(
  holds: Hold[], excluded: Interval[], handoffTimes: number[], near: (t: number) => string, violations: Violation[],
  knownRace: string[], knownRaceMs: number[], lapses: string[], stalls: Map<string, Interval[]>, stalled: string[],
): void {
  for (const lockHolds of byLock(holds).values()) {
    lockHolds.sort((x, y) => x.start - y.start);
    for (let i = 0; i < lockHolds.length; i++) {
      const first = lockHolds[i] as Hold;
      for (let j = i + 1; j < lockHolds.length; j++) {
        const second = lockHolds[j] as Hold;
        if (second.start >= first.end) break;
        if (second.client === first.client) continue;
        const overlap = intersect(first, second);
        if (overlap === null) continue;
        const counted = subtract([overlap], excluded);
        if (counted.length === 0) continue;
        if (first.leaseCapped && overlap.start >= first.requestedAt + first.leaseMs) {
          lapses.push(`${first.lock}: keyed ${first.client} (token ${first.token}) was still at it when its lease ran out; ${second.client} got token ${second.token} ${(overlap.end - overlap.start).toFixed(1)} ms before that lease's end as ${first.client} counted it`);
          continue;
        }
        // Either holder may have seen late what happened to it: the first its loss (or grant), the
        // second a grant the old active made before the first's and dropped since.
        const stalledOf = (h: Hold) => totalLength(union((stalls.get(h.client) ?? []).map((x) => intersect(x, { start: h.requestedAt, end: overlap.end })).filter((x) => x !== null)));
        const [who, stalledMs] = [first, second].map((h) => [h, stalledOf(h)] as const).sort((x, y) => y[1] - x[1])[0] ?? [first, 0];
        if (stalledMs > 0 && overlap.end - overlap.start <= stalledMs + STALL_SLACK_MS) {
          const other = who === first ? second : first;
          stalled.push(`${first.lock}: ${who.client} (token ${who.token}) did not run for ${Math.round(stalledMs)} ms between its request and the end of a ${(overlap.end - overlap.start).toFixed(1)} ms overlap with ${other.client} (token ${other.token})`);
          continue;
        }
        if (isSessionHandoffRace(first, overlap, handoffTimes)) {
          knownRaceMs.push(overlap.end - overlap.start);
          knownRace.push(`${first.lock}: session ${first.client} (token ${first.token}) learned its loss ${(overlap.end - overlap.start).toFixed(1)} ms after ${second.client} got token ${second.token}`);
          continue;
        }
        const first_ = `${first.client} (${first.protocol}, token ${first.token}, ended by ${first.endedBy}${first.releaseOutcome ? ` ${first.releaseOutcome}` : ''})`;
        const second_ = `${second.client} (${second.protocol}, token ${second.token})`;
        violations.push({
          property: 'mutual-exclusion',
          message: `${first.lock}: ${first_} and ${second_} held it at once for ${totalLength(counted).toFixed(1)} ms from ${iso(overlap.start)}; ${near(overlap.start)}`,
        });
      }
    }
  }
}

function checkTokenSuccession(history: History, holds: Hold[], excluded: Interval[], violations: Violation[]): void {
  const grants = holds.map((h) => ({ t: h.start, requestedAt: h.requestedAt, token: BigInt(h.token), client: h.client, lock: h.lock })).sort((x, y) => x.t - y.t);
  const windowStarts = history.faults.filter((f) => f.kind === 'partition' || f.kind === 'pause').map((f) => f.start);
  for (const f of history.failovers) {
    if (f.cause === 'split-brain' || covers(excluded, f.at)) continue;
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

function checkStranded(holds: Hold[], waits: ReturnType<typeof foldClientEvents>['waits'], excluded: Interval[], boundMs: number, near: (t: number) => string, violations: Violation[]): number {
  let longest = 0;
  const holdsByLock = byLock(holds);
  for (const [lock, lockWaits] of byLock(waits)) {
    const waiting = union(lockWaits);
    const occupied = union((holdsByLock.get(lock) ?? []).map((h) => ({ start: h.start, end: Math.max(h.end, h.occupiedUntil) })));
    for (const gap of subtract(waiting, occupied)) {
      const counted = totalLength(subtract([gap], excluded));
      longest = Math.max(longest, counted);
      if (counted > boundMs) {
        violations.push({ property: 'stranded', message: `${lock}: clients waited ${Math.round(counted)} ms (bound ${boundMs} ms) from ${iso(gap.start)} while nobody held it; ${near(gap.start)}` });
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
      violations.push({ property: 'final-state', message: `${lock.name} on ${final.active} after the run: holder ${lock.holder ?? 'none'}, ${lock.queueLength} waiting` });
    }
  }
}

function byLock<T extends { lock: string }>(items: readonly T[]): Map<string, T[]> {
  const out = new Map<string, T[]>();
  for (const item of items) {
    const list = out.get(item.lock);
    if (list) list.push(item);
    else out.set(item.lock, [item]);
  }
  return out;
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

function iso(t: number): string {
  const d = new Date(t);
  return `${d.toISOString().slice(11, 23)}`;
}
