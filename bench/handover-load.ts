// The one handover driver: `clients` LockClients of one system all loop on the same key for
// `durationMs` (acquire, release at once, acquire again). A handover is a grant to a client
// other than the one that released last; its latency runs from the moment that holder started
// its release to the moment the next holder's grant arrived. (The issue says "release returns";
// Baton grants the next waiter inside the release, so its grant can arrive before the releaser
// sees OK: we start the clock earlier, which can only make the figure larger, for every system.)
// A client taking the lock straight back after its own release is counted in the fairness
// (grants per client) but is not a handover. The wait (acquire called -> held) of every grant
// is kept too: with retry loops, the handovers that do happen are the lucky retries, and the
// cost of losing shows in the waits and the fairness instead.
import { percentile, round } from './stats.ts';
import type { LockSystem } from './systems/lock-system.ts';

export interface HandoverRun {
  handovers: number;
  /** Grants taken back by the client that had just released. */
  selfRegrants: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** From calling acquire to holding, over every grant: what a waiter in line sees. */
  waitP50Ms: number;
  waitP99Ms: number;
  waitMaxMs: number;
  /** Most grants of one client over fewest (Infinity when some client never got the lock). */
  fairness: number;
  minGrants: number;
  maxGrants: number;
}

export async function runHandover(system: LockSystem, clients: number, durationMs: number, key = 'handover/bench'): Promise<HandoverRun> {
  const conns = await Promise.all(Array.from({ length: clients }, () => system.connect()));
  const grants = new Array<number>(clients).fill(0);
  const samples: number[] = [];
  const waits: number[] = [];
  let selfRegrants = 0;
  let lastReleaser = -1;
  let lastReleaseAt = 0;
  let stopping = false;
  try {
    const deadline = performance.now() + durationMs;
    const loops = conns.map(async (client, c) => {
      while (!stopping) {
        const asked = performance.now();
        const held = await client.acquire(key);
        const at = performance.now();
        if (at >= deadline) stopping = true; // grants while the queue drains are not counted
        if (!stopping) {
          grants[c] = (grants[c] as number) + 1;
          waits.push(at - asked);
          if (lastReleaser === c) selfRegrants++;
          else if (lastReleaser >= 0) samples.push(at - lastReleaseAt);
        }
        lastReleaser = c;
        lastReleaseAt = performance.now();
        await held.release();
      }
    });
    // Clients still queued when the time is up get their grant in turn (each releases at once);
    // a system that never grants them would hold us here: give up after a few seconds.
    let timer: NodeJS.Timeout | undefined;
    const settled = await Promise.race([Promise.allSettled(loops), new Promise<null>((r) => (timer = setTimeout(() => r(null), durationMs + 10_000)))]);
    clearTimeout(timer);
    if (settled === null) process.stderr.write(`bench: ${system.name}: some clients were still waiting 10 s after the run ended\n`);
    const failed = settled?.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed !== undefined) throw new Error(`${system.name}: a client failed during the handover run`, { cause: failed.reason });
  } finally {
    stopping = true;
    await Promise.all(conns.map((c) => c.close().catch(() => undefined)));
  }
  const min = Math.min(...grants);
  const max = Math.max(...grants);
  const r3 = (n: number) => round(n, 3);
  return {
    handovers: samples.length,
    selfRegrants,
    p50Ms: r3(percentile(samples, 50)),
    p99Ms: r3(percentile(samples, 99)),
    maxMs: r3(percentile(samples, 100)),
    waitP50Ms: r3(percentile(waits, 50)),
    waitP99Ms: r3(percentile(waits, 99)),
    waitMaxMs: r3(percentile(waits, 100)),
    fairness: min === 0 ? Number.POSITIVE_INFINITY : r3(max / min),
    minGrants: min,
    maxGrants: max,
  };
}
