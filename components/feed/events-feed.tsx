import { memo } from 'react';
import type { FeedItem, FeedKind } from '@/lib/ops-api/api-types.ts';
import { formatClockTime } from '@/lib/dashboard/dashboard-format.ts';
import { useFeed } from '../data/queries.ts';
import { Badge, type BadgeTone } from '../ui/badge.tsx';
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

/** The newest 200 events, newest first; admin actions stand out (colour and a bar, not colour alone). */
export function EventsFeed() {
  const feed = useFeed();
  const items = feed === undefined ? [] : [...feed].reverse();
  return (
    <Card title="Events" headingLevel={2} id="events">
      {items.length === 0 ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">{feed === undefined ? 'Waiting for the first snapshot…' : 'Nothing has happened yet.'}</p>
      ) : (
        <ol tabIndex={0} className="max-h-96 overflow-y-auto rounded-md border border-slate-200 dark:border-slate-800" aria-label="Events, newest first">
          {items.map((item) => (
            <FeedEntry key={item.seq} item={item} />
          ))}
        </ol>
      )}
    </Card>
  );
}
