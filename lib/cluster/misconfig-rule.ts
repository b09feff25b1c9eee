// Whether a node the role decider would promote must not, because it or its peers are
// misconfigured: a pure rule over what the node's mesh saw (a refusal) and what it knows.
//
// Why this rule. Refused by a peer (or refusing one), hearing nobody, and never part of the
// running cluster in this run: this node or its peers are misconfigured (admin token, a --node
// given twice), and serving alone would split the cluster. A standby that followed an active
// goes on as usual (it may be refusing a misconfigured newcomer while the real active died).
// It will not serve until the configuration is fixed, so clients are sent on at once (to their
// next address) rather than held; the refusal is logged at most once per REFUSAL_LOG_EVERY_MS.
import type { RoleDecision } from './role-decider.ts';

export const REFUSAL_LOG_EVERY_MS = 10_000;

export interface MisconfigInput {
  /** What the role decider answered this turn. */
  decision: RoleDecision;
  /** How many peers the node hears (alive within the peer timeout). */
  alivePeers: number;
  /** The mesh's most recent refusal, when recent enough to count; null otherwise. */
  refusal: { peer: string; reason: 'auth' | 'duplicate' } | null;
  /** Instance of the last active this node followed (or was); null when none in this run. */
  lastActiveInstance: string | null;
  now: number;
  /** When the refusal was last logged (monotonic ms). */
  refusalNotedAt: number;
}

export type MisconfigDecision =
  /** Carry out the role decision. */
  | { kind: 'go-on' }
  /** Do not promote; send clients on. `log`: say why now (and note the time). */
  | { kind: 'refuse'; peer: string; reason: 'auth' | 'duplicate'; log: boolean };

export function misconfigRule(i: MisconfigInput): MisconfigDecision {
  if (i.decision.kind !== 'promote' || i.alivePeers > 0 || i.refusal === null || i.lastActiveInstance !== null) return { kind: 'go-on' };
  return { kind: 'refuse', peer: i.refusal.peer, reason: i.refusal.reason, log: i.now - i.refusalNotedAt > REFUSAL_LOG_EVERY_MS };
}
