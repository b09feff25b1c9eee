// Where a node that is not the active points clients: the lock and session ports of a peer.
// In a file of its own so that the transitions and the decisions, which cluster-node.ts
// imports, need nothing from cluster-node.ts (no import cycle, not even of types).
import type { PeerConfig } from '../../lib/cluster/cluster-config.ts';
import { formatAddress } from '../../lib/protocol/address-text.ts';
import type { Route } from '../lines/routing.ts';

export function redirectRoute(p: PeerConfig): Extract<Route, { kind: 'redirect' }> {
  return {
    kind: 'redirect',
    lock: formatAddress({ host: p.host, port: p.lockPort }),
    session: formatAddress({ host: p.host, port: p.sessionPort }),
  };
}
