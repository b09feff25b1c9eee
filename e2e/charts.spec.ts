// The charts' ranges and measures, and a lock's grant history with its exports, in a real
// browser against a real daemon with real lock clients.
import { readFile } from 'node:fs/promises';
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import type { LockHistory, StatsHistory } from '../lib/ops-api/api-types.ts';
import { ADMIN_TOKEN, expect, test } from './fixtures/baton-server.ts';
import { connectClient, type LineClient } from './fixtures/wire-client.ts';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

async function keyed(port: number): Promise<LineClient> {
  const c = await connectClient(port);
  clients.push(c);
  return c;
}

/** Takes `name` with a 30 s lease and answers its token. */
async function take(c: LineClient, name: string, lease = '30'): Promise<string> {
  const before = c.lines.length;
  c.send(`A ${name} ${lease} 0`);
  const pattern = new RegExp(`^A ${name} (\\d+)$`);
  await expect.poll(() => c.lines.slice(before).some((l) => pattern.test(l)), { timeout: 10_000 }).toBe(true);
  const line = c.lines.slice(before).find((l) => pattern.test(l)) ?? '';
  return line.split(' ')[2] ?? '';
}

/** One client holds `name` while another queues behind it for about 300 ms. */
async function contend(port: number, name: string): Promise<void> {
  const a = await keyed(port);
  const b = await keyed(port);
  const token = await take(a, name);
  b.send(`A ${name} 30 0`);
  await new Promise((r) => setTimeout(r, 300));
  a.send(`R ${name} ${token}`);
  await b.waitFor(new RegExp(`^A ${name} \\d+$`));
}

/** WCAG 2.1 AA violations axe finds on the page, as in accessibility.spec.ts. */
async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.nodes
        .map((n) => n.target.join(' '))
        .slice(0, 3)
        .join(', ')}`,
  );
}

/** Every SVG text of one chart: its ticks and axis titles. */
function chartTexts(page: Page, testId: string) {
  return page.getByTestId(testId).locator('svg text');
}

/** The chart's card: its heading and description sit around the plot. */
function card(page: Page, testId: string) {
  return page.getByTestId(testId).locator('xpath=..');
}

test('the queue-wait chart shows the wait of a grant that queued, with titled axes', async ({ page, baton }) => {
  await contend(baton.lockPort, 'e2e-queue');
  await page.goto('/');
  const chart = page.getByTestId('chart-queue-wait');
  // As an operator would: the charts sit below the fold and do not draw while scrolled far away
  // (page-cost.spec.ts), so a grant recorded after the first snapshot shows once they are in view.
  // Scroll to the section's heading, which is always there: until the section has been near the
  // screen its charts may not exist yet to be scrolled to (the wait for one timed out in CI).
  await page.locator('#charts-heading').scrollIntoViewIfNeeded();
  await expect(chart.locator('.recharts-line-dots circle, path.recharts-line-curve').filter({ visible: true }).first()).toBeVisible();
  // The axis has a non-zero duration tick (the old charts' line sat at 0): the ~300 ms wait, or a
  // longer one an earlier test on this shared server left in the same 10 s bucket.
  await expect
    .poll(async () => (await chartTexts(page, 'chart-queue-wait').allTextContents()).some((t) => /^(?!0 )\d+(\.\d+)? (µs|ms|s|min|h)$/.test(t)))
    .toBe(true);
  await expect(chart).toContainText('queue wait');
  await expect(chart).toContainText('time (local)');
  await expect(page.getByTestId('chart-latency')).toContainText('handover');
  await expect(page.getByRole('heading', { name: 'In-daemon handover (free → next grant)' })).toBeVisible();
  // The API agrees: one grant or more waited, its p50 in the hundreds of ms.
  const body = (await (await page.request.get('/api/v1/stats/history?range=5m')).json()) as StatsHistory;
  expect(body.summary.queueWait.waited).toBeGreaterThanOrEqual(1);
  expect(body.summary.queueWait.waitedP99 ?? 0).toBeGreaterThan(250);
});

test('the range picker shows the last hour and the last 24 hours, fetched from the history route', async ({ page, baton }) => {
  await contend(baton.lockPort, 'e2e-range');
  // And an expiry with a waiter behind it: a 300 ms lease nobody releases.
  const silent = await keyed(baton.lockPort);
  const next = await keyed(baton.lockPort);
  await take(silent, 'e2e-range-expiry', '0.3');
  next.send('A e2e-range-expiry 30 0');
  await next.waitFor(/^A e2e-range-expiry \d+$/);
  await page.goto('/');
  // The first snapshot may take a while on a loaded machine: wait for the stream, then the charts.
  await expect(page.getByTestId('live-status')).toHaveText('live', { timeout: 30_000 });
  // The charts are drawn once their section nears the screen: scroll to it, as an operator would.
  await page.locator('#charts-heading').scrollIntoViewIfNeeded();
  await expect(page.getByTestId('charts-grid')).toHaveAttribute('data-range', '5m');
  // Keyboard: the radios of one group move with the arrow keys.
  const hourAsked = page.waitForResponse((r) => r.url().includes('/api/v1/stats/history?range=1h') && r.status() === 200);
  await page.getByRole('radio', { name: '5 min' }).focus();
  await page.keyboard.press('ArrowRight');
  await expect(page.getByRole('radio', { name: '1 h' })).toBeChecked();
  await hourAsked;
  await expect(page.getByTestId('charts-grid')).toHaveAttribute('data-range', '1h');
  await expect(card(page, 'chart-queue-wait')).toContainText('last 1 h');
  await expect(
    page.getByTestId('chart-queue-wait').locator('.recharts-line-dots circle, path.recharts-line-curve').filter({ visible: true }).first(),
  ).toBeVisible();
  await expect(page.getByTestId('chart-grants').locator('.recharts-area-area').first()).toBeVisible();

  const dayAsked = page.waitForResponse((r) => r.url().includes('/api/v1/stats/history?range=24h') && r.status() === 200);
  // A pointer picks by the visible label (the radio itself is visually hidden).
  await page.getByTestId('range-picker').getByText('24 h', { exact: true }).click();
  await expect(page.getByRole('radio', { name: '24 h' })).toBeChecked();
  const day = (await (await dayAsked).json()) as StatsHistory;
  expect(day.bucketMs).toBe(300_000);
  expect(day.buckets).toHaveLength(288);
  await expect(page.getByTestId('charts-grid')).toHaveAttribute('data-range', '24h');
  await expect(card(page, 'chart-queue-wait')).toContainText('Per 5 min, last 24 h');
  await expect(
    page.getByTestId('chart-queue-wait').locator('.recharts-line-dots circle, path.recharts-line-curve').filter({ visible: true }).first(),
  ).toBeVisible();
  // The by-cause bars are the range's merged blocked time: the expiry's is the time the waiter
  // stood behind the silent holder (from its arrival, a little after the grant, to the lease end:
  // up to 300 ms), not the timer's lateness that the in-daemon handover shows; and each cause
  // says how many handovers it had.
  expect(day.summary.blocked.expiry.p50 ?? 0).toBeGreaterThan(50);
  expect(day.summary.blocked.expiry.p50 ?? 0).toBeLessThanOrEqual(320);
  expect(day.summary.handover.expiry.p50 ?? 0).toBeLessThan(day.summary.blocked.expiry.p50 ?? 0);
  await expect(page.getByTestId('chart-by-cause').locator('.recharts-bar-rectangle path').first()).toBeVisible();
  await expect(page.getByTestId('chart-by-cause')).toContainText('expiry (1)');
  // The picker with a range chosen, and the new charts, in both schemes.
  expect(await violations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await violations(page)).toEqual([]);
});

test("a lock's detail lists its last grants with how each ended, and exports them as JSON and CSV", async ({ page, baton }) => {
  const name = 'e2e-history';
  const c = await keyed(baton.lockPort);
  const released = await take(c, name);
  c.send(`R ${name} ${released}`);
  await c.waitFor(new RegExp(`^R ${name} OK$`));
  const expired = await take(c, name, '0.2'); // a 200 ms lease, left to run out
  await expect
    .poll(async () => ((await (await page.request.get(`/api/v1/locks/${name}/history`)).json()) as LockHistory).grants.map((g) => g.end), { timeout: 10_000 })
    .toEqual(['expiry', 'release']);
  const forced = await take(c, name);
  const res = await page.request.post(`/api/v1/locks/${name}/force-release`, { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, data: { token: forced } });
  expect(res.status()).toBe(200);
  // Held again, so the table has its row to open: with a lease that outlives the test (a 30 s one
  // ran out on a loaded machine before the export and added a fourth, expired, row).
  await take(c, name, '600');

  await page.goto('/');
  await page
    .locator(`[data-testid="lock-row"][data-lock="${name}"]`)
    .getByRole('button', { name: `Details for ${name}` })
    .click();
  const rows = page.getByTestId('lock-history').getByTestId('history-row');
  await expect(rows).toHaveCount(3);
  await expect(rows.nth(0)).toHaveAttribute('data-end', 'force-release');
  await expect(rows.nth(0)).toContainText(forced);
  await expect(rows.nth(0)).toContainText('force-released');
  await expect(rows.nth(1)).toContainText('lease expired');
  await expect(rows.nth(1)).toContainText(expired);
  await expect(rows.nth(2)).toContainText('released');
  await expect(rows.nth(2)).toContainText(released);
  // The history table and its export buttons, in both schemes.
  expect(await violations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await violations(page)).toEqual([]);

  const csvDownload = page.waitForEvent('download');
  await page.getByTestId('lock-history').getByRole('button', { name: 'Export CSV' }).click();
  const csvFile = await csvDownload;
  expect(csvFile.suggestedFilename()).toMatch(/^baton-history-e2e-history-.*\.csv$/);
  const csv = (await readFile(await csvFile.path(), 'utf8')).split('\r\n');
  expect(csv[0]).toBe('claimId,protocol,client,clientName,token,grantedAt,queueWaitMs,heldMs,endedAt,end');
  expect(csv.slice(1, 4).map((l) => l.split(',').at(-1))).toEqual(['force-release', 'expiry', 'release']);
  expect(csv.slice(1, 4).map((l) => l.split(',')[4])).toEqual([forced, expired, released]);

  const jsonDownload = page.waitForEvent('download');
  await page.getByTestId('lock-history').getByRole('button', { name: 'Export JSON' }).click();
  const json = JSON.parse(await readFile(await (await jsonDownload).path(), 'utf8')) as LockHistory;
  expect(json.name).toBe(name);
  expect(json.grants.map((g) => [g.end, g.token])).toEqual([
    ['force-release', forced],
    ['expiry', expired],
    ['release', released],
  ]);
  // The expired grant was held for its whole 200 ms lease (and a little timer lateness).
  expect(json.grants[1]?.heldMs ?? 0).toBeGreaterThanOrEqual(200);
});

/** The y-axis tick labels of one chart. */
function yTicks(page: Page, testId: string) {
  // The y axis sits on the left: its tick labels are the ones anchored at their end.
  return page.getByTestId(testId).locator('text.recharts-cartesian-axis-tick-value[text-anchor="end"]').allTextContents();
}

/** Scrolls a chart into view and waits until it has drawn (it marks its box data-drawn). */
async function drawn(page: Page, testId: string): Promise<void> {
  await expect(page.getByTestId('charts-grid')).toBeAttached();
  await page.getByTestId(testId).scrollIntoViewIfNeeded();
  await expect(page.getByTestId(testId)).toHaveAttribute('data-drawn', 'true');
}

test('the duration charts read at a glance: a log axis by default, ticks in whole units, the bucket in progress marked, a crosshair with the figures', async ({
  page,
  baton,
}) => {
  await contend(baton.lockPort, 'e2e-readable');
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await page.locator('#charts-heading').scrollIntoViewIfNeeded();
  await drawn(page, 'chart-queue-wait');
  const chart = page.getByTestId('chart-queue-wait');
  await expect(chart).toHaveAttribute('data-scale', 'log');
  // Decades in the units people say: the ~300 ms waits sit between "100 ms" and "1 s".
  await expect.poll(() => yTicks(page, 'chart-queue-wait')).toEqual(expect.arrayContaining(['100 ms', '1 s']));
  for (const t of await yTicks(page, 'chart-queue-wait')) expect(t).toMatch(/^\d+ (µs|ms|s|min|h)$/);
  // The bucket still being filled is shaded and labelled, on the duration and the grants charts.
  await expect(chart.locator('svg text', { hasText: /^partial$/ })).toHaveCount(1);
  await drawn(page, 'chart-grants');
  await expect(page.getByTestId('chart-grants').locator('svg text', { hasText: /^partial$/ })).toHaveCount(1);

  // The crosshair over the bucket the wait was recorded in: its tooltip gives the figures as measured.
  const history = (await (await page.request.get('/api/v1/stats/history?range=5m')).json()) as StatsHistory;
  const waited = history.buckets.filter((b) => b.queueWait.waitedP50 !== null).at(-1);
  expect(waited).toBeDefined();
  // Points are placed relative to the chart's box (the page may move under a fixed mouse position
  // as rows arrive above it) and the window's place is read again at each try (it moves a bucket
  // every 10 s): the pointer is moved until the tooltip shows what is asked.
  const box = await chart.boundingBox();
  const grid = await chart.locator('.recharts-cartesian-grid').boundingBox();
  if (box === null || grid === null || waited === undefined) throw new Error('no plot area or no queued grant');
  const tooltip = chart.getByTestId('chart-tooltip');
  /** Points at the bucket starting at `start` (ms), or the one in progress when null. */
  const pointAt = async (start: number | null, text: RegExp) => {
    await expect(async () => {
      const to = Number(await chart.getAttribute('data-partial-start'));
      // 2 s into the bucket: nearest its point, and inside the plot for the window's first one.
      const fraction = start === null ? 29.5 / 30 : (start + 2_000 - (to - 29 * 10_000)) / 300_000;
      await chart.hover({ position: { x: grid.x - box.x + grid.width * fraction, y: grid.y - box.y + grid.height / 2 }, force: true });
      await expect(tooltip).toContainText(text, { timeout: 1_000 });
    }).toPass();
  };
  await pointAt(waited.start, /p50 \d+(\.\d)? m?s/);
  await expect(tooltip).toContainText(/p99 \d+(\.\d)? m?s/);
  // Over the bucket in progress, the tooltip says how much of it has passed; over a bucket with
  // no sample (the window's first: this file's server is younger than 5 min), that it has none.
  await pointAt(null, /in progress: \d+(\.\d)? s of 10 s/);
  await pointAt(Number(await chart.getAttribute('data-partial-start')) - 29 * 10_000, /no samples/);

  // Linear on request: from 0, every tick a whole number of one unit (never "1.7 min").
  await page.getByTestId('scale-picker').getByText('Linear', { exact: true }).click();
  await expect(chart).toHaveAttribute('data-scale', 'linear');
  await expect.poll(async () => (await yTicks(page, 'chart-queue-wait'))[0]).toBe('0');
  for (const t of await yTicks(page, 'chart-queue-wait')) expect(t).toMatch(/^(0|\d+ (µs|ms|s|min|h)|\d+\.\d (ms|s))$/);
});

test('the chart range is in the URL: a reload and a pasted link keep it, Back undoes it', async ({ page }) => {
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await page.locator('#charts-heading').scrollIntoViewIfNeeded();
  await page.getByTestId('range-picker').getByText('1 h', { exact: true }).click();
  await expect(page).toHaveURL(/[?&]range=1h(&|$)/);
  await expect(page.getByTestId('charts-grid')).toHaveAttribute('data-range', '1h');

  const hourAsked = page.waitForResponse((r) => r.url().includes('/api/v1/stats/history?range=1h') && r.status() === 200);
  await page.reload();
  await hourAsked;
  await page.locator('#charts-heading').scrollIntoViewIfNeeded();
  await expect(page.getByRole('radio', { name: '1 h' })).toBeChecked();
  await expect(page.getByTestId('charts-grid')).toHaveAttribute('data-range', '1h');
  await drawn(page, 'chart-queue-wait');

  await page.goto('/?range=24h');
  await page.locator('#charts-heading').scrollIntoViewIfNeeded();
  await expect(page.getByTestId('charts-grid')).toHaveAttribute('data-range', '24h');
  await page.getByTestId('range-picker').getByText('5 min', { exact: true }).click();
  await expect(page).not.toHaveURL(/range=/);
  await page.goBack();
  await expect(page).toHaveURL(/[?&]range=24h(&|$)/);
  await expect(page.getByTestId('charts-grid')).toHaveAttribute('data-range', '24h');
  // A range the page does not know is the default, not an error.
  await page.goto('/?range=7d');
  await page.locator('#charts-heading').scrollIntoViewIfNeeded();
  await expect(page.getByTestId('charts-grid')).toHaveAttribute('data-range', '5m');
});
