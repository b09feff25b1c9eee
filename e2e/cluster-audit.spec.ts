// The cluster-wide audit in a real browser on a real three-node cluster: an admin action taken
// on one node appears live in another node's audit log, with the node that recorded it, also
// after a handoff; and the audit exports as CSV and JSON.
import { readFile } from 'node:fs/promises';
import type { Page } from '@playwright/test';
import type { AuditEntry } from '../lib/ops-api/api-types.ts';
import { CLUSTER_TOKEN, type ConsoleNode, expect, test } from './fixtures/baton-cluster.ts';
import { guardCsp } from './fixtures/csp-guard.ts';
import { connectClient, holdKeyed } from './fixtures/wire-client.ts';

test.beforeEach(() => test.setTimeout(90_000));

async function post(node: ConsoleNode, path: string, body: unknown = {}): Promise<number> {
  const res = await fetch(`${node.baseURL}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.status;
}

function auditEntry(page: Page, target: string) {
  return page.getByTestId('audit-entry').filter({ hasText: target });
}

test('an admin action on one node shows up live in another node’s audit, with its node, also after a handoff; the audit exports as CSV and JSON', async ({
  page,
  cluster,
}) => {
  const csp = await guardCsp(page);
  const { a, b, c } = cluster.nodes;
  await page.goto(c.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');

  // On a (the active): a force-release of a lock nobody holds, refused and audited there.
  expect(await post(a, '/api/v1/locks/e2e-audit-on-a/force-release')).toBe(404);
  const first = auditEntry(page, 'e2e-audit-on-a');
  await expect(first).toBeVisible({ timeout: 5_000 });
  await expect(first.getByTestId('audit-node')).toHaveText('on a');
  await expect(first).toContainText('not-found');

  // Hand the active role to b; what b records next reaches c's page just the same.
  expect(await post(a, '/api/v1/cluster/handoff', { target: 'b' })).toBe(200);
  await cluster.waitActive('b', 10_000);
  await expect(page.getByTestId('standby-banner')).toContainText('active node b');
  expect(await post(b, '/api/v1/locks/e2e-audit-on-b/force-release')).toBe(404);
  const second = auditEntry(page, 'e2e-audit-on-b');
  await expect(second).toBeVisible({ timeout: 5_000 });
  await expect(second.getByTestId('audit-node')).toHaveText('on b');
  // The handoff, recorded on a, is there too.
  await expect(page.getByTestId('audit-entry').filter({ hasText: 'handoff' }).first().getByTestId('audit-node')).toHaveText('on a');

  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('audit-export-csv').click()]);
  expect(csvDownload.suggestedFilename()).toMatch(/^baton-audit-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\dZ\.csv$/);
  const csv = await readFile(await csvDownload.path(), 'utf8');
  const lines = csv.split('\r\n');
  expect(lines[0]).toBe('at,node,who,action,target,result,detail,id');
  expect(lines.some((l) => /,a,bearer:admin,force-release,e2e-audit-on-a,not-found,/.test(l))).toBe(true);
  expect(lines.some((l) => /,b,bearer:admin,force-release,e2e-audit-on-b,not-found,/.test(l))).toBe(true);

  const [jsonDownload] = await Promise.all([page.waitForEvent('download'), page.getByTestId('audit-export-json').click()]);
  expect(jsonDownload.suggestedFilename()).toMatch(/\.json$/);
  const json = JSON.parse(await readFile(await jsonDownload.path(), 'utf8')) as { entries: AuditEntry[] };
  expect(json.entries.find((e) => e.target === 'e2e-audit-on-a')).toMatchObject({ node: 'a', action: 'force-release', result: 'not-found' });
  expect(json.entries.find((e) => e.target === 'e2e-audit-on-b')).toMatchObject({ node: 'b' });
  expect(csp.violations()).toEqual([]);
});

test('a node that hands off with a large table shows its own handoff live, in its audit and in its events feed', async ({ page, cluster }) => {
  const { a } = cluster.nodes;
  // A table of 3,000 held locks: when a turns standby it replays all of them around the time it
  // records the handoff, far more than the 200 events its live feed keeps.
  await page.goto(a.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  const holder = await connectClient(a.lockPort);
  await holdKeyed(
    holder,
    Array.from({ length: 3_000 }, (_, i) => `e2e-load-${i}`),
    300,
  );
  await expect(page.getByTestId('live-status')).toHaveText('live');
  expect(await post(a, '/api/v1/cluster/handoff', { target: 'b' })).toBe(200);
  await cluster.waitActive('b', 15_000);
  await expect(page.getByTestId('standby-banner')).toContainText('active node b');
  const handoff = page.locator('[data-testid="audit-entry"][data-action="handoff"]');
  await expect(handoff).toHaveCount(1, { timeout: 10_000 });
  await expect(handoff.getByTestId('audit-node')).toHaveText('on a');
  await expect(handoff.getByTestId('audit-target')).toHaveText('b');
  const feed = page.locator('#events');
  await feed.getByLabel('Kind').selectOption('admin');
  await expect(feed.locator('[data-testid="feed-item"][data-kind="admin"]').filter({ hasText: 'handoff of b' })).toHaveCount(1);
  holder.close();
});
