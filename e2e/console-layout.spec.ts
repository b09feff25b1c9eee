// Issue 13's layout: the lock table comes first at 1440x900, locks are cards on a phone, lease
// times read like durations, and "lease left" sorts.
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

async function keyedLock(port: number, name: string, leaseS: number): Promise<LineClient> {
  const c = await connectClient(port);
  clients.push(c);
  c.send(`A ${name} ${leaseS} 0`);
  await c.waitFor(new RegExp(`^A ${name} \\d+$`));
  return c;
}

async function release(c: LineClient, name: string): Promise<void> {
  const grant = await c.waitFor(new RegExp(`^A ${name} \\d+$`));
  c.send(`R ${name} ${grant.split(' ')[2]}`);
  await c.waitFor(new RegExp(`^R ${name} OK$`));
}

test('at 1440x900 the first lock rows are on screen without scrolling, the node strip above them', async ({ page, baton }) => {
  const c = await keyedLock(baton.lockPort, 'layout-first', 60);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.goto('/?q=layout-first');
  await expect(row(page, 'layout-first')).toBeVisible();
  expect(await page.evaluate(() => window.scrollY)).toBe(0);
  const box = await row(page, 'layout-first').boundingBox();
  expect(box).not.toBeNull();
  expect((box?.y ?? 900) + (box?.height ?? 0)).toBeLessThanOrEqual(900);
  const strip = await page.getByTestId('node-strip').boundingBox();
  expect(strip?.y ?? 900).toBeLessThan(box?.y ?? 0);
  await expect(page.getByTestId('node-strip')).toContainText('active');
  await expect(page.getByTestId('node-strip')).toContainText('Token high water');
  // The detailed cards are still there, below the table.
  const overview = await page.getByRole('heading', { name: 'Overview' }).boundingBox();
  expect(overview?.y ?? 0).toBeGreaterThan(box?.y ?? 900);
  await release(c, 'layout-first');
});

test('on a phone each lock is a card with its token, lease left and queue, and nothing scrolls sideways', async ({ page, baton }) => {
  const holder = await sessionClaim(baton.sessionPort, 'layout-phone', 600_000);
  clients.push(holder);
  const acquired = await holder.waitFor(/^ACQUIRED \d+$/);
  const waiter = await sessionClaim(baton.sessionPort, 'layout-phone');
  clients.push(waiter);
  await waiter.waitFor(/^WAITING 1$/);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/?q=layout-phone');
  const card = row(page, 'layout-phone');
  await expect(card).toBeVisible();
  await expect(card.getByTestId('holder-token')).toBeVisible();
  await expect(card.getByTestId('holder-token')).toHaveText(acquired.split(' ')[1] as string);
  await expect(card.getByTestId('lease-countdown')).toBeVisible();
  await expect(card.getByTestId('lease-countdown')).toHaveText(/^9 m \d+ s left$/);
  await expect(card.getByTestId('queue-length')).toBeVisible();
  await expect(card.getByTestId('queue-length')).toHaveText('queue 1');
  // The card fits the screen: its right edge is inside the viewport.
  const box = await card.boundingBox();
  expect((box?.x ?? 0) + (box?.width ?? 999)).toBeLessThanOrEqual(390);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(overflow).toBeLessThanOrEqual(0);
  await page.screenshot({ path: test.info().outputPath('phone-cards.png'), fullPage: false });
});

test('lease left reads like a duration and sorts soonest first, then latest first', async ({ page, baton }) => {
  const long = await keyedLock(baton.lockPort, 'layout-sort-long', 3_600);
  const short = await keyedLock(baton.lockPort, 'layout-sort-short', 120);
  const mid = await keyedLock(baton.lockPort, 'layout-sort-mid', 900);
  await page.goto('/?q=layout-sort-');
  await expect(row(page, 'layout-sort-long').getByTestId('lease-countdown')).toHaveText(/^59 m \d+ s left$/);
  await expect(row(page, 'layout-sort-short').getByTestId('lease-countdown')).toHaveText(/^1 m \d+ s left$|^\d+\.\d s left$/);
  const header = page.getByRole('columnheader', { name: 'Lease left' });
  await expect(header).toHaveAttribute('aria-sort', 'none');
  const order = () => page.getByTestId('lock-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-lock')));
  await header.getByRole('button').click();
  await expect(header).toHaveAttribute('aria-sort', 'ascending');
  await expect.poll(order).toEqual(['layout-sort-short', 'layout-sort-mid', 'layout-sort-long']);
  await header.getByRole('button').click();
  await expect(header).toHaveAttribute('aria-sort', 'descending');
  await expect.poll(order).toEqual(['layout-sort-long', 'layout-sort-mid', 'layout-sort-short']);
  await release(long, 'layout-sort-long');
  await release(short, 'layout-sort-short');
  await release(mid, 'layout-sort-mid');
});
