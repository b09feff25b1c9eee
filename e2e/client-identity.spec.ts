// Client identities on screen (issue 13 §2): the name a client gives on either protocol is shown
// in the lock table, the detail and the waiter list, stays text when hostile, and lets an admin
// release everything one stuck client holds with one confirm that lists it all.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { KeyedClient, SessionClient, type SessionLease } from '../lib/client/index.ts';
import type { AuditEntry } from '../lib/ops-api/api-types.ts';
import { ADMIN_TOKEN, expect, test } from './fixtures/baton-server.ts';
import { connectClient, type LineClient } from './fixtures/wire-client.ts';

const lines: LineClient[] = [];
const closers: Array<() => Promise<unknown>> = [];
test.afterEach(async () => {
  for (const c of lines.splice(0)) c.close();
  for (const close of closers.splice(0)) await close();
});

async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

/** WCAG 2.1 AA violations axe finds on the page as it is (a dialog open, say). */
async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations.map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

const row = (page: Page, name: string) => page.locator(`[data-testid="lock-row"][data-lock="${name}"]`);

test('the identities of a KeyedClient and a SessionClient are shown in the table, the detail and the queue', async ({ page, baton }) => {
  const keyed = new KeyedClient({ addresses: [`127.0.0.1:${baton.lockPort}`], clientName: 'worker-7@host-3 pid 4121' });
  closers.push(() => keyed.close());
  const sessions = new SessionClient({ addresses: [`127.0.0.1:${baton.sessionPort}`], clientName: 'report runner 2' });
  closers.push(() => sessions.close());
  const grant = await keyed.acquire('e2e-id/keyed', { lease: 60_000 });
  const lease: SessionLease = await sessions.open('e2e-id/session', { lease: 60_000 });
  closers.push(() => lease.close());
  // A second session client, with the library's default identity, queues behind the first.
  const queued = new SessionClient({ addresses: [`127.0.0.1:${baton.sessionPort}`] });
  closers.push(() => queued.close());
  const waiting = queued.open('e2e-id/session', { lease: 60_000 });
  waiting.catch(() => undefined);

  await page.goto('/');
  await expect(row(page, 'e2e-id/keyed').getByTestId('client-name')).toHaveText('worker-7@host-3 pid 4121');
  await expect(row(page, 'e2e-id/keyed')).toContainText(/worker-7@host-3 pid 4121 127\.0\.0\.1:\d+ \(keyed\)/);
  await expect(row(page, 'e2e-id/session').getByTestId('client-name')).toHaveText('report runner 2');
  await expect(row(page, 'e2e-id/keyed').getByTestId('holder-token')).toHaveText(grant.token.toString());

  await row(page, 'e2e-id/session').getByRole('button', { name: 'Details for e2e-id/session' }).click();
  const detail = page.getByTestId('lock-detail');
  await expect(detail.getByTestId('detail-holder-name')).toHaveText('report runner 2');
  await expect(detail.getByTestId('waiter-row').getByTestId('client-name')).toHaveText(/^\S+@\S+ pid \d+$/);
  expect(await violations(page)).toEqual([]);
  await page.screenshot({ path: test.info().outputPath('client-identities.png') });
});

test('a hostile identity is drawn as text, never as markup', async ({ page, baton }) => {
  const hostile = '<img src=x onerror=alert(1)> & <b>bold</b>';
  const keyed = await connectClient(baton.lockPort);
  lines.push(keyed);
  keyed.send(`I ${hostile}`, 'A e2e-id/hostile 60 0');
  await keyed.waitFor(/^A e2e-id\/hostile \d+$/);
  page.on('dialog', (d) => void d.dismiss());
  await page.goto('/');
  const cell = row(page, 'e2e-id/hostile').getByTestId('client-name');
  await expect(cell).toHaveText(hostile);
  await expect(cell).toHaveAttribute('data-client-name', hostile);
  await expect(row(page, 'e2e-id/hostile').locator('img, b')).toHaveCount(0);
  await expect(page.locator('[data-testid="feed-item"][data-kind="grant"]').filter({ hasText: hostile }).first()).toBeVisible();
});

test('a kick asks first, naming the waiter, and the waiter stays until confirmed', async ({ page, baton }) => {
  const holder = await connectClient(baton.lockPort);
  lines.push(holder);
  holder.send('A e2e-id/kick 60 0');
  await holder.waitFor(/^A e2e-id\/kick \d+$/);
  const waiter = await connectClient(baton.sessionPort);
  lines.push(waiter);
  waiter.send('CLIENT patient waiter', 'ACQUIRE e2e-id/kick 60000');
  await waiter.waitFor(/^WAITING 1$/);
  await page.goto('/');
  await signIn(page);
  await row(page, 'e2e-id/kick').getByRole('button', { name: 'Details for e2e-id/kick' }).click();
  const waiterRow = page.getByTestId('waiter-row');
  const id = await waiterRow.getAttribute('data-waiter-id');
  await page.getByRole('button', { name: `Kick waiter ${id}` }).click();
  const dialog = page.getByTestId('kick-dialog');
  await expect(dialog).toContainText(`Kick waiter ${id} from e2e-id/kick?`);
  await expect(dialog.getByTestId('kick-dialog-name')).toHaveText('patient waiter');
  expect(await violations(page)).toEqual([]);
  await dialog.getByRole('button', { name: 'Cancel' }).click();
  await expect(dialog).toHaveCount(0);
  await expect(waiterRow).toHaveCount(1);
  expect(waiter.lines).toEqual(['WAITING 1']);
  await page.getByRole('button', { name: `Kick waiter ${id}` }).click();
  await page.getByRole('button', { name: 'Confirm kick' }).click();
  await waiter.waitFor(/^ERROR 0x05/);
  await expect(page.getByTestId('waiter-row')).toHaveCount(0);
});

test('one stuck client holding 300 locks: one confirm names the client by identity and lists them all, all are released, the first 100 audited one by one', async ({
  page,
  baton,
  request,
}) => {
  const CLIENT = 'stuck worker@host-9 pid 77';
  const names = Array.from({ length: 300 }, (_, i) => `e2e-stuck/${String(i).padStart(3, '0')}`);
  const stuck = await connectClient(baton.lockPort);
  lines.push(stuck);
  stuck.send(`I ${CLIENT}`, ...names.map((n) => `A ${n} 3600 0`));
  await stuck.waitFor(/^A e2e-stuck\/299 \d+$/);
  // Another client's lock stays held.
  const other = await connectClient(baton.lockPort);
  lines.push(other);
  other.send('I bystander', 'A e2e-stuck-bystander 3600 0');
  await other.waitFor(/^A e2e-stuck-bystander \d+$/);

  await page.goto('/');
  await signIn(page);
  await row(page, 'e2e-stuck/000').getByRole('button', { name: 'Details for e2e-stuck/000' }).click();
  await page.getByTestId('lock-detail').getByRole('button', { name: 'Release all held by this client' }).click();
  const dialog = page.getByTestId('release-client-dialog');
  await expect(dialog.getByRole('heading')).toHaveText(`Release 300 locks held by identity ${CLIENT}?`);
  await expect(dialog.getByTestId('release-client-kind')).toHaveAttribute('data-kind', 'identity');
  await expect(dialog.getByTestId('release-client-item')).toHaveCount(300);
  await expect(dialog.locator('[data-testid="release-client-item"][data-lock="e2e-stuck/299"]')).toContainText(/token \d+/);
  await expect(dialog.locator('[data-lock="e2e-stuck-bystander"]')).toHaveCount(0);
  await page.screenshot({ path: test.info().outputPath('release-client-confirm.png') });
  expect(await violations(page)).toEqual([]);
  await dialog.getByRole('button', { name: 'Confirm release of 300' }).click();
  await expect(page.getByTestId('action-status')).toContainText(`Released 300 locks held by identity ${CLIENT}; 0 stale`);
  await expect(row(page, 'e2e-stuck/123')).toHaveCount(0);
  await expect(row(page, 'e2e-stuck-bystander')).toHaveCount(1);

  const audit = await request.get('/api/v1/audit?limit=1000', { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const entries = ((await audit.json()) as { entries: AuditEntry[] }).entries;
  const bulk = entries.filter((e) => e.action === 'force-release' && e.detail?.startsWith(`bulk by identity ${CLIENT}:`));
  expect(bulk.map((e) => e.target).sort()).toEqual(names.slice(0, 100));
  expect(entries.filter((e) => e.action === 'release-client').map((e) => e.detail)).toContain(
    `identity ${CLIENT}: released 300, stale 0; the first 100 by name have an entry each, the other 200 (e2e-stuck/100 to e2e-stuck/299) are counted here only`,
  );
  // The dashboard's audit log shows them too.
  await expect(page.locator('#audit').getByText(`bulk by identity ${CLIENT}`).first()).toBeVisible();
});

test("an identity with an invisible character is marked in the lock's history too, as in the table", async ({ page, baton }) => {
  const sly = 'worker\u3164-7@host-3 pid 1'; // HANGUL FILLER: draws as nothing
  const name = 'e2e-id/history';
  const keyed = await connectClient(baton.lockPort);
  lines.push(keyed);
  keyed.send(`I ${sly}`, `A ${name} 60 0`);
  const token = (await keyed.waitFor(new RegExp(`^A ${name} \\d+$`))).split(' ')[2];
  keyed.send(`R ${name} ${token}`, `A ${name} 600 0`);
  await keyed.waitFor(new RegExp(`^R ${name} OK$`));
  await page.goto(`/?lock=${encodeURIComponent(name)}`);
  const history = page.getByTestId('lock-history').getByTestId('history-row');
  await expect(history).toHaveCount(1);
  const drawn = history.getByTestId('client-name');
  await expect(drawn).toHaveAttribute('data-client-name', sly);
  await expect(drawn).toContainText('worker\\u{3164}-7@host-3');
});
