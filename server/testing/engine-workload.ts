// What a client or an admin does to an engine in the replication property tests: the same
// operations, applied the same way, whatever else a test interleaves with them (joins,
// slices of a snapshot, deliveries).
import type { Claim, ClaimOwner } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';

export type ClientOp =
  /** `clientName`: the identity the client gave (keyed `I`, session `CLIENT`); absent: none. */
  | { kind: 'acquire'; key: string; session: boolean; leaseMs: number; waitMs: number; clientName?: string | null }
  /** On the claim at `pick` (modulo their number) among the engine's holders and waiters. */
  | { kind: 'release' | 'end' | 'kick' | 'force'; pick: number };

/** Every live claim of the engine: each lock's holder, then its queue in order. */
export function claimsOf(engine: LockEngine): Claim[] {
  return [...engine.allLocks()].flatMap((l) => {
    const out = l.holder === null ? [] : [l.holder];
    for (let w = l.head; w !== null; w = w.next) out.push(w);
    return out;
  });
}

/** Applies `op`; one that does not fit the claim it picks (a release of a waiter, say) does nothing. */
export function applyClientOp(engine: LockEngine, owner: ClaimOwner, op: ClientOp): void {
  if (op.kind === 'acquire') {
    engine.acquire({
      name: op.key,
      owner,
      protocol: op.session ? 'session' : 'keyed',
      client: 'c',
      clientName: op.clientName ?? null,
      leaseMs: op.leaseMs,
      waitMs: op.waitMs,
      sliding: op.session,
    });
    return;
  }
  const all = claimsOf(engine);
  const picked = all[op.pick % Math.max(1, all.length)];
  if (picked === undefined) return;
  switch (op.kind) {
    case 'release':
      if (picked.state === 'holding') engine.release(picked.name, picked.token);
      break;
    case 'end':
      engine.end(picked);
      break;
    case 'kick':
      if (picked.state === 'waiting') engine.kick(picked.name, picked.id);
      break;
    case 'force':
      if (picked.state === 'holding') engine.forceRelease(picked.name);
      break;
  }
}
