// Calls to the ops API (same origin; the session cookie rides along). Every failure becomes an
// ApiRequestError carrying the server's `{error:{code,message}}`, so the UI shows its message.
import type { ApiError, AuthView, ClusterView, HistoryRange, LockDetail, LockHistory, StatsHistory } from '@/lib/ops-api/api-types.ts';
import { type ClientMatchView, clientHeldQuery } from '../../lib/dashboard/client-match.ts';
import type { ClientWaitingView, ContentionRange, ContentionView, WaiterSearchView } from '@/lib/ops-api/lock-views-types.ts';
import type { ClientHeldView, ClientReleaseResult } from '@/lib/ops-api/client-release-types.ts';
import type { AuditPage } from '@/lib/ops-api/audit-filter.ts';

export class ApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ApiRequestError';
  }
}

function isApiError(value: unknown): value is ApiError {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error: unknown = value.error;
  return (
    typeof error === 'object' && error !== null && 'message' in error && typeof error.message === 'string' && 'code' in error && typeof error.code === 'string'
  );
}

async function request<T>(method: 'GET' | 'POST' | 'DELETE', path: string, body?: unknown): Promise<T> {
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      credentials: 'same-origin',
      cache: 'no-store',
      headers: body === undefined ? { accept: 'application/json' } : { accept: 'application/json', 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (err) {
    throw new ApiRequestError(0, 'network', `The console could not reach the server (${err instanceof Error ? err.message : String(err)})`);
  }
  const text = await res.text();
  let json: unknown = null;
  if (text !== '') {
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
  }
  if (!res.ok) {
    if (isApiError(json)) throw new ApiRequestError(res.status, json.error.code, json.error.message);
    throw new ApiRequestError(res.status, `http-${res.status}`, `${method} ${path} failed: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ''}`);
  }
  // The server is this app's own daemon and builds these shapes from lib/ops-api/api-types.ts.
  return json as T;
}

/** Waiters the lock detail asks for and shows: the queue's first page (the server's maximum is 1,000). */
export const QUEUE_PAGE_SHOWN = 500;

function lockPath(name: string): string {
  return `/api/v1/locks/${encodeURIComponent(name)}`;
}

export const opsApi = {
  auth: () => request<AuthView>('GET', '/api/v1/auth/session'),
  signIn: (token: string) => request<AuthView>('POST', '/api/v1/auth/session', { token }),
  signOut: () => request<unknown>('DELETE', '/api/v1/auth/session'),
  /** null when the lock is idle (404): nobody holds or waits for it. */
  lockDetail: async (name: string): Promise<LockDetail | null> => {
    try {
      return await request<LockDetail>('GET', `${lockPath(name)}?limit=${QUEUE_PAGE_SHOWN}`);
    } catch (err) {
      if (err instanceof ApiRequestError && err.status === 404) return null;
      throw err;
    }
  },
  /** The charts' history of one range (the 1 h and 24 h ranges, and every range's by-cause figures). */
  statsHistory: (range: HistoryRange) => request<StatsHistory>('GET', `/api/v1/stats/history?range=${range}`),
  /** The lock's last ended grants (kept after the lock went idle). */
  lockHistory: (name: string) => request<LockHistory>('GET', `${lockPath(name)}/history`),
  forceRelease: (name: string, token: string) => request<unknown>('POST', `${lockPath(name)}/force-release`, { token }),
  kickWaiter: (name: string, id: string) => request<unknown>('POST', `${lockPath(name)}/waiters/${encodeURIComponent(id)}/kick`),
  /** A null target lets the active node pick (the highest-priority standby in sync). */
  handoff: (target: string | null) => request<unknown>('POST', '/api/v1/cluster/handoff', target === null ? {} : { target }),
  /** Every node that yielded the active role may take it back by priority again. */
  restore: () => request<unknown>('POST', '/api/v1/cluster/restore', {}),
  /** The cluster view as this node has it (a handoff's status follows its timeline entry there). */
  cluster: () => request<ClusterView>('GET', '/api/v1/cluster'),
  /** One page of the audit; `search` from auditSearch (lib/ops-api/audit-filter.ts). */
  audit: (search: string) => request<AuditPage>('GET', `/api/v1/audit?${search}`),
  /**
   * One page of the locks one client holds, by its identity or by its address (exact; never one
   * for the other); lib/dashboard/client-held-list.ts reads them all.
   */
  clientHeld: (match: ClientMatchView, after: string | null, limit: number) =>
    request<ClientHeldView>('GET', `/api/v1/clients/held?${clientHeldQuery(match)}&limit=${limit}&after=${encodeURIComponent(after ?? '')}`),
  /** One page of what one client waits for, across locks (the client view). */
  clientWaiting: (match: ClientMatchView, after: string | null, limit: number) =>
    request<ClientWaitingView>('GET', `/api/v1/clients/waiting?${clientHeldQuery(match)}&limit=${limit}&after=${encodeURIComponent(after ?? '')}`),
  /** The most contended locks now and over the range (the top-contended view). */
  contention: (range: ContentionRange, limit: number) => request<ContentionView>('GET', `/api/v1/contention?range=${range}&limit=${limit}`),
  /** The locks whose waiters' identity or address contains `q` (the table's search). */
  searchWaiters: (q: string) => request<WaiterSearchView>('GET', `/api/v1/waiters/search?q=${encodeURIComponent(q)}`),
  /** Releases those of `tokens` the client still holds; the rest come back as stale. */
  releaseClient: (match: ClientMatchView, tokens: string[]) =>
    request<ClientReleaseResult>('POST', '/api/v1/clients/force-release', { [match.by]: match.value, tokens }),
};

/** TanStack retry policy: a 4xx answer will not change by asking again. */
export function retryUnlessClientError(failureCount: number, error: Error): boolean {
  if (error instanceof ApiRequestError && error.status >= 400 && error.status < 500) return false;
  return failureCount < 2;
}
