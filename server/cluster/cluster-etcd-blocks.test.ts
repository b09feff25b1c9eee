// `--etcd-token-block` with real processes: three `baton serve --coordination etcd` nodes with a
// small block (1,000 tokens) and an in-sync set of one, on a real three-member etcd on loopback.
// One keyed connection takes 3,500 grants pipelined, so the active crosses several blocks: every
// token is unique and increasing, and each lies in a block the active took by a compare-and-swap
// that moved `<prefix>/token-ceiling` by the flag's size (read back from etcd's history of the
// key). Then kill -9 of the active: the member takes over holding every grant, and its first
// grant's token is above every token the dead active gave and above the ceiling etcd held.
import { describe, expect, it } from 'vitest';
import { holderOn, startCluster, waitFor } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';
import { inSyncIs, keyedLine } from '../testing/etcd-mode-checks.ts';

const TTL_S = 2;
const BLOCK = 1_000n;
const GRANTS = 3_500;

/** Every value the key held, oldest first, read back at each etcd revision from its creation on (the test etcd never compacts). */
async function ceilingHistory(etcd: EtcdCluster, key: string): Promise<bigint[]> {
  const kv = etcd.client();
  const now = await kv.get(key).exec();
  const head = now.kvs[0];
  if (head === undefined) return [];
  const values: bigint[] = [];
  for (let rev = BigInt(head.create_revision); rev <= BigInt(head.mod_revision); rev++) {
    const text = await kv.get(key).revision(rev.toString()).string();
    if (text === null) continue;
    const value = BigInt(text);
    if (values.at(-1) !== value) values.push(value);
  }
  return values;
}

describe('the etcd mode with a small token block', () => {
  it('grants cross several blocks, each a move of the etcd ceiling by the flag’s size; after kill -9 of the active the member holds every grant and goes on above them', {
    timeout: 120_000,
  }, async () => {
    const etcd = await EtcdCluster.start();
    const prefix = `baton-test/blocks-${process.pid}`;
    const ceilingKey = `${prefix}/token-ceiling`;
    const cluster = await startCluster({
      extraArgs: [
        ...['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix],
        ...['--etcd-lease-ttl', String(TTL_S), '--etcd-in-sync', '1', '--etcd-token-block', BLOCK.toString()],
      ],
    });
    await inSyncIs(cluster, 'a', ['b']);

    const client = await keyedLine(cluster, 'a');
    for (let i = 0; i < GRANTS; i++) client.send(`A block-${i} 120 0`);
    await client.until(() => client.lines.length >= GRANTS, 30_000, `${GRANTS} grants answered`);
    const told = client.lines.map((l) => l.split(' '));
    expect(told.filter((t) => t[0] !== 'A')).toEqual([]);
    const tokens = told.map((t) => BigInt(t[2] as string));
    // Unique and increasing: one connection's replies come in order.
    for (let i = 1; i < tokens.length; i++) expect(tokens[i] as bigint, `token ${i}`).toBeGreaterThan(tokens[i - 1] as bigint);
    const last = tokens.at(-1) as bigint;

    // The ceiling moved one block at a time (a lost compare-and-swap answer would skip one more),
    // past every token: each token lies in a block (v - BLOCK, v] whose end v etcd held.
    const history = await ceilingHistory(etcd, ceilingKey);
    expect(history.length, `ceilings ${history.join(', ')}`).toBeGreaterThanOrEqual(Number((last + BLOCK - 1n) / BLOCK));
    for (let i = 1; i < history.length; i++) {
      const step = (history[i] as bigint) - (history[i - 1] as bigint);
      expect(step > 0n && step % BLOCK === 0n, `ceiling step ${step}`).toBe(true);
    }
    expect(history[0]).toBe(BLOCK);
    for (const t of tokens)
      expect(
        history.some((v) => t <= v && t > v - BLOCK),
        `token ${t} in a block of ${BLOCK} etcd reserved`,
      ).toBe(true);
    const ceilingAtKill = history.at(-1) as bigint;
    expect(ceilingAtKill).toBeGreaterThanOrEqual(last);

    // b, the one member, has acked every answered grant; c may lag, and is not electable.
    await cluster.node('a').kill9();
    await client.waitClosed(10_000);
    await waitFor(async () => (await cluster.node('b').cluster()).phase === 'active', { timeoutMs: 20_000, intervalMs: 50, what: 'b active' });
    const b = cluster.node('b');
    // A sample across every block, the first and the last grant among them.
    for (let i = 0; i < GRANTS; i += 97) expect((await holderOn(b, `block-${i}`))?.token, `block-${i} on b`).toBe(told[i]?.[2]);
    expect((await holderOn(b, `block-${GRANTS - 1}`))?.token).toBe(last.toString());

    const after = await keyedLine(cluster, 'b');
    after.send('A block-after 120 5');
    const [reply] = await after.take(1, 20_000);
    const next = BigInt(reply?.split(' ')[2] ?? '0');
    expect(reply).toMatch(/^A block-after \d+/);
    // A fresh block above the dead active's (its waiting block included): above every token it gave.
    expect(next).toBeGreaterThan(ceilingAtKill);
    expect(next).toBeLessThanOrEqual(BigInt((await etcd.client().get(ceilingKey).string()) ?? '0'));
    console.log(
      `etcd mode, block ${BLOCK}: ${GRANTS} grants over ${history.length} ceiling moves (${history.join(', ')}); b's first token after a's kill -9: ${next}`,
    );
  });
});
