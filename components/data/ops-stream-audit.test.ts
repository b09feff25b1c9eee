// The page reads its audit again when a stream message says the node kept an entry (`audit`),
// not only when an admin item is among the delta's feed items: on the node whose role changed,
// the handoff's admin item was pushed out of the live feed's 200 by the replay of the table
// before any delta took it, and the page never showed its own handoff.
import { QueryClient } from '@tanstack/react-query';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DeltaMessage, SnapshotMessage } from '@/lib/ops-api/api-types.ts';
import { connectOpsStream, type OpsStream } from './ops-stream.ts';
import { AUDIT_PREFIX } from './query-keys.ts';
import { PAGE_BEAT_MS } from './use-now.ts';

/** An EventSource the test feeds by hand. */
class FakeEventSource {
  static readonly CLOSED = 2;
  static last: FakeEventSource | null = null;
  readyState = 1;
  private readonly listeners = new Map<string, Array<(e: MessageEvent) => void>>();
  constructor() {
    FakeEventSource.last = this;
  }
  addEventListener(type: string, fn: (e: MessageEvent) => void): void {
    this.listeners.set(type, [...(this.listeners.get(type) ?? []), fn]);
  }
  close(): void {
    this.readyState = FakeEventSource.CLOSED;
  }
  emit(type: string, data: unknown): void {
    for (const fn of this.listeners.get(type) ?? []) fn(new MessageEvent(type, { data: JSON.stringify(data) }));
  }
}

const snapshot = {
  instanceId: 'i',
  asOf: 1,
  stats: {},
  cluster: { nodes: [] },
  locks: [],
  pending: false,
  total: 0,
  history: [],
  feed: [],
  audit: 0,
} as unknown as SnapshotMessage;
const delta = (extra: Partial<DeltaMessage>): DeltaMessage =>
  ({ asOf: 2, stats: {}, upserts: [], removed: [], history: [], feed: [], cluster: null, ...extra }) as unknown as DeltaMessage;

let stream: OpsStream | null = null;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval', 'setTimeout', 'clearTimeout', 'performance'] });
  vi.stubGlobal('EventSource', FakeEventSource);
});
afterEach(() => {
  stream?.close();
  stream = null;
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

function setup() {
  const client = new QueryClient();
  stream = connectOpsStream(client);
  const source = FakeEventSource.last as FakeEventSource;
  source.emit('snapshot', snapshot);
  // The card's pages, read after the snapshot (which itself asks for a fresh read).
  const key = [...AUDIT_PREFIX, 'pages', 'limit=200', 'admin'];
  client.setQueryData(key, { pages: [], pageParams: [] });
  const invalidated = () => client.getQueryState(key)?.isInvalidated ?? false;
  return { source, invalidated };
}

describe('the event stream and the audit', () => {
  it('reads the audit again on a delta that carries the audit position, with no admin item in its feed', () => {
    const { source, invalidated } = setup();
    expect(invalidated()).toBe(false);
    source.emit('delta', delta({ audit: 7, feed: [{ seq: 400, at: 2, kind: 'grant', lock: 'x', text: 'granted' }] }));
    vi.advanceTimersByTime(PAGE_BEAT_MS);
    expect(invalidated()).toBe(true);
  });

  it('leaves the audit alone on a delta without it', () => {
    const { source, invalidated } = setup();
    source.emit('delta', delta({ feed: [{ seq: 400, at: 2, kind: 'grant', lock: 'x', text: 'granted' }] }));
    vi.advanceTimersByTime(PAGE_BEAT_MS);
    expect(invalidated()).toBe(false);
  });
});
