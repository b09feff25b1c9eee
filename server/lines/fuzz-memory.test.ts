// Bad input leaves nothing behind: one daemon takes round after round of fuzzed keyed and
// session plans (cut mid-line and mid-pipeline, garbage, invalid UTF-8, overlong lines),
// bursts of short-lived garbage connections and clients that never read; after each round the
// lock table and the connection gauges are back to zero, no token was ever granted twice
// across all rounds, and the heap, after a full GC, is back near where it was after the first
// round measured (a warm-up round comes before it, and every round replays the same seed).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { bytesOf, garbage, invalidUtf8 } from '../testing/fuzz-generators.ts';
import { daemon, FUZZ_TEST_MS, runTeardown, serverStillServes, teardown, waitIdle } from '../testing/fuzz-harness.ts';
import { connectionGauge, EngineMonitor, eventually, RawConnection, sleep } from '../testing/fuzz-helpers.ts';
import { NeverReader } from '../testing/never-reader.ts';
import { driveKeyed, keyedPlan } from '../testing/keyed-fuzz-model.ts';
import { driveSession, sessionPlan } from '../testing/session-fuzz-model.ts';
import type { Daemon } from '../daemon/daemon.ts';

afterEach(runTeardown);

// A full collection on demand, without a flag on the whole test run: V8 hands out its gc()
// to contexts created after --expose-gc is set.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/**
 * Heap growth allowed from after the first measured round to after the last. Generous against
 * noise (V8's inline caches, vitest's own bookkeeping; rounds differ by under 1 MiB), small
 * against a leak: keeping each connection object (about 2.4 KiB) grows it by 1.5 MiB a round.
 */
const GROWTH_BOUND = 3 * 1024 * 1024;
/**
 * Rounds measured, after one warm-up round that is not: the first round compiles the code every
 * path takes, and that code stays. Every round replays the same seed, so later rounds run the
 * same paths and compile nothing new; the heap can only grow by what the daemon keeps.
 */
const ROUNDS = 4;
const SEED = 1_000;
const BURST = 600;

async function settledHeap(): Promise<number> {
  // Sockets are freed over a few turns after they close; collect twice, a turn apart.
  for (let i = 0; i < 3; i++) {
    await sleep(20);
    gc();
  }
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** One round of everything bad at once, ended by the checks that everything has been given back. */
async function round(d: Daemon, monitor: EngineMonitor, seed: number): Promise<void> {
  const keyed = fc.sample(keyedPlan, { numRuns: 12, seed });
  const sessions = fc.sample(sessionPlan, { numRuns: 12, seed: seed + 1 });
  const junk = fc.sample(fc.oneof(garbage(/^([AR] |ACQUIRE )/), invalidUtf8), { numRuns: BURST, seed: seed + 2 });
  const conns: RawConnection[] = [];
  const plans = [
    ...keyed.map(async (plan) => {
      const c = await RawConnection.open(d.lockAddress.port);
      conns.push(c);
      await driveKeyed(c, plan, monitor);
    }),
    ...sessions.map(async (plan) => {
      const c = await RawConnection.open(d.sessionAddress.port);
      conns.push(c);
      await driveSession(c, plan);
    }),
  ];
  // Short-lived garbage connections, 40 at a time, half of them to each port.
  let next = 0;
  const burst = async (): Promise<void> => {
    for (let i = next++; i < junk.length; i = next++) {
      const c = await RawConnection.open(i % 2 === 0 ? d.lockAddress.port : d.sessionAddress.port);
      c.write(bytesOf([...(junk[i] as Uint8Array)], i % 3 === 0 ? 'x'.repeat(5_000) : '\n'));
      c.end();
      await c.until(() => c.closed, 5_000, 'the server to close a garbage connection');
    }
  };
  // A client that asks for megabytes of answers and never reads them: cut at the io-timeout
  // once the kernel's buffers are full. Not reading, it learns of the cut by writing.
  const stuck = await NeverReader.open(d.lockAddress.port);
  const stuckFlood = (async () => {
    // Long keys: megabytes of answers for few lines to parse.
    await stuck.flood(`R never/read/${'k'.repeat(230)} 1\n`.repeat(1_200), 10_000);
    expect(stuck.closed, 'the reader that never reads is cut off').toBe(true);
  })();
  await Promise.all([...plans, ...Array.from({ length: 40 }, burst), stuckFlood]);
  for (const c of [...conns, stuck]) c.destroy();
  await waitIdle(d);
  await eventually(
    async () => {
      const gauge = await connectionGauge(d.httpAddress.port);
      return gauge.keyed === 0 && gauge.session === 0;
    },
    5_000,
    'baton_connections to fall back to 0',
  );
}

describe('memory and state after rounds of bad input', () => {
  it(
    'returns to an empty lock table, zero connections and the same heap, and never grants a token twice',
    async () => {
      const d = await daemon();
      const monitor = new EngineMonitor(d.engine);
      teardown.push(monitor.stop);
      const heap: number[] = [];
      for (let r = 0; r <= ROUNDS; r++) {
        await round(d, monitor, SEED);
        expect(monitor.problems, `round ${r}`).toEqual([]);
        // Round 0 is the warm-up.
        if (r > 0) heap.push(await settledHeap());
      }
      const [first = 0, ...later] = heap;
      const growth = Math.max(...later) - first;
      // Printed so a slow leak shows in the log before it reaches the bound.
      console.log(`heap+external after each round (MiB): ${heap.map((h) => (h / 2 ** 20).toFixed(1)).join(', ')}`);
      expect(growth, `heap growth over ${ROUNDS - 1} rounds`).toBeLessThan(GROWTH_BOUND);
      // Every grant had its own token, across all the rounds of one daemon.
      expect(monitor.grants.size).toBeGreaterThan(0);
      await serverStillServes(d, monitor);
    },
    FUZZ_TEST_MS,
  );
});
