// Following the cluster from a page whose node is gone: which nodes to ask whether they are the
// active one, and where to go once one says yes. Pure: components/alive does the fetches and the
// navigation. The page keeps the last cluster view it had, so it knows every node's console
// address (NodeView.httpAddress) without the operator typing one.
import type { ClusterView } from '../ops-api/api-types.ts';

export interface FollowCandidate {
  id: string;
  /** "host:port" of its console. */
  httpAddress: string;
}

/** Every other node with a console address, in priority order (the likeliest successor first). */
export function followCandidates(cluster: Pick<ClusterView, 'nodes' | 'clustered'> | undefined): FollowCandidate[] {
  if (cluster === undefined || !cluster.clustered) return [];
  return [...cluster.nodes]
    .filter((n) => !n.self && n.httpAddress !== '')
    .sort((a, b) => a.priority - b.priority)
    .map((n) => ({ id: n.id, httpAddress: n.httpAddress }));
}

/** The probe that answers 200 only on the active node (docs/console.md), over the page's scheme. */
export function activeProbeUrl(protocol: string, httpAddress: string): string {
  return `${protocol}//${httpAddress}/readyz?role=active`;
}

/**
 * The same view on the other node's console: its root with this page's query (the selected
 * lock `?lock=`, the filters) and fragment, so the operator lands where they were.
 */
export function switchUrl(protocol: string, httpAddress: string, search: string, hash = ''): string {
  const query = search === '' || search.startsWith('?') ? search : `?${search}`;
  return `${protocol}//${httpAddress}/${query}${hash}`;
}

/** How long the page shows "switching in N s" before it goes by itself (the operator can cancel). */
export const AUTO_SWITCH_MS = 5_000;
