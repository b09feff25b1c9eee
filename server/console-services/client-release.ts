// The stuck-client case (issue 13): one client, often dead, holding hundreds of locks on long
// leases. An operator names the client (the identity it gave, or its address, matched exactly),
// sees every lock it holds, and releases them in one action. Each release is still guarded by
// its token, so a lock that changed hands since the list was read is left alone ("stale"), and
// each one gets its own audit entry. The list is read in pages (client-held-page.ts); the
// release walks the lock table once: an admin action, never on the lock path.
import type { Claim } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { ClientReleaseResult } from '../../lib/ops-api/client-release-types.ts';
import type { AdminAudit, AdminResult } from '../daemon/daemon-facade.ts';
import { MAX_RELEASE_TOKENS } from './admin-request.ts';
import { clientText } from './lock-views.ts';

/** At most this many tokens are taken per release (the body stays bounded), and audits kept from one result. */
export const MAX_CLIENT_LOCKS = MAX_RELEASE_TOKENS;

/** Whether `claim` belongs to `client`: the identity it gave, or its address, exactly. */
export function heldByClient(claim: Claim, client: string): boolean {
  return claim.clientName === client || claim.client === client;
}

/**
 * Force-releases every lock whose holder still has one of `tokens` and still belongs to
 * `client`. The rest of the tokens come back as stale. One audit entry per release, in the
 * result's `audits` (recorded by whoever audits the op: admin-action.ts, and the active node).
 */
export function releaseClientLocally(engine: LockEngine, client: string, tokens: readonly bigint[]): AdminResult {
  const wanted = new Set(tokens);
  // Found first, released after: a release may drop a lock from the table being walked.
  const targets: { name: string; token: bigint }[] = [];
  for (const lock of engine.allLocks()) {
    const h = lock.holder;
    if (h !== null && wanted.has(h.token) && heldByClient(h, client)) targets.push({ name: lock.name, token: h.token });
  }
  const body: ClientReleaseResult = { released: [], stale: [] };
  const audits: { target: string; detail: string }[] = [];
  const done = new Set<bigint>();
  for (const { name, token } of targets) {
    const result = engine.forceRelease(name, token);
    if (!result.ok) continue;
    done.add(token);
    body.released.push({ name, token: token.toString() });
    const next = engine.lock(name)?.holder ?? null;
    const c = result.claim;
    audits.push({
      target: name,
      detail: `bulk by client ${client}: token ${token} held by ${clientText(c.clientName, c.client, c.protocol)}${next === null ? '' : `; now token ${next.token}`}`,
    });
  }
  for (const token of wanted) if (!done.has(token)) body.stale.push(token.toString());
  return { ok: true, body, detail: `client ${client}: released ${body.released.length}, stale ${body.stale.length}`, audits };
}

/**
 * The per-lock audit entries an op's result carries, checked: a result may have crossed a peer
 * link from a node of another build, and the log must get only well-formed, bounded entries.
 */
export function resultAudits(result: AdminResult): AdminAudit[] {
  if (!result.ok || !Array.isArray(result.audits)) return [];
  const out: AdminAudit[] = [];
  for (const a of result.audits.slice(0, MAX_CLIENT_LOCKS)) {
    if (typeof a === 'object' && a !== null && typeof a.target === 'string' && typeof a.detail === 'string') {
      out.push({ target: a.target.slice(0, 256), detail: a.detail.slice(0, 1024) });
    }
  }
  return out;
}
