// The mutable state of one cluster node: its phase and what it follows, what its peers last
// said, and the times its decisions go by. Plain data: the runner (cluster-node.ts) owns it,
// the decisions and transitions change it through their contexts, and the pure rules of
// lib/cluster read copies of it.
import type { StatusMessage } from '../../lib/cluster/peer-messages.ts';
import { isActivePhase, type NodePhase, type NodeRole } from '../../lib/ops-api/cluster-vocabulary.ts';
import type { ReturnVerdict, SteadyRecord } from '../../lib/cluster/priority-return.ts';

export class NodeState {
  phase: NodePhase = 'discovering';
  yielded = false;
  /** Shutting down: hands off and never takes the active role again. */
  leaving = false;
  /**
   * Active with state of its own making only: it promoted at start-up with no active to follow,
   * and no standby has synced from it since. Between two actives, a fresh one steps down.
   */
  fresh = false;
  /**
   * Set while this node holds only part of the table of the active it followed, which is not
   * heard (role-decider.ts holdsPartialTable): it does not take the role, and says why. `from`:
   * that active's id; `since`: monotonic ms.
   */
  partialHold: { from: string | null; since: number } | null = null;
  /** The peer this node takes as active (null when none is known, or when it is active itself). */
  following: string | null = null;
  /** Instance of the active whose state this node's mirror holds. */
  syncedWith: string | null = null;
  lastActiveInstance: string | null = null;
  /** Each peer's last status, by id. */
  readonly statuses = new Map<string, StatusMessage>();
  /** When each peer's last status was received (monotonic ms). */
  readonly statusAt = new Map<string, number>();
  /** Lower-priority peers seen active at the same time as this node (split brain), by id. */
  readonly rivals = new Set<string>();
  /** While active: each standby that has been synced with it without a break, and since when (priority-return.ts). */
  readonly steady = new Map<string, SteadyRecord>();
  /** While active: the higher-priority node it will hand the role back to, and why not yet (as of `at`, monotonic ms); null when none. */
  returnWait: { verdict: Extract<ReturnVerdict, { kind: 'wait' }>; at: number } | null = null;
  /** Since when this active waits for its peers to confirm it after its grant window lapsed; null when not. */
  reconfirmSince: number | null = null;
  /** Until then, the node only listens (start-up, and after this process was frozen). Set at start. */
  discoverUntil = 0;
  /** When the last decision ran (a longer gap than the peer timeout means this process was frozen). Set at start. */
  lastDecideAt = 0;
  /** When this process last ran again after a freeze (monotonic ms); silence counts from here at the earliest. */
  resumedAt = Number.NEGATIVE_INFINITY;
  /** The followed node whose silence this node has announced (see cluster-decisions.ts). */
  lossAnnouncedFor: string | null = null;
  /** When the refusal to promote was last logged (monotonic ms). */
  refusalNotedAt = Number.NEGATIVE_INFINITY;
  /** Monotonic time of the last sync request. */
  syncRequestedAt = Number.NEGATIVE_INFINITY;
  /** Set while a handoff waits for its successor's `promoted`. */
  handoffWaiter: { peer: string; resolve(ok: boolean, failover?: string | null): void } | null = null;
  /** The etcd mode: since when this active's etcd permission has lapsed (grants stopped); null while it grants, and in the peers mode. */
  grantsLapsedAt: number | null = null;
  /** The etcd mode: set while this node, the successor of a handoff, campaigns for the role key to take over. */
  etcdTakeOver = false;
  /** Set when the node stops: no timer or message does anything after. */
  stopped = false;

  role(): NodeRole {
    return isActivePhase(this.phase) ? 'active' : 'standby';
  }
}
