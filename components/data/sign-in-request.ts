// "Sign in to do this": an admin button pressed by a viewer who is not signed in as admin asks the
// access panel to show its form (and say why) instead of sending a request that can only fail
// with 401. A tiny store outside React, so any button can ask and the panel, wherever it is, hears.
// The button leaves what it was about to do (open its confirm dialog): a sign-in as admin runs
// it, so the operator lands back in the action they started, not on a page to find it again.
import { useSyncExternalStore } from 'react';

export interface SignInRequest {
  /** What needs the sign-in: "Sign in as admin to force-release e2e-lock." */
  reason: string;
  /** Grows with each request, so the panel refocuses its field on every press. */
  seq: number;
}

let current: SignInRequest | null = null;
let seq = 0;
/** What the button that asked was about to do; run once the viewer is admin. */
let resume: (() => void) | null = null;
const listeners = new Set<() => void>();

function emit(): void {
  for (const l of listeners) l();
}

/** Asks for the sign-in; `then` (the newest press wins) runs after a sign-in as admin. */
export function requestSignIn(reason: string, then?: () => void): void {
  seq += 1;
  current = { reason, seq };
  resume = then ?? null;
  emit();
}

export function clearSignInRequest(): void {
  resume = null;
  if (current === null) return;
  current = null;
  emit();
}

/** The admin action whose confirm opened last: what it is, and how to open it again. */
let lastOpened: { what: string; open: () => void } | null = null;

/** An admin button opened its confirm (the viewer was admin, or not known yet). */
export function noteActionOpened(what: string, open: () => void): void {
  lastOpened = { what, open };
}

/**
 * An action was refused with 401: the session ended behind the page's back (expired, signed out
 * in another tab). The confirmed action is the one whose confirm opened last (a modal: one at a
 * time), so the form asks for it by name and opens it again after the sign-in.
 */
export function requestSignInAgain(): void {
  if (lastOpened === null) requestSignIn('Your admin session ended: sign in as admin again.');
  else requestSignIn(`Your admin session ended: sign in as admin to ${lastOpened.what}.`, lastOpened.open);
}

/** Signed in as admin: the request is answered, and the action that asked for it goes on. */
export function resumeSignInRequest(): void {
  const then = resume;
  clearSignInRequest();
  then?.();
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
