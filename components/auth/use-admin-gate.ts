import { useCallback } from 'react';
import { useAuth } from '../data/queries.ts';
import { noteActionOpened, requestSignIn } from '../data/sign-in-request.ts';

/**
 * `gate(what, open)`: `open` shows an admin action's confirm dialog (with its target: the holder
 * and token, the waiter, the client, the handoff target). Signed in as admin, it opens now.
 * Signed out or with the read token, nothing is sent: the sign-in form opens with a line saying
 * what needs it, and a sign-in as admin opens the same confirm. While the session is still
 * unknown (or could not be read) the confirm opens and the server decides; a 401 then asks for
 * the sign-in the same way (mutations.ts, useOnActionError).
 */
export type AdminGate = (what: string, open: () => void) => void;

export function useAdminGate(): AdminGate {
  const role = useAuth().data?.role;
  return useCallback(
    (what: string, open: () => void) => {
      const opened = () => {
        noteActionOpened(what, open);
        open();
      };
      if (role === undefined || role === 'admin') opened();
      else requestSignIn(`Sign in as admin to ${what}.`, opened);
    },
    [role],
  );
}
