// The client view's reads: what one client holds (clients/held, every page up to a bulk
// release's maximum) and waits for (clients/waiting, up to WAITING_LIST_MAX), asked again every
// few seconds while the view is open, so a bulk release or a handover shows without a reload.
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { listClientHeld } from '@/lib/dashboard/client-held-list.ts';
import type { ClientMatchView } from '@/lib/dashboard/client-match.ts';
import { listClientWaiting } from '@/lib/dashboard/client-waiting-list.ts';
import { opsApi, retryUnlessClientError } from '../data/api-client.ts';
import { ACTION_KEY } from '../data/mutations.ts';

const CLIENT_PREFIX = ['ops', 'client'] as const;

/**
 * Asks again as soon as an admin action (a bulk release, a force-release, a kick) succeeds,
 * rather than at the next refresh: the operator who released a client's locks sees them go.
 */
export function useRefreshAfterActions(): void {
  const queryClient = useQueryClient();
  useEffect(
    () =>
      queryClient.getMutationCache().subscribe((event) => {
        const key = event.mutation?.options.mutationKey;
        if (event.type === 'updated' && event.action.type === 'success' && key?.[0] === ACTION_KEY[0] && key[1] === ACTION_KEY[1])
          void queryClient.invalidateQueries({ queryKey: CLIENT_PREFIX });
      }),
    [queryClient],
  );
}

/** How often an open client view asks again. */
export const CLIENT_VIEW_REFRESH_MS = 2_000;

export function useClientHeld(match: ClientMatchView) {
  return useQuery({
    queryKey: [...CLIENT_PREFIX, match.by, match.value, 'held'],
    queryFn: () => listClientHeld(match, (after, limit) => opsApi.clientHeld(match, after, limit)),
    refetchInterval: CLIENT_VIEW_REFRESH_MS,
    retry: retryUnlessClientError,
  });
}

export function useClientWaiting(match: ClientMatchView) {
  return useQuery({
    queryKey: [...CLIENT_PREFIX, match.by, match.value, 'waiting'],
    queryFn: () => listClientWaiting((after, limit) => opsApi.clientWaiting(match, after, limit)),
    refetchInterval: CLIENT_VIEW_REFRESH_MS,
    retry: retryUnlessClientError,
  });
}
