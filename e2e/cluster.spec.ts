// The console of a real three-node cluster in a real browser: the peers panel and banner on a
// standby, an action taken on a standby's page carried out by the active node, the Handoff and
// Restore buttons, and the failover timeline after a kill -9 of the active node.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import type { AuditEntry } from '../lib/ops-api/api-types.ts';
import { CLUSTER_TOKEN, expect, test } from './fixtures/baton-cluster.ts';
import { connectClient, type LineClient } from './fixtures/wire-client.ts';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

// Three Next servers and Chromium share two cores: a cluster start costs several seconds.
test.beforeEach(() => test.setTimeout(60_000));

async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Admin token').fill(CLUSTER_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
}

function peerRow(page: Page, id: string) {
  return page.getByTestId(`peer-row-${id}`);
}

function lockRow(page: Page, name: string) {
  return page.locator(`[data-testid="lock-row"][data-lock="${name}"]`);
}

/** What axe finds against WCAG 2.1 AA (the cluster's badges, banner and timeline included). */
async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.nodes
        .map((n) => n.target.join(' '))
        .slice(0, 3)
        .join(', ')}`,
  );
}

/** A keyed grant on the given lock port: `A name 60 0` → `A name <token>`. */
async function keyedGrant(port: number, name: string): Promise<string> {
  const client = await connectClient(port);
  clients.push(client);
  client.send(`A ${name} 60 0`);
  const line = await client.waitFor(new RegExp(`^A ${name} \\d+$`));
  return line.split(' ')[2] as string;
}

test('a standby lists the peers in priority order with their roles, liveness and lag, and names the active node', async ({ page, cluster }, testInfo) => {
  await page.goto(cluster.nodes.b.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  const rows = page.locator('[data-testid^="peer-row-"]');
  await expect(rows).toHaveCount(3);
  expect(await rows.evaluateAll((els) => els.map((e) => e.getAttribute('data-testid')))).toEqual(['peer-row-a', 'peer-row-b', 'peer-row-c']);
  const a = peerRow(page, 'a');
  await expect(a).toContainText('#0');
  await expect(a).toContainText('active');
  await expect(a).toContainText('alive');
  await expect(a).toContainText(/seen (just now|\d+ s ago)/);
  await expect(a).not.toContainText('this node');
  for (const [id, priority] of [
    ['b', 1],
    ['c', 2],
  ] as const) {
    const row = peerRow(page, id);
    await expect(row).toContainText(`#${priority}`);
    await expect(row).toContainText('standby');
    await expect(row).toContainText('alive');
    await expect(row).toContainText('in sync');
    await expect(row).not.toContainText('not in sync');
    await expect(row.getByTestId('replication-lag')).toHaveText(/^replication lag \d+ events \/ \d+(\.\d+)? ms$/);
  }
  await expect(peerRow(page, 'b')).toContainText('this node');
  // The one-line strip above the lock table has every peer as a badge too.
  await expect(page.getByTestId('strip-peer-a')).toHaveText('a active');
  await expect(page.getByTestId('strip-peer-c')).toHaveText('c standby');
  await expect(page.getByTestId('node-phase')).toHaveText('standby');
  await expect(page.getByTestId('standby-banner')).toContainText('forwarded to the active node a');
  // The default mode is one quiet line in the Cluster card, and nothing of the etcd mode's.
  await expect(page.getByTestId('coordination-mode')).toHaveText('Coordination: peers');
  await expect(page.getByTestId('coordination')).toHaveCount(0);
  expect(await violations(page)).toEqual([]);
  await testInfo.attach('standby-peers', { body: await page.screenshot({ fullPage: true }), contentType: 'image/png' });
});

test('a force release from a standby page is carried out by the active node and audited as via the standby', async ({ page, cluster }) => {
  const name = 'e2e-via-standby';
  const token = await keyedGrant(cluster.nodes.a.lockPort, name);
  await page.goto(cluster.nodes.b.baseURL);
  await signIn(page);
  // b shows its replica of a's lock table.
  await expect(lockRow(page, name).getByTestId('holder-token')).toHaveText(token);
  await lockRow(page, name)
    .getByRole('button', { name: `Details for ${name}` })
    .click();
  await page.getByTestId('lock-detail').getByRole('button', { name: 'Force release' }).click();
  await expect(page.getByTestId('force-release-dialog')).toContainText(token);
  const sent = page.waitForRequest(
    (r) => r.method() === 'POST' && r.url().startsWith(cluster.nodes.b.baseURL) && r.url().endsWith(`/api/v1/locks/${name}/force-release`),
  );
  await page.getByRole('button', { name: 'Confirm force release' }).click();
  await sent;
  await expect(page.getByTestId('action-status')).toContainText(`Force-released ${name}`);
  // Released on the active node itself, not only in b's replica.
  await expect
    .poll(
      async () => {
        const reply = await cluster.nodes.a.process.api<{ holder: unknown; error?: { code: string } }>(`/api/v1/locks/${name}`);
        if (reply.status === 404) return reply.body.error?.code;
        return reply.body.holder === null ? 'no holder' : `${reply.status} ${JSON.stringify(reply.body)}`;
      },
      { timeout: 5_000 },
    )
    .toMatch(/^(not-found|no holder)$/);
  const audit = await cluster.nodes.a.process.api<{ entries: AuditEntry[] }>('/api/v1/audit');
  expect(audit.status).toBe(200);
  const entry = audit.body.entries.find((e) => e.action === 'force-release' && e.target === name);
  expect(entry, JSON.stringify(audit.body.entries)).toMatchObject({ result: 'ok' });
  expect(entry?.who).toMatch(/ via b$/);
  // And the release comes back to b's page through replication.
  await expect(lockRow(page, name)).toHaveCount(0);
  await expect(page.getByTestId('standby-banner')).toContainText('active node a');
});

test('the handoff button passes the active role to the chosen standby, and restore gives it back', async ({ page, cluster }, testInfo) => {
  // Parallel start-up may already have put a priority return on the timeline: count from here.
  const before = (await cluster.nodes.a.process.cluster()).failovers.length;
  await page.goto(cluster.nodes.a.baseURL);
  await signIn(page);
  await expect(page.getByTestId('standby-banner')).toHaveCount(0);
  await expect(page.getByTestId('failover-point')).toHaveCount(before);
  await expect(page.getByTestId('restore-button')).toBeDisabled();
  await page.getByTestId('handoff-target').selectOption('b');
  await page.getByTestId('handoff-button').click();
  await expect(page.getByTestId('handoff-dialog')).toContainText('b');
  await page.getByRole('button', { name: 'Confirm handoff' }).click();
  const handoffMs = await cluster.waitActive('b', 5_000);
  // No claim to wait for: the handoff is finished as soon as b has taken over, and says so with its figures.
  await expect(page.getByTestId('action-status')).toContainText('Graceful handoff to b finished: 0 claims moved, 0 expired, 0 lost');
  await expect(peerRow(page, 'a')).toContainText('yielded');
  await expect(peerRow(page, 'a')).toContainText('standby');
  await expect(peerRow(page, 'b')).toContainText('active');
  // Exactly one role change, a → b by the API (the list is newest first).
  await expect(page.getByTestId('failover-point')).toHaveCount(before + 1);
  const handoffItem = page.getByTestId('failover-item').first();
  await expect(handoffItem).toContainText('a → b');
  await expect(handoffItem).toContainText('API handoff');
  await expect(handoffItem).toContainText(/no active node for [\d.,]+ (ms|µs|s)/);
  await expect(page.getByTestId('standby-banner')).toContainText('forwarded to the active node b');
  await testInfo.attach('after-handoff', { body: await page.screenshot({ fullPage: true }), contentType: 'image/png' });

  // a yielded: only a restore lets it take the role back by priority.
  const restore = page.getByTestId('restore-button');
  await expect(restore).toBeEnabled();
  await restore.click();
  await expect(page.getByTestId('restore-dialog')).toContainText('a');
  await page.getByRole('button', { name: 'Confirm restore' }).click();
  const restoreMs = await cluster.waitActive('a', 10_000);
  await expect(page.getByTestId('failover-point')).toHaveCount(before + 2);
  const returnItem = page.getByTestId('failover-item').first();
  await expect(returnItem).toContainText('b → a');
  await expect(returnItem).toContainText('priority return');
  await expect(returnItem).toContainText(/no active node for [\d.,]+ (ms|µs|s)/);
  await expect(peerRow(page, 'a')).toContainText('active');
  await expect(peerRow(page, 'a')).not.toContainText('yielded');
  await expect(page.getByTestId('standby-banner')).toHaveCount(0);
  await expect(page.getByTestId('restore-button')).toBeDisabled();
  const view = await cluster.nodes.c.process.cluster();
  const gaps = view.failovers
    .slice(before)
    .map((f) => `${f.from} → ${f.to} ${f.cause} ${f.gapMs} ms`)
    .join(', ');
  testInfo.annotations.push({
    type: 'timing',
    description: `handoff seen active after ${handoffMs.toFixed(0)} ms, restore after ${restoreMs.toFixed(0)} ms; gaps: ${gaps}`,
  });
  await testInfo.attach('after-restore', { body: await page.screenshot({ fullPage: true }), contentType: 'image/png' });
});

test('kill -9 of the active node shows a crash on the timeline and the dead node on a standby page', async ({ page, cluster }, testInfo) => {
  const name = 'e2e-survives-crash';
  const token = await keyedGrant(cluster.nodes.a.lockPort, name);
  await page.goto(cluster.nodes.b.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await expect(peerRow(page, 'a')).toContainText('alive');
  await expect(lockRow(page, name).getByTestId('holder-token')).toHaveText(token);
  const before = (await cluster.nodes.b.process.cluster()).failovers.length;
  await expect(page.getByTestId('failover-point')).toHaveCount(before);
  const killedAt = performance.now();
  await cluster.nodes.a.process.kill9();
  // The newest item (the list is newest first): a → b, a crash.
  const crash = page.getByTestId('failover-item').first();
  await expect(crash).toContainText('crash', { timeout: 5_000 });
  const seenMs = performance.now() - killedAt;
  await expect(page.getByTestId('failover-point')).toHaveCount(before + 1);
  await expect(crash).toContainText('a → b');
  await expect(crash).toContainText(/no active node for [\d.,]+ (ms|µs|s)/);
  await expect(peerRow(page, 'a')).toContainText('dead');
  await expect(peerRow(page, 'b')).toContainText('active');
  await expect(peerRow(page, 'c')).toContainText('alive');
  await expect(page.getByTestId('standby-banner')).toHaveCount(0);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  // The keyed grant made on a before the kill is still held at b, with the same token.
  await expect(lockRow(page, name).getByTestId('holder-token')).toHaveText(token);
  expect(await violations(page)).toEqual([]);
  const view = await cluster.nodes.b.process.cluster();
  const gap = view.failovers.find((f) => f.cause === 'crash')?.gapMs;
  testInfo.annotations.push({ type: 'timing', description: `crash on b's timeline ${seenMs.toFixed(0)} ms after kill -9; promotion gap ${gap} ms` });
  await testInfo.attach('after-crash', { body: await page.screenshot({ fullPage: true }), contentType: 'image/png' });
});
