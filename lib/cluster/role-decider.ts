// Who should be active: a pure function of what this node knows about itself and the peers it
// currently hears from. Not quorum: any alive node may serve, so the rules only pick one among
// the nodes that can see each other; when a partition heals, two actives meet and the rules
// make the lower-priority one step down.
//
// Rules, in order:
// - An active that hears an active of higher priority steps down to it (split brain healed),
//   unless one of the two came up on its own with empty state: that one steps down.
// - An active hands off to a higher-priority standby that is synced with it, caught up and not
//   yielded, once it has been so without a break for the hold-down (priority-return.ts): a
//   returning node takes its place back, never with empty state, and never straight away.
// - A standby follows the highest-priority active it hears.
// - With no active heard, and no peer that still hears one (an active this node cannot hear):
//   after the discovery wait, the highest-priority candidate promotes.
//   Candidates prefer nodes synced with the last active (their state is complete), then nodes
//   that have not yielded.
// - A node that followed an active and never held all of its table (mid-join: its snapshot was
//   under way or not begun when that active went silent) is no candidate while that active is
//   not heard (holdsPartialTable): its table is part of the cluster's, and serving it would lose
//   the rest for good (an active that merely cut it off, and came up alone with an empty table,
//   even steps down to it). It says so in its status, so the others pass it over too.
import { isActivePhase, type NodePhase } from '../ops-api/cluster-vocabulary.ts';
import { priorityReturn, type ReturnVerdict } from './priority-return.ts';

/** What the rules read of every node, this one and its peers alike. */
interface NodeState {
  id: string;
  /** 0 = highest. */
  priority: number;
  instance: string;
  phase: NodePhase;
  /** Instance of the active whose state the node replicated. */
  syncedWith: string | null;
  yielded: boolean;
  /** Shutting down: hands off if active, and never takes the active role (again). */
  leaving: boolean;
  /** Active with state of its own making only: promoted at start-up with nobody to follow, no standby synced since. */
  fresh: boolean;
  /** The active the node follows while it hears it (null when it hears none, or is active). */
  following: string | null;
}

export interface PeerState extends NodeState {
  /** The peer says it holds part of an active's table only (holdsPartialTable): never a candidate. */
  partial: boolean;
  /** Replication lag in events, as the active measures it (0 when caught up); null when not known. */
  lagEvents: number | null;
  /** For an active: how long the peer has been its synced standby without a break (priority-return.ts), ms; null when it is not. */
  steadyMs: number | null;
}

export interface SelfState extends NodeState {
  /** Instance of the last active this node followed. */
  lastActiveInstance: string | null;
  /** Still in the start-up wait (a node learns its peers before it may promote). */
  discovering: boolean;
  /** How long a higher-priority standby must be steady before this node, active, hands the role back to it. */
  returnHoldDownMs: number;
}

export type RoleDecision =
  | { kind: 'stay' }
  | { kind: 'follow'; id: string }
  | { kind: 'promote' }
  | { kind: 'step-down'; to: string }
  | { kind: 'handoff'; to: string };

const STAY: RoleDecision = { kind: 'stay' };

/** Rule 4 for an active: whether it hands its role back to a higher-priority standby synced with it now, or to whom later (priority-return.ts). */
export function returnVerdict(self: Pick<SelfState, 'priority' | 'instance' | 'returnHoldDownMs'>, alive: readonly PeerState[]): ReturnVerdict {
  const synced = alive.filter((p) => p.phase === 'standby' && p.syncedWith === self.instance);
  return priorityReturn(self.priority, synced, self.returnHoldDownMs);
}

/**
 * Whether this node holds only part of the last active's table and must not take the role on its
 * own: it followed an active (not itself), has not finished a snapshot from it (a join under way,
 * or a re-sync, which starts the table over), and that active is not heard. It is not known
 * whether that active is dead or only cut off (a freeze of this node, a partition): either way
 * the rest of the table is not here. The hold ends when an active is heard (it is followed and
 * synced from), or that active is heard not active (it stepped out, or follows someone: the
 * cluster is changing hands and the usual rules pick the node with the state), or the process
 * starts over (a restart forgets which active it followed: the operator's way out).
 */
export function holdsPartialTable(
  self: Pick<SelfState, 'instance' | 'syncedWith' | 'lastActiveInstance'>,
  alive: readonly Pick<PeerState, 'instance'>[],
): boolean {
  const last = self.lastActiveInstance;
  if (last === null || last === self.instance || self.syncedWith === last) return false;
  return !alive.some((p) => p.instance === last);
}

/** `alive`: the peers heard from within the peer timeout (never this node itself). */
export function decideRole(self: SelfState, alive: readonly PeerState[]): RoleDecision {
  if (self.phase === 'promoting' || self.phase === 'handing-off') return STAY;
  if (self.phase === 'active') {
    // Only a node that is fully active makes this one step down: a handing-off one is leaving the
    // role. Between two actives, one that came up on its own with empty state (a node back from
    // a power loss that missed the running cluster) yields to one with the cluster's state,
    // whatever their priorities; otherwise the higher priority stays.
    const beats = (p: PeerState) => (self.fresh !== p.fresh ? self.fresh : p.priority < self.priority);
    const higher = alive.filter((p) => p.phase === 'active' && beats(p)).sort((x, y) => x.priority - y.priority)[0];
    if (higher !== undefined) return { kind: 'step-down', to: higher.id };
    const back = returnVerdict(self, alive);
    return back.kind === 'handoff' ? { kind: 'handoff', to: back.to } : STAY;
  }
  // A node handing off is still the active one until its successor has promoted; once one has,
  // the successor comes first (the old one's last status may still say handing-off).
  // An active that came up on its own with empty state comes after one with the cluster's state.
  const handingOff = (p: PeerState) => (p.phase === 'handing-off' ? 1 : 0);
  const fresh = (p: PeerState) => (p.fresh ? 1 : 0);
  const actives = alive.filter((p) => isActivePhase(p.phase)).sort((x, y) => handingOff(x) - handingOff(y) || fresh(x) - fresh(y) || x.priority - y.priority);
  const leader = actives[0];
  if (leader !== undefined) return self.following === leader.id ? STAY : { kind: 'follow', id: leader.id };
  if (self.discovering || self.leaving) return STAY;
  // A peer still follows an active it hears: the cluster has an active this node cannot reach
  // (yet: a link not up again after a restart, or a partition). Promoting now would make a second
  // one (with an empty table, or drawing tokens from the same block). Once that peer no longer
  // hears its active, it says so at once and the rules below apply.
  // Only a peer following a node this one does not hear counts: one that follows this node (not
  // active) or a node heard to be no active either is in transition or stale, and two nodes
  // following each other would otherwise wait for each other forever.
  const heard = new Set(alive.map((p) => p.id));
  if (alive.some((p) => p.following !== null && p.following !== self.id && !heard.has(p.following))) return STAY;
  // Someone is already taking over: let it finish (it is seen as active within a heartbeat).
  if (alive.some((p) => p.phase === 'promoting')) return STAY;
  interface Candidate {
    priority: number;
    syncedWith: string | null;
    yielded: boolean;
    self: boolean;
  }
  // A node with part of a table is never a candidate, this one or a peer (holdsPartialTable).
  const selfCandidate = holdsPartialTable(self, alive) ? [] : [{ priority: self.priority, syncedWith: self.syncedWith, yielded: self.yielded, self: true }];
  let pool: Candidate[] = [
    ...selfCandidate,
    ...alive.filter((p) => !p.leaving && !p.partial).map((p) => ({ priority: p.priority, syncedWith: p.syncedWith, yielded: p.yielded, self: false })),
  ];
  if (self.lastActiveInstance !== null) {
    const synced = pool.filter((c) => c.syncedWith === self.lastActiveInstance);
    if (synced.length > 0) pool = synced;
  }
  const willing = pool.filter((c) => !c.yielded);
  if (willing.length > 0) pool = willing;
  pool.sort((x, y) => x.priority - y.priority);
  return pool[0]?.self === true ? { kind: 'promote' } : STAY;
}
