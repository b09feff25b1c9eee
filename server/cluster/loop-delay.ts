// How long this node's event loop was held up, second by second: the figure a streamed
// snapshot must keep low (an active whose loop stops for about a peer timeout steps out, see
// role-lease.ts). perf_hooks' monitorEventLoopDelay samples the loop with a timer every
// RESOLUTION_MS; once a second its longest delay goes into a ring and it starts over. The
// longest garbage-collection pause of each second is kept beside it, to tell the two apart.
import { type IntervalHistogram, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';

const RESOLUTION_MS = 5;
/** Seconds kept (the ops API shows them all). */
export const LOOP_DELAY_SECONDS = 60;

export class LoopDelayWatch {
  private histogram: IntervalHistogram | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly seconds: number[] = [];
  private readonly gcSeconds: number[] = [];
  private gcMax = 0;
  private gc: PerformanceObserver | null = null;

  start(): void {
    if (this.histogram !== null) return;
    const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    h.enable();
    this.histogram = h;
    this.gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) if (e.duration > this.gcMax) this.gcMax = e.duration;
    });
    this.gc.observe({ entryTypes: ['gc'] });
    this.timer = setInterval(() => this.rotate(), 1_000);
    this.timer.unref();
  }

  stop(): void {
    this.histogram?.disable();
    this.histogram = null;
    this.gc?.disconnect();
    this.gc = null;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The longest delay (ms) in each of the last seconds, oldest first; the second under way last. */
  perSecondMaxMs(): number[] {
    const current = this.histogram === null || this.histogram.count === 0 ? 0 : nsToMs(this.histogram.max);
    return [...this.seconds, current];
  }

  /** The longest garbage-collection pause (ms) in each of the same seconds. */
  perSecondGcMs(): number[] {
    return [...this.gcSeconds, round2(this.gcMax)];
  }

  private rotate(): void {
    const h = this.histogram;
    if (h === null) return;
    this.seconds.push(h.count === 0 ? 0 : nsToMs(h.max));
    this.gcSeconds.push(round2(this.gcMax));
    if (this.seconds.length >= LOOP_DELAY_SECONDS) {
      this.seconds.shift();
      this.gcSeconds.shift();
    }
    h.reset();
    this.gcMax = 0;
  }
}

function nsToMs(ns: number): number {
  return Math.round(ns / 10_000) / 100;
}

const round2 = (ms: number): number => Math.round(ms * 100) / 100;
