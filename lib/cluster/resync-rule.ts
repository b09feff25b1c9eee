// When a standby asks the active it follows for a (new) snapshot: a pure rule over its phase,
// its link to that active, what that active's status says and when it last asked (monotonic ms).
//
// Why this rule. A sync request can go unanswered (sent while that node was still promoting):
// a syncing node asks again after SYNC_RETRY_MS. And an active that no longer streams to a
// standby (it stepped out after a freeze and took the role back, or cut this standby off) says
// so by leaving it out of the lags in its status: the standby re-syncs, after twice as long.
// Never while a snapshot is still arriving (a large one can take longer than the retry), and
// only over a link that is up.
import type { NodePhase } from '../ops-api/cluster-vocabulary.ts';

export const SYNC_RETRY_MS = 500;

export interface ResyncInput {
  selfId: string;
  phase: NodePhase;
  /** The link to the followed active; null when none is followed or the link is down. */
  link: { receiving: boolean } | null;
  /** The followed active's last status (its phase, and the standbys it streams to as lag keys); null when none. */
  followedStatus: { phase: NodePhase; lags?: Readonly<Record<string, unknown>> | undefined } | null;
  now: number;
  /** When this node last asked for a snapshot. */
  syncRequestedAt: number;
}

export type ResyncDecision =
  | { kind: 'none' }
  /** Ask the followed active for a snapshot: the last request went unanswered, or it dropped this standby's stream. */
  | { kind: 'request'; why: 'unanswered' | 'dropped' };

export function resyncRule(i: ResyncInput): ResyncDecision {
  if (i.phase !== 'syncing' && i.phase !== 'standby') return { kind: 'none' };
  if (i.link === null || i.link.receiving) return { kind: 'none' };
  const s = i.followedStatus;
  const dropped = i.phase === 'standby' && s !== null && s.phase === 'active' && s.lags !== undefined && !(i.selfId in s.lags);
  if (i.phase === 'standby' && !dropped) return { kind: 'none' };
  const wait = i.phase === 'syncing' ? SYNC_RETRY_MS : 2 * SYNC_RETRY_MS;
  if (i.now - i.syncRequestedAt <= wait) return { kind: 'none' };
  return { kind: 'request', why: i.phase === 'syncing' ? 'unanswered' : 'dropped' };
}
