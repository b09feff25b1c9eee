import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import type { WaiterHits } from '@/lib/dashboard/lock-table-query.ts';
import { opsApi, retryUnlessClientError } from '../data/api-client.ts';

/** Shorter searches would match most addresses ("1", "12"): waiters are searched from two characters. */
export const MIN_WAITER_SEARCH = 2;
/** Queues move: a search still typed is asked again this often. */
const REFRESH_MS = 5_000;

/**
 * The locks one of whose waiters matches the search (GET /api/v1/waiters/search): the table has
 * each lock's queue length, not its waiters, so the server looks. Null while there is no search
 * (or no answer yet): the table then matches by name and holder only.
 */
export function useWaiterSearch(q: string): WaiterHits | null {
  const text = q.trim();
  const on = text.length >= MIN_WAITER_SEARCH;
  const query = useQuery({
    queryKey: ['ops', 'waiter-search', text],
    queryFn: () => opsApi.searchWaiters(text),
    enabled: on,
    refetchInterval: REFRESH_MS,
    staleTime: REFRESH_MS,
    placeholderData: keepPreviousData,
    retry: retryUnlessClientError,
  });
  const data = on ? query.data : undefined;
  return useMemo(() => (data === undefined ? null : { q: data.q, names: new Set(data.locks) }), [data]);
}
