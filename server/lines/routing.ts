// What the protocol listeners do with clients, as decided by the node's cluster role.
// - serve: the active node (and a node without a cluster) serves requests;
// - redirect: a standby that knows the active sends clients there (keyed `M <lock addr>`,
//   session `REDIRECT <session addr>`);
// - hold: no active is known yet (start-up discovery, an election, a handoff in progress):
//   connections are accepted but not read, and resume or get redirected once the role settles.
//   A node that knows it will not serve soon (misconfigured) holds them briefly: maxMs.
export type Route =
  | { readonly kind: 'serve' }
  | { readonly kind: 'redirect'; readonly lock: string; readonly session: string }
  /** maxMs: how long a connection is held before its goodbye (the listener's holdMaxMs if not given). */
  | { readonly kind: 'hold'; readonly maxMs?: number };

export const SERVE: Route = { kind: 'serve' };
export const HOLD: Route = { kind: 'hold' };

export function sameRoute(a: Route, b: Route): boolean {
  if (a.kind === 'redirect' && b.kind === 'redirect') return a.lock === b.lock && a.session === b.session;
  if (a.kind === 'hold' && b.kind === 'hold') return a.maxMs === b.maxMs;
  return a.kind === b.kind;
}
