// The events feed's filter and pause: pure, so the component only keeps state.
import type { FeedItem, FeedKind } from '../ops-api/api-types.ts';

export const FEED_KINDS: readonly FeedKind[] = ['grant', 'release', 'expire', 'force-release', 'enqueue', 'leave-queue', 'kick', 'detach', 'resume', 'admin'];

export interface FeedFilter {
  /** Text the item's lock name contains (case-insensitive); "" is every item. */
  lock: string;
  /** One kind, or null for every kind. */
  kind: FeedKind | null;
}

export const ALL_FEED: FeedFilter = { lock: '', kind: null };

/** The items the filter keeps, newest first (the feed is stored ascending by seq). */
export function visibleFeed(items: readonly FeedItem[], filter: FeedFilter): FeedItem[] {
  const needle = filter.lock.trim().toLowerCase();
  const out: FeedItem[] = [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i] as FeedItem;
    if (filter.kind !== null && item.kind !== filter.kind) continue;
    if (needle !== '' && (item.lock === null || !item.lock.toLowerCase().includes(needle))) continue;
    out.push(item);
  }
  return out;
}

/** Items that arrived after the feed was paused at `frozen` (what the Resume button counts). */
export function newSince(items: readonly FeedItem[], frozen: readonly FeedItem[]): number {
  const last = frozen.length === 0 ? Number.NEGATIVE_INFINITY : (frozen[frozen.length - 1] as FeedItem).seq;
  let n = 0;
  for (let i = items.length - 1; i >= 0 && (items[i] as FeedItem).seq > last; i--) n++;
  return n;
}

export function isFeedKind(value: string): value is FeedKind {
  return (FEED_KINDS as readonly string[]).includes(value);
}
