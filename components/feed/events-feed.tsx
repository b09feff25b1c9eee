import { memo, useId, useMemo, useState } from 'react';
import type { FeedItem, FeedKind } from '@/lib/ops-api/api-types.ts';
import { formatClockTime, formatCount } from '@/lib/dashboard/dashboard-format.ts';
import { ALL_FEED, FEED_KINDS, type FeedFilter, isFeedKind, newSince, visibleFeed } from '@/lib/dashboard/feed-filter.ts';
import { feedAuditFilter, mergeFeed } from '@/lib/dashboard/feed-audit.ts';
import { useAuditFeed, useFeed } from '../data/queries.ts';
import { useThrottled } from '../data/use-throttled.ts';
import { Badge, type BadgeTone } from '../ui/badge.tsx';
import { buttonClass, inputClass } from '../ui/button.ts';
import { Card } from '../ui/card.tsx';
import { cn } from '../ui/cn.ts';
import { LockName } from '../locks/lock-name.tsx';
import { viewLockName } from '@/lib/dashboard/lock-name-view.ts';

const KIND_TONE: Record<FeedKind, BadgeTone> = {
  grant: 'good',
  release: 'neutral',
  expire: 'warn',
  'force-release': 'bad',
  enqueue: 'info',
  'leave-queue': 'neutral',
  kick: 'bad',
  detach: 'warn',
  resume: 'good',
  admin: 'warn',
};

const FeedEntry = memo(function FeedEntry({ item }: { item: FeedItem }) {
  const admin = item.kind === 'admin';
  return (
    <li
      data-testid="feed-item"
      data-kind={item.kind}
      className={cn(
        'flex flex-wrap items-baseline gap-x-2 gap-y-0.5 border-b border-slate-100 px-2 py-1.5 text-sm dark:border-slate-800',
        admin && 'border-l-4 border-l-amber-500 bg-amber-50 font-medium dark:bg-amber-950/50',
      )}
    >
      <time dateTime={new Date(item.at).toISOString()} className="text-xs text-slate-500 tabular-nums dark:text-slate-400">
        {formatClockTime(item.at)}
      </time>
      <Badge tone={KIND_TONE[item.kind]}>{item.kind}</Badge>
      {/* Admin texts name their lock already (as written: a name with invisible or look-alike
          characters also gets its marked form here); engine events need it said. */}
      {item.lock !== null && (!admin || viewLockName(item.lock).marked) && (
        <span className="font-mono text-xs break-all" data-testid="feed-lock">
          <LockName name={item.lock} />
        </span>
      )}
      <span className="min-w-0 break-words">{item.text}</span>
    </li>
  );
});

/**
 * The newest events, newest first; admin actions stand out (colour and a bar, not colour alone).
 * Engine events come from the live feed (its last 200); admin actions come from the audit,
 * filtered server-side (lib/dashboard/feed-audit.ts), so an admin filter shows them whatever
 * the churn, and a new page shows past ones. Filter by lock and kind; Pause freezes the list so
 * it can be read under churn, and says how many items came since.
 */
export function EventsFeed() {
  // At most one redraw a second: under churn every delta (ten a second) brings new items and
  // pushes as many out, and replacing a few hundred list items that often kept a browser core
  // busy (removeChild, style and layout) for a list nobody can read at that speed. A quiet
  // node's first new item still shows at once.
  const feed = useThrottled(useFeed(), 1_000);
  const lockId = useId();
  const kindId = useId();
  const [filter, setFilter] = useState<FeedFilter>(ALL_FEED);
  const [frozen, setFrozen] = useState<{ items: readonly FeedItem[]; at: number } | null>(null);
  const shown = frozen?.items ?? feed ?? [];
  const auditFilter = useMemo(() => feedAuditFilter(filter), [filter]);
  const admin = useAuditFeed(auditFilter);
  const adminEntries = auditFilter === null ? [] : admin.data?.entries;
  const items = useMemo(() => {
    const events = visibleFeed(shown, filter);
    // Until the audit answers (or when it cannot be read), the live feed's own admin items stand in.
    if (adminEntries === undefined) return events.map((item) => ({ key: `event:${item.seq}`, item }));
    return mergeFeed(events, adminEntries, frozen?.at ?? null);
  }, [shown, filter, adminEntries, frozen]);
  const waiting = frozen !== null && feed !== undefined ? newSince(feed, frozen.items) : 0;
  const pauseButton = (
    <button
      type="button"
      data-testid="feed-pause"
      aria-pressed={frozen !== null}
      className={buttonClass(frozen === null ? 'secondary' : 'primary', 'py-1')}
      onClick={() => setFrozen(frozen === null ? { items: feed ?? [], at: Date.now() } : null)}
      disabled={feed === undefined}
    >
      {frozen === null ? 'Pause' : `Resume (${formatCount(waiting)} new)`}
    </button>
  );
  return (
    <Card title="Events" headingLevel={2} id="events" actions={pauseButton}>
      <div className="mb-2 flex flex-wrap items-end gap-3">
        <div className="flex min-w-0 flex-col gap-1">
          <label htmlFor={lockId} className="text-xs text-slate-600 dark:text-slate-400">
            Lock
          </label>
          <input
            id={lockId}
            type="search"
            maxLength={200}
            value={filter.lock}
            onChange={(e) => setFilter((f) => ({ ...f, lock: e.target.value }))}
            placeholder="Name contains…"
            className={cn(inputClass, 'w-48 max-w-full')}
          />
        </div>
        <div className="flex flex-col gap-1">
          <label htmlFor={kindId} className="text-xs text-slate-600 dark:text-slate-400">
            Kind
          </label>
          <select
            id={kindId}
            value={filter.kind ?? ''}
            onChange={(e) => setFilter((f) => ({ ...f, kind: isFeedKind(e.target.value) ? e.target.value : null }))}
            className={inputClass}
          >
            <option value="">All kinds</option>
            {FEED_KINDS.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </div>
        {frozen !== null && (
          <p data-testid="feed-paused" className="text-xs text-amber-800 dark:text-amber-300">
            Paused: {formatCount(waiting)} new {waiting === 1 ? 'item' : 'items'} since.
          </p>
        )}
      </div>
      {items.length === 0 ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">
          {feed === undefined
            ? 'Waiting for the first snapshot…'
            : shown.length === 0 && (adminEntries?.length ?? 0) === 0
              ? 'Nothing has happened yet.'
              : 'No event matches the filter.'}
        </p>
      ) : (
        <ol tabIndex={0} className="max-h-96 overflow-y-auto rounded-md border border-slate-200 dark:border-slate-800" aria-label="Events, newest first">
          {items.map((line) => (
            <FeedEntry key={line.key} item={line.item} />
          ))}
        </ol>
      )}
    </Card>
  );
}
