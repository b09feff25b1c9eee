// The console of a node in the etcd mode (issue 32), on a real etcd in a real browser: the page
// shows the mode, each endpoint healthy and the grant time counting down; when etcd loses quorum
// it says why the node cannot grant (the Cluster card and the node strip) and /readyz answers 503
// with the same reason; when quorum returns both clear by themselves.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures/baton-etcd-node.ts';
import { guardCsp } from './fixtures/csp-guard.ts';
import { sample } from '../server/testing/metrics-text.ts';

// A Next server, three etcd members and Chromium share two cores.
test.beforeEach(() => test.setTimeout(120_000));

/** WCAG 2.1 AA violations axe finds on the page, as in accessibility.spec.ts. */
async function axeViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** The grant time the page shows now, in ms ("1.2 s left", "850 ms left"); null for any other text. */
async function grantLeftMs(page: Page): Promise<number | null> {
  const text = (await page.getByTestId('coordination-grant-left').textContent()) ?? '';
  const m = /^(\d+(?:\.\d)?) (s|ms) left$/.exec(text.trim());
  if (m === null) return null;
  return Number(m[1]) * (m[2] === 's' ? 1_000 : 1);
}

test('the Cluster card shows the etcd mode, healthy endpoints and the grant time counting down; quorum lost shows why and /readyz says 503', async ({
  page,
  etcdNode,
}, testInfo) => {
  const csp = await guardCsp(page);
  await page.goto(etcdNode.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  const card = page.getByTestId('coordination');
  await card.scrollIntoViewIfNeeded();
  await expect(card.getByTestId('coordination-mode')).toHaveText('etcd (partition-safe)');
  await expect(card.getByTestId('coordination-holder')).toHaveText('this node (a)');
  // No clean stop stored in this etcd: the quiet period's row says so.
  await expect(card.getByTestId('coordination-quiet')).toHaveText('none');
  const endpoints = card.getByTestId('etcd-endpoint');
  await expect(endpoints).toHaveCount(3);
  await expect(card.locator('[data-testid="etcd-endpoint"][data-healthy="true"]')).toHaveCount(3);
  for (const url of etcdNode.etcd.endpoints) await expect(card.getByText(url, { exact: true })).toBeVisible();

  // The grant time moves: several different readings over 3 s, each within the lease TTL. The
  // node sends a new figure only when a keep-alive raises it (a third of the TTL apart); between
  // them the page counts it down on its 500 ms beat, so some reading is a beat's worth lower than
  // the one before (without the page's countdown the figure would only ever step up).
  // Meanwhile the card keeps its size: the figures move, the layout does not.
  const readings: number[] = [];
  const sizes = new Set<string>();
  for (let i = 0; i < 30; i++) {
    const ms = await grantLeftMs(page);
    if (ms !== null) readings.push(ms);
    const box = await card.boundingBox();
    sizes.add(`${box?.width}x${box?.height}`);
    await page.waitForTimeout(100);
  }
  expect([...sizes]).toHaveLength(1);
  expect(readings.length, `readings: ${readings.join(', ')}`).toBeGreaterThan(25);
  for (const ms of readings) expect(ms).toBeLessThanOrEqual(2_000);
  expect(new Set(readings).size, `readings: ${readings.join(', ')}`).toBeGreaterThan(2);
  expect(
    readings.some((ms, i) => i > 0 && (readings[i - 1] as number) - ms >= 250),
    `readings: ${readings.join(', ')}`,
  ).toBe(true);
  await expect(page.getByTestId('coordination-blocked')).toHaveCount(0);
  expect(await axeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await axeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: 'light' });
  await card.screenshot({ path: testInfo.outputPath('coordination-granting.png') });
  expect((await etcdNode.node.api('/readyz')).status).toBe(200);
  // The same on /metrics: the mode, each configured endpoint up, this node the holder with time left.
  const metrics = async () => (await etcdNode.node.api<string>('/metrics')).body;
  const granting = await metrics();
  expect(sample(granting, 'baton_coordination_mode{mode="etcd"}')).toBe(1);
  for (const url of etcdNode.etcd.endpoints) expect(sample(granting, `baton_etcd_endpoint_up{endpoint="${url}"}`)).toBe(1);
  expect(sample(granting, 'baton_etcd_role_holder')).toBe(1);
  expect(sample(granting, 'baton_etcd_grant_permission_remaining_seconds')).toBeGreaterThan(0);
  expect(sample(granting, 'baton_etcd_grants_blocked')).toBe(0);

  // etcd loses quorum: two of three members killed.
  await etcdNode.etcd.kill9(0);
  await etcdNode.etcd.kill9(1);
  const blocked = card.getByTestId('coordination-blocked');
  await expect(blocked).toBeVisible({ timeout: 15_000 });
  await expect(blocked).toContainText(/^Cannot grant: \S/);
  await expect(page.getByTestId('strip-coordination-blocked')).toContainText(/^cannot grant: \S/);
  // The killed members' endpoints turn unhealthy with their error.
  await expect(card.locator('[data-testid="etcd-endpoint"][data-healthy="false"]')).toHaveCount(3, { timeout: 15_000 });
  const readyz = await etcdNode.node.api<{ ready: boolean; reason?: string }>('/readyz');
  expect(readyz.status).toBe(503);
  expect(readyz.body.ready).toBe(false);
  expect(readyz.body.reason).toMatch(/\S/);
  // The page shows the node's own words, as /readyz does (figures in them, such as how long ago, may move between the reads).
  // and the last etcd error named at the end may differ from one call to the next: compare up to it.
  const words = (text: string | null | undefined) => (text ?? '').split(';')[0]?.replace(/\d+(\.\d+)?/g, 'N');
  const shown = ((await blocked.textContent()) ?? '').replace(/^Cannot grant: /, '');
  expect(words(shown)).toBe(words(readyz.body.reason));
  const blockedMetrics = await metrics();
  expect(sample(blockedMetrics, 'baton_etcd_grants_blocked')).toBe(1);
  expect(sample(blockedMetrics, 'baton_etcd_grant_permission_remaining_seconds')).toBe(0);
  for (const url of etcdNode.etcd.endpoints) expect(sample(blockedMetrics, `baton_etcd_endpoint_up{endpoint="${url}"}`)).toBe(0);
  expect(await axeViolations(page)).toEqual([]);
  await page.screenshot({ path: testInfo.outputPath('coordination-blocked.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  expect(await axeViolations(page)).toEqual([]);
  await page.emulateMedia({ colorScheme: 'light' });

  // Quorum returns: the node grants again and says so, with no reload.
  etcdNode.etcd.restart(0);
  etcdNode.etcd.restart(1);
  await etcdNode.etcd.waitWritable(30_000);
  await etcdNode.waitGranting(30_000);
  await expect(blocked).toHaveCount(0, { timeout: 15_000 });
  await expect(page.getByTestId('strip-coordination-blocked')).toHaveCount(0);
  await expect(card.locator('[data-testid="etcd-endpoint"][data-healthy="true"]')).toHaveCount(3, { timeout: 15_000 });
  expect((await etcdNode.node.api('/readyz')).status).toBe(200);
  expect(csp.violations()).toEqual([]);
});
