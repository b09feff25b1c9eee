// What open dashboard pages cost in Chromium itself: one `baton serve` (console on) with 10,000
// locks held and 2,000 acquire+release pairs a second on 50 keys (section 5's load), N pages at
// 1440x900, and the CPU of every Chromium process over a window, read from /proc and grouped by
// process type (renderer, gpu-process, browser, ...). Section 5 measures what the pages cost the
// daemon; this measures the pages, so a change to the page can be judged on its own.
//   node --import tsx bench/console-page-cpu.ts [--pages 1] [--seconds 8] [--repeats 3] [--bin path/to/bin/baton]
// --bin serves another checkout's console (built there) for a before/after.
// Needs a console build (`npm run build`) and /usr/bin/chromium.
import { readdirSync, readFileSync } from 'node:fs';
import { KeyedClient } from '../lib/client/index.ts';
import { startBaton } from './baton-process.ts';
import { launchChromium } from './chromium.ts';
import { exitWithUsageOnHelp, intFlag } from './flags.ts';
import { hostMachine } from './report.ts';
import { track } from './servers/server-process.ts';
import { median } from './stats.ts';

exitWithUsageOnHelp(import.meta.url);

const PAGES = intFlag('--pages', 1, 20);
const SECONDS = intFlag('--seconds', 8, 120);
const REPEATS = intFlag('--repeats', 3, 20);
const HELD_LOCKS = 10_000;
const binAt = process.argv.indexOf('--bin');
const BIN = binAt >= 0 ? process.argv[binAt + 1] : undefined;
const TICKS_PER_SECOND = 100; // Linux USER_HZ

interface Proc {
  parent: number;
  cpuMs: number;
}

function processes(): Map<number, Proc> {
  const out = new Map<number, Proc>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(Number(d), { parent: Number(f[1]), cpuMs: ((Number(f[11]) + Number(f[12])) * 1000) / TICKS_PER_SECOND });
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/** CPU ms by Chromium process type, for every process descending from this one named chrom*. */
function chromiumCpu(): Map<string, number> {
  const procs = processes();
  const out = new Map<string, number>();
  for (const [pid, p] of procs) {
    let cmdline = '';
    try {
      cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmdline.includes('chrom')) continue;
    let up = p.parent;
    while (up > 1 && up !== process.pid) up = procs.get(up)?.parent ?? 0;
    if (up !== process.pid) continue;
    const type = /--type=([a-z-]+)/.exec(cmdline)?.[1] ?? 'browser';
    out.set(type, (out.get(type) ?? 0) + p.cpuMs);
  }
  return out;
}

const baton = await startBaton([], { console: true, ...(BIN === undefined ? {} : { bin: BIN }) });
track(baton.child);
const holders = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`] });
const churn = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`] });
await Promise.all(Array.from({ length: HELD_LOCKS }, (_, i) => holders.acquire(`held/${i}`, { lease: 600_000 })));
let slot = 0;
const churnTimer = setInterval(() => {
  for (let n = 0; n < 20; n++) {
    churn
      .acquire(`churn/${slot++ % 50}`, { lease: 30_000, wait: 10_000 })
      .then((g) => g.release())
      .catch(() => undefined);
  }
}, 10);
const browser = await launchChromium();
const byType = new Map<string, number[]>();
const totals: number[] = [];
try {
  for (let r = 0; r < REPEATS; r++) {
    const pages = [];
    for (let p = 0; p < PAGES; p++) {
      const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
      await page.goto(`http://127.0.0.1:${baton.httpPort}/`);
      await page.getByTestId('live-status').filter({ hasText: 'live' }).waitFor({ timeout: 30_000 });
      pages.push(page);
    }
    await new Promise((resolve) => setTimeout(resolve, 3_000)); // past the snapshot's pages
    const before = chromiumCpu();
    const t0 = performance.now();
    await new Promise((resolve) => setTimeout(resolve, SECONDS * 1_000));
    const after = chromiumCpu();
    const secs = (performance.now() - t0) / 1000;
    let total = 0;
    for (const [type, ms] of after) {
      const pct = (ms - (before.get(type) ?? 0)) / 10 / secs;
      total += pct;
      byType.set(type, [...(byType.get(type) ?? []), pct]);
    }
    totals.push(total);
    await Promise.all(pages.map((p) => p.close()));
  }
} finally {
  clearInterval(churnTimer);
  await browser.close();
  await Promise.allSettled([holders.close(), churn.close()]);
  await baton.stop();
}
const machine = hostMachine();
console.log(`${machine.cores} cores, ${machine.cpu}, Node ${machine.node}; ${new Date().toISOString()}`);
console.log(
  `baton: ${BIN ?? 'this checkout'}; ${PAGES} page(s) at 1440x900, ${HELD_LOCKS.toLocaleString('en-US')} locks held, 2,000 pairs/s; median of ${REPEATS} windows of ${SECONDS} s`,
);
console.log('| Chromium process | CPU (% of one core) |');
console.log('|---|---|');
for (const [type, pcts] of [...byType].sort()) console.log(`| ${type} | ${median(pcts).toFixed(1)} |`);
console.log(`| all | ${median(totals).toFixed(1)} |`);
process.exit(0);
