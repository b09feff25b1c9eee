import { useEffect, useId, useRef, useState } from 'react';
import type { HolderView, LockDetail, WaiterView } from '@/lib/ops-api/api-types.ts';
import { formatClockTime, formatCountdown, formatDuration, formatLeaseLeft } from '@/lib/dashboard/dashboard-format.ts';
import { elapsedSince } from '@/lib/dashboard/dashboard-state.ts';
import { useAdminGate } from '../auth/use-admin-gate.ts';
import { useForceRelease, useKickWaiter } from '../data/mutations.ts';
import { useAuth, useLockDetail, useLockRow } from '../data/queries.ts';
import { useActionBlock, useDataNow } from '../data/use-data-now.ts';
import { PAGE_BEAT_MS } from '../data/use-now.ts';
import { buttonClass } from '../ui/button.ts';
import { ForceReleaseDialog } from './force-release-dialog.tsx';
import { WaiterTable } from './waiter-table.tsx';
import { LockName } from './lock-name.tsx';
import { LockHistoryTable } from './lock-history.tsx';
import { ClientLink } from './client-link.tsx';
import { ClientName } from './client-name.tsx';
import { ReleaseClientAction } from './client-release.tsx';
import { KickDialog } from './kick-dialog.tsx';
import { ONE_LINE, WORD_WRAPPED } from './unbroken.ts';

function HolderTimes({ holder, receivedAt }: { holder: HolderView; receivedAt: number }) {
  const now = useDataNow(PAGE_BEAT_MS);
  const lease = Math.max(0, holder.leaseRemainingMs - Math.max(0, now - receivedAt));
  return (
    <>
      <dt className="text-slate-500 dark:text-slate-400">Held for</dt>
      <dd className="tabular-nums">{formatDuration(elapsedSince(holder.heldForMs, receivedAt, now))}</dd>
      <dt className="text-slate-500 dark:text-slate-400">Lease left</dt>
      <dd className="tabular-nums">
        {formatLeaseLeft(lease)} of {formatDuration(holder.leaseMs)}
        {holder.sliding ? ' (sliding)' : ''}
      </dd>
      {holder.reconnecting === true && (
        <>
          <dt className="text-slate-500 dark:text-slate-400">Connection</dt>
          <dd className="text-amber-700 dark:text-amber-400" data-testid="detail-holder-reconnecting">
            reconnecting: kept for its client to resume for {formatCountdown(lease)}
          </dd>
        </>
      )}
    </>
  );
}

function HolderFacts({ holder, receivedAt }: { holder: HolderView; receivedAt: number }) {
  return (
    <dl className="grid grid-cols-[auto_minmax(0,1fr)] gap-x-3 gap-y-1 text-sm">
      {holder.clientName !== null && (
        <>
          <dt className="text-slate-500 dark:text-slate-400">Client</dt>
          <dd className={WORD_WRAPPED} data-testid="detail-holder-name" title={holder.clientName}>
            <ClientLink match={{ by: 'identity', value: holder.clientName }}>
              <ClientName name={holder.clientName} />
            </ClientLink>
          </dd>
        </>
      )}
      <dt className="text-slate-500 dark:text-slate-400">{holder.clientName === null ? 'Client' : 'Address'}</dt>
      <dd className={ONE_LINE} data-testid="client-address" title={holder.client}>
        {holder.client}
      </dd>
      <dt className="text-slate-500 dark:text-slate-400">Protocol</dt>
      <dd>{holder.protocol}</dd>
      <dt className="text-slate-500 dark:text-slate-400">Token</dt>
      <dd className={ONE_LINE} data-testid="detail-holder-token" title={holder.token}>
        {holder.token}
      </dd>
      <dt className="text-slate-500 dark:text-slate-400">Granted</dt>
      <dd className="tabular-nums">{formatClockTime(holder.grantedAt)}</dd>
      <HolderTimes holder={holder} receivedAt={receivedAt} />
    </dl>
  );
}

/**
 * One lock's holder and queue, fetched from /api/v1/locks/{name} and refetched whenever a delta
 * touches the lock. Until the first answer it shows the table's summary of the holder.
 */
export function LockDetailPanel({ name, onClose }: { name: string; onClose: () => void }) {
  const headingId = useId();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const query = useLockDetail(name);
  const row = useLockRow(name);
  const auth = useAuth();
  const forceRelease = useForceRelease();
  const kick = useKickWaiter();
  const gate = useAdminGate();
  const [confirming, setConfirming] = useState<HolderView | null>(null);
  const [kickConfirming, setKickConfirming] = useState<WaiterView | null>(null);
  const forceButtonRef = useRef<HTMLButtonElement>(null);

  // The dialog unmounts without close() (see ForceReleaseDialog), so the browser does not hand
  // focus back: return it to the button that opened it, or to the panel's heading while that
  // button is disabled (a release running, or nobody left to release).
  const closeDialog = () => {
    setConfirming(null);
    requestAnimationFrame(() => {
      const button = forceButtonRef.current;
      if (button !== null && !button.disabled) button.focus();
      else headingRef.current?.focus();
    });
  };

  // Move focus to the panel when a lock is chosen, so keyboard and screen reader users land on it.
  // biome-ignore lint/correctness/useExhaustiveDependencies: `name` is the trigger (a lock chosen), not a value the effect reads.
  useEffect(() => {
    headingRef.current?.focus();
  }, [name]);

  const result = query.data;
  const detail: LockDetail | null | undefined = result?.detail;
  const holder = result !== undefined ? (detail?.holder ?? null) : (row?.summary.holder ?? null);
  const holderSeenAt = result !== undefined ? result.receivedAt : (row?.receivedAt ?? 0);
  const notAdmin = auth.data !== undefined && auth.data.role !== 'admin';
  const blocked = useActionBlock();

  return (
    <section
      data-testid="lock-detail"
      aria-labelledby={headingId}
      className="flex min-w-0 flex-col gap-4 rounded-lg border border-slate-200 bg-white p-4 shadow-sm dark:border-slate-800 dark:bg-slate-900"
    >
      <div className="flex items-start justify-between gap-2">
        <h3 id={headingId} ref={headingRef} tabIndex={-1} className="min-w-0 text-base font-semibold break-all focus:outline-none">
          <span className="sr-only">Lock </span>
          <code className="font-mono">
            <LockName name={name} />
          </code>
        </h3>
        <button type="button" className={buttonClass('ghost', 'px-2 py-1')} onClick={onClose} aria-label="Close lock details">
          <span aria-hidden="true">✕</span>
        </button>
      </div>

      {query.isError && <p className="text-sm text-red-700 dark:text-red-300">Could not load the lock: {query.error.message}</p>}
      {result !== undefined && detail === null && <p className="text-sm text-slate-600 dark:text-slate-300">Nobody holds or waits for this lock now.</p>}

      <div className="flex flex-col gap-3">
        <h4 className="text-xs font-semibold tracking-wide text-slate-500 uppercase dark:text-slate-400">Holder</h4>
        {holder === null ? <p className="text-sm text-slate-500 dark:text-slate-400">No holder.</p> : <HolderFacts holder={holder} receivedAt={holderSeenAt} />}
        <div className="flex flex-wrap items-center gap-2">
          <button
            ref={forceButtonRef}
            type="button"
            className={buttonClass('danger')}
            disabled={holder === null || forceRelease.isPending || blocked !== null}
            onClick={() => gate(`force-release ${name}`, () => setConfirming(holder))}
          >
            Force release
          </button>
          {holder !== null && <ReleaseClientAction holder={holder} />}
          {notAdmin && <span className="text-xs text-slate-500 dark:text-slate-400">Needs an admin sign-in.</span>}
          {blocked !== null && (
            <span data-testid="action-blocked" className="text-xs text-slate-600 dark:text-slate-300">
              {blocked}
            </span>
          )}
        </div>
      </div>

      <div className="flex flex-col gap-2">
        <h4 className="text-xs font-semibold tracking-wide text-slate-500 uppercase dark:text-slate-400">
          Queue{detail ? ` (${detail.queueLength})` : row ? ` (${row.summary.queueLength})` : ''}
        </h4>
        {detail ? (
          <WaiterTable
            queue={detail.queue}
            queueLength={detail.queueLength}
            asOf={detail.asOf}
            receivedAt={holderSeenAt}
            kicking={kick.isPending ? (kick.variables?.id ?? null) : null}
            onKick={(w) => gate(`kick waiter ${w.id} from ${name}`, () => setKickConfirming(w))}
          />
        ) : (
          <p className="text-sm text-slate-500 dark:text-slate-400">{query.isPending ? 'Loading…' : 'Nobody is waiting.'}</p>
        )}
      </div>

      <LockHistoryTable name={name} />

      {kickConfirming !== null && (
        <KickDialog
          lockName={name}
          waiter={kickConfirming}
          onCancel={() => {
            setKickConfirming(null);
            requestAnimationFrame(() => headingRef.current?.focus());
          }}
          onConfirm={() => {
            kick.mutate({ name, id: kickConfirming.id, pendingText: `Kicking waiter ${kickConfirming.id} from ${name}…` });
            setKickConfirming(null);
            requestAnimationFrame(() => headingRef.current?.focus());
          }}
        />
      )}

      {confirming !== null && (
        <ForceReleaseDialog
          lockName={name}
          holder={confirming}
          onCancel={closeDialog}
          onConfirm={() => {
            forceRelease.mutate({
              name,
              token: confirming.token,
              client: confirming.client,
              protocol: confirming.protocol,
              pendingText: `Force releasing ${name} (token ${confirming.token})…`,
            });
            closeDialog();
          }}
        />
      )}
    </section>
  );
}
