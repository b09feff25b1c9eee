// A resumable session claim across a graceful handoff, as an operator sees it on the new active
// node's page: the holder between connections is marked reconnecting (same token, its lease
// counting down), the failover timeline counts the claim carried over, and once the client has
// resumed it on the new node both say so.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures/baton-cluster.ts';
import { connectClient, type LineClient } from './fixtures/wire-client.ts';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});
test.beforeEach(() => test.setTimeout(60_000));

function lockRow(page: Page, name: string) {
  return page.locator(`[data-testid="lock-row"][data-lock="${name}"]`);
}

test('a session claim moved by a handoff is shown reconnecting on the new active, then resumed, and the timeline counts it', async ({ page, cluster }) => {
  const name = 'e2e-moved-claim';
  // The claim key: only this client knows it (the token is public).
  const key = '0123456789abcdef'.repeat(2);
  const holder = await connectClient(cluster.nodes.a.sessionPort);
  clients.push(holder);
  holder.send(`ACQUIRE ${name} 30000 ${key}`);
  const token = (await holder.waitFor(/^ACQUIRED \d+$/)).split(' ')[1] as string;
  await page.goto(cluster.nodes.b.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await expect(lockRow(page, name).getByTestId('holder-token')).toHaveText(token);
  await expect(lockRow(page, name).getByTestId('holder-reconnecting')).toHaveCount(0);

  const handoff = await cluster.nodes.a.process.post('/api/v1/cluster/handoff', { target: 'b' });
  expect(handoff.status).toBe(200);
  // The old active tells the client where its claim went, and does not end it.
  expect(await holder.waitFor(/^(MOVED|ERROR|REDIRECT) /)).toBe(`MOVED 127.0.0.1:${cluster.nodes.b.sessionPort}`);
  await cluster.waitActive('b', 10_000);

  const row = lockRow(page, name);
  await expect(row.getByTestId('holder-token')).toHaveText(token);
  await expect(row.getByTestId('holder-reconnecting')).toBeVisible();
  const item = page.getByTestId('failover-item').first();
  await expect(item).toContainText('a → b');
  await expect(item.getByTestId('failover-claims')).toContainText('1 session claim carried over: 0 resumed, 0 expired, 1 still reconnecting');

  const resumed = await connectClient(cluster.nodes.b.sessionPort);
  clients.push(resumed);
  resumed.send(`RESUME ${name} ${key}`);
  expect(await resumed.waitFor(/^(ACQUIRED|WAITING|ERROR) /)).toBe(`ACQUIRED ${token}`);
  await expect(row.getByTestId('holder-reconnecting')).toHaveCount(0);
  await expect(row.getByTestId('holder-token')).toHaveText(token);
  await expect(item.getByTestId('failover-claims')).toContainText('1 session claim carried over: 1 resumed, 0 expired');
});
