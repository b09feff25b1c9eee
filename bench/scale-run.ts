// The scale section as `npm run bench` runs it: its flags, and its files. Writes
// bench/results/scale-latest.json and .md (a run of some parts keeps the others from the file) and,
// when the held part ran, the curves as docs/scale-memory.svg and docs/scale-cpu.svg.
//   --scale-sizes 10000,100000,1000000[,5000000]   table sizes (held locks; join/failover from 1M)
//   --scale-only held,waiters,sessions,join,failover
//   --scale-max-waiters 1000000   waiter counts: the sizes up to this
//   --scale-sessions 10000,100000 --scale-lease-ms 5000
//   --scale-cluster-from 1000000   join and failover: the sizes from this up
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { intFlag, intListFlag, listFlag } from './flags.ts';
import { hostMachine } from './report.ts';
import { scaleCharts, scaleMarkdown } from './scale-report.ts';
import { SCALE_PARTS, type ScaleResult, scaleSection } from './sections/scale-section.ts';
import { ensureDebianServers } from './servers/server-process.ts';

/** Runs the section with the command line's flags; returns its markdown. */
export async function runScale(seconds: number, repeats: number, say: (text: string) => void): Promise<string> {
  const options = {
    parts: listFlag('--scale-only', SCALE_PARTS),
    sizes: intListFlag('--scale-sizes', [10_000, 100_000, 1_000_000], 20_000_000),
    maxWaiters: intFlag('--scale-max-waiters', 1_000_000, 20_000_000),
    sessions: intListFlag('--scale-sessions', [10_000, 100_000], 1_000_000),
    sessionLeaseMs: intFlag('--scale-lease-ms', 5_000, 600_000),
    minClusterSize: intFlag('--scale-cluster-from', 1_000_000, 20_000_000),
    seconds,
    repeats,
  };
  if (options.parts.includes('held')) ensureDebianServers();
  const results = new URL('./results/', import.meta.url).pathname;
  const latest = `${results}scale-latest.json`;
  // A run of some parts (--scale-only) keeps the other parts of the last run's file, so one part
  // can be re-run without the rest (the charts and tables are then drawn from both).
  type Saved = ScaleResult & { date: string; partDates?: Record<string, string>; machine: { redis: string } };
  const earlier = options.parts.length < SCALE_PARTS.length && existsSync(latest) ? (JSON.parse(readFileSync(latest, 'utf8')) as Saved) : undefined;
  const date = new Date().toISOString();
  const redis = options.parts.includes('held') ? execFileSync('redis-server', ['--version'], { encoding: 'utf8' }).trim() : (earlier?.machine.redis ?? '-');
  let text = '';
  const save = (fresh: ScaleResult) => {
    const result: ScaleResult = { ...fresh };
    const partDates: Record<string, string> = Object.fromEntries(options.parts.map((p) => [p, date]));
    for (const part of SCALE_PARTS) {
      if (options.parts.includes(part) || earlier?.[part] === undefined) continue;
      Object.assign(result, { [part]: earlier[part] });
      partDates[part] = earlier.partDates?.[part] ?? earlier.date;
    }
    text = scaleMarkdown(result);
    mkdirSync(results, { recursive: true });
    const json = { machine: { ...hostMachine(), redis }, date, partDates, ...result };
    writeFileSync(latest, `${JSON.stringify(json, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v), 2)}\n`);
    writeFileSync(`${results}scale-latest.md`, `${text}\n`);
    for (const [name, svg] of Object.entries(scaleCharts(result))) writeFileSync(new URL(`../docs/${name}`, import.meta.url), svg);
  };
  save(await scaleSection(options, say, save));
  say('scale: wrote bench/results/scale-latest.json and .md (and docs/scale-*.svg when the held part ran)');
  return text;
}
