// Admin actions. Each is a useMutation under the ['ops','action'] key; the action status region
// reads the newest one with useMutationState, so any component can act and the result still
// lands in one aria-live place.
import { useMutation, useMutationState, useQueryClient, type Mutation } from '@tanstack/react-query';
import type { AuthView, Protocol } from '@/lib/ops-api/api-types.ts';
import { requestSignInAgain, resumeSignInRequest } from './sign-in-request.ts';
import { ApiRequestError, opsApi } from './api-client.ts';
import { useRestartStream } from './ops-stream-provider.tsx';
import { authQuery } from './query-keys.ts';
import { type HandoffTaken, handoffFailed, handoffTaken, waitHandoffFinished } from './handoff-progress.ts';

export const ACTION_KEY = ['ops', 'action'] as const;

/** Shown while the request runs; every action's variables carry it. */
interface ActionVariables {
  pendingText: string;
}

export const CHANGED_HANDS = 'the lock changed hands; nothing was released';

export interface ForceReleaseVariables extends ActionVariables {
  name: string;
  token: string;
  client: string;
  protocol: Protocol;
}

export interface KickVariables extends ActionVariables {
  name: string;
  id: string;
}

export interface HandoffVariables extends ActionVariables {
  /** null: any standby (the active node picks). */
  target: string | null;
  /** Told as soon as the API answers: the standby that took over and its timeline entry (the control's status follows it). */
  onTakenOver?: (taken: HandoffTaken) => void;
}

/** A 401 means the session ended: the auth view is stale, and the sign-in form asks for the action again. */
export function useOnActionError() {
  const queryClient = useQueryClient();
  return (error: Error) => {
    if (!(error instanceof ApiRequestError) || error.status !== 401) return;
    void queryClient.invalidateQueries({ queryKey: authQuery.queryKey });
    requestSignInAgain();
  };
}

export function useForceRelease() {
  const onError = useOnActionError();
  return useMutation({
    mutationKey: [...ACTION_KEY, 'force-release'],
    mutationFn: async (v: ForceReleaseVariables): Promise<string> => {
      try {
        await opsApi.forceRelease(v.name, v.token);
      } catch (err) {
        if (err instanceof ApiRequestError && err.status === 409) throw new ApiRequestError(409, err.code, CHANGED_HANDS);
        throw err;
      }
      return `Force-released ${v.name}: token ${v.token} (${v.client}, ${v.protocol}) no longer holds it.`;
    },
    onError,
  });
}

export function useKickWaiter() {
  const onError = useOnActionError();
  return useMutation({
    mutationKey: [...ACTION_KEY, 'kick'],
    mutationFn: async (v: KickVariables): Promise<string> => {
      await opsApi.kickWaiter(v.name, v.id);
      return `Kicked waiter ${v.id} from the queue of ${v.name}.`;
    },
    onError,
  });
}

export function useHandoff() {
  const onError = useOnActionError();
  return useMutation({
    mutationKey: [...ACTION_KEY, 'handoff'],
    mutationFn: async (v: HandoffVariables): Promise<string> => {
      const wanted = v.target ?? 'a standby';
      let answer: unknown;
      try {
        answer = await opsApi.handoff(v.target);
      } catch (err) {
        throw handoffFailed(err, wanted);
      }
      const taken = handoffTaken(answer, wanted);
      v.onTakenOver?.(taken);
      // The role moved; the handoff is finished once every claim it touched has its fate (handoff-progress.ts).
      return waitHandoffFinished(taken);
    },
    onError,
  });
}

export function useRestore() {
  const onError = useOnActionError();
  return useMutation({
    mutationKey: [...ACTION_KEY, 'restore'],
    mutationFn: async (_v: ActionVariables): Promise<string> => {
      await opsApi.restore();
      return 'Restored: nodes that handed the active role away may take it back by priority.';
    },
    onError,
  });
}

export type ActionOutcome = { kind: 'pending' | 'success' | 'error'; text: string } | null;

function hasPendingText(value: unknown): value is ActionVariables {
  return typeof value === 'object' && value !== null && 'pendingText' in value && typeof value.pendingText === 'string';
}

function outcomeOf(mutation: Mutation<unknown, Error, unknown, unknown>): ActionOutcome {
  const { status, data, error, variables } = mutation.state;
  if (status === 'pending') return { kind: 'pending', text: hasPendingText(variables) ? variables.pendingText : 'Working…' };
  if (status === 'success') return { kind: 'success', text: typeof data === 'string' ? data : 'Done.' };
  if (status === 'error') return { kind: 'error', text: errorText(error) };
  return null;
}

/** A refusal for want of an admin session says what to do, not the server's bare "missing or bad credentials". */
export const SESSION_ENDED_TEXT = 'Refused: this page is no longer signed in as admin (the session ended). Sign in, and the action opens again.';

function errorText(error: Error | null): string {
  if (error instanceof ApiRequestError && error.status === 401) return SESSION_ENDED_TEXT;
  return error?.message ?? 'The action failed.';
}

/** The newest admin action's state: pending text, its result, or its error message. */
export function useLastActionOutcome(): ActionOutcome {
  const outcomes = useMutationState({ filters: { mutationKey: ACTION_KEY }, select: outcomeOf });
  return outcomes[outcomes.length - 1] ?? null;
}

export function useSignIn() {
  const queryClient = useQueryClient();
  const restartStream = useRestartStream();
  return useMutation({
    mutationKey: ['ops', 'auth', 'sign-in'],
    mutationFn: (token: string): Promise<AuthView> => opsApi.signIn(token),
    onSuccess: (view) => {
      queryClient.setQueryData(authQuery.queryKey, view);
      // An action refused for want of a sign-in is answered now: its 401 must not stay in the
      // header as if it were the newest news.
      const cache = queryClient.getMutationCache();
      for (const m of cache.findAll({ mutationKey: ACTION_KEY, status: 'error' })) {
        const error = m.state.error;
        if (error instanceof ApiRequestError && (error.status === 401 || error.status === 403)) cache.remove(m);
      }
      // The action that asked for this sign-in opens its confirm again, with the same target.
      if (view.role === 'admin') resumeSignInRequest();
      restartStream();
    },
  });
}

export function useSignOut() {
  const queryClient = useQueryClient();
  const restartStream = useRestartStream();
  return useMutation({
    mutationKey: ['ops', 'auth', 'sign-out'],
    mutationFn: () => opsApi.signOut(),
    onSettled: async () => {
      await queryClient.invalidateQueries({ queryKey: authQuery.queryKey });
      restartStream();
    },
  });
}
