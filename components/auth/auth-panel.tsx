import { useEffect, useId, useRef, type FormEvent } from 'react';
import { useSignIn, useSignOut } from '../data/mutations.ts';
import { useAuth, useStreamStatus } from '../data/queries.ts';
import { Badge } from '../ui/badge.tsx';
import { buttonClass, inputClass } from '../ui/button.ts';
import { Card } from '../ui/card.tsx';
import { cn } from '../ui/cn.ts';
import { type SignInRequest, useSignInRequest } from '../data/sign-in-request.ts';

/**
 * What the viewer has typed so far. It lives in the Dashboard, not in the form: the panel moves
 * to the top of the page when the stream turns out to need a sign-in, which remounts the form,
 * and a token being typed at that moment must not vanish.
 */
export interface TokenDraft {
  value: string;
  set(value: string): void;
}

/** Why the form is asked for, and the field focused (and scrolled to) on every new request. */
function useRequestFocus(request: SignInRequest | null) {
  const inputRef = useRef<HTMLInputElement>(null);
  const seq = request?.seq ?? 0;
  useEffect(() => {
    if (seq === 0) return;
    inputRef.current?.scrollIntoView({ block: 'center' });
    inputRef.current?.focus();
  }, [seq]);
  return inputRef;
}

function SignInForm({ prominent, draft }: { prominent: boolean; draft: TokenDraft }) {
  const inputId = useId();
  const errorId = useId();
  const reasonId = useId();
  const request = useSignInRequest();
  const inputRef = useRequestFocus(request);
  const token = draft.value;
  const setToken = draft.set;
  const signIn = useSignIn();
  const onSubmit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (token === '') return;
    signIn.mutate(token, { onSuccess: () => setToken('') });
  };
  const failed = signIn.isError;
  return (
    <form onSubmit={onSubmit} className={cn('flex flex-wrap items-end gap-2', prominent && 'flex-col items-stretch sm:flex-row sm:items-end')}>
      {request !== null && (
        <p id={reasonId} data-testid="sign-in-reason" className="w-full text-sm font-medium text-amber-800 dark:text-amber-300">
          {request.reason}
        </p>
      )}
      <div className="flex min-w-0 flex-1 flex-col gap-1">
        <label htmlFor={inputId} className="text-sm font-medium">
          Admin token
        </label>
        <input
          id={inputId}
          ref={inputRef}
          type="password"
          autoComplete="current-password"
          required
          // The panel moved to the top: the viewer has nothing else to do here, and may have
          // been typing in the form that was just replaced.
          autoFocus={prominent}
          value={token}
          onChange={(e) => setToken(e.target.value)}
          aria-invalid={failed || undefined}
          aria-describedby={[request !== null ? reasonId : '', failed ? errorId : ''].filter((id) => id !== '').join(' ') || undefined}
          className={cn(inputClass, 'w-full min-w-0')}
        />
      </div>
      <button type="submit" className={buttonClass('primary')} disabled={signIn.isPending}>
        {signIn.isPending ? 'Signing in…' : 'Sign in'}
      </button>
      {failed && (
        <p id={errorId} role="alert" className="w-full text-sm text-red-700 dark:text-red-300">
          {signIn.error.message}
        </p>
      )}
    </form>
  );
}

/**
 * Who the viewer is and a way to change it. When the event stream was refused with 401 the
 * panel becomes the page's first thing: nothing else can show until the viewer signs in.
 */
export function AuthPanel({ draft }: { draft: TokenDraft }) {
  const auth = useAuth();
  const { needsSignIn } = useStreamStatus();
  const signOut = useSignOut();
  const request = useSignInRequest();
  const role = auth.data?.role ?? null;

  // Signed in with the read token and an admin button was pressed: the form comes back.
  if (role !== null && !needsSignIn && !(role === 'read' && request !== null)) {
    return (
      <Card title="Access" id="access">
        <div className="flex flex-wrap items-center justify-between gap-2">
          <p className="text-sm">
            Signed in as <Badge tone={role === 'admin' ? 'info' : 'neutral'}>{role}</Badge>
          </p>
          <button type="button" className={buttonClass('secondary')} onClick={() => signOut.mutate()} disabled={signOut.isPending}>
            Sign out
          </button>
        </div>
        {signOut.isError && (
          <p role="alert" className="mt-2 text-sm text-red-700 dark:text-red-300">
            {signOut.error.message}
          </p>
        )}
      </Card>
    );
  }

  return (
    <Card
      title={needsSignIn ? 'Sign in to see this node' : 'Access'}
      headingLevel={needsSignIn ? 2 : 3}
      id="access"
      className={cn(needsSignIn && 'border-amber-400 ring-2 ring-amber-300 dark:border-amber-600 dark:ring-amber-700')}
    >
      <p className="mb-3 text-sm text-slate-600 dark:text-slate-300">
        {needsSignIn
          ? 'This node does not open its state to anonymous readers. Sign in with an admin token.'
          : auth.data?.readsOpen === false
            ? 'Reads need a sign-in on this node.'
            : 'Reads are open; sign in to force-release locks, kick waiters or hand off.'}
      </p>
      {auth.isError && !needsSignIn && <p className="mb-2 text-sm text-red-700 dark:text-red-300">Could not check the session: {auth.error.message}</p>}
      <SignInForm prominent={needsSignIn} draft={draft} />
    </Card>
  );
}
