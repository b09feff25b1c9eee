// The bulk release by client as an admin action: one useMutation under the shared action key,
// so its result lands in the one aria-live status region like every other action.
import { useMutation } from '@tanstack/react-query';
import { type ClientMatchView, clientMatchText } from '@/lib/dashboard/client-match.ts';
import { opsApi } from './api-client.ts';
import { ACTION_KEY, useOnActionError } from './mutations.ts';

export interface ReleaseClientVariables {
  pendingText: string;
  /** The identity, or the address, the locks were listed by (and which of the two). */
  client: ClientMatchView;
  /** Each listed lock's token: only these grants are released. */
  tokens: string[];
}

/** "Released 300 locks held by identity worker-7; 0 stale (no longer held by it, left alone)." */
export function releaseClientText(client: ClientMatchView, released: number, stale: number): string {
  const locks = released === 1 ? '1 lock' : `${released} locks`;
  return `Released ${locks} held by ${clientMatchText(client)}; ${stale} stale (no longer held by it, left alone).`;
}

export function useReleaseClient() {
  const onError = useOnActionError();
  return useMutation({
    mutationKey: [...ACTION_KEY, 'release-client'],
    mutationFn: async (v: ReleaseClientVariables): Promise<string> => {
      const result = await opsApi.releaseClient(v.client, v.tokens);
      return releaseClientText(v.client, result.released.length, result.stale.length);
    },
    onError,
  });
}
