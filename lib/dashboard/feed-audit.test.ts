import { describe, expect, it } from 'vitest';
import type { AuditEntry, FeedItem } from '../ops-api/api-types.ts';
import { adminText, feedAuditFilter, mergeFeed } from './feed-audit.ts';
import { ALL_FEED } from './feed-filter.ts';

const event = (seq: number, at: number, kind: FeedItem['kind'] = 'grant'): FeedItem => ({ seq, at, kind, lock: 'l', text: `e${seq}` });
const audit = (at: number, action: AuditEntry['action'] = 'force-release', id = `a/i/${at}`): AuditEntry => ({
  at,
  who: 'bearer:admin',
  action,
  target: action === 'handoff' ? 'b' : 'orders',
  result: 'ok',
  detail: null,
  node: 'a',
  id,
});

describe('the events feed with admin actions from the audit', () => {
  it('asks the audit for every admin action, or those a kind is about, and for none with an engine-only kind', () => {
    expect(feedAuditFilter(ALL_FEED)).toEqual({});
    expect(feedAuditFilter({ lock: '', kind: 'admin' })).toEqual({});
    expect(feedAuditFilter({ lock: ' ord ', kind: 'force-release' })).toEqual({ actions: ['force-release'], lock: 'ord' });
    expect(feedAuditFilter({ lock: '', kind: 'kick' })).toEqual({ actions: ['kick'] });
    expect(feedAuditFilter({ lock: '', kind: 'grant' })).toBeNull();
  });

  it('merges engine events and admin actions newest first, leaving out the live feed’s own admin items (the audit has them all)', () => {
    const events = [event(4, 40), event(3, 30, 'admin'), event(2, 20)];
    const lines = mergeFeed(events, [audit(10), audit(30), audit(50, 'handoff')], null);
    expect(lines.map((l) => l.key)).toEqual(['audit:a/i/50', 'event:4', 'audit:a/i/30', 'event:2', 'audit:a/i/10']);
    expect(lines[0]?.item).toMatchObject({ kind: 'admin', lock: null, text: 'handoff of b by bearer:admin: ok' });
    expect(lines[2]?.item).toMatchObject({ kind: 'admin', lock: 'orders' });
  });

  it('keeps a paused feed paused: admin actions after the pause wait with the events', () => {
    expect(mergeFeed([], [audit(10), audit(30)], 20).map((l) => l.key)).toEqual(['audit:a/i/10']);
  });

  it('says an admin action as the live feed does', () => {
    expect(adminText({ ...audit(1), detail: 'token 4' })).toBe('force-release of orders by bearer:admin: ok (token 4)');
  });
});
