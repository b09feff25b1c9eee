import { useRef, useState } from 'react';
import { clientMatchKindText, clientMatchText, holderMatch } from '@/lib/dashboard/client-match.ts';
import type { HolderView } from '@/lib/ops-api/api-types.ts';
import { type ClientHeldList, listClientHeld } from '@/lib/dashboard/client-held-list.ts';
import { useAdminGate } from '../auth/use-admin-gate.ts';
import { opsApi } from '../data/api-client.ts';
import { useReleaseClient } from '../data/client-mutations.ts';
import { useActionBlock } from '../data/use-data-now.ts';
import { buttonClass } from '../ui/button.ts';
import { ConfirmDialog } from '../ui/confirm-dialog.tsx';
import { ClientName } from './client-name.tsx';
import { LockName } from './lock-name.tsx';
import { WORD_WRAPPED } from './unbroken.ts';

/**
 * The stuck-client case: "Release all held by this client" lists every lock the holder's client
 * holds (by its identity, or by its address when it gave none: the dialog says which), asks once
 * with that whole list, and releases exactly those grants: each token is sent back, so a lock
 * that changed hands meanwhile is left alone and counted as stale in the result. Like every admin
 * button it asks for an admin sign-in first (nothing listed, nothing sent; the same client's
 * list and confirm open after it) and is off while the page has lost its node.
 */
export function ReleaseClientAction({ holder }: { holder: HolderView }) {
  const client = holderMatch(holder);
  const [list, setList] = useState<ClientHeldList | null>(null);
  const [loading, setLoading] = useState(false);
  /** Locks found so far while the list is read. */
  const [found, setFound] = useState<number | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const release = useReleaseClient();
  const buttonRef = useRef<HTMLButtonElement>(null);
  const gate = useAdminGate();
  const blocked = useActionBlock();

  const open = async () => {
    setLoading(true);
    setProblem(null);
    try {
      // Page by page, each a short request for the daemon; the count shows while it reads.
      const view = await listClientHeld(client, (after, limit) => opsApi.clientHeld(client, after, limit), setFound);
      if (view.held.length === 0) setProblem('This client holds no locks now.');
      else setList(view);
    } catch (err) {
      setProblem(`Could not list the locks of this client: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setLoading(false);
      setFound(null);
    }
  };
  // The dialog unmounts without close(): hand focus back to the button that opened it.
  const close = () => {
    setList(null);
    requestAnimationFrame(() => buttonRef.current?.focus());
  };

  return (
    <>
      <button
        ref={buttonRef}
        type="button"
        className={buttonClass('danger')}
        disabled={loading || release.isPending || blocked !== null}
        onClick={() => gate(`release every lock held by ${clientMatchText(client)}`, () => void open())}
      >
        Release all held by this client
      </button>
      {found !== null && (
        <span className="text-xs text-slate-600 dark:text-slate-300" data-testid="release-client-listing">
          Listing the locks of this client… {found} so far
        </span>
      )}
      {problem !== null && (
        <span className="text-xs text-slate-600 dark:text-slate-300" data-testid="release-client-problem">
          {problem}
        </span>
      )}
      {list !== null && (
        <ReleaseClientDialog
          list={list}
          onCancel={close}
          onConfirm={() => {
            const pendingText = `Releasing ${list.held.length} locks held by ${clientMatchText(client)}…`;
            release.mutate({ client, tokens: list.held.map((h) => h.token), pendingText });
            close();
          }}
        />
      )}
    </>
  );
}

function ReleaseClientDialog({ list, onConfirm, onCancel }: { list: ClientHeldList; onConfirm: () => void; onCancel: () => void }) {
  const count = list.held.length;
  const blocked = useActionBlock();
  return (
    <ConfirmDialog
      title={
        <>
          Release {count === 1 ? '1 lock' : `${count} locks`} held by{' '}
          <span data-testid="release-client-kind" data-kind={list.by}>
            {clientMatchKindText(list.by)}
          </span>{' '}
          <span className={WORD_WRAPPED} title={list.client}>
            <ClientName name={list.client} />
          </span>
          ?
        </>
      }
      confirmLabel={`Confirm release of ${count}`}
      tone="danger"
      testId="release-client-dialog"
      blocked={blocked}
      onConfirm={onConfirm}
      onCancel={onCancel}
    >
      <p>
        {list.by === 'identity'
          ? 'Matched by the identity the client gave (any address), not by an address.'
          : 'Matched by the client address (any identity), not by an identity.'}{' '}
        Each lock below is force-released with the token shown and handed to its next waiter; the release is audited.
      </p>
      {/* Focusable: a scrollable list must be reachable by keyboard to be scrolled (axe scrollable-region-focusable). */}
      <div
        tabIndex={0}
        role="region"
        aria-label="Locks to release"
        className="mt-3 max-h-64 overflow-y-auto rounded border border-slate-200 dark:border-slate-700"
      >
        <ul className="divide-y divide-slate-100 text-xs dark:divide-slate-800">
          {list.held.map((h) => (
            <li key={h.name} data-testid="release-client-item" data-lock={h.name} className="flex justify-between gap-3 px-2 py-1">
              <code className="min-w-0 font-mono break-all">
                <LockName name={h.name} />
              </code>
              <span className="shrink-0 font-mono whitespace-nowrap tabular-nums">token {h.token}</span>
            </li>
          ))}
        </ul>
      </div>
      {list.truncated && (
        <p className="mt-2 text-amber-700 dark:text-amber-300">Only the first {count} are listed: release them, then ask again for the rest.</p>
      )}
      <p className="mt-3 text-slate-600 dark:text-slate-300">A lock that changed hands by the time you confirm is left alone.</p>
    </ConfirmDialog>
  );
}
