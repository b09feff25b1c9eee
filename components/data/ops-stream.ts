// The one EventSource of the console. It turns `snapshot` and `delta` events into the
// dashboard query (setQueryData) and keeps the stream status query current; components only
// read those queries. A delta that touches a lock invalidates that lock's detail query.
import type { QueryClient } from '@tanstack/react-query';
import type { DeltaMessage, LocksChunkMessage, SnapshotMessage } from '@/lib/ops-api/api-types.ts';
import { applyReceived, applySnapshot, type Received, touchedLocks } from '@/lib/dashboard/dashboard-state.ts';
import { StreamLiveness } from '@/lib/dashboard/stream-liveness.ts';
import { AUDIT_PREFIX, authQuery, dashboardQuery, LOCK_DETAIL_PREFIX, streamStatusQuery, type StreamStatus } from './query-keys.ts';
import { onNextTick, PAGE_BEAT_MS } from './use-now.ts';

export const EVENTS_URL = '/api/v1/events';
const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;
/** How often the page looks at the stream's silence (stream-liveness.ts: 1.5 s + this stays under 2 s). */
const LIVENESS_CHECK_MS = 100;
/**
 * Under churn the deltas (up to ten a second) are applied together at the next tick of the
 * page's beat, the clock the lease countdowns run on, so the page draws at most two frames a
 * second for both; after a quiet beat a delta is applied at once.
 */
const DELTA_BEAT_MS = PAGE_BEAT_MS;
/** Deltas waiting for the beat past which they are applied at once (a background tab's timers may fire once a minute). */
const MAX_WAITING_DELTAS = 50;

/**
 * Marks on the page's performance timeline (bench/sections/console-section.ts reads them to
 * split the time to first data): the stream opened, its snapshot arrived.
 */
export const STREAM_OPEN_MARK = 'baton:events-open';
export const SNAPSHOT_MARK = 'baton:snapshot';

function mark(name: string): void {
  try {
    performance.mark(name);
  } catch {
    // a browser without User Timing: nothing to measure
  }
}

export interface OpsStream {
  close(): void;
}

function parse<T>(data: unknown): T | null {
  if (typeof data !== 'string') return null;
  try {
    // The daemon builds these from lib/ops-api/api-types.ts; a malformed one is dropped.
    return JSON.parse(data) as T;
  } catch {
    return null;
  }
}

function invalidateDetails(queryClient: QueryClient, names: Set<string> | 'all'): void {
  for (const query of queryClient.getQueryCache().findAll({ queryKey: LOCK_DETAIL_PREFIX })) {
    const name = query.queryKey[2];
    if (names === 'all' || (typeof name === 'string' && names.has(name))) {
      void queryClient.invalidateQueries({ queryKey: query.queryKey, exact: true });
    }
  }
}

/**
 * Why did the stream fail for good? EventSource does not say, so ask once with fetch and look
 * at the status, then drop the body.
 */
async function probeStatus(): Promise<number> {
  const controller = new AbortController();
  try {
    const res = await fetch(EVENTS_URL, { credentials: 'same-origin', cache: 'no-store', headers: { accept: 'text/event-stream' }, signal: controller.signal });
    return res.status;
  } catch {
    return 0;
  } finally {
    controller.abort();
  }
}

export function connectOpsStream(queryClient: QueryClient): OpsStream {
  let source: EventSource | null = null;
  let retryTimer: ReturnType<typeof setTimeout> | null = null;
  let retryMs = RETRY_MIN_MS;
  let closed = false;
  // Deltas patch what this connection's snapshot showed. Until it arrives (after open() or after
  // the browser reconnects on its own) the state on screen is from an older connection and may
  // miss removals, so a delta must not be applied to it.
  let awaitingSnapshot = true;
  // Every message counts as a sign of life (ping included); the times are kept here, not in the
  // query cache, so that nothing re-renders per message.
  const liveness = new StreamLiveness(performance.now());
  let lastDataWall = Date.now();
  const alive = () => {
    liveness.message(performance.now());
    lastDataWall = Date.now();
  };

  const setStatus = (update: (prev: StreamStatus) => StreamStatus) => {
    const prev = queryClient.getQueryData(streamStatusQuery.queryKey) ?? { phase: 'connecting', needsSignIn: false };
    const next = update(prev);
    if (next.phase !== prev.phase || next.needsSignIn !== prev.needsSignIn) queryClient.setQueryData(streamStatusQuery.queryKey, next);
  };
  // Before the first snapshot the console is connecting; after it, a lost stream is a disconnect,
  // stamped with when its last data came (a second loss keeps the first stamp).
  const lost = (needsSignIn: boolean) =>
    setStatus((prev) => {
      if (queryClient.getQueryData(dashboardQuery.queryKey) === undefined && !needsSignIn) return { phase: 'connecting', needsSignIn };
      const lastData =
        prev.phase === 'disconnected' && prev.lastData !== undefined
          ? prev.lastData
          : { wall: lastDataWall, mono: liveness.lastActivityAt, lostAt: performance.now() };
      return { phase: 'disconnected', needsSignIn, lastData };
    });

  const onPing = () => alive();

  const onSnapshot = (event: MessageEvent) => {
    const at = performance.now();
    mark(SNAPSHOT_MARK);
    alive();
    const msg = parse<SnapshotMessage>(event.data);
    if (msg === null) return;
    awaitingSnapshot = false;
    dropPending();
    // What follows right away (the rest of the table, deltas) waits for the beat: the snapshot's
    // first rows are drawn now, and the rest lands in one state change instead of one per page.
    lastFlushAt = at;
    queryClient.setQueryData(dashboardQuery.queryKey, applySnapshot(msg, at));
    invalidateDetails(queryClient, 'all');
    // Admin actions recorded while this page had no stream (a reconnect, a slow snapshot) came
    // as deltas it never applied: the audit is read again rather than left short.
    void queryClient.invalidateQueries({ queryKey: AUDIT_PREFIX });
    retryMs = RETRY_MIN_MS;
    setStatus(() => ({ phase: 'live', needsSignIn: false }));
  };

  // The rest of a large snapshot's table, page by page (deltas may come in between). Pages wait
  // for the beat with the deltas, in their order of arrival (a page skips the locks a delta
  // before it named); the last page is applied at once, with whatever waits before it.
  const onLocks = (event: MessageEvent) => {
    const receivedAt = performance.now();
    alive();
    if (awaitingSnapshot) return;
    const msg = parse<LocksChunkMessage>(event.data);
    if (msg === null) return;
    pending.push({ kind: 'locks', msg, receivedAt });
    if (msg.last) {
      flush();
      return;
    }
    schedule(receivedAt);
  };

  // Deltas and pages wait here for the beat, each with its arrival time (its leases count down from then).
  let pending: Received[] = [];
  let waitingDeltas = 0;
  let flushQueued = false;
  let lastFlushAt = Number.NEGATIVE_INFINITY;
  const flush = () => {
    flushQueued = false;
    const batch = pending;
    pending = [];
    waitingDeltas = 0;
    if (batch.length === 0 || awaitingSnapshot || closed) return;
    lastFlushAt = performance.now();
    const next = applyReceived(queryClient.getQueryData(dashboardQuery.queryKey), batch);
    if (next === undefined) return;
    queryClient.setQueryData(dashboardQuery.queryKey, next);
    const touched = new Set<string>();
    let admin = false;
    for (const item of batch) {
      if (item.kind !== 'delta') continue;
      const { msg } = item;
      for (const name of touchedLocks(msg)) touched.add(name);
      // The delta's `audit` says the node kept an entry (an admin item in the 200-item feed may
      // have been pushed out before any delta took it: a role change replays the whole table).
      admin ||= msg.audit !== undefined || msg.feed.some((f) => f.kind === 'admin');
    }
    if (touched.size > 0) invalidateDetails(queryClient, touched);
    // An admin action was just recorded: the audit log (if anyone shows it) is one entry short.
    if (admin) void queryClient.invalidateQueries({ queryKey: AUDIT_PREFIX });
  };
  // A snapshot replaces what came before it: deltas and pages still waiting belong to the old picture.
  const dropPending = () => {
    pending = [];
    waitingDeltas = 0;
  };

  // Applied at once after a quiet beat, else at the next tick of the beat.
  const schedule = (receivedAt: number) => {
    if (flushQueued) return;
    if (receivedAt - lastFlushAt >= DELTA_BEAT_MS) {
      flush();
      return;
    }
    flushQueued = true;
    onNextTick(DELTA_BEAT_MS, flush);
  };

  const onDelta = (event: MessageEvent) => {
    const receivedAt = performance.now();
    alive();
    if (awaitingSnapshot) return;
    const msg = parse<DeltaMessage>(event.data);
    if (msg === null) return;
    pending.push({ kind: 'delta', msg, receivedAt });
    // A background tab's timers may fire once a minute: past 50 waiting deltas (5 s of them)
    // they are applied at once rather than held for the beat.
    if (++waitingDeltas >= MAX_WAITING_DELTAS) {
      flush();
      return;
    }
    schedule(receivedAt);
  };

  const scheduleRetry = () => {
    if (closed || retryTimer !== null) return;
    retryTimer = setTimeout(() => {
      retryTimer = null;
      open();
    }, retryMs);
    retryMs = Math.min(RETRY_MAX_MS, retryMs * 2);
  };

  const onError = () => {
    const current = source;
    if (current === null || closed) return;
    awaitingSnapshot = true;
    if (current.readyState !== EventSource.CLOSED) {
      // A dropped connection: the browser reconnects by itself and gets a fresh snapshot.
      lost(false);
      liveness.opened(performance.now());
      return;
    }
    // Refused for good (an HTTP error or a wrong content type): find out whether it was 401.
    current.close();
    source = null;
    void probeStatus().then((status) => {
      if (closed) return;
      if (status === 401) {
        // What an earlier session showed must not linger on screen after it ended.
        void queryClient.resetQueries({ queryKey: dashboardQuery.queryKey });
        invalidateDetails(queryClient, 'all');
        lost(true);
        void queryClient.invalidateQueries({ queryKey: authQuery.queryKey });
        return; // signing in restarts the stream
      }
      lost(false);
      scheduleRetry();
    });
  };

  // A node that stopped (SIGSTOP) or a connection black-holed on the way keeps the stream open
  // and silent: after 1.5 s without a message (pings come every 500 ms) the page says it lost
  // contact, and a fresh connection replaces the silent one.
  const checkLiveness = () => {
    if (closed || source === null || liveness.check(performance.now()) === 'ok') return;
    lost(false);
    source.close();
    source = null;
    awaitingSnapshot = true;
    scheduleRetry();
  };
  const livenessTimer = setInterval(checkLiveness, LIVENESS_CHECK_MS);

  function open() {
    if (closed) return;
    awaitingSnapshot = true;
    liveness.opened(performance.now());
    mark(STREAM_OPEN_MARK);
    const next = new EventSource(EVENTS_URL, { withCredentials: true });
    next.addEventListener('ping', onPing);
    next.addEventListener('snapshot', onSnapshot);
    next.addEventListener('locks', onLocks);
    next.addEventListener('delta', onDelta);
    next.addEventListener('error', onError);
    source = next;
  }

  open();
  return {
    close() {
      closed = true;
      clearInterval(livenessTimer);
      if (retryTimer !== null) clearTimeout(retryTimer);
      source?.close();
      source = null;
    },
  };
}
