// A lock with a long queue (issue 26, part 3): the detail asks the ops API for the queue's first
// page (500 waiters), not the whole queue, and says how many of how many it shows.
import { expect, test } from './fixtures/baton-server.ts';
import { connectClient, type LineClient } from './fixtures/wire-client.ts';

const lines: LineClient[] = [];
test.afterEach(() => {
  for (const c of lines.splice(0)) c.close();
});

test('a queue of 1,200 waiters shows its first 500 and says of how many, from one page of the API', async ({ page, baton }) => {
  const holder = await connectClient(baton.lockPort);
  lines.push(holder);
  holder.send('A e2e-long/queue 3600 0');
  await holder.waitFor(/^A e2e-long\/queue \d+$/);
  const waiters = await connectClient(baton.lockPort);
  lines.push(waiters);
  waiters.send(...Array.from({ length: 1_200 }, () => 'A e2e-long/queue 3600 0'));
  await expect.poll(async () => ((await (await page.request.get(`${baton.baseURL}/api/v1/stats`)).json()) as { waiters: number }).waiters).toBe(1_200);

  const asked: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/api/v1/locks/e2e-long')) asked.push(new URL(r.url()).search);
  });
  await page.goto('/');
  await page.locator('[data-testid="lock-row"][data-lock="e2e-long/queue"]').getByRole('button', { name: 'Details for e2e-long/queue' }).click();
  const detail = page.getByTestId('lock-detail');
  await expect(detail.getByText('Queue (1200)')).toBeVisible();
  await expect(detail.getByTestId('waiter-row')).toHaveCount(500);
  await expect(detail.getByTestId('queue-first-of')).toHaveText('Showing the first 500 of 1200 waiters.');
  await expect(detail.getByTestId('waiter-row').last().locator('td').first()).toHaveText('500');
  expect(asked).toContain('?limit=500');
});
