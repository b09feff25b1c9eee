// Whether a peer's status shows a split brain: another node active at the same time as this
// one (a healed partition). A pure rule over this node's phase and priority and the peer's status.
//
// Why this rule. It runs when the status arrives, not at the next decision: the other node
// steps down at once (role-decider.ts), and its next status would hide that there were two
// actives. The higher-priority of the two records it (the one that stays, unless it came up on
// its own with empty state: then it is the one that steps down), once per rival while that
// rival stays active; the entry goes on the failover timeline with no gap (an active was there
// throughout).
import type { FailoverView } from '../ops-api/api-types.ts';
import type { NodePhase } from '../ops-api/cluster-vocabulary.ts';

export interface SplitBrainInput {
  self: { id: string; priority: number; phase: NodePhase };
  /** The peer's id (as its status says), its priority (0 = highest) and the phase its status reports. */
  peer: { id: string; priority: number; phase: NodePhase };
  /** Whether this peer is already recorded as a rival. */
  known: boolean;
  /** Epoch ms now (the timeline's time). */
  wallNow: number;
}

export type SplitBrainDecision =
  /** Nothing to record or forget. */
  | { kind: 'none' }
  /** A new rival: remember it and record this failover entry. */
  | { kind: 'record'; failover: FailoverView }
  /** The peer is no rival (any longer): forget it, so a later split brain is recorded again. */
  | { kind: 'forget' };

export function splitBrainRule(i: SplitBrainInput): SplitBrainDecision {
  if (i.self.phase !== 'active') return { kind: 'none' };
  const rival = i.peer.phase === 'active' && i.peer.priority > i.self.priority;
  if (!rival) return { kind: 'forget' };
  if (i.known) return { kind: 'none' };
  return { kind: 'record', failover: { at: i.wallNow, from: i.peer.id, to: i.self.id, gapMs: 0, cause: 'split-brain' } };
}
