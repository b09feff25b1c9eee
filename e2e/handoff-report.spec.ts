// A graceful handoff from the Handoff button, as the operator on the old active's page sees it
// (issue 30): the status does not stop at "started" but follows the handoff until every claim has
// its fate and ends with the figures; the timeline shows the longest client stall, with the
// daemon's gap named as what it is; and the old node's "still reconnecting" goes down when the
// claim nobody resumes expires on the new active (it used to stay at the count of its snapshot).
import type { Page } from '@playwright/test';
import { CLUSTER_TOKEN, expect, test } from './fixtures/baton-cluster.ts';
import { connectClient, type LineClient } from './fixtures/wire-client.ts';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
// Three Next servers and Chromium share two cores, and one claim has to run out its lease.
test.beforeEach(() => test.setTimeout(90_000));

async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Admin token').fill(CLUSTER_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

async function client(port: number): Promise<LineClient> {
  const c = await connectClient(port);
  clients.push(c);
  return c;
}

test('the handoff status ends finished with its figures, and the old node counts the claim that expired', async ({ page, cluster }, testInfo) => {
  const { a, b } = cluster.nodes;
  await page.goto(a.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await signIn(page);

  // A resumable holder that comes back, one that never does (its claim has to expire on b), and
  // a keyed waiter queued behind the latter: it stalls until that claim's lease runs out.
  const holder = await client(a.sessionPort);
  holder.send(`ACQUIRE e2e-report-held 60000 ${'0123456789abcdef'.repeat(2)}`);
  await holder.waitFor(/^ACQUIRED \d+$/);
  const gone = await client(a.sessionPort);
  gone.send(`ACQUIRE e2e-report-stuck 8000 ${'fedcba9876543210'.repeat(2)}`);
  await gone.waitFor(/^ACQUIRED \d+$/);
  const keyed = await client(a.lockPort);
  keyed.send('A e2e-report-stuck 30 0');
  await expect.poll(async () => (await b.process.api<{ queue: unknown[] }>('/api/v1/locks/e2e-report-stuck')).body.queue?.length, { timeout: 5_000 }).toBe(1);

  await page.getByTestId('handoff-target').selectOption('b');
  await page.getByTestId('handoff-button').click();
  await page.getByRole('button', { name: 'Confirm handoff' }).click();

  // The clients do what the protocol asks: the holder resumes at b, the keyed waiter re-sends there.
  expect(await holder.waitFor(/^MOVED /)).toBe(`MOVED 127.0.0.1:${b.sessionPort}`);
  const resumed = await client(b.sessionPort);
  resumed.send(`RESUME e2e-report-held ${'0123456789abcdef'.repeat(2)}`);
  await resumed.waitFor(/^ACQUIRED \d+$/);
  await keyed.waitFor(/^M /);
  const resent = await client(b.lockPort);
  resent.send('A e2e-report-stuck 30 0');

  // Under way: b is active, one claim is still reconnecting, on this (the old) node's page too.
  const status = page.getByTestId('handoff-status');
  await expect(status).toHaveAttribute('data-state', 'settling');
  await expect(status).toContainText('1 still reconnecting');
  const item = page.getByTestId('failover-item').first();
  await expect(item).toContainText('a → b');
  await expect(item.getByTestId('failover-claims')).toContainText('2 session claims carried over: 1 resumed, 0 expired, 1 still reconnecting');

  // The claim nobody resumed expires on b; the keyed waiter gets the lock; the handoff is finished.
  const grant = await resent.waitFor(/^A e2e-report-stuck \d+$/, 15_000);
  resent.send(`R e2e-report-stuck ${grant.split(' ')[2]}`);
  await expect(item.getByTestId('failover-claims')).toContainText('2 session claims carried over: 1 resumed, 1 expired', { timeout: 15_000 });
  await expect(item.getByTestId('failover-claims')).not.toContainText('still reconnecting');
  await expect(status).toHaveAttribute('data-state', 'finished', { timeout: 15_000 });
  await expect(status).toContainText('Graceful handoff to b finished: 1 claim moved, 1 expired, 0 lost, 1 keyed request re-sent (1 granted again)');
  // The figure shown first is what the clients felt (seconds, behind the expiring claim), the gap named as the daemon's.
  await expect(status).toContainText(/longest client stall [\d.]+ s \(no active node for [\d.,]+ (ms|µs)\)/);
  await expect(page.getByTestId('action-status')).toContainText('Graceful handoff to b finished');
  await expect(item.getByTestId('failover-stall')).toContainText(/longest client stall [\d.]+ s/);
  await expect(item.getByTestId('failover-gap')).toContainText(/no active node for [\d.,]+ (ms|µs)/);
  await expect(item.getByTestId('failover-fates')).toContainText(
    /1 claim moved, 1 expired, 0 lost, 1 keyed request re-sent \(1 granted again\) \(finished \d\d:\d\d:\d\d\)/,
  );
  await testInfo.attach('handoff-finished', { body: await page.screenshot({ fullPage: true }), contentType: 'image/png' });
});
