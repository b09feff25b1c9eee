// "Sign in to do this": an admin button pressed by a viewer who is not signed in as admin asks the
// access panel to show its form (and say why) instead of sending a request that can only fail
// with 401. A tiny store outside React, so any button can ask and the panel, wherever it is, hears.
import { useSyncExternalStore } from 'react';

export interface SignInRequest {
  /** What needs the sign-in: "Sign in as admin to force-release e2e-lock." */
  reason: string;
  /** Grows with each request, so the panel refocuses its field on every press. */
  seq: number;
}

let current: SignInRequest | null = null;
let seq = 0;
const listeners = new Set<() => void>();

function emit(): void {
  for (const l of listeners) l();
}

export function requestSignIn(reason: string): void {
  seq += 1;
  current = { reason, seq };
  emit();
}

export function clearSignInRequest(): void {
  if (current === null) return;
  current = null;
  emit();
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

export function useSignInRequest(): SignInRequest | null {
  return useSyncExternalStore(
    subscribe,
    () => current,
    () => null,
  );
}
