import { connect } from 'node:net';
import { CLUSTER_TOKEN, expect, test } from './fixtures/baton-cluster.ts';
import { connectClient, holdKeyed } from './fixtures/wire-client.ts';
test.beforeEach(() => test.setTimeout(120_000));

/** Churn on `port` (keyed): acquire and release 50 names in a loop, following M redirects off. */
function churn(port: number): () => void {
  let stop = false;
  const sock = connect({ host: '127.0.0.1', port });
  sock.setEncoding('utf8');
  let buf = '';
  sock.on('error', () => {});
  const send = (i: number) => { if (!stop) sock.write(`A churn-${i} 5 0\n`); };
  sock.on('connect', () => { for (let i = 0; i < 50; i++) send(i); });
  sock.on('data', (t: string) => {
    buf += t;
    let nl = buf.indexOf('\n');
    while (nl >= 0) {
      const line = buf.slice(0, nl); buf = buf.slice(nl + 1); nl = buf.indexOf('\n');
      const m = /^A churn-(\d+) (\d+)$/.exec(line);
      if (m) { if (!stop) sock.write(`R churn-${m[1]} ${m[2]}\n`); continue; }
      const r = /^R churn-(\d+) OK$/.exec(line);
      if (r) send(Number(r[1]));
    }
  });
  return () => { stop = true; sock.destroy(); };
}

test('repro', async ({ page, cluster }) => {
  const { a, b } = cluster.nodes;
  await page.goto(a.baseURL);
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await expect(page.getByRole('heading', { name: 'Audit log' })).toBeVisible();
  const holder = await connectClient(a.lockPort);
  await holdKeyed(holder, Array.from({ length: 10000 }, (_, i) => `big-${i}`), 300);
  const stopA = churn(a.lockPort);
  await page.waitForTimeout(1000);
  const res = await fetch(`${a.baseURL}/api/v1/cluster/handoff`, { method: 'POST', headers: { authorization: `Bearer ${CLUSTER_TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ target: 'b' }) });
  console.log('handoff', res.status);
  stopA();
  const stopB = churn(b.lockPort);
  await cluster.waitActive('b', 10_000);
  await page.waitForTimeout(4000);
  const api = await (await fetch(`${a.baseURL}/api/v1/audit`, { headers: { authorization: `Bearer ${CLUSTER_TOKEN}` } })).json();
  console.log('API', JSON.stringify(api.entries.map((e: {action:string})=>e.action)));
  console.log('PAGE AUDIT', await page.getByTestId('audit-entry').allTextContents());
  console.log('FEED admin', await page.locator('[data-testid="feed-item"][data-kind="admin"]').count());
  stopB();
});
