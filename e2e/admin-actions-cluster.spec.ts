// Issue 30 §5 on a real three-node cluster: Graceful handoff and Restore pressed while signed
// out open the sign-in form and send nothing; the sign-in opens the same confirm (the handoff
// with the target chosen before it), and confirming it does what it says.
import type { Page } from '@playwright/test';
import { CLUSTER_TOKEN, expect, test } from './fixtures/baton-cluster.ts';

// Three Next servers and Chromium share two cores: a cluster start costs several seconds.
test.beforeEach(() => test.setTimeout(90_000));

async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Admin token').fill(CLUSTER_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

test('handoff and restore pressed while signed out ask for the sign-in, send nothing, and open their confirm after it', async ({ page, cluster }) => {
  const sent: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && !r.url().includes('/auth/session')) sent.push(new URL(r.url()).pathname);
  });
  await page.goto(cluster.nodes.a.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await expect(page.getByTestId('handoff-button')).toBeEnabled();
  await page.getByTestId('handoff-target').selectOption('b');
  await page.getByTestId('handoff-button').click();
  await expect(page.getByTestId('sign-in-reason')).toHaveText('Sign in as admin to hand off the active role.');
  await expect(page.getByTestId('handoff-dialog')).toHaveCount(0);
  expect(sent).toEqual([]);

  await signIn(page);
  const handoff = page.getByTestId('handoff-dialog');
  await expect(handoff).toContainText('ships its last events to b,');
  await handoff.getByRole('button', { name: 'Confirm handoff' }).click();
  await cluster.waitActive('b', 10_000);
  expect(sent).toEqual(['/api/v1/cluster/handoff']);

  // a yielded: Restore is on. Signed out again, it asks first too.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByLabel('Admin token')).toBeVisible();
  const restore = page.getByTestId('restore-button');
  await expect(restore).toBeEnabled();
  await restore.click();
  await expect(page.getByTestId('sign-in-reason')).toHaveText('Sign in as admin to restore yielded nodes.');
  await expect(page.getByTestId('restore-dialog')).toHaveCount(0);
  expect(sent).toEqual(['/api/v1/cluster/handoff']);
  await signIn(page);
  const restoreDialog = page.getByTestId('restore-dialog');
  await expect(restoreDialog).toContainText('a');
  await restoreDialog.getByRole('button', { name: 'Confirm restore' }).click();
  await cluster.waitActive('a', 15_000);
  expect(sent).toEqual(['/api/v1/cluster/handoff', '/api/v1/cluster/restore']);
});
