// The audit card as an operator uses it after a bad night, in a real browser on a real node:
// more than 200 entries page back to the oldest, the filters narrow server-side, an export of a
// filtered range holds every one of its entries (not the 200 on screen), targets that are not
// lock names show as text, and the events feed shows admin actions whatever the churn and on a
// page opened after them.
import { readFile } from 'node:fs/promises';
import type { Page } from '@playwright/test';
import type { AuditEntry } from '../lib/ops-api/api-types.ts';
import { ADMIN_TOKEN, expect, test } from './fixtures/baton-server.ts';
import { connectClient } from './fixtures/wire-client.ts';

test.beforeEach(() => test.setTimeout(120_000));

async function post(baseURL: string, path: string, body: unknown = {}): Promise<number> {
  const res = await fetch(`${baseURL}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.status;
}

/** `count` refused force-releases (nobody holds the locks): one audit entry each. */
async function record(baseURL: string, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) expect(await post(baseURL, `/api/v1/locks/${prefix}-${i}/force-release`)).toBe(404);
}

async function open(page: Page): Promise<void> {
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await page.getByRole('heading', { name: 'Audit log' }).scrollIntoViewIfNeeded();
}

const entries = (page: Page) => page.getByTestId('audit-entry');

test('more than 200 entries page back to the oldest, filters narrow, and the export of a filtered range has all of them', async ({ page, baton }) => {
  await record(baton.baseURL, 'e2e-night', 450);
  await open(page);
  await expect(entries(page)).toHaveCount(200);
  await expect(entries(page).first()).toContainText('e2e-night-449');
  // Load older until the card says it has everything the node keeps.
  while (await page.getByTestId('audit-load-older').isVisible()) {
    const shown = await entries(page).count();
    await page.getByTestId('audit-load-older').click();
    await expect(entries(page)).not.toHaveCount(shown);
  }
  await expect(page.getByTestId('audit-count')).toContainText('all this node keeps');
  // The node is shared with this worker's other tests, whose entries may be older: ours are all
  // there, newest first, down to the first one.
  const ours = (await entries(page).getByTestId('audit-target').allTextContents()).filter((t) => t.startsWith('e2e-night-'));
  expect(ours).toEqual(Array.from({ length: 450 }, (_, i) => `e2e-night-${449 - i}`));

  // Filters narrow server-side: one lock, then an action nobody took.
  await page.getByTestId('audit-filter-lock').fill('e2e-night-12');
  await expect(entries(page)).toHaveCount(11); // 12, 120 to 129
  await page.getByTestId('audit-filter-lock').fill('e2e-night-');
  await page.getByTestId('audit-filter-action').selectOption('handoff');
  await expect(page.getByText('No admin action matches the filters.')).toBeVisible();
  await page.getByTestId('audit-filter-action').selectOption('force-release');
  await expect(entries(page)).toHaveCount(200);

  // The export reads every page of the filtered range: all 450, not the 200 shown.
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('audit-export-csv').click()]);
  const lines = (await readFile(await csvDownload.path(), 'utf8')).split('\r\n').filter((l) => l !== '');
  expect(lines[0]).toBe('at,node,who,action,target,result,detail,id');
  expect(lines.slice(1)).toHaveLength(450);
  expect(lines.slice(1).every((l) => /,local,bearer:admin,force-release,e2e-night-\d+,not-found,/.test(l))).toBe(true);
  const [jsonDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('audit-export-json').click()]);
  const json = JSON.parse(await readFile(await jsonDownload.path(), 'utf8')) as { entries: AuditEntry[] };
  expect(json.entries.map((e) => e.target)).toEqual(Array.from({ length: 450 }, (_, i) => `e2e-night-${i}`));
  expect(json.entries[0]).not.toHaveProperty('seq');
});

test('targets that are not lock names show as text: a node, "every yielded node", a client identity with spaces', async ({ page, baton }) => {
  // On a single node these are refused, and audited with their targets.
  await post(baton.baseURL, '/api/v1/cluster/restore');
  await post(baton.baseURL, '/api/v1/clients/force-release', { identity: 'nightly job @host-3 pid 77', tokens: ['1'] });
  await open(page);
  const restoreTarget = page.locator('[data-testid="audit-entry"][data-action="restore"]').first().getByTestId('audit-target');
  await expect(restoreTarget).toHaveText('every yielded node');
  await expect(restoreTarget).toHaveAttribute('data-kind', 'node');
  await expect(restoreTarget.getByTestId('name-escape')).toHaveCount(0);
  const client = page.locator('[data-testid="audit-entry"][data-action="release-client"]').first().getByTestId('audit-target');
  await expect(client).toContainText('nightly job @host-3 pid 77');
  await expect(client).toHaveAttribute('data-kind', 'client');
  await expect(client.getByTestId('name-escape')).toHaveCount(0);
});

test('the events feed shows admin actions whatever the churn, also on a page opened after them', async ({ page, baton }) => {
  await record(baton.baseURL, 'e2e-feed-admin', 3);
  // 600 engine events after them: the live feed's 200 hold none of the admin items any more.
  const client = await connectClient(baton.lockPort);
  for (let i = 0; i < 300; i++) {
    client.send(`A e2e-churn 30 0`);
    const granted = await client.next();
    client.send(`R e2e-churn ${granted.split(' ')[2]}`);
    await client.next();
  }
  client.close();
  await open(page);
  const feed = page.locator('#events');
  await feed.scrollIntoViewIfNeeded();
  await feed.getByLabel('Kind').selectOption('admin');
  const admin = page.locator('[data-testid="feed-item"][data-kind="admin"]');
  await expect(admin.filter({ hasText: 'e2e-feed-admin-2' })).toHaveCount(1);
  await expect(admin.filter({ hasText: 'e2e-feed-admin-0' })).toHaveCount(1);
  // The force-release kind shows the admin force-releases too, narrowed by the lock filter.
  await feed.getByLabel('Kind').selectOption('force-release');
  await feed.getByLabel('Lock').fill('e2e-feed-admin-1');
  await expect(admin).toHaveCount(1);
  await expect(admin).toContainText('force-release of e2e-feed-admin-1 by bearer:admin: not-found');
});
