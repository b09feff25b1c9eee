// Every query the console reads. The live ones are written only by the event stream
// (ops-stream.ts) with setQueryData; `skipToken` makes sure nothing ever fetches them.
import { infiniteQueryOptions, queryOptions, skipToken } from '@tanstack/react-query';
import { type AuditFilter, auditSearch } from '@/lib/ops-api/audit-filter.ts';
import type { DashboardState } from '@/lib/dashboard/dashboard-state.ts';
import type { HistoryRange } from '@/lib/ops-api/api-types.ts';
import { RANGE_SPECS } from '@/lib/dashboard/dashboard-charts.ts';
import { opsApi } from './api-client.ts';

export type StreamPhase = 'connecting' | 'live' | 'disconnected';

export interface StreamStatus {
  phase: StreamPhase;
  /** The events request was refused with 401: reads need a sign-in on this node. */
  needsSignIn: boolean;
  /**
   * When the newest message arrived (local wall clock for people, performance.now() for
   * countdowns), stamped when the stream is lost: what the page shows is as of then. Absent
   * while live (it is not updated per message: nothing re-renders for it).
   */
  lastData?: { wall: number; mono: number /** performance.now() when the page saw the loss. */; lostAt: number };
}

export const dashboardQuery = queryOptions<DashboardState>({
  queryKey: ['ops', 'dashboard'],
  queryFn: skipToken,
  staleTime: Infinity,
  gcTime: Infinity,
  // 10,000 locks in a Map: deep comparison would cost more than it saves, and the reducer
  // already keeps unchanged parts identical.
  structuralSharing: false,
});

export const streamStatusQuery = queryOptions<StreamStatus>({
  queryKey: ['ops', 'stream'],
  queryFn: skipToken,
  staleTime: Infinity,
  gcTime: Infinity,
});

export const authQuery = queryOptions({
  queryKey: ['ops', 'auth'],
  queryFn: opsApi.auth,
  staleTime: 60_000,
});

export const LOCK_DETAIL_PREFIX = ['ops', 'lock'] as const;

export interface LockDetailResult {
  detail: Awaited<ReturnType<typeof opsApi.lockDetail>>;
  /** Local monotonic time the answer arrived: the detail's countdowns start here. */
  receivedAt: number;
}

export function lockDetailQuery(name: string) {
  return queryOptions({
    queryKey: [...LOCK_DETAIL_PREFIX, name],
    queryFn: async (): Promise<LockDetailResult> => ({ detail: await opsApi.lockDetail(name), receivedAt: performance.now() }),
    // Refetched when a delta touches this lock (the stream invalidates it), never on a timer.
    staleTime: Infinity,
    gcTime: 30_000,
  });
}

/**
 * Under the lock detail's key (['ops', 'lock', name, 'history']): the stream's invalidation of a
 * touched lock's detail (ops-stream.ts) refetches its history too, so a new end shows at once.
 */
export function lockHistoryQuery(name: string) {
  return queryOptions({ queryKey: [...LOCK_DETAIL_PREFIX, name, 'history'], queryFn: () => opsApi.lockHistory(name), staleTime: Infinity, gcTime: 30_000 });
}

/**
 * A range of the charts, fetched when the range is picked and again once per bucket (10 s, or
 * 5 min for 24 h): the event stream carries only the last 5 minutes, so the longer ranges (and
 * the by-cause figures the server merges over a range) are read from GET /api/v1/stats/history.
 */
export function statsHistoryQuery(range: HistoryRange) {
  return queryOptions({
    queryKey: ['ops', 'stats-history', range],
    queryFn: () => opsApi.statsHistory(range),
    refetchInterval: RANGE_SPECS[range].bucketMs,
    staleTime: RANGE_SPECS[range].bucketMs,
  });
}

export const AUDIT_PREFIX = ['ops', 'audit'] as const;

/** Entries a page of the audit card asks for; older pages come one such page at a time. */
export const AUDIT_PAGE_SIZE = 200;

/**
 * The audit card's pages, newest first, each back in time from the one before (`older`). The
 * stream invalidates every audit query when the node keeps an entry (its `audit` position
 * moved), and TanStack then reads every loaded page again from the newest: the pages stay one
 * consistent walk, with what arrived (also a peer's older entries) at its place.
 */
export function auditPagesQuery(filter: AuditFilter, role: string | null) {
  // The role is part of the key: signing in or out asks again instead of showing the old answer.
  return infiniteQueryOptions({
    queryKey: [...AUDIT_PREFIX, 'pages', auditSearch(filter, { limit: AUDIT_PAGE_SIZE }), role ?? 'anonymous'],
    queryFn: ({ pageParam }) => opsApi.audit(auditSearch(filter, { limit: AUDIT_PAGE_SIZE, before: pageParam })),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.older,
    staleTime: Infinity,
  });
}

/** The newest admin actions the events feed shows (filtered server-side), whatever the engine's churn. */
export function auditFeedQuery(filter: AuditFilter, role: string | null) {
  const search = auditSearch(filter, { limit: AUDIT_PAGE_SIZE });
  return queryOptions({ queryKey: [...AUDIT_PREFIX, 'feed', search, role ?? 'anonymous'], queryFn: () => opsApi.audit(search), staleTime: Infinity });
}
