// Held locks as the table grows: one Baton daemon and one redis-server are filled step by step
// to each size (the way: 600 s leases, pipelined over one keyed connection; Redis
// `SET key value NX PX` the same way, the same key names), and at each size
//   - memory: RSS growth of each server process since before the first fill, per held lock;
//   - grant CPU: server CPU time per uncontended acquire+release pair on other keys (50 raw
//     keyed connections, 16 pipelined, bench/raw-keyed-load.ts) on the filled daemon against a
//     second daemon holding 1,000 locks, alternating, ratio per repeat (median of them).
// Both daemons run the pair load once before the base RSS is read, so the young generation has
// grown to its working size and is not counted as lock memory.
import { startBaton } from './baton-process.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { fillRedisLocks, memKiB } from './scale-load.ts';
import { startRedis } from './servers/redis-server.ts';
import { track } from './servers/server-process.ts';
import { median, round } from './stats.ts';
import { fillLocks } from '../server/testing/lock-load.ts';

const REFERENCE_LOCKS = 1_000;
const LEASE_S = 600;
const SETTLE_MS = 2_000;

export interface CpuComparison {
  /** Server CPU per pair (us) on the filled daemon, and on the one holding 1,000: medians of the repeats. */
  cpuUsPerPair: number;
  referenceCpuUsPerPair: number;
  /** Median of per-repeat ratios (filled / 1,000 locks). */
  cpuVsReference: number;
  pairsPerSec: number;
}

export interface HeldRow extends CpuComparison {
  locks: number;
  batonRssMiB: number;
  batonPeakMiB: number;
  batonBytesPerLock: number;
  redisRssMiB: number;
  redisBytesPerLock: number;
  batonVsRedis: number;
  batonFillSeconds: number;
  redisFillSeconds: number;
}

export interface HeldResult {
  baseRssMiB: { baton: number; redis: number };
  /** Seconds from the first fill to the last measurement: under the 600 s lease, or locks expired. */
  spanSeconds: number;
  /** The comparison before the fill: the empty daemon against the 1,000-lock one (the noise floor). */
  emptyVsReference: CpuComparison;
  rows: HeldRow[];
}

const mib = (kib: number) => round(kib / 1024, 1);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function heldSection(sizes: number[], seconds: number, repeats: number, say: (text: string) => void): Promise<HeldResult> {
  const big = await startBaton();
  track(big.child);
  const ref = await startBaton();
  track(ref.child);
  const redis = await startRedis();
  try {
    const usPerPair = async (port: number, cpuMs: () => number) => {
      const cpu0 = cpuMs();
      const r = await rawKeyedLoad(port, 50, 16, seconds * 1_000);
      return { us: ((cpuMs() - cpu0) * 1_000) / r.pairs, pairsPerSec: (r.pairs / r.elapsedMs) * 1_000 };
    };
    /** Grant CPU per pair on `big` against `ref`, alternating which goes first, medians of `repeats`. */
    const compare = async (): Promise<CpuComparison> => {
      const cpu: number[] = [];
      const refCpu: number[] = [];
      const ratios: number[] = [];
      const rates: number[] = [];
      for (let r = 0; r < repeats; r++) {
        // Alternate which goes first, so a neighbour's burst does not always land on one side.
        const order = r % 2 === 0 ? ([big, ref] as const) : ([ref, big] as const);
        const out = new Map<typeof big, { us: number; pairsPerSec: number }>();
        for (const d of order) out.set(d, await usPerPair(d.lockPort, d.cpuMs));
        const [b, f] = [out.get(big), out.get(ref)];
        if (b === undefined || f === undefined) throw new Error('a pair run went missing');
        cpu.push(b.us);
        refCpu.push(f.us);
        ratios.push(b.us / f.us);
        rates.push(b.pairsPerSec);
      }
      return {
        cpuUsPerPair: round(median(cpu)),
        referenceCpuUsPerPair: round(median(refCpu)),
        cpuVsReference: round(median(ratios)),
        pairsPerSec: Math.round(median(rates)),
      };
    };
    await fillLocks(ref.lockPort, REFERENCE_LOCKS, 'scale/ref');
    await usPerPair(big.lockPort, big.cpuMs);
    await usPerPair(ref.lockPort, ref.cpuMs);
    await sleep(SETTLE_MS);
    const bigPid = big.child.pid as number;
    const base = { baton: memKiB(bigPid).rss, redis: memKiB(redis.pid).rss };
    // The same comparison before the fill (0 against 1,000 locks): what two like daemons differ
    // by on this machine, the noise floor the per-size ratios are read against.
    const emptyVsReference = await compare();
    const rows: HeldRow[] = [];
    const first = performance.now();
    let filled = 0;
    for (const [step, size] of sizes.entries()) {
      say(`scale: filling to ${size} held locks (Baton, then Redis)`);
      const t0 = performance.now();
      await fillLocks(big.lockPort, size - filled, `scale/held/${step}`);
      const t1 = performance.now();
      await fillRedisLocks(redis.port, size - filled, `scale/held/${step}`);
      const t2 = performance.now();
      filled = size;
      await sleep(SETTLE_MS);
      const baton = memKiB(bigPid);
      const redisRss = memKiB(redis.pid).rss;
      const cmp = await compare();
      const row: HeldRow = {
        locks: size,
        batonRssMiB: mib(baton.rss),
        batonPeakMiB: mib(baton.peak),
        batonBytesPerLock: Math.round(((baton.rss - base.baton) * 1024) / size),
        redisRssMiB: mib(redisRss),
        redisBytesPerLock: Math.round(((redisRss - base.redis) * 1024) / size),
        batonVsRedis: round((baton.rss - base.baton) / (redisRss - base.redis)),
        batonFillSeconds: round((t1 - t0) / 1_000, 1),
        redisFillSeconds: round((t2 - t1) / 1_000, 1),
        ...cmp,
      };
      say(
        `scale: ${size} held: Baton ${row.batonBytesPerLock} B/lock, Redis ${row.redisBytesPerLock} B/lock, CPU/pair ${row.cpuVsReference}x the 1,000-lock daemon`,
      );
      rows.push(row);
    }
    const spanSeconds = Math.round((performance.now() - first) / 1_000);
    if (spanSeconds >= LEASE_S) say(`scale: WARNING: the held-lock run took ${spanSeconds} s, longer than the ${LEASE_S} s lease: the last sizes lost locks`);
    return { baseRssMiB: { baton: mib(base.baton), redis: mib(base.redis) }, spanSeconds, emptyVsReference, rows };
  } finally {
    await Promise.allSettled([big.stop(), ref.stop(), redis.stop()]);
  }
}
