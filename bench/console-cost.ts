// `npm run bench:console`: what the operator console costs the lock daemon, measured side by
// side in one run against one `baton serve` (console on):
//   - keyed handover latency (p50/p99) with no dashboard open and with five dashboards open,
//     alternating the two conditions, under a steady background load so the SSE hub has work;
//   - the server's CPU per second in each condition;
//   - the dashboard's time to first data (navigation start to the first snapshot rendered).
// Chromium runs on the same two cores as the daemon, so the "five dashboards" figures include
// that contention; a real operator's browser runs elsewhere.
import { execFileSync, spawn } from 'node:child_process';
import { type Browser, chromium, type Page } from '@playwright/test';
import { KeyedClient } from '../lib/client/index.ts';
import { startBaton } from './baton-process.ts';
import { keyedHandover } from './client-figures.ts';
import { median, round } from './stats.ts';

const ROUNDS = 2_000;
const REPEATS = 3;
const HELD_LOCKS = 1_000;
const TOKEN = 'bench-admin-token-0123456789';

execFileSync(process.execPath, [new URL('../scripts/ensure-console-build.mjs', import.meta.url).pathname], { stdio: 'inherit' });
const baton = await startBaton(['--admin-token', TOKEN], { console: true });
const base = `http://127.0.0.1:${baton.httpPort}/`;

// Locks that stay held (the snapshot's size) and a steady churn at a fixed rate (the deltas'
// work): CHURN_PER_TICK acquire+release pairs every 10 ms on 50 keys, so the load is the same
// in both conditions and the daemon's CPU difference is the console's own cost.
const CHURN_PER_TICK = 20; // 2,000 pairs a second
const holders = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`] });
await Promise.all(Array.from({ length: HELD_LOCKS }, (_, i) => holders.acquire(`held/${i}`, { lease: 600_000 })));
const churn = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`] });
let churnPairs = 0;
let churnSlot = 0;
const inFlight = new Set<Promise<void>>();
let churnTimer: NodeJS.Timeout | undefined;
const startChurn = () => (churnTimer = setInterval(() => {
  for (let n = 0; n < CHURN_PER_TICK; n++) {
    const key = `churn/${churnSlot++ % 50}`;
    const p: Promise<void> = churn.acquire(key, { lease: 30_000, wait: 10_000 }).then((g) => g.release()).then(() => {
      churnPairs++;
      inFlight.delete(p);
    });
    inFlight.add(p);
  }
}, 10));

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

// The same flags as playwright.config.ts: no traffic beyond 127.0.0.1 (no updates, sync or first-run pings).
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
});
// Whatever fails below, the browser and the server do not outlive the benchmark.
const cleanUp = async () => {
  if (churnTimer !== undefined) clearInterval(churnTimer);
  await browser.close().catch(() => {});
  await baton.stop().catch(() => {});
};
process.on('uncaughtException', (err) => {
  console.error(err);
  void cleanUp().finally(() => process.exit(1));
});
process.on('unhandledRejection', (err) => {
  console.error(err);
  void cleanUp().finally(() => process.exit(1));
});
// Warm-up: the first page load compiles nothing (production build) but fills caches.
await (await openDashboard(browser)).page.close();
// Time to first data on a quiet daemon (1,000 locks held, nothing else going on).
const firstDataIdle: number[] = [];
for (let p = 0; p < 5; p++) {
  const opened = await openDashboard(browser);
  firstDataIdle.push(opened.firstDataMs);
  await opened.page.close();
}
startChurn();

/**
 * Five event streams read by a separate plain Node process: the daemon's side of five
 * dashboards without five browsers competing for the same two cores.
 */
async function openRawStreams(): Promise<{ close(): void }> {
  const script = `for (let i = 0; i < 5; i++) fetch(${JSON.stringify(`${base}api/v1/events`)}).then(async (r) => { for await (const _ of r.body) {} });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: 'ignore' });
  await new Promise((r) => setTimeout(r, 1_000)); // connected and past the snapshots
  return { close: () => child.kill() };
}

const raw: Awaited<ReturnType<typeof measure>>[] = [];
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
  const streams = await openRawStreams();
  raw.push(await measure('five raw streams'));
  streams.close();
}
clearInterval(churnTimer);
await Promise.all(inFlight);
await Promise.all([holders.close(), churn.close(), browser.close()]);
await baton.stop();

const row = (name: string, runs: typeof none) =>
  `| ${name} | ${median(runs.map((r) => r.p50Ms))} ms | ${median(runs.map((r) => r.p99Ms))} ms | ${median(runs.map((r) => r.serverCpuPct))} % | ${median(runs.map((r) => r.churnPairsPerSec))} |`;
console.log(`\nconsole cost: ${ROUNDS} keyed handovers per run, median of ${REPEATS} alternating runs, ${HELD_LOCKS} locks held, background churn of ${CHURN_PER_TICK * 100} pairs/s on 50 keys\n`);
console.log('| condition | handover p50 | handover p99 | server CPU | churn pairs/s |');
console.log('|---|---|---|---|---|');
console.log(row('no dashboard', none));
console.log(row('five dashboards open (Chromium on the same 2 cores)', five));
console.log(row('five event streams, no browser', raw));
const spread = (xs: number[]) => `median ${Math.round(median(xs))} ms over ${xs.length} page loads (min ${Math.round(Math.min(...xs))}, max ${Math.round(Math.max(...xs))})`;
console.log(`\ntime to first data (navigation start to the first snapshot rendered, ${HELD_LOCKS} locks held):`);
console.log(`  quiet daemon: ${spread(firstDataIdle)}`);
console.log(`  under the churn, while other dashboards open: ${spread(firstData)}`);
const p99 = (runs: typeof none) => median(runs.map((r) => r.p99Ms));
console.log(`p99 ratio, five dashboards / none: ${round(p99(five) / p99(none), 2)}; five raw streams / none: ${round(p99(raw) / p99(none), 2)}`);
