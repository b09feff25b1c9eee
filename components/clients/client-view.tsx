import { clientMatchKindText, type ClientMatchView } from '@/lib/dashboard/client-match.ts';
import { formatCount, formatDuration } from '@/lib/dashboard/dashboard-format.ts';
import type { HolderView } from '@/lib/ops-api/api-types.ts';
import { ReleaseClientAction } from '../locks/client-release.tsx';
import { ClientName } from '../locks/client-name.tsx';
import { LockName } from '../locks/lock-name.tsx';
import { buttonClass } from '../ui/button.ts';
import { ClientLink } from '../locks/client-link.tsx';
import { useClientHeld, useClientWaiting, useRefreshAfterActions } from './client-queries.ts';

/** Rows each list shows; the count says how many there are. */
const SHOWN = 200;

/**
 * The bulk release takes the holder whose client it releases for (client-release.tsx, the
 * actions helper's): it reads only which client that is (holderMatch: the identity, or the
 * address when there is none), so a holder standing for this client is enough.
 */
function holderFor(match: ClientMatchView): HolderView {
  return {
    claimId: '0',
    protocol: 'keyed',
    client: match.by === 'address' ? match.value : '',
    clientName: match.by === 'identity' ? match.value : null,
    token: '0',
    grantedAt: 0,
    heldForMs: 0,
    leaseMs: 0,
    sliding: false,
    leaseRemainingMs: 0,
  };
}

const th = 'px-2 py-1 text-left font-medium';
const td = 'px-2 py-1 align-top';

function LockButton({ name, onSelect }: { name: string; onSelect: (name: string) => void }) {
  return (
    <button
      type="button"
      onClick={() => onSelect(name)}
      aria-label={`Details for ${name}`}
      className="max-w-full rounded text-left font-mono break-all text-sky-800 underline-offset-2 hover:underline focus-visible:outline-2 focus-visible:outline-sky-500 dark:text-sky-300"
    >
      <LockName name={name} />
    </button>
  );
}

/**
 * Everything one client holds and waits for, across locks, with the bulk release of its locks:
 * what an operator asks next about a stuck client. The client is in the URL (`client`,
 * `clientBy`), so the view is a link; a lock here opens its detail.
 */
export function ClientViewPanel({ match, onClose, onSelectLock }: { match: ClientMatchView; onClose: () => void; onSelectLock: (name: string) => void }) {
  const held = useClientHeld(match);
  const waiting = useClientWaiting(match);
  useRefreshAfterActions();
  const heldList = held.data?.held ?? [];
  const waitList = waiting.data?.waiting ?? [];
  return (
    <section
      aria-labelledby="client-view-heading"
      data-testid="client-view"
      data-client={match.value}
      className="flex min-w-0 flex-col gap-3 rounded-lg border border-slate-200 bg-white p-4 shadow-sm dark:border-slate-800 dark:bg-slate-900"
    >
      <div className="flex items-start justify-between gap-2">
        <h2 id="client-view-heading" className="min-w-0 text-lg font-semibold break-all">
          <span className="text-sm font-normal text-slate-600 dark:text-slate-400">Client {clientMatchKindText(match.by)} </span>
          <span className="font-mono">
            <ClientName name={match.value} />
          </span>
        </h2>
        <button type="button" className={buttonClass('ghost', 'py-1')} onClick={onClose} aria-label="Close the client view">
          ✕
        </button>
      </div>
      <section aria-labelledby="client-held-heading" className="flex flex-col gap-2">
        <div className="flex flex-wrap items-center justify-between gap-2">
          <h3 id="client-held-heading" className="font-semibold">
            Holds{' '}
            <span className="text-sm font-normal text-slate-600 tabular-nums dark:text-slate-400" data-testid="client-held-count">
              {held.data === undefined ? '…' : `${formatCount(heldList.length)}${held.data.truncated ? '+' : ''}`}
            </span>
          </h3>
          {heldList.length > 0 && <ReleaseClientAction holder={holderFor(match)} />}
        </div>
        {held.error !== null && <p className="text-sm text-red-700 dark:text-red-400">Could not list its locks: {held.error.message}</p>}
        {held.data !== undefined && heldList.length === 0 && <p className="text-sm text-slate-600 dark:text-slate-400">It holds no lock now.</p>}
        {heldList.length > 0 && (
          <div
            className="max-h-64 overflow-y-auto rounded border border-slate-200 dark:border-slate-800"
            tabIndex={0}
            role="region"
            aria-label="Locks it holds"
          >
            <table className="w-full text-xs">
              <thead className="bg-slate-50 text-slate-600 dark:bg-slate-800/60 dark:text-slate-300">
                <tr>
                  <th className={th}>Lock</th>
                  <th className={th}>Token</th>
                  <th className={th}>Held for</th>
                </tr>
              </thead>
              <tbody>
                {heldList.slice(0, SHOWN).map((h) => (
                  <tr key={h.name} data-testid="client-held-row" data-name={h.name} className="border-t border-slate-100 dark:border-slate-800">
                    <td className={td}>
                      <LockButton name={h.name} onSelect={onSelectLock} />
                    </td>
                    <td className={`${td} font-mono tabular-nums`}>{h.token}</td>
                    <td className={`${td} tabular-nums`}>{formatDuration(h.heldForMs)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="client-waiting-heading" className="flex flex-col gap-2">
        <h3 id="client-waiting-heading" className="font-semibold">
          Waits for{' '}
          <span className="text-sm font-normal text-slate-600 tabular-nums dark:text-slate-400" data-testid="client-waiting-count">
            {waiting.data === undefined ? '…' : `${formatCount(waitList.length)}${waiting.data.truncated ? '+' : ''}`}
          </span>
        </h3>
        {waiting.error !== null && <p className="text-sm text-red-700 dark:text-red-400">Could not list its waits: {waiting.error.message}</p>}
        {waiting.data !== undefined && waitList.length === 0 && <p className="text-sm text-slate-600 dark:text-slate-400">It waits for no lock now.</p>}
        {waitList.length > 0 && (
          <div
            className="max-h-64 overflow-y-auto rounded border border-slate-200 dark:border-slate-800"
            tabIndex={0}
            role="region"
            aria-label="Locks it waits for"
          >
            <table className="w-full text-xs">
              <thead className="bg-slate-50 text-slate-600 dark:bg-slate-800/60 dark:text-slate-300">
                <tr>
                  <th className={th}>Lock</th>
                  <th className={th}>Place</th>
                  <th className={th}>Waiting</th>
                  <th className={th}>Behind</th>
                </tr>
              </thead>
              <tbody>
                {waitList.slice(0, SHOWN).map((w) => (
                  <tr key={`${w.name}/${w.id}`} data-testid="client-waiting-row" data-name={w.name} className="border-t border-slate-100 dark:border-slate-800">
                    <td className={td}>
                      <LockButton name={w.name} onSelect={onSelectLock} />
                    </td>
                    <td className={`${td} tabular-nums`}>{w.position}</td>
                    <td className={`${td} tabular-nums`}>{formatDuration(w.waitingForMs)}</td>
                    <td className={`${td} font-mono break-all`}>
                      {w.holderClient === null ? (
                        '—'
                      ) : (
                        <ClientLink
                          match={w.holderClientName === null ? { by: 'address', value: w.holderClient } : { by: 'identity', value: w.holderClientName }}
                        >
                          {w.holderClientName === null ? w.holderClient : <ClientName name={w.holderClientName} />}
                        </ClientLink>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {(heldList.length > SHOWN || waitList.length > SHOWN) && (
        <p className="text-xs text-slate-600 dark:text-slate-400">The lists show their first {SHOWN} by lock name; the counts are the whole.</p>
      )}
    </section>
  );
}
