import { describe, expect, it } from 'vitest';
import type { FeedItem } from '../ops-api/api-types.ts';
import { feedItem } from './dashboard-fixtures.ts';
import { ALL_FEED, isFeedKind, newSince, visibleFeed } from './feed-filter.ts';

const on = (seq: number, kind: FeedItem['kind'], lock: string | null): FeedItem => ({ ...feedItem(seq, kind), lock });
const items = [on(1, 'grant', 'jobs/nightly'), on(2, 'admin', 'jobs/nightly'), on(3, 'release', 'cache/warm'), on(4, 'grant', null)];

describe('the events feed filter', () => {
  it('shows everything newest first when nothing is chosen', () => {
    expect(visibleFeed(items, ALL_FEED).map((i) => i.seq)).toEqual([4, 3, 2, 1]);
  });

  it('keeps the items of one kind', () => {
    expect(visibleFeed(items, { lock: '', kind: 'grant' }).map((i) => i.seq)).toEqual([4, 1]);
  });

  it('keeps the items whose lock name contains the text, ignoring case', () => {
    expect(visibleFeed(items, { lock: ' NIGHTLY', kind: null }).map((i) => i.seq)).toEqual([2, 1]);
    expect(visibleFeed(items, { lock: 'nightly', kind: 'admin' }).map((i) => i.seq)).toEqual([2]);
  });

  it('counts what arrived after a pause', () => {
    expect(newSince(items, items.slice(0, 2))).toBe(2);
    expect(newSince(items, items)).toBe(0);
    expect(newSince(items, [])).toBe(4);
  });

  it('knows its kinds', () => {
    expect(isFeedKind('admin')).toBe(true);
    expect(isFeedKind('bogus')).toBe(false);
  });
});
