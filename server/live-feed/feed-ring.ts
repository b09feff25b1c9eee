// The live feed's memory: the last 200 engine events and admin actions. Recording is one array
// store and a counter bump (it runs for every engine event, with or without a dashboard open);
// the text for people is written only when a message needs an item, and kept for the next one.
import type { ClaimEvent, LockEvent } from '../../lib/engine/events.ts';
import type { AuditEntry, FeedItem } from '../../lib/ops-api/api-types.ts';
import { clientText, type ViewClock } from '../lock-views/lock-views.ts';

export const FEED_SIZE = 200;

/** What the feed shows: a reset is not one (the state it replaces is re-read instead). */
export type FeedSource = ClaimEvent | AuditEntry;

export class FeedRing {
  private readonly raw: Array<FeedSource | null> = new Array<FeedSource | null>(FEED_SIZE).fill(null);
  /** Items already formatted, by ring position; valid when their seq matches. */
  private readonly made: Array<FeedItem | null> = new Array<FeedItem | null>(FEED_SIZE).fill(null);
  private last = 0;

  constructor(private readonly clock: Pick<ViewClock, 'wall'>) {}

  /** The newest item's seq (0 before the first). Seqs start at 1 and increase by one per item. */
  get lastSeq(): number {
    return this.last;
  }

  push(source: LockEvent | AuditEntry): void {
    if ('type' in source && source.type === 'reset') return;
    this.raw[++this.last % FEED_SIZE] = source;
  }

  /** Items with seq > `after`, oldest first: at most the last FEED_SIZE. */
  since(after: number): FeedItem[] {
    const out: FeedItem[] = [];
    for (let seq = Math.max(after, this.last - FEED_SIZE) + 1; seq <= this.last; seq++) out.push(this.item(seq));
    return out;
  }

  private item(seq: number): FeedItem {
    const i = seq % FEED_SIZE;
    const cached = this.made[i];
    if (cached && cached.seq === seq) return cached;
    const raw = this.raw[i];
    // A seq asked for is always in the ring (callers page within [oldest, newest]).
    if (!raw) throw new Error(`feed ring: no item for seq ${seq}`);
    const item = feedItem(seq, raw, this.clock);
    this.made[i] = item;
    return item;
  }
}

function feedItem(seq: number, s: FeedSource, clock: Pick<ViewClock, 'wall'>): FeedItem {
  if (!('type' in s)) {
    // Admin actions name a lock as their target when they act on one.
    const lock = s.action === 'force-release' || s.action === 'kick' ? s.target : null;
    return { seq, at: s.at, kind: 'admin', lock, text: adminText(s) };
  }
  return { seq, at: Math.round(clock.wall(s.at)), kind: s.type, lock: s.lock, text: eventText(s) };
}

function adminText(e: AuditEntry): string {
  const what = e.target === '' ? e.action : `${e.action} of ${e.target}`;
  return `${what} by ${e.who}: ${e.result}${e.detail === null ? '' : ` (${e.detail})`}`;
}

export function eventText(e: ClaimEvent): string {
  switch (e.type) {
    case 'grant': {
      const base = `granted to ${clientText(e.clientName, e.client, e.protocol)} token ${e.token}`;
      return e.handoverCause === null ? base : `${base} after ${formatMs(e.handoverMs ?? 0)} (${e.handoverCause})`;
    }
    case 'release':
      return e.cause === 'release' ? `released, token ${e.token}` : `released: holder disconnected, token ${e.token}`;
    case 'expire':
      return `lease expired, token ${e.token}`;
    case 'force-release':
      return `force-released, token ${e.token}`;
    case 'enqueue': {
      const wait = e.waitDeadline === null ? '' : `, waits up to ${formatMs(e.waitDeadline - e.at)}`;
      return `${clientText(e.clientName, e.client, e.protocol)} queued at position ${e.position}${wait}`;
    }
    case 'leave-queue': {
      const why = e.reason === 'timeout' ? 'wait timed out' : e.reason === 'disconnect' ? 'disconnected' : 'session lease expired';
      return `waiter ${e.claimId} left the queue: ${why}`;
    }
    case 'kick':
      return `waiter ${e.claimId} removed by an admin`;
    case 'detach':
      return `claim ${e.claimId} kept for its client to resume (no connection)`;
    case 'resume':
      return `claim ${e.claimId} resumed by its client`;
  }
}

/** "0 ms", "0.05 ms", "3.5 ms", "120 ms", "12.5 s": two significant digits below 10 ms. */
export function formatMs(ms: number): string {
  if (ms >= 10_000) return `${Number((ms / 1000).toFixed(1))} s`;
  if (ms >= 10 || ms === 0) return `${Math.round(ms)} ms`;
  return `${Number(ms.toPrecision(2))} ms`;
}
