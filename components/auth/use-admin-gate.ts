import { useCallback } from 'react';
import { useAuth } from '../data/queries.ts';
import { requestSignIn } from '../data/sign-in-request.ts';

/**
 * Runs an admin action when the viewer is signed in as admin; otherwise opens the sign-in form
 * with a line saying what needs it. While the session is still unknown (or could not be read)
 * the action runs and the server decides, as before.
 */
export function useAdminGate(): (what: string, run: () => void) => void {
  const role = useAuth().data?.role;
  return useCallback(
    (what: string, run: () => void) => {
      if (role === undefined || role === 'admin') run();
      else requestSignIn(`Sign in as admin to ${what}.`);
    },
    [role],
  );
}
