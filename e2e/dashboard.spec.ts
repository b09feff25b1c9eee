// The operator console in a real browser against a real daemon with real lock clients.
import { ADMIN_TOKEN, expect, test } from './fixtures/baton-server.ts';
import { connectClient, holdKeyed, type LineClient, releaseKeyed, sessionClaim } from './fixtures/wire-client.ts';
import type { Page } from '@playwright/test';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

function row(page: Page, name: string) {
  return page.locator(`[data-testid="lock-row"][data-lock="${name}"]`);
}

test('a lock taken by a client appears within a second and its lease counts down', async ({ page, baton }) => {
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  const keyed = await connectClient(baton.lockPort);
  clients.push(keyed);
  keyed.send('A e2e-appears 30 0');
  const granted = await keyed.waitFor(/^A e2e-appears \d+$/);
  const token = granted.split(' ')[2] as string;
  await expect(row(page, 'e2e-appears')).toBeVisible({ timeout: 1_000 });
  await expect(row(page, 'e2e-appears').getByTestId('holder-token')).toHaveText(token);
  const countdown = row(page, 'e2e-appears').getByTestId('lease-countdown');
  const first = await countdown.textContent();
  await expect(countdown).not.toHaveText(first ?? '', { timeout: 3_000 });
  const seconds = Number.parseFloat((await countdown.textContent()) ?? '');
  expect(seconds).toBeGreaterThan(20);
  expect(seconds).toBeLessThan(30);
  // The events feed says which lock each event is about.
  await expect(
    page
      .locator('[data-testid="feed-item"][data-kind="grant"]')
      .filter({ has: page.getByTestId('feed-lock').getByText('e2e-appears', { exact: true }) })
      .first(),
  ).toContainText(`token ${token}`);
});

test('force release without signing in asks for a sign-in, is refused by the API, and the holder keeps the lock', async ({ page, baton, request }) => {
  const holder = await sessionClaim(baton.sessionPort, 'e2e-refused');
  clients.push(holder);
  const acquired = await holder.waitFor(/^ACQUIRED \d+$/);
  await page.goto('/');
  await row(page, 'e2e-refused').getByRole('button', { name: 'Details for e2e-refused' }).click();
  await page.getByTestId('lock-detail').getByRole('button', { name: 'Force release' }).click();
  // Signed out, the button leads to the sign-in form instead of a request that fails with 401.
  await expect(page.getByTestId('sign-in-reason')).toContainText('Sign in as admin to force-release e2e-refused');
  await expect(page.getByTestId('force-release-dialog')).toHaveCount(0);
  // The API refuses a client without the token.
  const api = await request.post('/api/v1/locks/e2e-refused/force-release', { data: {} });
  expect(api.status()).toBe(401);
  expect(((await api.json()) as { error: { code: string } }).error.code).toBe('unauthorized');
  expect(holder.lines).toEqual([acquired]);
  await expect(row(page, 'e2e-refused').getByTestId('holder-token')).toHaveText(acquired.split(' ')[1] as string);
});

test('force release through the dashboard hands the lock to the waiting client', async ({ page, baton }) => {
  const holder = await sessionClaim(baton.sessionPort, 'e2e-force');
  clients.push(holder);
  const held = await holder.waitFor(/^ACQUIRED \d+$/);
  const waiter = await sessionClaim(baton.sessionPort, 'e2e-force');
  clients.push(waiter);
  await waiter.waitFor(/^WAITING 1$/);
  await page.goto('/');
  await signIn(page);
  await row(page, 'e2e-force').getByRole('button', { name: 'Details for e2e-force' }).click();
  await page.getByTestId('lock-detail').getByRole('button', { name: 'Force release' }).click();
  const dialog = page.getByTestId('force-release-dialog');
  await expect(dialog).toContainText(held.split(' ')[1] as string);
  const sent = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/api/v1/locks/e2e-force/force-release'));
  await page.getByRole('button', { name: 'Confirm force release' }).click();
  // The dialog sends the token it showed: only that holder may be released.
  expect((await sent).postDataJSON()).toEqual({ token: held.split(' ')[1] });
  const next = await waiter.waitFor(/^ACQUIRED \d+$/);
  expect(BigInt(next.split(' ')[1] as string)).toBeGreaterThan(BigInt(held.split(' ')[1] as string));
  await holder.waitFor(/^ERROR 0x04/);
  await expect(row(page, 'e2e-force').getByTestId('holder-token')).toHaveText(next.split(' ')[1] as string);
  // The admin action reaches the events feed from the audit log, with who did it.
  await expect(page.locator('[data-testid="feed-item"][data-kind="admin"]').filter({ hasText: 'e2e-force' }).first()).toContainText(/session:[0-9a-f]{8}.*ok/);
});

test('a kicked waiter is told ERROR 0x05 and leaves the queue', async ({ page, baton }) => {
  const holder = await sessionClaim(baton.sessionPort, 'e2e-kick');
  clients.push(holder);
  await holder.waitFor(/^ACQUIRED/);
  const waiter = await sessionClaim(baton.sessionPort, 'e2e-kick');
  clients.push(waiter);
  await waiter.waitFor(/^WAITING 1$/);
  await page.goto('/');
  await signIn(page);
  await row(page, 'e2e-kick').getByRole('button', { name: 'Details for e2e-kick' }).click();
  const waiterRow = page.getByTestId('waiter-row');
  await expect(waiterRow).toHaveCount(1);
  const id = await waiterRow.getAttribute('data-waiter-id');
  await page.getByRole('button', { name: `Kick waiter ${id}` }).click();
  // A kick asks first, like a force release (client-identity.spec.ts checks what it shows).
  await page.getByRole('button', { name: 'Confirm kick' }).click();
  await waiter.waitFor(/^ERROR 0x05/);
  await expect(page.getByTestId('waiter-row')).toHaveCount(0);
});

test('the charts render with data, and handoff and restore are disabled with their reasons on a single node', async ({ page, baton }) => {
  const a = await connectClient(baton.lockPort);
  clients.push(a);
  // Twenty requests on one key with a 50 ms lease: each lease runs out and the lock passes to
  // the next request, so the history gets grants and expiry handovers with a real latency
  // (the timer's lateness; a release hands over within the same step, under 1 µs).
  for (let i = 0; i < 20; i++) a.send('A e2e-chart 0.05 0');
  const deadline = Date.now() + 10_000;
  while (a.lines.filter((l) => /^A e2e-chart \d+$/.test(l)).length < 20) {
    if (Date.now() > deadline) throw new Error(`not all 20 grants came: ${a.lines.join(' | ')}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  await page.goto('/');
  // What the page promises, in order, rather than a time: the stream is live; the charts' code
  // and first figures arrive after the page (the grid shows once they have); a chart draws once
  // it is on screen (they pause far off it) and then marks its box data-drawn. Each chart is
  // scrolled to as an operator would, after the grid exists, so rows arriving above it cannot
  // have pushed it back off screen before it drew.
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await page.locator('#charts-heading').scrollIntoViewIfNeeded();
  await expect(page.getByTestId('charts-grid')).toBeAttached();
  for (const id of ['chart-latency', 'chart-by-cause', 'chart-grants']) {
    await page.getByTestId(id).scrollIntoViewIfNeeded();
    await expect(page.getByTestId(id)).toHaveAttribute('data-drawn', 'true');
  }
  // Data points drawn: dots on the latency lines, bars for the expiry cause, grants per second.
  // Dots while fewer than 4 buckets have data, a line after that: earlier tests on this shared
  // server may already have filled some buckets with handovers.
  await expect(
    page.getByTestId('chart-latency').locator('.recharts-line-dots circle, path.recharts-line-curve').filter({ visible: true }).first(),
  ).toBeVisible();
  await expect(page.getByTestId('chart-by-cause').locator('.recharts-bar-rectangle path').first()).toBeVisible();
  await expect(page.getByTestId('chart-grants').locator('.recharts-bar-rectangle path, .recharts-area-area').first()).toBeVisible();
  await expect(page.getByTestId('chart-failovers')).toContainText('No failovers yet');
  await expect(page.getByTestId('handoff-button')).toBeDisabled();
  await expect(page.getByRole('button', { name: 'Graceful handoff' })).toBeDisabled();
  await expect(page.getByTestId('handoff-reason')).toContainText('only one');
  await expect(page.getByTestId('restore-button')).toBeDisabled();
  await expect(page.getByTestId('restore-reason')).toContainText('not part of a cluster');
  // The single node is its own active node: one peer row, marked as this node, and no standby banner.
  const rows = page.locator('[data-testid^="peer-row-"]');
  await expect(rows).toHaveCount(1);
  await expect(rows.first()).toContainText('this node');
  await expect(rows.first()).toContainText('active');
  await expect(rows.first()).toContainText('alive');
  await expect(page.getByTestId('node-phase')).toHaveText('active');
  await expect(page.getByTestId('standby-banner')).toHaveCount(0);
  await expect(page.getByTestId('failover-point')).toHaveCount(0);
});

test('the console works at phone width and in dark mode', async ({ page, baton }, testInfo) => {
  const holder = await sessionClaim(baton.sessionPort, 'e2e-phone');
  clients.push(holder);
  await holder.waitFor(/^ACQUIRED/);
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await expect(row(page, 'e2e-phone')).toBeVisible();
  const scrollWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  expect(scrollWidth).toBeLessThanOrEqual(390);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(bg).not.toBe('rgb(255, 255, 255)');
  await testInfo.attach('phone-dark', { body: await page.screenshot({ fullPage: true }), contentType: 'image/png' });
});

test('ten thousand locks stay a short, searchable, scrollable table', async ({ page, baton }) => {
  const keyed = await connectClient(baton.lockPort);
  clients.push(keyed);
  const names = Array.from({ length: 10_000 }, (_, i) => `bulk/${String(i).padStart(5, '0')}`);
  await holdKeyed(keyed, names);
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await expect(row(page, 'bulk/00000')).toBeVisible();
  // Virtualized: the DOM holds a window of rows, not ten thousand.
  expect(await page.getByTestId('lock-row').count()).toBeLessThan(200);
  // The keyboard reaches the far end: End scrolls the last row into view. The snapshot arrives a
  // page at a time: End pressed before its last page scrolls to the end of what has arrived.
  await expect(page.getByText(/^10,0\d\d locks$/)).toBeVisible({ timeout: 15_000 });
  await row(page, 'bulk/00000').getByRole('button', { name: 'Details for bulk/00000' }).focus();
  await page.keyboard.press('End');
  await expect(row(page, 'bulk/09999')).toBeVisible();
  expect(await page.getByTestId('lock-row').count()).toBeLessThan(200);
  await page.getByLabel('Search locks').fill('bulk/09999');
  await expect(row(page, 'bulk/09999')).toBeVisible();
  await expect(page.getByTestId('lock-row')).toHaveCount(1);
  // Keyed grants outlive their connection (fixed leases): released for the tests after this one.
  expect(await releaseKeyed(keyed, names.length)).toBe(names.length);
});

test('a force release confirmed after the lock changed hands releases nothing', async ({ page, baton }) => {
  const first = await sessionClaim(baton.sessionPort, 'e2e-moved');
  clients.push(first);
  await first.waitFor(/^ACQUIRED/);
  const second = await sessionClaim(baton.sessionPort, 'e2e-moved');
  clients.push(second);
  await second.waitFor(/^WAITING 1$/);
  await page.goto('/');
  await signIn(page);
  await row(page, 'e2e-moved').getByRole('button', { name: 'Details for e2e-moved' }).click();
  await page.getByTestId('lock-detail').getByRole('button', { name: 'Force release' }).click();
  await expect(page.getByTestId('force-release-dialog')).toBeVisible();
  first.close(); // while the operator reads the dialog, the holder lets go and the waiter takes over
  const taken = await second.waitFor(/^ACQUIRED \d+$/);
  await page.getByRole('button', { name: 'Confirm force release' }).click();
  await expect(page.getByTestId('action-status')).toContainText(/changed hands|no longer holds/i);
  await expect(row(page, 'e2e-moved').getByTestId('holder-token')).toHaveText(taken.split(' ')[1] as string);
  expect(second.lines.filter((l) => l.startsWith('ERROR'))).toEqual([]);
});
