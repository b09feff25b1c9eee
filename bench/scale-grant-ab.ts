// Grant CPU per pair as the table grows, two builds side by side in one run: four `baton serve`
// daemons (the old and the new build, each once holding 1,000 locks and once filled step by step
// to each size with 600 s keyed leases, the scale bench's way), and at each size the scale
// bench's pair load (50 raw keyed connections, 16 pipelined, on other keys) run on each daemon in
// turn, the order rotated every repeat. Server CPU per pair from /proc; each build's ratio to its
// own 1,000-lock daemon per repeat, medians of the repeats. The same machine, load and minutes for
// both builds: issue 29's "the same CPU per pair with 5,000,000 locks held as with 1,000",
// before and after an engine change.
// Usage: node --import tsx bench/scale-grant-ab.ts <old checkout> <new checkout> [sizes=100000,1000000,5000000] [repeats=5] [seconds=3]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type BatonProcess, startBaton } from './baton-process.ts';
import { rawKeyedLoad } from './raw-keyed-load.ts';
import { track } from './servers/server-process.ts';
import { median, round } from './stats.ts';
import { fillLocks } from '../server/testing/lock-load.ts';

const [oldRoot, newRoot, sizesArg, repeatsArg, secondsArg] = process.argv.slice(2);
if (oldRoot === undefined || newRoot === undefined) throw new Error('usage: scale-grant-ab.ts <old checkout> <new checkout> [sizes] [repeats] [seconds]');
const roots = [path.resolve(oldRoot), path.resolve(newRoot)];
const sizes = (sizesArg ?? '100000,1000000,5000000').split(',').map(Number);
const repeats = Number(repeatsArg ?? 5);
const seconds = Number(secondsArg ?? 3);

const start = (root: string) => startBaton([], { bin: path.join(root, 'bin/baton') });
// refs[b], bigs[b]: build b's daemon holding 1,000 locks, and the one filled to each size.
const refs: BatonProcess[] = [];
const bigs: BatonProcess[] = [];
for (const root of roots) {
  const ref = await start(root);
  track(ref.child);
  refs.push(ref);
  const big = await start(root);
  track(big.child);
  bigs.push(big);
}
const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

/** Server CPU microseconds per pair of one load run on `d`. */
async function usPerPair(d: BatonProcess): Promise<number> {
  const cpu0 = d.cpuMs();
  const r = await rawKeyedLoad(d.lockPort, 50, 16, seconds * 1_000);
  return ((d.cpuMs() - cpu0) * 1_000) / r.pairs;
}

try {
  for (const ref of refs) await fillLocks(ref.lockPort, 1_000, 'scale/ref');
  // One warm-up run each: the young generation grows to its working size, the code is compiled.
  for (const d of [...refs, ...bigs]) await usPerPair(d);
  console.log(`server CPU per pair, ${repeats} rotated repeats of ${seconds} s per daemon and size; load average at the start ${load()}`);
  let filled = 0;
  for (const [step, size] of sizes.entries()) {
    for (const big of bigs) await fillLocks(big.lockPort, size - filled, `scale/held/${step}`);
    filled = size;
    const all = [...refs, ...bigs];
    const us = all.map(() => [] as number[]);
    const ratios = roots.map(() => [] as number[]);
    for (let r = 0; r < repeats; r++) {
      const out = new Array<number>(all.length);
      for (let j = 0; j < all.length; j++) {
        const i = (j + r) % all.length;
        out[i] = await usPerPair(all[i] as BatonProcess);
        us[i]?.push(out[i] as number);
      }
      for (let b = 0; b < roots.length; b++) ratios[b]?.push((out[roots.length + b] as number) / (out[b] as number));
    }
    const cells = roots.map(
      (root, b) =>
        `${path.basename(root)}: ${round(median(us[roots.length + b] ?? []))} us (1,000 held: ${round(median(us[b] ?? []))} us), ${round(median(ratios[b] ?? []))}x [${(ratios[b] ?? []).map((x) => round(x)).join(' ')}]`,
    );
    console.log(`${size.toLocaleString('en-US')} held | ${cells.join(' | ')} | load ${load()}`);
  }
} finally {
  await Promise.allSettled([...refs, ...bigs].map((d) => d.stop()));
}
