// Where a node that is not the active sends its clients: a pure rule over its phase and the
// active it follows.
//
// Why this rule. Clients go to the active this node follows while it is in touch with it
// (the link is up and the active was heard within the peer timeout); when its link is down or
// it went silent, they are held here until the cluster settles, not sent to a dead node. A node
// that holds the active role, or is still discovering or promoting, steers its clients
// elsewhere (its transitions), so this rule leaves them as they are.
import type { NodePhase } from '../ops-api/cluster-vocabulary.ts';

export interface ClientRouteInput<P> {
  phase: NodePhase;
  /** The followed active, with whether its link is up and whether it was heard; null when none is followed. */
  followed: { peer: P; linkUp: boolean; alive: boolean } | null;
}

export type ClientRouteDecision<P> =
  /** Not this rule's to steer: leave the route as it is. */
  | { kind: 'keep' }
  /** Send clients to the followed active. */
  | { kind: 'redirect'; to: P }
  /** Hold clients here until the cluster settles. */
  | { kind: 'hold' };

export function clientRoute<P>(i: ClientRouteInput<P>): ClientRouteDecision<P> {
  if (i.phase !== 'syncing' && i.phase !== 'standby') return { kind: 'keep' };
  const f = i.followed;
  return f?.linkUp && f.alive ? { kind: 'redirect', to: f.peer } : { kind: 'hold' };
}
