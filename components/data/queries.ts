// Read-only hooks over the query cache. Each picks a slice with `select`, so a component
// re-renders only when its slice changes identity (the reducer keeps unchanged slices).
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import type { AuditFilter } from '@/lib/ops-api/audit-filter.ts';
import type { ClusterView, FeedItem, HistoryBucket, HistoryRange, StatsView } from '@/lib/ops-api/api-types.ts';
import type { DashboardState, LockRow } from '@/lib/dashboard/dashboard-state.ts';
import type { TablePaging } from '@/lib/dashboard/lock-table-query.ts';
import {
  auditFeedQuery,
  auditPagesQuery,
  authQuery,
  dashboardQuery,
  lockDetailQuery,
  lockHistoryQuery,
  statsHistoryQuery,
  streamStatusQuery,
  type StreamStatus,
} from './query-keys.ts';

const selectStats = (s: DashboardState): StatsView => s.stats;
const selectCluster = (s: DashboardState): ClusterView => s.cluster;
const selectLocks = (s: DashboardState): ReadonlyMap<string, LockRow> => s.locks;
const selectFeed = (s: DashboardState): readonly FeedItem[] => s.feed;
const selectInstanceId = (s: DashboardState): string => s.instanceId;

export function useStats(): StatsView | undefined {
  return useQuery({ ...dashboardQuery, select: selectStats }).data;
}

export function useCluster(): ClusterView | undefined {
  return useQuery({ ...dashboardQuery, select: selectCluster }).data;
}

export function useLocks(): ReadonlyMap<string, LockRow> | undefined {
  return useQuery({ ...dashboardQuery, select: selectLocks }).data;
}

/**
 * While the snapshot's table still comes in pages: how far it is (locks so far, the total, the
 * name up to which it is complete); null once it is complete. A new object only while paging.
 */
const selectPaging = (s: DashboardState): TablePaging | null =>
  s.paging === null ? null : { loaded: s.locks.size, total: s.snapshotTotal, through: s.pagingThrough };

export function useTablePaging(): TablePaging | null | undefined {
  return useQuery({ ...dashboardQuery, select: selectPaging }).data;
}

export function useLockRow(name: string): LockRow | undefined {
  return useQuery({ ...dashboardQuery, select: (s: DashboardState) => s.locks.get(name) }).data;
}

export function useFeed(): readonly FeedItem[] | undefined {
  return useQuery({ ...dashboardQuery, select: selectFeed }).data;
}

export function useInstanceId(): string | undefined {
  return useQuery({ ...dashboardQuery, select: selectInstanceId }).data;
}

export interface HistoryView {
  history: readonly HistoryBucket[];
  /** Server time of the newest message: the charts' "now". */
  asOf: number;
}

const selectHistory = (s: DashboardState): HistoryView => ({ history: s.history, asOf: s.asOf });

/** History with its time; re-renders when either changes (asOf moves with every delta). */
export function useHistory(): HistoryView | undefined {
  return useQuery({ ...dashboardQuery, select: selectHistory }).data;
}

/** The newest message's server time and local arrival time (for "last seen" ages). */
export function useMessageClock(): { asOf: number; receivedAt: number } | undefined {
  return useQuery({ ...dashboardQuery, select: (s: DashboardState) => ({ asOf: s.asOf, receivedAt: s.receivedAt }) }).data;
}

const selectClusterReceivedAt = (s: DashboardState): number => s.clusterReceivedAt;

/** Local time the cluster view arrived: its running figures (the etcd mode's grant time left) count on from it. */
export function useClusterReceivedAt(): number | undefined {
  return useQuery({ ...dashboardQuery, select: selectClusterReceivedAt }).data;
}

const CONNECTING: StreamStatus = { phase: 'connecting', needsSignIn: false };

export function useStreamStatus(): StreamStatus {
  return useQuery(streamStatusQuery).data ?? CONNECTING;
}

export function useAuth() {
  return useQuery(authQuery);
}

export function useLockDetail(name: string) {
  return useQuery(lockDetailQuery(name));
}

export function useLockHistory(name: string) {
  return useQuery(lockHistoryQuery(name));
}

export function useStatsHistory(range: HistoryRange) {
  return useQuery(statsHistoryQuery(range));
}

/** The audit trail's pages for a filter, asked for once the session is known (so the answer matches the role shown). */
export function useAuditPages(filter: AuditFilter) {
  const auth = useAuth();
  const role = auth.data?.role ?? null;
  return useInfiniteQuery({ ...auditPagesQuery(filter, role), enabled: auth.data !== undefined });
}

/** The newest admin actions for the events feed; `filter` null asks for none (a kind no admin action has). */
export function useAuditFeed(filter: AuditFilter | null) {
  const auth = useAuth();
  const role = auth.data?.role ?? null;
  return useQuery({ ...auditFeedQuery(filter ?? {}, role), enabled: auth.data !== undefined && filter !== null });
}
