// What the protocol listeners do with clients, as decided by the node's cluster role.
// - serve: the active node (and a node without a cluster) serves requests;
// - redirect: a standby that knows the active sends clients there (keyed `M <lock addr>`,
//   session `REDIRECT <session addr>`);
// - hold: no active is known yet (start-up discovery, an election, a handoff in progress):
//   connections are accepted but not read, and resume or get redirected once the role settles.
export type Route =
  | { readonly kind: 'serve' }
  | { readonly kind: 'redirect'; readonly lock: string; readonly session: string }
  | { readonly kind: 'hold' };

export const SERVE: Route = { kind: 'serve' };
export const HOLD: Route = { kind: 'hold' };
