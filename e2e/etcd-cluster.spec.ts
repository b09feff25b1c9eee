// The console of a real three-node cluster in the etcd mode (`--coordination etcd`, a real
// three-member etcd on loopback) in a real browser: the peers card marks the in-sync set's member
// among the standbys, and after the whole cluster was stopped gracefully with a keyed lease still
// running, the restarted nodes' pages say the clean stop's quiet period, counting down, until a
// node takes the role (docs/cluster.md "Stopping the whole cluster in the etcd mode").
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from './fixtures/baton-cluster.ts';
import { connectClient } from './fixtures/wire-client.ts';

// Three Next servers, three etcd members and Chromium on two cores, and a restart of all three.
test.beforeEach(() => test.setTimeout(150_000));

test('the peers card marks the in-sync member; after a clean stop the restarted nodes show the quiet period until one takes the role', async ({
  page,
  etcdCluster,
}, testInfo) => {
  const { nodes } = etcdCluster;
  await page.goto(nodes.a.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  // One member by default: b, the highest-priority synced standby; c is synced but outside.
  await expect(page.getByTestId('coordination-in-sync')).toHaveText('b', { timeout: 15_000 });
  await expect(page.getByTestId('peer-row-b').getByTestId('peer-successor')).toHaveText('in-sync set');
  await expect(page.getByTestId('peer-row-c').getByTestId('peer-successor')).toHaveText('not in the in-sync set');
  await expect(page.getByTestId('peer-row-a').getByTestId('peer-successor')).toHaveCount(0);
  await expect(page.getByTestId('coordination-quiet')).toHaveText('none');

  // A keyed lease that outlives the stop and the restart.
  const client = await connectClient(nodes.a.lockPort);
  client.send('A e2e-quiet 40 0');
  await client.waitFor(/^A e2e-quiet \d+$/);
  client.close();
  // The standbys first, then the active: it has nobody to hand off to and writes the clean stop.
  expect(await Promise.all([nodes.b.process.sigterm(), nodes.c.process.sigterm()])).toEqual([0, 0]);
  expect(await nodes.a.process.sigterm()).toBe(0);
  expect(await etcdCluster.etcd.client().get(`${etcdCluster.prefix}/quiet`).string()).toBe('a');
  await Promise.all(Object.values(nodes).map((n) => n.process.restart()));

  await page.goto(nodes.b.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  const quiet = page.getByTestId('coordination-quiet');
  await expect(quiet).toContainText(/^a stopped cleanly: nobody takes the role for \d+\.\d s \(its longest lease\)$/, { timeout: 15_000 });
  await expect(page.getByTestId('coordination-holder')).toHaveText('nobody');
  // It counts down between the node's updates.
  const first = Number(/for (\d+\.\d) s/.exec((await quiet.textContent()) ?? '')?.[1]);
  await expect.poll(async () => Number(/for (\d+\.\d) s/.exec((await quiet.textContent()) ?? '')?.[1]), { timeout: 5_000 }).toBeLessThan(first);
  const result = await new AxeBuilder({ page }).include('[data-testid="coordination"]').withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  expect(result.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`)).toEqual([]);
  await page.getByTestId('coordination').screenshot({ path: testInfo.outputPath('coordination-quiet.png') });

  // Once the lease has run out, a node takes the role and the row says none again.
  await expect(quiet).toHaveText('none', { timeout: 60_000 });
  await expect(page.getByTestId('coordination-holder')).not.toHaveText('nobody', { timeout: 15_000 });
});
