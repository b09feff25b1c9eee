import { formatClockTime } from '@/lib/dashboard/dashboard-format.ts';
import { ApiRequestError } from '../data/api-client.ts';
import { useAudit } from '../data/queries.ts';
import { Badge } from '../ui/badge.tsx';
import { Card } from '../ui/card.tsx';
import { LockName } from '../locks/lock-name.tsx';
import { AuditExport } from './audit-export.tsx';

const LIMIT = 200;

/**
 * Who did what, from /api/v1/audit: the whole cluster's admin actions (each with the node that
 * recorded it), newest first, failed actions marked. Refetched when the stream reports one.
 */
export function AuditLog() {
  const audit = useAudit(LIMIT);
  const refused = audit.error instanceof ApiRequestError && (audit.error.status === 401 || audit.error.status === 403);
  const entries = audit.data === undefined ? [] : [...audit.data.entries].reverse();
  return (
    <Card title="Audit log" headingLevel={2} id="audit" actions={<AuditExport entries={audit.data?.entries ?? []} />}>
      {refused ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">Sign in to see who did what.</p>
      ) : audit.isError ? (
        <p className="text-sm text-red-700 dark:text-red-300">{audit.error.message}</p>
      ) : audit.isPending ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">Loading…</p>
      ) : entries.length === 0 ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">No admin actions yet.</p>
      ) : (
        <ol
          tabIndex={0}
          className="max-h-96 overflow-y-auto rounded-md border border-slate-200 text-sm dark:border-slate-800"
          aria-label="Audit entries, newest first"
        >
          {entries.map((e, i) => (
            <li
              key={e.id ?? `${e.at}-${i}`}
              data-testid="audit-entry"
              data-node={e.node}
              className="flex flex-col gap-0.5 border-b border-slate-100 px-2 py-1.5 dark:border-slate-800"
            >
              <div className="flex flex-wrap items-center gap-x-2">
                <time dateTime={new Date(e.at).toISOString()} className="text-xs text-slate-500 tabular-nums dark:text-slate-400">
                  {formatClockTime(e.at)}
                </time>
                <span className="font-medium">{e.action}</span>
                <span className="min-w-0 font-mono break-all">
                  <LockName name={e.target} />
                </span>
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
          ))}
        </ol>
      )}
    </Card>
  );
}
