// The stuck-client case (issue 13): one client, often dead, holding hundreds of locks on long
// leases. An operator names the client (by the identity it gave, or by its address: explicitly
// one or the other, issue 26), sees every lock it holds, and releases them in one action. Each
// release is still guarded by its token, so a lock that changed hands since the list was read
// is left alone ("stale"). The list is read in pages (client-held-page.ts); the release walks
// the lock table once, in slices too, then releases in slices: an admin action, never on the
// lock path.
import type { Claim } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { ClientReleaseResult } from '../../lib/ops-api/client-release-types.ts';
import { type AdminAudit, type AdminResult, MAX_BULK_AUDIT_LOCKS } from '../../lib/ops-api/admin-result.ts';
import { type ClientMatch, MAX_RELEASE_TOKENS, clientMatchText } from '../../lib/ops-api/admin-request.ts';
import { clientText } from '../lock-views/lock-views.ts';

/** At most this many tokens are taken per release (the body stays bounded), and audits kept from one result. */
export const MAX_CLIENT_LOCKS = MAX_RELEASE_TOKENS;
/**
 * Locks released per turn of the event loop: 10,000 in one piece held the loop for 0.2-0.6 s
 * (issue 26), and every lock client waited that long. A slice of 250 is a few ms.
 */
export const RELEASE_SLICE = 250;
/**
 * Whether `claim` belongs to the client `match` names: by identity, the name it gave; by
 * address, its address; exactly, and never one for the other. The one place a bulk release
 * matches (GET /api/v1/clients/held and the release itself).
 */
export function heldByClient(claim: Claim, match: ClientMatch): boolean {
  return match.by === 'identity' ? claim.clientName === match.value : claim.client === match.value;
}

const byName = (a: { name: string }, b: { name: string }) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

/**
 * Locks the walk for the targets reads per turn of the event loop: the whole walk in one turn
 * held the loop for 40-60 ms at 1,000,000 locks (40-60 ns a lock), on every bulk request; this
 * many is about a millisecond. By count, not time, so what a release does is the same on a
 * loaded machine.
 */
export const WALK_SLICE = 16_384;

/** What a sliced release needs of its node between slices. */
export interface SliceHooks {
  /** Re-arms the engine's timer: a slice handed locks on, and their leases have deadlines. */
  wake(): void;
  /** Null to go on; else why this node must stop changing its engine (it is no longer the active one). */
  stopReason(): string | null;
}

/** The next turn of the event loop: I/O (lock clients, other requests) runs before it. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Force-releases every lock whose holder still has one of `tokens` and still belongs to the
 * client `match` names; the rest of the tokens come back as stale. The locks are found in one
 * walk, then released RELEASE_SLICE per loop turn, so the loop keeps serving between slices.
 * Meanwhile a lock may be released by its client or change hands, or a second bulk request may
 * release it: its token no longer holds it, so it is stale here (tokens are never reused, so
 * the token guard also keeps the match: the grant is the one found). The result comes after
 * the last slice. The audit: the result's summary, and `audits` for the first
 * MAX_BULK_AUDIT_LOCKS released (recorded by whoever audits the op: admin-action.ts, and the
 * active node).
 */
export async function releaseClientLocally(engine: LockEngine, match: ClientMatch, tokens: readonly bigint[], hooks: SliceHooks): Promise<AdminResult> {
  const wanted = new Set(tokens);
  // Found first, released after: a release may drop a lock from the table being walked.
  const targets: { name: string; token: bigint }[] = [];
  // A live walk, WALK_SLICE locks per turn: a lock that changes hands between two slices is
  // found with its new holder or not at all, and the token guard below settles it either way.
  let stopped: string | null = null;
  const walk = engine.allLocks();
  for (let n = 1, next = walk.next(); next.done !== true; n++, next = walk.next()) {
    const lock = next.value;
    const h = lock.holder;
    if (h !== null && wanted.has(h.token) && heldByClient(h, match)) targets.push({ name: lock.name, token: h.token });
    if (n % WALK_SLICE === 0) {
      await nextTurn();
      stopped = hooks.stopReason();
      if (stopped !== null) break;
    }
  }
  if (stopped !== null) targets.length = 0;
  targets.sort(byName);
  const who = clientMatchText(match);
  const body: ClientReleaseResult = { released: [], stale: [] };
  const audits: AdminAudit[] = [];
  const done = new Set<bigint>();
  for (let start = 0; start < targets.length; start += RELEASE_SLICE) {
    if (start > 0) {
      await nextTurn();
      stopped = hooks.stopReason();
      if (stopped !== null) break;
    }
    for (const { name, token } of targets.slice(start, start + RELEASE_SLICE)) {
      const result = engine.forceRelease(name, token);
      if (!result.ok) continue;
      done.add(token);
      body.released.push({ name, token: token.toString() });
      if (audits.length === MAX_BULK_AUDIT_LOCKS) continue;
      const next = engine.lock(name)?.holder ?? null;
      const c = result.claim;
      audits.push({
        target: name,
        detail: `bulk by ${who}: token ${token} held by ${clientText(c.clientName, c.client, c.protocol)}${next === null ? '' : `; now token ${next.token}`}`,
      });
    }
    hooks.wake();
  }
  for (const token of wanted) if (!done.has(token)) body.stale.push(token.toString());
  return { ok: true, body, detail: summary(who, body, stopped), audits };
}

/** The bulk action's own audit detail: counts, which released locks have no entry of their own, and why it stopped early. */
function summary(who: string, body: ClientReleaseResult, stopped: string | null): string {
  const { released, stale } = body;
  let text = `${who}: released ${released.length}, stale ${stale.length}`;
  const first = released[MAX_BULK_AUDIT_LOCKS];
  const last = released.at(-1);
  if (first !== undefined && last !== undefined) {
    const rest = released.length - MAX_BULK_AUDIT_LOCKS;
    text += `; the first ${MAX_BULK_AUDIT_LOCKS} by name have an entry each, the other ${rest} (${first.name} to ${last.name}) are counted here only`;
  }
  if (stopped !== null) text += `; stopped early: ${stopped}`;
  return text;
}
