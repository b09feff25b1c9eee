// A node with --read-token (reads closed), signing in with the read token (reads yes,
// mutations no), keyboard-only force-release, and a dashboard that loses its connection and
// comes back with a fresh snapshot.
import { test as plain } from '@playwright/test';
import { ADMIN_TOKEN, expect, startBaton, test } from './fixtures/baton-server.ts';
import { type LineClient, sessionClaim } from './fixtures/wire-client.ts';

const READ_TOKEN = 'e2e-read-token-0123456789abcdef';
const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

plain('with --read-token the page asks for a token, and the read token may look but not act', async ({ page }) => {
  const { server, stop } = await startBaton(['--read-token', READ_TOKEN]);
  try {
    const holder = await sessionClaim(server.sessionPort, 'guarded');
    clients.push(holder);
    await holder.waitFor(/^ACQUIRED/);
    expect((await fetch(`${server.baseURL}/api/v1/locks`)).status).toBe(401);
    expect((await fetch(`${server.baseURL}/metrics`)).status).toBe(401);
    expect((await fetch(`${server.baseURL}/healthz`)).status).toBe(200);
    await page.goto(server.baseURL);
    await expect(page.locator('[data-testid="lock-row"]')).toHaveCount(0);
    await page.getByLabel('Admin token').fill(READ_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const row = page.locator('[data-testid="lock-row"][data-lock="guarded"]');
    await expect(row).toBeVisible();
    await row.getByRole('button', { name: 'Details for guarded' }).click();
    await page.getByTestId('lock-detail').getByRole('button', { name: 'Force release' }).click();
    // Signed in with the read token, an admin button brings the sign-in form back, saying why.
    await expect(page.getByTestId('sign-in-reason')).toHaveText('Sign in as admin to force-release guarded.');
    await expect(page.getByLabel('Admin token')).toBeFocused();
    await expect(page.getByTestId('force-release-dialog')).toHaveCount(0);
    // And the API refuses the read token for a mutation.
    const refused = await fetch(`${server.baseURL}/api/v1/locks/guarded/force-release`, {
      method: 'POST',
      headers: { authorization: `Bearer ${READ_TOKEN}` },
      body: '{}',
    });
    expect(refused.status).toBe(403);
    expect(holder.lines.filter((l) => l.startsWith('ERROR'))).toEqual([]);
  } finally {
    for (const c of clients.splice(0)) c.close();
    await stop();
  }
});

test('an operator can force-release with the keyboard alone', async ({ page, baton }) => {
  const holder = await sessionClaim(baton.sessionPort, 'keyboard-only');
  clients.push(holder);
  await holder.waitFor(/^ACQUIRED/);
  await page.goto('/');
  // The first Tab reaches the skip link, which takes focus to the locks.
  await page.keyboard.press('Tab');
  await expect(page.getByRole('link', { name: 'Skip to locks' })).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.locator('#locks-heading')).toBeFocused();
  await page.getByLabel('Admin token').focus();
  await page.keyboard.type(ADMIN_TOKEN);
  await page.keyboard.press('Enter');
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
  await page.locator('[data-testid="lock-row"][data-lock="keyboard-only"]').getByRole('button', { name: 'Details for keyboard-only' }).focus();
  await page.keyboard.press('Enter');
  await page.getByTestId('lock-detail').getByRole('button', { name: 'Force release' }).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('force-release-dialog')).toBeVisible();
  await page.getByRole('button', { name: 'Confirm force release' }).focus();
  await page.keyboard.press('Enter');
  await holder.waitFor(/^ERROR 0x04/);
});

plain('a dashboard whose server restarted reconnects and starts over from a fresh snapshot', async ({ page }) => {
  const first = await startBaton();
  let second: Awaited<ReturnType<typeof startBaton>> | null = null;
  try {
    await page.goto(first.server.baseURL);
    await expect(page.getByTestId('instance-id')).toHaveText(first.server.instanceId);
    await first.stop();
    await expect(page.getByTestId('live-status')).not.toHaveText('live');
    // The same ports, a new process: the page's event stream reconnects by itself.
    const s = first.server;
    second = await startBaton(['--lock-port', String(s.lockPort), '--session-port', String(s.sessionPort), '--http-port', String(s.httpPort)]);
    const holder = await sessionClaim(second.server.sessionPort, 'after-restart');
    clients.push(holder);
    await holder.waitFor(/^ACQUIRED/);
    await expect(page.getByTestId('live-status')).toHaveText('live', { timeout: 15_000 });
    await expect(page.getByTestId('instance-id')).toHaveText(second.server.instanceId);
    await expect(page.locator('[data-testid="lock-row"][data-lock="after-restart"]')).toBeVisible();
  } finally {
    for (const c of clients.splice(0)) c.close();
    await first.stop(); // a second call only checks how it exited
    await second?.stop();
  }
});
