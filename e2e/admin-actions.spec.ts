// Issue 30 §5: admin actions never reach the server without an admin sign-in (the form opens
// with the reason, and the action the operator started opens again after it), and they are off,
// with the reason on screen, while the page has lost its node.
import type { Page, Request } from '@playwright/test';
import { ADMIN_TOKEN, expect, startBaton, test } from './fixtures/baton-server.ts';
import { connectClient, type LineClient, sessionClaim } from './fixtures/wire-client.ts';

const READ_TOKEN = 'e2e-read-token-0123456789abcdef';
const NO_CONTACT = 'No contact with this node: actions are off until its data comes back.';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

/** The console API requests the page sends from now on, but for its reads of the stream and auth. */
function adminRequests(page: Page): string[] {
  const seen: string[] = [];
  page.on('request', (r: Request) => {
    const url = new URL(r.url());
    if (url.pathname.startsWith('/api/v1/') && !url.pathname.startsWith('/api/v1/auth/') && !url.pathname.startsWith('/api/v1/events')) {
      if (r.method() !== 'GET' || url.pathname.startsWith('/api/v1/clients/')) seen.push(`${r.method()} ${url.pathname}`);
    }
  });
  return seen;
}

async function signIn(page: Page, token: string, as: 'admin' | 'read'): Promise<void> {
  await page.getByLabel('Admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  if (as === 'admin') await expect(page.getByTestId('sign-in-reason')).toHaveCount(0);
}

/** Keeps a handle on the page's event streams, so the test can drop them as a network would. */
const TRACK_STREAMS = `{
  const Native = window.EventSource;
  window.__streams = [];
  window.EventSource = class extends Native {
    constructor(url, init) { super(url, init); window.__streams.push(this); }
  };
}`;

test('"Release all held by this client" while signed out lists and sends nothing, and after the sign-in opens its confirm for the same client', async ({
  page,
  baton,
}) => {
  const holder = await connectClient(baton.sessionPort);
  clients.push(holder);
  holder.send('CLIENT stuck worker@host-4 pid 9', 'ACQUIRE e2e-actions/held 60000');
  const acquired = await holder.waitFor(/^ACQUIRED \d+$/);
  const requests = adminRequests(page);
  await page.goto('/?lock=e2e-actions%2Fheld');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  const panel = page.getByTestId('lock-detail');
  await expect(panel.getByTestId('detail-holder-token')).toHaveText(acquired.split(' ')[1] as string);
  await panel.getByRole('button', { name: 'Release all held by this client' }).click();
  await expect(page.getByTestId('sign-in-reason')).toHaveText('Sign in as admin to release every lock held by identity stuck worker@host-4 pid 9.');
  await expect(page.getByLabel('Admin token')).toBeFocused();
  await expect(page.getByTestId('release-client-dialog')).toHaveCount(0);
  expect(requests).toEqual([]);

  await signIn(page, ADMIN_TOKEN, 'admin');
  const dialog = page.getByTestId('release-client-dialog');
  await expect(dialog.getByTestId('release-client-item')).toHaveCount(1);
  await expect(dialog.getByTestId('release-client-item')).toHaveAttribute('data-lock', 'e2e-actions/held');
  await dialog.getByRole('button', { name: 'Confirm release of 1' }).click();
  await expect(page.getByTestId('action-status')).toContainText('Released 1 lock held by identity stuck worker@host-4 pid 9');
  await holder.waitFor(/^ERROR 0x04/);
  expect(requests.filter((r) => r.startsWith('POST'))).toEqual(['POST /api/v1/clients/force-release']);
});

test('force release while signed out opens the sign-in form; after it the confirm opens with the same holder and token', async ({ page, baton }) => {
  const holder = await sessionClaim(baton.sessionPort, 'e2e-actions/force');
  clients.push(holder);
  const acquired = await holder.waitFor(/^ACQUIRED \d+$/);
  const requests = adminRequests(page);
  await page.goto('/?lock=e2e-actions%2Fforce');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await page.getByTestId('lock-detail').getByRole('button', { name: 'Force release' }).click();
  await expect(page.getByTestId('sign-in-reason')).toHaveText('Sign in as admin to force-release e2e-actions/force.');
  await signIn(page, ADMIN_TOKEN, 'admin');
  const dialog = page.getByTestId('force-release-dialog');
  await expect(dialog.getByTestId('dialog-holder-token')).toHaveText(acquired.split(' ')[1] as string);
  expect(requests).toEqual([]);
  await dialog.getByRole('button', { name: 'Confirm force release' }).click();
  await holder.waitFor(/^ERROR 0x04/);
  await expect(page.getByTestId('action-status')).toContainText('Force-released e2e-actions/force');
});

test('signed in with the read token, an admin button asks for the admin sign-in and then opens its confirm', async ({ page }) => {
  const { server, stop } = await startBaton(['--read-token', READ_TOKEN]);
  try {
    const holder = await sessionClaim(server.sessionPort, 'e2e-actions/read');
    clients.push(holder);
    const acquired = await holder.waitFor(/^ACQUIRED \d+$/);
    const requests = adminRequests(page);
    await page.goto(`${server.baseURL}/?lock=e2e-actions%2Fread`);
    await signIn(page, READ_TOKEN, 'read');
    await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
    const panel = page.getByTestId('lock-detail');
    await expect(panel.getByTestId('detail-holder-token')).toHaveText(acquired.split(' ')[1] as string);
    await panel.getByRole('button', { name: 'Release all held by this client' }).click();
    await expect(page.getByTestId('sign-in-reason')).toHaveText(/^Sign in as admin to release every lock held by address /);
    await panel.getByRole('button', { name: 'Force release' }).click();
    await expect(page.getByTestId('sign-in-reason')).toHaveText('Sign in as admin to force-release e2e-actions/read.');
    expect(requests).toEqual([]);
    // The newest press is the one resumed.
    await signIn(page, ADMIN_TOKEN, 'admin');
    await expect(page.getByTestId('force-release-dialog').getByTestId('dialog-holder-token')).toHaveText(acquired.split(' ')[1] as string);
    await expect(page.getByTestId('release-client-dialog')).toHaveCount(0);
    await page.getByTestId('force-release-dialog').getByRole('button', { name: 'Cancel' }).click();
    expect(holder.lines).toEqual([acquired]);
  } finally {
    for (const c of clients.splice(0)) c.close();
    await stop();
  }
});

test('while the page has lost its node every admin action is off with the reason, an open confirm too, and all come back with the node', async ({
  page,
  baton,
  context,
}) => {
  const holder = await sessionClaim(baton.sessionPort, 'e2e-actions/lost');
  clients.push(holder);
  const acquired = await holder.waitFor(/^ACQUIRED \d+$/);
  const waiter = await sessionClaim(baton.sessionPort, 'e2e-actions/lost');
  clients.push(waiter);
  await waiter.waitFor(/^WAITING 1$/);
  await page.addInitScript(TRACK_STREAMS);
  await page.goto('/?lock=e2e-actions%2Flost');
  await signIn(page, ADMIN_TOKEN, 'admin');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  const panel = page.getByTestId('lock-detail');
  const buttons = [
    panel.getByRole('button', { name: 'Force release' }),
    panel.getByRole('button', { name: 'Release all held by this client' }),
    panel.getByTestId('waiter-row').getByRole('button', { name: /^Kick waiter / }),
  ];
  for (const b of buttons) await expect(b).toBeEnabled();
  // A confirm open when the node goes away.
  await buttons[0]?.click();
  const dialog = page.getByTestId('force-release-dialog');
  const confirm = dialog.getByRole('button', { name: 'Confirm force release' });
  await expect(confirm).toBeEnabled();

  await context.setOffline(true);
  await page.evaluate(() => {
    const w = window as unknown as { __streams: EventSource[] };
    for (const s of w.__streams) {
      s.close();
      s.dispatchEvent(new Event('error'));
    }
  });
  await expect(page.getByTestId('lost-contact')).toBeVisible({ timeout: 5_000 });
  await expect(confirm).toBeDisabled();
  await expect(dialog.getByTestId('confirm-blocked')).toHaveText(NO_CONTACT);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  for (const b of buttons) await expect(b).toBeDisabled();
  await expect(panel.getByTestId('action-blocked')).toHaveText(NO_CONTACT);

  await context.setOffline(false);
  await expect(page.getByTestId('live-status')).toHaveText('live', { timeout: 15_000 });
  await expect(page.getByTestId('lost-contact')).toHaveCount(0);
  for (const b of buttons) await expect(b).toBeEnabled();
  await expect(panel.getByTestId('action-blocked')).toHaveCount(0);
  expect(holder.lines).toEqual([acquired]);
});
