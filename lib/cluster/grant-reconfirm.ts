// When an active whose grant window lapsed without a freeze (its heartbeats too far apart: a
// long GC, a loaded host) may grant again: a pure rule over what its peers have said since.
//
// Why this rule. A peer promotes only if it stopped hearing the active for a peer timeout, and
// a peer that did would say so (its status names no active, or itself promoting or active). So
// once every live peer has sent a status that it can only have written after reading one of
// our heartbeats sent after the lapse, and each of them says it follows this node, no peer has
// promoted and none will before our new window ends: the window may open again. Such a status
// is one received at least one heartbeat interval after the lapse was noticed (the first
// heartbeat after it goes out within one interval, and the peer answers on its own cadence).
// A peer that is active or promoting means another node may grant: step out at once. No
// confirmation within a peer timeout: step out as after a freeze (the peers may be cut off).
import { isActivePhase, type NodePhase } from '../ops-api/cluster-vocabulary.ts';

/** What the rule reads of one peer. */
export interface ReconfirmPeer {
  /** Whether the link is up and the peer was heard within the peer timeout. */
  alive: boolean;
  /** The peer's last status, or null if none was received. */
  status: { phase: NodePhase; active: string | null } | null;
  /** When that status was received (monotonic ms), or null. */
  statusAt: number | null;
}

export interface ReconfirmInput {
  selfId: string;
  /** When the lapse was noticed (monotonic ms). */
  since: number;
  now: number;
  heartbeatMs: number;
  peerTimeoutMs: number;
  peers: readonly ReconfirmPeer[];
}

export type ReconfirmVerdict =
  /** Every live peer follows this node, in a status sent after our post-lapse heartbeat. */
  | { kind: 'open' }
  /** Not every live peer has confirmed yet; grants stay shut. */
  | { kind: 'wait' }
  /** A peer is (becoming) active, or confirmation took longer than a peer timeout. */
  | { kind: 'step-out'; why: 'rival' | 'unconfirmed' };

export function reconfirmVerdict(input: ReconfirmInput): ReconfirmVerdict {
  let confirmed = true;
  for (const peer of input.peers) {
    if (!peer.alive) continue;
    const s = peer.status;
    if (s !== null && (isActivePhase(s.phase) || s.phase === 'promoting')) return { kind: 'step-out', why: 'rival' };
    const fresh = peer.statusAt !== null && peer.statusAt >= input.since + input.heartbeatMs;
    if (s === null || !fresh || s.active !== input.selfId) confirmed = false;
  }
  if (confirmed) return { kind: 'open' };
  if (input.now - input.since > input.peerTimeoutMs) return { kind: 'step-out', why: 'unconfirmed' };
  return { kind: 'wait' };
}
