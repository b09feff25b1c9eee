// The blocks of a node's event loop counted in CPU time, for loop-delay.ts. On a shared host a
// loop delay is also time the process waited for a core (on 2 cores with a load of 10, a turn
// of 10 ms of work shows as 100 ms and more), so a bound on the wall figure says more about
// the neighbours than about this code. A timer every SAMPLE_MS notes the wall clock and the
// CPU time of the main thread (Linux: /proc/thread-self/schedstat, in ns, read in about 5 us;
// elsewhere the process's, which counts garbage-collection helper threads too); a gap well past
// SAMPLE_MS is a block, and it counts:
//   - busy: the CPU the loop's thread spent in it: its work plus garbage-collection pauses;
//   - work: busy less the garbage-collection pauses inside the gap (their wall time, so on a
//     starved host this errs low): what this code did in one go (a snapshot slice, a part
//     applied, a walk of the table).
// GC entries reach their observer a little after the pause, so a gap is settled only once it
// is SETTLE_MS old.
import { closeSync, openSync, readSync } from 'node:fs';

const SAMPLE_MS = 5;
const SETTLE_MS = 100;

interface CpuReader {
  read(): number;
  close(): void;
}

/** The main thread's CPU time in ms, or null where /proc/thread-self/schedstat cannot be read. */
function threadCpuReader(): CpuReader | null {
  let fd: number;
  try {
    fd = openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return null;
  }
  const buf = Buffer.alloc(64);
  const read = (): number => {
    const n = readSync(fd, buf, 0, buf.length, 0);
    // The first field: nanoseconds on a CPU.
    let ns = 0;
    for (let i = 0; i < n; i++) {
      const c = buf[i] ?? 32;
      if (c < 48 || c > 57) break;
      ns = ns * 10 + (c - 48);
    }
    return ns / 1e6;
  };
  try {
    read();
  } catch {
    closeSync(fd);
    return null;
  }
  return { read, close: () => closeSync(fd) };
}

const processCpu: CpuReader = {
  read: () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1_000;
  },
  close: () => {},
};

interface Gap {
  start: number;
  end: number;
  busy: number;
}

export class BusyBlocks {
  busyMax = 0;
  workMax = 0;
  private timer: NodeJS.Timeout | null = null;
  private lastWall = 0;
  private lastCpu = -1;
  private cpu: CpuReader = processCpu;
  private gaps: Gap[] = [];
  /** Recent GC pauses as [start, end] (performance.now() time), oldest first. */
  private pauses: Array<[number, number]> = [];
  private readonly sample = (): void => {
    const wall = performance.now();
    const cpu = this.cpu.read();
    if (this.lastCpu >= 0 && wall - this.lastWall > 2 * SAMPLE_MS) {
      const gap = wall - this.lastWall;
      this.gaps.push({ start: this.lastWall, end: wall, busy: Math.min(gap, cpu - this.lastCpu) });
    }
    this.lastWall = wall;
    this.lastCpu = cpu;
  };

  start(): void {
    if (this.timer !== null) return;
    this.cpu = threadCpuReader() ?? processCpu;
    this.timer = setInterval(this.sample, SAMPLE_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.cpu.close();
    this.cpu = processCpu;
    this.lastCpu = -1;
    this.gaps = [];
    this.pauses = [];
  }

  /** A garbage-collection pause (a PerformanceEntry of type gc). */
  noteGc(startTime: number, duration: number): void {
    this.pauses.push([startTime, startTime + duration]);
  }

  /** Settles the gaps old enough for their GC entries to have come; the maxima take them. */
  settle(now = performance.now()): void {
    let kept = 0;
    for (const g of this.gaps) {
      if (g.end > now - SETTLE_MS) {
        this.gaps[kept++] = g;
        continue;
      }
      let gc = 0;
      for (const [s, e] of this.pauses) if (e > g.start && s < g.end) gc += Math.min(e, g.end) - Math.max(s, g.start);
      if (g.busy > this.busyMax) this.busyMax = g.busy;
      const work = Math.max(0, g.busy - gc);
      if (work > this.workMax) this.workMax = work;
    }
    this.gaps.length = kept;
    const oldest = kept > 0 ? (this.gaps[0]?.start ?? now) : now - SETTLE_MS;
    this.pauses = this.pauses.filter(([, e]) => e >= oldest - SAMPLE_MS);
  }

  /** Starts the next second. */
  reset(): void {
    this.busyMax = 0;
    this.workMax = 0;
  }
}
