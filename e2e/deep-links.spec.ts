// The view is the URL: selecting a lock, searching and filtering change it, a reload restores
// it, Back undoes it; each filter narrows the table (issue 13 §2 and §4).
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures/baton-server.ts';
import { connectClient, type LineClient, sessionClaim } from './fixtures/wire-client.ts';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

function row(page: Page, name: string) {
  return page.locator(`[data-testid="lock-row"][data-lock="${name}"]`);
}

function params(page: Page): URLSearchParams {
  return new URL(page.url()).searchParams;
}

const shownLocks = (page: Page) => page.getByTestId('lock-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-lock')).sort());

test('selecting a lock and searching change the URL, a reload restores them, Back undoes them', async ({ page, baton }) => {
  const holder = await sessionClaim(baton.sessionPort, 'dl-select/one');
  clients.push(holder);
  await holder.waitFor(/^ACQUIRED/);
  const other = await sessionClaim(baton.sessionPort, 'dl-select/two');
  clients.push(other);
  await other.waitFor(/^ACQUIRED/);
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');

  await page.getByLabel('Search locks').fill('dl-select/');
  await expect.poll(() => params(page).get('q')).toBe('dl-select/');
  await expect(page.getByTestId('lock-row')).toHaveCount(2);

  await row(page, 'dl-select/one').getByRole('button', { name: 'Details for dl-select/one' }).click();
  await expect(page.getByTestId('lock-detail')).toBeVisible();
  expect(params(page).get('lock')).toBe('dl-select/one');

  await page.reload();
  await expect(page.getByTestId('lock-detail')).toContainText('dl-select/one');
  await expect(page.getByLabel('Search locks')).toHaveValue('dl-select/');
  await expect(page.getByTestId('lock-row')).toHaveCount(2);

  await page.goBack();
  await expect(page.getByTestId('lock-detail')).toHaveCount(0);
  expect(params(page).get('lock')).toBeNull();
  expect(params(page).get('q')).toBe('dl-select/');
  await page.goBack();
  await expect(page.getByLabel('Search locks')).toHaveValue('');
  expect(params(page).get('q')).toBeNull();
  await page.goForward();
  await expect(page.getByLabel('Search locks')).toHaveValue('dl-select/');

  // A pasted link opens the same view in a fresh page; values it cannot read are ignored.
  const fresh = await page.context().newPage();
  await fresh.goto('/?lock=dl-select%2Ftwo&q=dl-select%2F&proto=bogus&held=-3&expiring=abc');
  await expect(fresh.getByTestId('lock-detail')).toContainText('dl-select/two');
  await expect(fresh.getByTestId('lock-row')).toHaveCount(2);
  await expect(fresh.getByLabel('Protocol')).toHaveValue('');
  await fresh.close();
});

test('each filter narrows the table and lands in the URL', async ({ page, baton, request }) => {
  const keyed = await connectClient(baton.lockPort);
  clients.push(keyed);
  keyed.send('A dl-f/keyed-old 600 0');
  await keyed.waitFor(/^A dl-f\/keyed-old \d+$/);
  // Held longer than 6 s: wait (on the server's own figure) until the first lock has been held
  // 8.5 s, then take the others, which stay under 6 s for the first checks.
  await expect
    .poll(async () => ((await (await request.get('/api/v1/locks/dl-f%2Fkeyed-old')).json()) as { holder: { heldForMs: number } }).holder.heldForMs, {
      timeout: 20_000,
    })
    .toBeGreaterThan(8_500);
  const sessionHolder = await sessionClaim(baton.sessionPort, 'dl-f/session-queued', 600_000);
  clients.push(sessionHolder);
  await sessionHolder.waitFor(/^ACQUIRED/);
  const waiter = await sessionClaim(baton.sessionPort, 'dl-f/session-queued');
  clients.push(waiter);
  await waiter.waitFor(/^WAITING 1$/);
  const short = await connectClient(baton.lockPort);
  clients.push(short);
  short.send('A dl-f/keyed-short 600 0');
  await short.waitFor(/^A dl-f\/keyed-short \d+$/);

  await page.goto('/?q=dl-f%2F');
  const all = ['dl-f/keyed-old', 'dl-f/keyed-short', 'dl-f/session-queued'];
  await expect.poll(() => shownLocks(page)).toEqual(all);

  await page.getByLabel('Held longer than (s)').fill('6');
  await expect.poll(() => shownLocks(page)).toEqual(['dl-f/keyed-old']);
  await expect.poll(() => params(page).get('held')).toBe('6');
  // Back undoes the filter.
  await page.goBack();
  await expect(page.getByLabel('Held longer than (s)')).toHaveValue('');
  await expect.poll(() => shownLocks(page)).toEqual(all);
  expect(params(page).get('held')).toBeNull();

  await page.getByLabel('Protocol').selectOption('session');
  await expect.poll(() => shownLocks(page)).toEqual(['dl-f/session-queued']);
  expect(params(page).get('proto')).toBe('session');
  await page.getByLabel('Protocol').selectOption('keyed');
  await expect.poll(() => shownLocks(page)).toEqual(['dl-f/keyed-old', 'dl-f/keyed-short']);
  await page.getByLabel('Protocol').selectOption('');
  await expect.poll(() => shownLocks(page)).toEqual(all);

  await page.getByLabel('Has waiters').check();
  await expect.poll(() => shownLocks(page)).toEqual(['dl-f/session-queued']);
  expect(params(page).get('waiters')).toBe('1');
  await page.getByLabel('Has waiters').uncheck();

  // A lock whose lease ends within 10 s, taken only now: the steps above take long enough on a
  // loaded machine that a short lease taken at the start could run out before this check.
  short.send('A dl-f/keyed-soon 9 0');
  await short.waitFor(/^A dl-f\/keyed-soon \d+$/);
  await page.getByLabel(/Lease ends within 10 s/).check();
  await expect.poll(() => shownLocks(page)).toEqual(['dl-f/keyed-soon']);
  expect(params(page).get('expiring')).toBe('10');
  await page.getByLabel(/Lease ends within/).uncheck();
  await expect.poll(() => shownLocks(page)).toEqual(['dl-f/keyed-old', 'dl-f/keyed-short', 'dl-f/keyed-soon', 'dl-f/session-queued']);

  // Search matches the holder's address too.
  const detail = (await (await request.get('/api/v1/locks/dl-f%2Fsession-queued')).json()) as { holder: { client: string } };
  await page.getByLabel('Search locks').fill(detail.holder.client);
  await expect.poll(() => shownLocks(page)).toEqual(['dl-f/session-queued']);
  await page.getByLabel('Has waiters').check();
  await page.getByRole('button', { name: 'Clear filters' }).click();
  await expect(page.getByLabel('Search locks')).toHaveValue('');
  await expect(page.getByLabel('Has waiters')).not.toBeChecked();
  await expect.poll(() => [params(page).get('q'), params(page).get('waiters')]).toEqual([null, null]);

  for (const name of ['dl-f/keyed-old']) {
    const grant = await keyed.waitFor(new RegExp(`^A ${name} \\d+$`));
    keyed.send(`R ${name} ${grant.split(' ')[2]}`);
  }
});
