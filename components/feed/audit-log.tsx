import { useCallback, useMemo, useState } from 'react';
import { formatClockTime, formatCount } from '@/lib/dashboard/dashboard-format.ts';
import type { AuditRow } from '@/lib/ops-api/audit-filter.ts';
import { ApiRequestError } from '../data/api-client.ts';
import { useAuditPages } from '../data/queries.ts';
import { Badge } from '../ui/badge.tsx';
import { buttonClass } from '../ui/button.ts';
import { Card } from '../ui/card.tsx';
import { AuditExport } from './audit-export.tsx';
import { type AuditForm, AuditFilters, auditFilterFromForm, EMPTY_AUDIT_FORM } from './audit-filters.tsx';
import { AuditTarget } from './audit-target.tsx';

/**
 * Who did what, from /api/v1/audit: the whole cluster's admin actions (each with the node that
 * recorded it), newest first, failed actions marked; filtered server-side, 200 at a time with
 * "Load older" back to the oldest the node keeps. Read again (every loaded page) when the
 * stream says the node kept an entry.
 */
export function AuditLog() {
  const [form, setForm] = useState<AuditForm>(EMPTY_AUDIT_FORM);
  const onChange = useCallback((next: AuditForm) => setForm((prev) => (JSON.stringify(prev) === JSON.stringify(next) ? prev : next)), []);
  const filter = useMemo(() => auditFilterFromForm(form), [form]);
  const audit = useAuditPages(filter);
  const refused = audit.error instanceof ApiRequestError && (audit.error.status === 401 || audit.error.status === 403);
  // Pages are newest first and each newest last: the list shows newest first.
  const entries = useMemo(() => (audit.data?.pages ?? []).flatMap((p) => [...p.entries].reverse()), [audit.data]);
  const filtered = Object.keys(filter).length > 0;
  return (
    <Card title="Audit log" headingLevel={2} id="audit" actions={<AuditExport filter={filter} disabled={entries.length === 0} />}>
      <AuditFilters onChange={onChange} />
      {refused ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">Sign in to see who did what.</p>
      ) : audit.isError ? (
        <p className="text-sm text-red-700 dark:text-red-300">{audit.error.message}</p>
      ) : audit.isPending ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">Loading…</p>
      ) : entries.length === 0 ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">{filtered ? 'No admin action matches the filters.' : 'No admin actions yet.'}</p>
      ) : (
        <>
          <ol
            tabIndex={0}
            className="max-h-96 overflow-y-auto rounded-md border border-slate-200 text-sm dark:border-slate-800"
            aria-label="Audit entries, newest first"
          >
            {entries.map((e) => (
              <AuditItem key={`${e.seq}`} e={e} />
            ))}
          </ol>
          <div className="mt-2 flex items-center gap-3 text-xs text-slate-600 dark:text-slate-400">
            <span data-testid="audit-count">
              {formatCount(entries.length)} {entries.length === 1 ? 'entry' : 'entries'} shown
              {audit.hasNextPage ? '' : filtered ? ', all that match' : ', all this node keeps'}
            </span>
            {audit.hasNextPage && (
              <button
                type="button"
                data-testid="audit-load-older"
                className={buttonClass('secondary', 'px-2 py-0.5 text-xs')}
                disabled={audit.isFetchingNextPage}
                onClick={() => void audit.fetchNextPage()}
              >
                {audit.isFetchingNextPage ? 'Loading…' : 'Load older'}
              </button>
            )}
          </div>
        </>
      )}
    </Card>
  );
}

function AuditItem({ e }: { e: AuditRow }) {
  return (
    <li
      data-testid="audit-entry"
      data-node={e.node}
      data-action={e.action}
      className="flex flex-col gap-0.5 border-b border-slate-100 px-2 py-1.5 dark:border-slate-800"
    >
      <div className="flex flex-wrap items-center gap-x-2">
        <time dateTime={new Date(e.at).toISOString()} className="text-xs text-slate-500 tabular-nums dark:text-slate-400">
          {formatClockTime(e.at)}
        </time>
        <span className="font-medium">{e.action}</span>
        <AuditTarget action={e.action} target={e.target} />
        <Badge tone={e.result === 'ok' ? 'good' : 'bad'}>{e.result}</Badge>
        {e.node !== undefined && (
          <span data-testid="audit-node" title="The node that recorded it">
            <Badge tone="info">on {e.node}</Badge>
          </span>
        )}
      </div>
      <div className="text-xs text-slate-600 dark:text-slate-300">
        by <span className="font-mono">{e.who}</span>
        {e.detail !== null && <> · {e.detail}</>}
      </div>
    </li>
  );
}
