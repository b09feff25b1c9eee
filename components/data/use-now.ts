// A shared local clock that ticks only while someone is watching. Each countdown cell
// subscribes on its own, so a tick re-renders the visible cells and nothing else.
import { useSyncExternalStore } from 'react';

/**
 * The page's beat: the lease countdowns tick on it, and under churn the stream's deltas are
 * applied on it too (ops-stream.ts), so one redraw carries both. At 10,000 locks and 2,000 pairs
 * a second, one page's renderer took about 24 % of a core at 250 ms and 13-15 % at 500 ms.
 */
export const PAGE_BEAT_MS = 500;

interface Ticker {
  value: number;
  timer: ReturnType<typeof setInterval> | null;
  listeners: Set<() => void>;
  /** Run once at the next tick, before the listeners (see onNextTick). */
  once: (() => void)[];
}

const tickers = new Map<number, Ticker>();

function ticker(intervalMs: number): Ticker {
  let t = tickers.get(intervalMs);
  if (t === undefined) {
    t = { value: performance.now(), timer: null, listeners: new Set(), once: [] };
    tickers.set(intervalMs, t);
  }
  return t;
}

function subscribe(intervalMs: number, listener: () => void): () => void {
  const t = ticker(intervalMs);
  t.listeners.add(listener);
  if (t.timer === null) {
    // Waking up after a pause: start from a fresh reading (only when stale, so that
    // re-subscribing never changes the value React just rendered with).
    const now = performance.now();
    if (now - t.value >= intervalMs) t.value = now;
    t.timer = setInterval(() => {
      t.value = performance.now();
      const once = t.once;
      t.once = [];
      for (const fn of once) fn();
      for (const l of t.listeners) l();
      stopIfIdle(t);
    }, intervalMs);
  }
  return () => {
    t.listeners.delete(listener);
    stopIfIdle(t);
  };
}

function stopIfIdle(t: Ticker): void {
  if (t.listeners.size === 0 && t.once.length === 0 && t.timer !== null) {
    clearInterval(t.timer);
    t.timer = null;
  }
}

/**
 * Runs `fn` at the next tick of the `intervalMs` clock, in the same task as that tick's
 * countdowns, so React draws both in one frame: a page that redraws on its own every 250 ms
 * and on data ten times a second would otherwise draw 14 frames a second where 4 carry it all.
 */
export function onNextTick(intervalMs: number, fn: () => void): void {
  const t = ticker(intervalMs);
  t.once.push(fn);
  if (t.timer === null) {
    const noop = () => undefined;
    // Start the clock as a listener would, then drop the stand-in: the clock runs until `fn` ran.
    subscribe(intervalMs, noop)();
  }
}

// React re-subscribes whenever the subscribe function changes identity: keep one per interval.
const subscribers = new Map<number, (listener: () => void) => () => void>();
const snapshots = new Map<number, () => number>();

function subscriberFor(intervalMs: number): (listener: () => void) => () => void {
  let fn = subscribers.get(intervalMs);
  if (fn === undefined) {
    fn = (listener) => subscribe(intervalMs, listener);
    subscribers.set(intervalMs, fn);
  }
  return fn;
}

function snapshotFor(intervalMs: number): () => number {
  let fn = snapshots.get(intervalMs);
  if (fn === undefined) {
    fn = () => ticker(intervalMs).value;
    snapshots.set(intervalMs, fn);
  }
  return fn;
}

const serverSnapshot = () => 0;

/** performance.now(), refreshed every `intervalMs` while mounted; 0 during server rendering. */
export function useNow(intervalMs: number): number {
  return useSyncExternalStore(subscriberFor(intervalMs), snapshotFor(intervalMs), serverSnapshot);
}
