// Issue 13's operator habits: admin buttons lead to sign-in (and no stale 401 stays after it),
// the events feed filters, pauses and keeps admin items under churn, and the table exports.
import { readFile } from 'node:fs/promises';
import type { Page } from '@playwright/test';
import { ADMIN_TOKEN, expect, test } from './fixtures/baton-server.ts';
import { connectClient, type LineClient, sessionClaim } from './fixtures/wire-client.ts';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

test('an admin button pressed while signed out opens the sign-in form, sends nothing, and opens its confirm after the sign-in; a 401 does the same', async ({
  page,
  baton,
  context,
}) => {
  const holder = await sessionClaim(baton.sessionPort, 'hb-sign-in');
  clients.push(holder);
  const acquired = await holder.waitFor(/^ACQUIRED \d+$/);
  const posts: string[] = [];
  page.on('request', (r) => {
    // Every admin request (a sign-in is not one).
    if (r.method() !== 'GET' && !r.url().includes('/auth/session')) posts.push(r.url());
  });
  await page.goto('/?lock=hb-sign-in');
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await page.getByTestId('lock-detail').getByRole('button', { name: 'Force release' }).click();
  // No dialog and no request: the form says what needs it and has the focus.
  await expect(page.getByTestId('sign-in-reason')).toHaveText('Sign in as admin to force-release hb-sign-in.');
  await expect(page.getByLabel('Admin token')).toBeFocused();
  await expect(page.getByTestId('force-release-dialog')).toHaveCount(0);
  expect(posts).toEqual([]);
  // Kick too: a waiter's Kick button asks for the sign-in instead of sending the request.
  const waiter = await sessionClaim(baton.sessionPort, 'hb-sign-in');
  clients.push(waiter);
  await waiter.waitFor(/^WAITING 1$/);
  await page.getByLabel('Admin token').blur();
  await expect(page.getByTestId('waiter-row')).toHaveCount(1);
  await page
    .getByTestId('waiter-row')
    .getByRole('button', { name: /^Kick waiter/ })
    .click();
  const waiterId = await page.getByTestId('waiter-row').getAttribute('data-waiter-id');
  await expect(page.getByTestId('sign-in-reason')).toHaveText(`Sign in as admin to kick waiter ${waiterId} from hb-sign-in.`);
  await expect(page.getByLabel('Admin token')).toBeFocused();
  expect(waiter.lines).toEqual(['WAITING 1']);
  expect(posts).toEqual([]);
  // Signing in resumes the action pressed last: the kick's confirm opens, for the same waiter.
  await signIn(page);
  await expect(page.getByTestId('sign-in-reason')).toHaveCount(0);
  const kickDialog = page.getByTestId('kick-dialog');
  await expect(kickDialog).toContainText(`Kick waiter ${waiterId} from hb-sign-in?`);
  await kickDialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(kickDialog).toHaveCount(0);

  // The session ends behind the page's back (cookie gone): the action is refused with 401, and
  // the page says what to do instead of the server's bare "missing or bad credentials"...
  await context.clearCookies();
  await page.getByTestId('lock-detail').getByRole('button', { name: 'Force release' }).click();
  await page.getByRole('button', { name: 'Confirm force release' }).click();
  await expect(page.getByTestId('action-status')).toHaveText(
    'Refused: this page is no longer signed in as admin (the session ended). Sign in, and the action opens again.',
  );
  await expect(page.getByTestId('sign-in-reason')).toHaveText('Your admin session ended: sign in as admin to force-release hb-sign-in.');
  // ...and signing in again clears that message and opens the same force release again.
  await signIn(page);
  await expect(page.getByTestId('action-status')).not.toContainText(/credentials|sign in|unauthori/i);
  const dialog = page.getByTestId('force-release-dialog');
  await expect(dialog.getByTestId('dialog-holder-token')).toHaveText(acquired.split(' ')[1] as string);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  expect(holder.lines).toEqual([acquired]);
  expect(waiter.lines).toEqual(['WAITING 1']);
});

test('the events feed filters by lock and kind, pauses, and keeps an admin action through churn', async ({ page, baton, request }) => {
  const churn = await connectClient(baton.lockPort);
  clients.push(churn);
  const holder = await sessionClaim(baton.sessionPort, 'hb-feed-admin');
  clients.push(holder);
  await holder.waitFor(/^ACQUIRED/);
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  const released = await request.post('/api/v1/locks/hb-feed-admin/force-release', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, data: {} });
  expect(released.status()).toBe(200);
  const adminItem = page.locator('[data-testid="feed-item"][data-kind="admin"]').filter({ hasText: 'hb-feed-admin' });
  await expect(adminItem.first()).toBeVisible();

  // Churn: 300 grant/release pairs (600 items) on another lock, three times the feed's 200.
  const cycles = async (name: string, n: number) => {
    for (let i = 0; i < n; i++) {
      churn.send(`A ${name} 30 0`);
      const grant = await churn.waitFor(new RegExp(`^A ${name} \\d+$`));
      churn.lines.splice(churn.lines.indexOf(grant), 1);
      churn.send(`R ${name} ${grant.split(' ')[2]}`);
      const ok = await churn.waitFor(new RegExp(`^R ${name} OK$`));
      churn.lines.splice(churn.lines.indexOf(ok), 1);
    }
  };
  await cycles('hb-feed-churn', 300);
  await expect(page.locator('[data-testid="feed-item"][data-kind="release"]').filter({ hasText: 'hb-feed-churn' }).first()).toBeVisible();
  await expect(adminItem.first()).toBeVisible();

  const feed = page.getByRole('region', { name: 'Events' });
  await feed.getByLabel('Lock').fill('hb-feed-admin');
  await expect(feed.getByTestId('feed-item').first()).toBeVisible();
  const locks = await feed.getByTestId('feed-item').evaluateAll((els) => els.map((e) => e.textContent ?? ''));
  expect(locks.every((t) => t.includes('hb-feed-admin'))).toBe(true);
  await feed.getByLabel('Kind').selectOption('admin');
  await expect(feed.getByTestId('feed-item')).not.toHaveCount(0);
  expect(await feed.getByTestId('feed-item').evaluateAll((els) => els.every((e) => e.getAttribute('data-kind') === 'admin'))).toBe(true);

  // Pause: the list stops moving while events keep coming, and says how many came.
  await feed.getByLabel('Lock').fill('hb-feed-churn');
  await feed.getByLabel('Kind').selectOption('');
  await feed.getByTestId('feed-pause').click();
  const firstBefore = await feed.getByTestId('feed-item').first().textContent();
  const countBefore = await feed.getByTestId('feed-item').count();
  await cycles('hb-feed-churn', 5);
  await expect(feed.getByTestId('feed-pause')).toHaveText(/^Resume \(([1-9]\d*) new\)$/);
  expect(await feed.getByTestId('feed-item').first().textContent()).toBe(firstBefore);
  expect(await feed.getByTestId('feed-item').count()).toBe(countBefore);
  await feed.getByTestId('feed-pause').click();
  await expect(feed.getByTestId('feed-pause')).toHaveText('Pause');
  await expect(feed.getByTestId('feed-item').first()).not.toHaveText(firstBefore ?? '');
});

test('the table exports the rows it shows as JSON and CSV', async ({ page, baton }) => {
  const holder = await sessionClaim(baton.sessionPort, 'hb-export/queued');
  clients.push(holder);
  const acquired = await holder.waitFor(/^ACQUIRED \d+$/);
  const waiter = await sessionClaim(baton.sessionPort, 'hb-export/queued');
  clients.push(waiter);
  await waiter.waitFor(/^WAITING 1$/);
  const alone = await sessionClaim(baton.sessionPort, 'hb-export/alone');
  clients.push(alone);
  await alone.waitFor(/^ACQUIRED/);
  await page.goto('/?q=hb-export%2F&waiters=1');
  await expect(page.getByTestId('lock-row')).toHaveCount(1);

  const csvDownload = page.waitForEvent('download');
  await page.getByTestId('lock-export').getByRole('button', { name: 'Export CSV' }).click();
  const csv = await csvDownload;
  expect(csv.suggestedFilename()).toMatch(/^baton-locks-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.csv$/);
  const csvLines = (await readFile((await csv.path()) as string, 'utf8')).trimEnd().split('\r\n');
  expect(csvLines[0]).toBe('name,protocol,client,clientName,token,heldForMs,leaseLeftMs,sliding,reconnecting,queueLength');
  expect(csvLines).toHaveLength(2);
  expect(csvLines[1]).toMatch(new RegExp(`^hb-export/queued,session,127\\.0\\.0\\.1:\\d+,,${acquired.split(' ')[1]},\\d+,\\d+,true,false,1$`));

  const jsonDownload = page.waitForEvent('download');
  await page.getByTestId('lock-export').getByRole('button', { name: 'Export JSON' }).click();
  const json = await jsonDownload;
  expect(json.suggestedFilename()).toMatch(/\.json$/);
  const parsed = JSON.parse(await readFile((await json.path()) as string, 'utf8')) as {
    view: string;
    count: number;
    locks: { name: string; queueLength: number }[];
  };
  expect(parsed.count).toBe(1);
  expect(parsed.locks.map((l) => [l.name, l.queueLength])).toEqual([['hb-export/queued', 1]]);
  expect(new URLSearchParams(parsed.view).get('waiters')).toBe('1');
});
