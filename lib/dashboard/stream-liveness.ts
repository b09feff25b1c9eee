// Is the page's event stream alive? The server sends something at least every 500 ms (a `ping`
// event when nothing else moved), so silence says more than the TCP connection does: a node
// that is stopped (SIGSTOP) or cut off behind a proxy keeps its connection open and sends
// nothing. Pure, with the time passed in: ops-stream.ts feeds it performance.now().

/**
 * After data has come on a connection, this long without any message means the node is lost.
 * With pings every 500 ms and the page looking every 100 ms, a node that stops is seen lost at
 * most 1.6 s after its last message, so within 2 s of the loss (with room for the page's own
 * timer running late); and a ping may be 1 s late (a busy node, a slow network) before the page
 * calls it lost.
 */
export const SILENT_LIMIT_MS = 1_500;
/**
 * A connection that has not sent its first message yet gets longer: a busy node may take a
 * while to build its snapshot, and a reconnect loop that gives up too early would never let it.
 */
export const CONNECT_LIMIT_MS = 10_000;

/**
 * A check that comes this long after the previous one says the page itself was held up (a long
 * render, a frozen tab): messages that arrived meanwhile may still wait in the page's queue, so
 * that check gives no verdict, and the next one, on time, does.
 */
export const PAGE_STALL_MS = 1_500;

export type LivenessVerdict = 'ok' | 'silent';

export class StreamLiveness {
  private lastAt: number;
  private hadData = false;
  private checkedAt: number;

  constructor(now: number) {
    this.lastAt = now;
    this.checkedAt = now;
  }

  /** A new connection (ours, or the browser's own reconnect) starts now, with no data yet. */
  opened(now: number): void {
    this.lastAt = now;
    this.hadData = false;
  }

  /** Any message arrived (snapshot, page, delta, ping). */
  message(now: number): void {
    this.lastAt = now;
    this.hadData = true;
  }

  /** Local time of the newest message, or of the connection's start when none came yet. */
  get lastActivityAt(): number {
    return this.lastAt;
  }

  check(now: number): LivenessVerdict {
    const stalled = now - this.checkedAt > PAGE_STALL_MS;
    this.checkedAt = now;
    if (stalled) return 'ok';
    const limit = this.hadData ? SILENT_LIMIT_MS : CONNECT_LIMIT_MS;
    return now - this.lastAt > limit ? 'silent' : 'ok';
  }
}
