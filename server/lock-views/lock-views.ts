// Turns the engine's live objects into the ops API's JSON shapes (lib/ops-api/api-types.ts).
// Pure reads: nothing here changes the engine. `wall` maps the engine's monotonic clock to
// epoch milliseconds.
import type { Claim, LockState } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { HolderView, LockDetail, LockSummary, LocksPage, WaiterView } from '../../lib/ops-api/api-types.ts';
import type { LocksQuery, QueuePage } from '../../lib/ops-api/page-queries.ts';
import type { LockIndex } from './lock-index.ts';

export interface ViewClock {
  /** Engine clock now (monotonic ms). */
  now(): number;
  /** Engine clock time → epoch ms. */
  wall(engineMs: number): number;
}

/** "worker-7@host-3 pid 4121 (127.0.0.1:5312, keyed)", or "127.0.0.1:5312 (keyed)" for a client that gave no identity. */
export function clientText(clientName: string | null, client: string, protocol: string): string {
  return clientName === null ? `${client} (${protocol})` : `${clientName} (${client}, ${protocol})`;
}

export function holderView(claim: Claim, clock: ViewClock): HolderView {
  const now = clock.now();
  return {
    claimId: String(claim.id),
    protocol: claim.protocol,
    client: claim.client,
    clientName: claim.clientName,
    token: claim.token.toString(),
    grantedAt: Math.round(clock.wall(claim.grantedAt)),
    heldForMs: Math.max(0, Math.round(now - claim.grantedAt)),
    leaseMs: claim.leaseMs,
    sliding: claim.sliding,
    leaseRemainingMs: Math.max(0, Math.round(claim.expiresAt - now)),
    ...(claim.owner.awaitingResume === true ? { reconnecting: true } : {}),
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
    clientName: claim.clientName,
    waitingSince: Math.round(clock.wall(claim.enqueuedAt)),
    waitingForMs: Math.max(0, Math.round(now - claim.enqueuedAt)),
    waitDeadline: Number.isFinite(claim.waitDeadline) ? Math.round(clock.wall(claim.waitDeadline)) : null,
    // A session waiter between connections keeps its place until its lease runs out.
    ...(claim.owner.awaitingResume === true ? { reconnecting: true, reconnectRemainingMs: Math.max(0, Math.round(claim.expiresAt - now)) } : {}),
  };
}

/**
 * The lock with one page of its queue, or 'no-such-waiter' when `after` names no waiter in it
 * any more (granted, timed out, kicked, gone). The page costs `limit` views, not the queue: the
 * whole queue of 50,000 waiters was 9 MB of JSON and 137 ms of loop time per read. Finding
 * `after` is a walk of the queue's links (no allocation, like kick's), which also counts the
 * positions.
 */
export function lockDetail(lock: LockState, clock: ViewClock, page: QueuePage): LockDetail | 'no-such-waiter' {
  let c = lock.head;
  let position = 1;
  if (page.after !== null) {
    while (c !== null && c.id !== page.after) {
      c = c.next;
      position++;
    }
    if (c === null) return 'no-such-waiter';
    c = c.next;
    position++;
  }
  const queue: WaiterView[] = [];
  for (; c !== null && queue.length < page.limit; c = c.next) queue.push(waiterView(c, position++, clock));
  const nextCursor = c !== null && queue.length > 0 ? (queue.at(-1) as WaiterView).id : null;
  return { ...lockSummary(lock, clock), asOf: Math.round(clock.wall(clock.now())), queue, nextCursor };
}

/**
 * One page of locks in name order (code-unit order, stable across pages). Locks come and go
 * between pages; a cursor is a name, so a page never repeats or skips a lock that stayed.
 * The names come from the engine's sorted index (`index`, lock-index.ts): O(log n + limit), no sort;
 * the first page after the index went cold waits for its build, spread over loop turns.
 */
export async function locksPage(engine: Pick<LockEngine, 'lock'>, index: LockIndex, clock: ViewClock, query: LocksQuery): Promise<LocksPage> {
  // Awaited first, then read in one turn: the names are exact for the table in this turn.
  const names = await index.current();
  const locks: LockSummary[] = [];
  let last: string | null = null;
  let more = false;
  // One name past the page tells whether there is a next page.
  for (const name of names.walk(query.cursor, query.prefix, query.limit + 1)) {
    if (!name.startsWith(query.prefix)) break;
    if (locks.length === query.limit) {
      more = true;
      break;
    }
    const lock = engine.lock(name);
    if (lock === undefined) continue; // the index is settled against the engine: not reached
    locks.push(lockSummary(lock, clock));
    last = name;
  }
  return { asOf: Math.round(clock.wall(clock.now())), locks, nextCursor: more ? last : null };
}
