// The events feed's admin items come from the audit (GET /api/v1/audit, filtered server-side),
// not from the 200 items of the live feed: under churn those 200 are a fraction of a second,
// so an admin filter went empty a second after a force-release, and a new page showed no past
// admin action. Engine events still come from the live feed. Pure: the feed component merges.
import type { AuditEntry, FeedItem, FeedKind } from '../ops-api/api-types.ts';
import { type AuditFilter, targetIsLock } from '../ops-api/audit-filter.ts';
import type { FeedFilter } from './feed-filter.ts';

/** One line of the feed: an engine event from the live feed, or an admin action from the audit. */
export interface FeedLine {
  key: string;
  item: FeedItem;
}

/** What the feed says of an admin action (the live feed's admin items say it the same way: server/live-feed/feed-ring.ts). */
export function adminText(e: AuditEntry): string {
  const what = e.target === '' ? e.action : `${e.action} of ${e.target}`;
  return `${what} by ${e.who}: ${e.result}${e.detail === null ? '' : ` (${e.detail})`}`;
}

export function adminFeedItem(e: AuditEntry, seq: number): FeedItem {
  return { seq, at: e.at, kind: 'admin', lock: targetIsLock(e.action) ? e.target : null, text: adminText(e) };
}

/**
 * The audit query for the feed's filter: a kind that is an admin action (`admin`: all of them;
 * `force-release` and `kick`: the admin actions that cause those events) or every kind; null for
 * an engine-only kind (no admin action is one). The lock filter narrows to actions on such locks.
 */
export function feedAuditFilter(filter: FeedFilter): AuditFilter | null {
  const kinds: Partial<Record<FeedKind, AuditFilter['actions']>> = { 'force-release': ['force-release'], kick: ['kick'] };
  const f: AuditFilter = {};
  if (filter.kind !== null && filter.kind !== 'admin') {
    const actions = kinds[filter.kind];
    if (actions === undefined) return null;
    f.actions = actions;
  }
  const lock = filter.lock.trim();
  if (lock !== '') f.lock = lock;
  return f;
}

/**
 * The lines shown, newest first: `events` (the live feed's items the filter kept, newest first;
 * its own admin items are left out, the audit has them all) and `admin` (the audit's entries,
 * newest last, already filtered), merged by time; an admin action comes after the engine event
 * of the same millisecond it caused.
 */
export function mergeFeed(events: readonly FeedItem[], admin: readonly AuditEntry[], until: number | null): FeedLine[] {
  const engine = events.filter((i) => i.kind !== 'admin');
  const fromAudit: FeedLine[] = [];
  for (let i = admin.length - 1; i >= 0; i--) {
    const e = admin[i] as AuditEntry;
    if (until !== null && e.at > until) continue;
    fromAudit.push({ key: `audit:${e.id ?? `${e.at}-${i}`}`, item: adminFeedItem(e, -1) });
  }
  const out: FeedLine[] = [];
  let a = 0;
  let b = 0;
  while (a < engine.length || b < fromAudit.length) {
    const ev = engine[a];
    const ad = fromAudit[b];
    if (ad === undefined || (ev !== undefined && ev.at > ad.item.at)) {
      out.push({ key: `event:${(ev as FeedItem).seq}`, item: ev as FeedItem });
      a++;
    } else {
      out.push(ad);
      b++;
    }
  }
  return out;
}
