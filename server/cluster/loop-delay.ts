// How long this node's event loop was held up, second by second: the figure a streamed
// snapshot must keep low (an active whose loop stops for about a peer timeout steps out, see
// role-lease.ts). perf_hooks' monitorEventLoopDelay samples the loop with a timer every
// RESOLUTION_MS; once a second its longest delay goes into a ring and it starts over. The
// longest garbage-collection pause of each second is kept beside it, to tell the two apart.
//
// Beside them, the longest block counted in CPU time (busy-blocks.ts): with garbage collection
// (busy) and without it (work), the figures a test can bound on a loaded machine.
import { type IntervalHistogram, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { BusyBlocks } from './busy-blocks.ts';

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
  private readonly blocks = new BusyBlocks();
  private readonly busySeconds: number[] = [];
  private readonly workSeconds: number[] = [];

  start(): void {
    if (this.histogram !== null) return;
    const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
    h.enable();
    this.histogram = h;
    this.gc = new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.duration > this.gcMax) this.gcMax = e.duration;
        this.blocks.noteGc(e.startTime, e.duration);
      }
    });
    this.gc.observe({ entryTypes: ['gc'] });
    this.timer = setInterval(() => this.rotate(), 1_000);
    this.timer.unref();
    this.blocks.start();
  }

  stop(): void {
    this.histogram?.disable();
    this.histogram = null;
    this.gc?.disconnect();
    this.gc = null;
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.blocks.stop();
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

  /**
   * The longest block (ms) in each of the same seconds counting only the CPU time the process
   * spent in it: the loop's own work and garbage collection, not the wait for a core.
   */
  perSecondBusyMs(): number[] {
    this.blocks.settle();
    return [...this.busySeconds, round2(this.blocks.busyMax)];
  }

  /** The same blocks less the garbage-collection pauses in them: the loop's own work in one go (ms). */
  perSecondWorkMs(): number[] {
    this.blocks.settle();
    return [...this.workSeconds, round2(this.blocks.workMax)];
  }

  private rotate(): void {
    const h = this.histogram;
    if (h === null) return;
    this.seconds.push(h.count === 0 ? 0 : nsToMs(h.max));
    this.gcSeconds.push(round2(this.gcMax));
    this.blocks.settle();
    this.busySeconds.push(round2(this.blocks.busyMax));
    this.workSeconds.push(round2(this.blocks.workMax));
    if (this.seconds.length >= LOOP_DELAY_SECONDS) {
      this.seconds.shift();
      this.gcSeconds.shift();
      this.busySeconds.shift();
      this.workSeconds.shift();
    }
    h.reset();
    this.gcMax = 0;
    this.blocks.reset();
  }
}

function nsToMs(ns: number): number {
  return Math.round(ns / 10_000) / 100;
}

const round2 = (ms: number): number => Math.round(ms * 100) / 100;
