// Turns the engine's live objects into the ops API's JSON shapes (lib/ops/api-types.ts).
// Pure reads: nothing here changes the engine. `wall` maps the engine's monotonic clock to
// epoch milliseconds.
import type { Claim } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockState } from '../../lib/engine/lock-state.ts';
import type { HolderView, LockDetail, LockSummary, LocksPage, WaiterView } from '../../lib/ops/api-types.ts';

export interface ViewClock {
  /** Engine clock now (monotonic ms). */
  now(): number;
  /** Engine clock time → epoch ms. */
  wall(engineMs: number): number;
}

export function holderView(claim: Claim, clock: ViewClock): HolderView {
  const now = clock.now();
  return {
    claimId: String(claim.id),
    protocol: claim.protocol,
    client: claim.client,
    token: claim.token.toString(),
    grantedAt: Math.round(clock.wall(claim.grantedAt)),
    heldForMs: Math.max(0, Math.round(now - claim.grantedAt)),
    leaseMs: claim.leaseMs,
    sliding: claim.sliding,
    leaseRemainingMs: Math.max(0, Math.round(claim.expiresAt - now)),
  };
}

export function lockSummary(lock: LockState, clock: ViewClock): LockSummary {
  return { name: lock.name, holder: lock.holder === null ? null : holderView(lock.holder, clock), queueLength: lock.waiting };
}

export function waiterView(claim: Claim, position: number, clock: ViewClock): WaiterView {
  const now = clock.now();
  return {
    id: String(claim.id),
    position,
    protocol: claim.protocol,
    client: claim.client,
    waitingSince: Math.round(clock.wall(claim.enqueuedAt)),
    waitingForMs: Math.max(0, Math.round(now - claim.enqueuedAt)),
    waitDeadline: Number.isFinite(claim.waitDeadline) ? Math.round(clock.wall(claim.waitDeadline)) : null,
  };
}

export function lockDetail(lock: LockState, clock: ViewClock): LockDetail {
  const queue: WaiterView[] = [];
  let position = 1;
  for (let c = lock.head; c !== null; c = c.next) queue.push(waiterView(c, position++, clock));
  return { ...lockSummary(lock, clock), asOf: Math.round(clock.wall(clock.now())), queue };
}

export function allLockSummaries(engine: LockEngine, clock: ViewClock): LockSummary[] {
  const out: LockSummary[] = [];
  for (const lock of engine.allLocks()) out.push(lockSummary(lock, clock));
  return out;
}

export interface LocksQuery {
  prefix: string;
  limit: number;
  /** The last name of the previous page; the page starts after it. */
  cursor: string | null;
}

/**
 * One page of locks in name order (code-unit order, stable across pages). Locks come and go
 * between pages; a cursor is a name, so a page never repeats or skips a lock that stayed.
 */
export function locksPage(engine: LockEngine, clock: ViewClock, query: LocksQuery): LocksPage {
  const names: string[] = [];
  for (const lock of engine.allLocks()) {
    const name = lock.name;
    if (!name.startsWith(query.prefix)) continue;
    if (query.cursor !== null && name <= query.cursor) continue;
    names.push(name);
  }
  names.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const page = names.slice(0, query.limit);
  const locks: LockSummary[] = [];
  for (const name of page) {
    const lock = engine.lock(name);
    if (lock !== undefined) locks.push(lockSummary(lock, clock));
  }
  const last = page[page.length - 1];
  return {
    asOf: Math.round(clock.wall(clock.now())),
    locks,
    nextCursor: names.length > query.limit && last !== undefined ? last : null,
  };
}
