// The cluster's words: a node's role and phase, and why the active role moved (failover
// causes). Part of the ops contract: the API's JSON shapes show them (api-types.ts re-exports
// them), the peer protocol checks them (lib/cluster/peer-messages.ts) and the pure failover
// rules (lib/cluster) decide in them; here, below both, so lib/cluster -> lib/ops-api is the
// only direction between the two folders.
// Imports nothing, so every part of the cluster and the browser can use it.

/** Which side of the lock traffic a node is on (a node handing off is still the active). */
export type NodeRole = 'active' | 'standby';

/** What a node is doing about its role right now (a standby may be syncing, an active handing off). */
export const NODE_PHASES = ['discovering', 'syncing', 'standby', 'promoting', 'active', 'handing-off'] as const;
export type NodePhase = (typeof NODE_PHASES)[number];

/** priority-return: a higher-priority node came back, synced, and took over by a graceful handoff. */
export const FAILOVER_CAUSES = ['crash', 'signal', 'api-handoff', 'priority-return', 'split-brain'] as const;
export type FailoverCause = (typeof FAILOVER_CAUSES)[number];

/** Whether a node in `phase` holds the active role (a node handing off still does). */
export function isActivePhase(phase: NodePhase): boolean {
  return phase === 'active' || phase === 'handing-off';
}
