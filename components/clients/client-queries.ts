// The client view's reads: what one client holds (clients/held, every page up to a bulk
// release's maximum) and waits for (clients/waiting, up to WAITING_LIST_MAX), asked again every
// few seconds while the view is open, so a bulk release or a handover shows without a reload.
import { useQuery } from '@tanstack/react-query';
import { listClientHeld } from '@/lib/dashboard/client-held-list.ts';
import type { ClientMatchView } from '@/lib/dashboard/client-match.ts';
import { listClientWaiting } from '@/lib/dashboard/client-waiting-list.ts';
import { opsApi, retryUnlessClientError } from '../data/api-client.ts';

/** How often an open client view asks again. */
export const CLIENT_VIEW_REFRESH_MS = 2_000;

export function useClientHeld(match: ClientMatchView) {
  return useQuery({
    queryKey: ['ops', 'client', match.by, match.value, 'held'],
    queryFn: () => listClientHeld(match, (after, limit) => opsApi.clientHeld(match, after, limit)),
    refetchInterval: CLIENT_VIEW_REFRESH_MS,
    retry: retryUnlessClientError,
  });
}

export function useClientWaiting(match: ClientMatchView) {
  return useQuery({
    queryKey: ['ops', 'client', match.by, match.value, 'waiting'],
    queryFn: () => listClientWaiting((after, limit) => opsApi.clientWaiting(match, after, limit)),
    refetchInterval: CLIENT_VIEW_REFRESH_MS,
    retry: retryUnlessClientError,
  });
}
