// What the console says about how this node's cluster decides who is active (ClusterView.coordination):
// the mode, and in the etcd mode who holds the role, how long this node may still grant, the in-sync
// set, the replies held for it, each etcd endpoint's health and, above all, why the node cannot
// grant when it cannot. Pure: the page passes the time since the view arrived, so the grant time
// counts down between updates instead of jumping from one to the next.
import type { ClusterView, CoordinationView } from '../ops-api/api-types.ts';
import { formatAgo, formatDuration } from './dashboard-format.ts';

export type Tone = 'neutral' | 'good' | 'warn' | 'bad' | 'info';

export interface EndpointLine {
  endpoint: string;
  healthy: boolean;
  /** "healthy", "not checked yet", or the endpoint's error. */
  status: string;
  /** "checked 2 s ago", or null before the first check. */
  checked: string | null;
}

export interface EtcdModel {
  mode: 'etcd';
  label: string;
  /** Why this node cannot grant, in the node's own words; null when it can (or is a standby). */
  blocked: string | null;
  /** Who holds the active role key in etcd, as this node last read it. */
  holder: string;
  /** The grant permission's line: "1.2 s left" counting down, or why there is none. */
  grant: { text: string; tone: Tone; remainingMs: number | null };
  ttl: string;
  inSync: string;
  electable: boolean;
  /** A clean stop's quiet period, counting down ("a stopped cleanly: nobody takes the role for 12 s"); null when there is none. */
  quiet: string | null;
  repliesWaiting: number;
  endpoints: EndpointLine[];
  healthyEndpoints: number;
  lastError: string | null;
}

export type CoordinationModel = { mode: 'peers'; label: string } | EtcdModel;

export const ETCD_LABEL = 'etcd (partition-safe)';
export const PEERS_LABEL = 'peers';

/**
 * The model of `cluster`'s coordination `elapsedMs` after the view arrived; null on a single node
 * (no cluster, nothing to coordinate). A cluster without `coordination` runs the default mode.
 */
export function coordinationModel(cluster: Pick<ClusterView, 'clustered' | 'self' | 'coordination'>, elapsedMs: number): CoordinationModel | null {
  if (!cluster.clustered) return null;
  const c = cluster.coordination;
  if (c === undefined) return { mode: 'peers', label: PEERS_LABEL };
  return etcdModel(c, cluster.self, elapsedMs);
}

/**
 * The model at local time `now` of a view that arrived at `arrivedAt` (the message that carried
 * it: the stream re-sends the view only when a keep-alive or a probe moves its figures, so they
 * count on from there, not from the newest message). Before any view, as it arrived.
 */
export function coordinationModelAt(
  cluster: Pick<ClusterView, 'clustered' | 'self' | 'coordination'>,
  arrivedAt: number | undefined,
  now: number,
): CoordinationModel | null {
  return coordinationModel(cluster, arrivedAt === undefined ? 0 : Math.max(0, now - arrivedAt));
}

function etcdModel(c: CoordinationView, self: string, elapsedMs: number): EtcdModel {
  return {
    mode: 'etcd',
    label: ETCD_LABEL,
    blocked: c.blocked,
    holder: holderText(c, self),
    grant: grantLine(c, elapsedMs),
    ttl: formatDuration(c.lease.ttlMs),
    inSync:
      c.inSync === null ? 'not stored (a new cluster, or after a clean stop)' : c.inSync.length === 0 ? 'empty (no standby in sync yet)' : c.inSync.join(', '),
    electable: c.electable,
    quiet: quietText(c, elapsedMs),
    repliesWaiting: c.repliesWaiting,
    endpoints: c.endpoints.map((e) => ({
      endpoint: e.endpoint,
      healthy: e.healthy,
      status: e.healthy ? 'healthy' : (e.lastError ?? (e.checkedAgoMs === null ? 'not checked yet' : 'unhealthy')),
      // The age as of the view, plus the time since it arrived.
      checked: e.checkedAgoMs === null ? null : `checked ${formatAgo(e.checkedAgoMs + Math.max(0, elapsedMs))}`,
    })),
    healthyEndpoints: c.endpoints.filter((e) => e.healthy).length,
    lastError: c.lastError,
  };
}

function quietText(c: CoordinationView, elapsedMs: number): string | null {
  if (c.quiet === null) return null;
  // Baton always writes the key under a lease; one without (written by hand) lasts until deleted.
  if (c.quiet.remainingMs === null) return `${c.quiet.by} stopped cleanly: nobody takes the role until the quiet key (no lease) is deleted`;
  const left = Math.max(0, c.quiet.remainingMs - Math.max(0, elapsedMs));
  // At 0 the key is about to go (its lease ran out); the next view drops the line.
  return `${c.quiet.by} stopped cleanly: nobody takes the role for ${formatDuration(left)} (its longest lease)`;
}

function holderText(c: CoordinationView, self: string): string {
  if (c.holding) return `this node (${self})`;
  return c.holder === null ? 'nobody' : c.holder === self ? `this node (${self}), lease not confirmed` : c.holder;
}

/** The grant time left now: the view's figure less the time since, never below 0. */
export function grantRemainingAt(c: Pick<CoordinationView, 'lease'>, elapsedMs: number): number | null {
  const left = c.lease.grantRemainingMs;
  return left === null ? null : Math.max(0, left - Math.max(0, elapsedMs));
}

function grantLine(c: CoordinationView, elapsedMs: number): EtcdModel['grant'] {
  const left = grantRemainingAt(c, elapsedMs);
  if (c.blocked !== null) return { text: 'not granting', tone: 'bad', remainingMs: left };
  if (!c.holding) return { text: 'not the holder: grants nothing', tone: 'neutral', remainingMs: null };
  if (left === null) return { text: 'no permission yet', tone: 'warn', remainingMs: null };
  // Under a third of the TTL left means a keep-alive round is late (one is sent every third).
  return { text: `${formatDuration(left)} left`, tone: left === 0 ? 'bad' : left < c.lease.ttlMs / 3 ? 'warn' : 'good', remainingMs: left };
}

/**
 * In the etcd mode a standby's replication "in sync" is not what makes it a successor: only the
 * members of the in-sync set etcd stores may take the role (with `--etcd-in-sync 1`, one standby
 * of two). The peers card says which standbys those are, so a synced non-member does not read as
 * one. Null in the peers mode, for non-standbys and before a set was stored.
 */
export function successorBadge(
  coordination: CoordinationView | undefined,
  node: { id: string; role: string; alive: boolean },
): { text: string; tone: Tone; title: string } | null {
  if (coordination === undefined || coordination.inSync === null || node.role !== 'standby' || !node.alive) return null;
  return coordination.inSync.includes(node.id)
    ? { text: 'in-sync set', tone: 'good', title: 'A member of the in-sync set stored in etcd: may take the active role' }
    : { text: 'not in the in-sync set', tone: 'neutral', title: 'Not a member of the in-sync set stored in etcd: may not take the active role' };
}
