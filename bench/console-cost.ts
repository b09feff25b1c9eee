// `npm run bench:console`: what the operator console costs the lock daemon, measured side by
// side in one run against one `baton serve` (console on):
//   - keyed handover latency (p50/p99) with no dashboard open and with five dashboards open,
//     alternating the two conditions, under a steady background load so the SSE hub has work;
//   - the server's CPU per second in each condition;
//   - the dashboard's time to first data (navigation start to the first snapshot rendered).
// Chromium runs on the same two cores as the daemon, so the "five dashboards" figures include
// that contention; a real operator's browser runs elsewhere.
import { execFileSync } from 'node:child_process';
import { type Browser, chromium, type Page } from '@playwright/test';
import { KeyedClient } from '../lib/client/index.ts';
import { startBaton } from './baton-process.ts';
import { keyedHandover } from './client-figures.ts';
import { median, round } from './stats.ts';

const ROUNDS = 2_000;
const REPEATS = 3;
const HELD_LOCKS = 1_000;
const TOKEN = 'bench-admin-token-0123456789';

execFileSync(process.execPath, ['scripts/ensure-console-build.mjs'], { stdio: 'inherit' });
const baton = await startBaton(['--admin-token', TOKEN], { console: true });
const base = `http://127.0.0.1:${baton.httpPort}/`;

// Locks that stay held (the snapshot's size) and a steady churn on 50 keys (the deltas' work).
const holders = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`] });
await Promise.all(Array.from({ length: HELD_LOCKS }, (_, i) => holders.acquire(`held/${i}`, { lease: 600_000 })));
const churn = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`] });
let churning = true;
let churnPairs = 0;
const churnDone = Promise.all(Array.from({ length: 50 }, async (_, i) => {
  while (churning) {
    const g = await churn.acquire(`churn/${i}`, { lease: 30_000, wait: 10_000 });
    await g.release();
    churnPairs++;
    if (churnPairs % 20 === 0) await new Promise((r) => setTimeout(r, 1)); // ~ a few thousand pairs/s, not flat out
  }
}));

async function measure(label: string) {
  const cpu0 = baton.cpuMs();
  const pairs0 = churnPairs;
  const t0 = performance.now();
  const r = await keyedHandover(baton.lockPort, ROUNDS);
  const secs = (performance.now() - t0) / 1000;
  return { label, p50Ms: r.p50Ms, p99Ms: r.p99Ms, serverCpuPct: round(((baton.cpuMs() - cpu0) / 10) / secs, 1), churnPairsPerSec: Math.round((churnPairs - pairs0) / secs) };
}

async function openDashboard(browser: Browser): Promise<{ page: Page; firstDataMs: number }> {
  const page = await browser.newPage();
  await page.goto(base);
  const status = page.getByTestId('live-status');
  await status.filter({ hasText: 'live' }).waitFor({ timeout: 30_000 });
  const firstDataMs = Number(await status.getAttribute('data-first-data-at'));
  return { page, firstDataMs };
}

const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
// Warm-up: the first page load compiles nothing (production build) but fills caches.
await (await openDashboard(browser)).page.close();

const none: Awaited<ReturnType<typeof measure>>[] = [];
const five: Awaited<ReturnType<typeof measure>>[] = [];
const firstData: number[] = [];
for (let i = 0; i < REPEATS; i++) {
  none.push(await measure('no dashboard'));
  const pages = [];
  for (let p = 0; p < 5; p++) {
    const opened = await openDashboard(browser);
    firstData.push(opened.firstDataMs);
    pages.push(opened.page);
  }
  five.push(await measure('five dashboards'));
  await Promise.all(pages.map((p) => p.close()));
}
churning = false;
await churnDone;
await Promise.all([holders.close(), churn.close(), browser.close()]);
await baton.stop();

const row = (name: string, runs: typeof none) =>
  `| ${name} | ${median(runs.map((r) => r.p50Ms))} ms | ${median(runs.map((r) => r.p99Ms))} ms | ${median(runs.map((r) => r.serverCpuPct))} % | ${median(runs.map((r) => r.churnPairsPerSec))} |`;
console.log(`\nconsole cost: ${ROUNDS} keyed handovers per run, median of ${REPEATS} alternating runs, ${HELD_LOCKS} locks held, background churn on 50 keys\n`);
console.log('| condition | handover p50 | handover p99 | server CPU | churn pairs/s |');
console.log('|---|---|---|---|---|');
console.log(row('no dashboard', none));
console.log(row('five dashboards open', five));
console.log(`\ntime to first data (navigation start to first snapshot rendered, ${HELD_LOCKS} locks): median ${round(median(firstData), 0)} ms over ${firstData.length} page loads (min ${Math.round(Math.min(...firstData))}, max ${Math.round(Math.max(...firstData))})`);
console.log(`p99 ratio five/none: ${round(median(five.map((r) => r.p99Ms)) / median(none.map((r) => r.p99Ms)), 2)}`);
