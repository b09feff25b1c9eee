import { expect, test } from './fixtures/baton-server.ts';

test('the page and the daemon report the same instance id', async ({ page, baton, request }) => {
  const health = await request.get('/healthz');
  expect(health.status()).toBe(200);
  const body = (await health.json()) as { instanceId: string; pid: number };
  expect(body.instanceId).toBe(baton.instanceId);
  await page.goto('/');
  await expect(page.getByTestId('instance-id')).toHaveText(baton.instanceId);
});
