// Whether this process was frozen since the node's last decision, or its grant window passed
// without a freeze: a pure rule over the node's own times (monotonic ms from the injected clock).
//
// Why this rule. A process that did not run for longer than the peer timeout (SIGSTOP, a VM
// pause, a swap storm) has been taken for dead: the peers may have promoted another node, and
// what it last heard of them is stale. It listens again for a peer timeout before deciding
// anything, and an active steps out meanwhile, so that a stale active never overrides the one
// that took over while it was away. An active whose grant window passed with a shorter gap
// (heartbeats too far apart: a long GC, a loaded host) cannot know that no peer has promoted
// either (see server/cluster/role-lease.ts): its grants stay shut until its peers confirm it
// (grant-reconfirm.ts), and it is not treated as frozen.
import { isActivePhase, type NodePhase } from '../ops-api/cluster-vocabulary.ts';

export interface FreezeInput {
  now: number;
  /** When the node's previous decision ran. */
  lastDecideAt: number;
  peerTimeoutMs: number;
  phase: NodePhase;
  /** Whether the node's grant window has passed at `now` (RoleLease.lapsed). */
  leaseLapsed: boolean;
  /** Since when the node waits for its peers to confirm it after a lapse; null when it does not. */
  reconfirmSince: number | null;
}

export type FreezeDecision =
  /** Nothing happened: the node goes on. */
  | { kind: 'none' }
  /** The grant window of an active passed without a freeze: hold grants and ask the peers (from `since`). */
  | { kind: 'hold-grants'; since: number; gapMs: number }
  /** Grants are already held for a confirmation under way. */
  | { kind: 'holding' }
  /** Frozen longer than the peer timeout: listen again, and step out of the active role if it held it. */
  | { kind: 'frozen'; frozenMs: number; stepOut: boolean };

export function freezeRule(i: FreezeInput): FreezeDecision {
  const frozenMs = i.now - i.lastDecideAt;
  // Only a fully active node has a grant window to lapse (a handing-off one already holds its clients).
  const lapsed = i.phase === 'active' && i.leaseLapsed;
  if (frozenMs <= i.peerTimeoutMs && !lapsed) return { kind: 'none' };
  if (frozenMs <= i.peerTimeoutMs) return i.reconfirmSince === null ? { kind: 'hold-grants', since: i.now, gapMs: frozenMs } : { kind: 'holding' };
  return { kind: 'frozen', frozenMs, stepOut: isActivePhase(i.phase) };
}
