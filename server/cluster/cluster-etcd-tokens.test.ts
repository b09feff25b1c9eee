// The etcd mode's tokens with real processes (design rule 5): three `baton serve --coordination
// etcd` nodes on a real three-member etcd. Tokens come only from blocks reserved in etcd, so a
// successor's first token is above every token the dead active issued and above the etcd ceiling,
// even one written by hand far above anything the peers knew.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Cluster, startCluster, waitFor, waitReplicated } from '../testing/cluster-harness.ts';
import { EtcdCluster } from '../testing/etcd-cluster.ts';

const TTL_S = 2;
/** Far above one reservation's reach of anything the peers have seen (ceiling-guard.ts: 6,400,000). */
const BY_HAND = 50_000_000n;

async function startEtcdCluster(etcd: EtcdCluster, prefix: string): Promise<Cluster> {
  return startCluster({
    extraArgs: ['--coordination', 'etcd', '--etcd-endpoints', etcd.endpoints.join(','), '--etcd-prefix', prefix, '--etcd-lease-ttl', String(TTL_S)],
  });
}

async function activeIs(cluster: Cluster, id: string, timeoutMs = 15_000): Promise<void> {
  await waitFor(
    async () => {
      const view = await cluster.node(id).cluster();
      return view.phase === 'active' && view.coordination?.holding === true;
    },
    { timeoutMs, intervalMs: 20, what: `${id} active, holding the role key` },
  );
}

describe('the etcd mode: tokens from etcd blocks', () => {
  it('after kill -9 of the active, the successor’s first token is above every token it issued and above a ceiling written by hand', {
    timeout: 90_000,
  }, async () => {
    const etcd = await EtcdCluster.start();
    const prefix = `baton-test/tokens-${process.pid}`;
    const ceilingKey = `${prefix}/token-ceiling`;
    const cluster = await startEtcdCluster(etcd, prefix);
    await activeIs(cluster, 'a');
    await waitFor(async () => JSON.stringify((await cluster.node('a').cluster()).coordination?.inSync) === '["b"]', { what: 'in-sync [b]' });

    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const issued: bigint[] = [];
    for (let i = 0; i < 20; i++) {
      const g = await keyed.acquire(`etcd-tokens-${i}`, { lease: 60_000 });
      issued.push(g.token);
      if (i % 2 === 0) await keyed.release(g.key, g.token);
    }
    const last = issued.at(-1) as bigint;
    await waitReplicated(cluster, 'etcd-tokens-19', last, ['b', 'c']);
    // a's tokens came from a block reserved in etcd: its ceiling is at or above each of them.
    const reserved = BigInt((await etcd.client().get(ceilingKey).string()) ?? '0');
    expect(reserved).toBeGreaterThanOrEqual(last);
    // An operator (or a lost node's history) put the ceiling far above anything the peers know.
    await etcd.client().put(ceilingKey).value(BY_HAND.toString());

    await cluster.node('a').kill9();
    await activeIs(cluster, 'b');
    const next = await keyed.acquire('etcd-tokens-after', { lease: 5_000, wait: 10_000 });
    // The first token of the block above the hand-written ceiling: no block taken and skipped at the promotion.
    expect(next.token).toBe(BY_HAND + 1n);
    for (const t of issued) expect(next.token).toBeGreaterThan(t);
    // The etcd ceiling covers the successor's block too.
    expect(BigInt((await etcd.client().get(ceilingKey).string()) ?? '0')).toBeGreaterThanOrEqual(next.token);
    // The block is also recorded in the new active's data dir (for a later return to the peers mode).
    expect(BigInt(readFileSync(join(cluster.node('b').dataDir, 'token-ceiling.ahead'), 'utf8').trim())).toBeGreaterThanOrEqual(next.token);
    // The standby left takes the new active's tokens, jump and all (re-synced if its guard refused the stream).
    await waitReplicated(cluster, 'etcd-tokens-after', next.token, ['c'], 20_000);
  });

  it('across an API handoff the successor’s tokens are above the old active’s, which asks etcd for no block as a standby', { timeout: 90_000 }, async () => {
    const etcd = await EtcdCluster.start();
    const prefix = `baton-test/tokens-handoff-${process.pid}`;
    const cluster = await startEtcdCluster(etcd, prefix);
    await activeIs(cluster, 'a');
    await waitFor(async () => JSON.stringify((await cluster.node('a').cluster()).coordination?.inSync) === '["b"]', { what: 'in-sync [b]' });
    const keyed = cluster.keyedClient(['a', 'b', 'c']);
    const before: bigint[] = [];
    for (let i = 0; i < 10; i++) before.push((await keyed.acquire(`handoff-tokens-${i}`, { lease: 60_000 })).token);
    // The target must have acknowledged what a answered, or the handoff is refused (409).
    await waitReplicated(cluster, 'handoff-tokens-9', before.at(-1) as bigint, ['b']);
    const reply = await cluster.node('a').post('/api/v1/cluster/handoff', { target: 'b' });
    expect(reply, JSON.stringify(reply)).toMatchObject({ status: 200 });
    await activeIs(cluster, 'b');
    const after: bigint[] = [];
    for (let i = 0; i < 10; i++) after.push((await keyed.acquire(`handoff-after-${i}`, { lease: 60_000, wait: 10_000 })).token);
    // The first active's first token is the first of the first block (its promotion skipped none).
    expect(before[0]).toBe(1n);
    const lastBefore = before.at(-1) as bigint;
    expect(after.every((t, i) => t > lastBefore && (i === 0 || t > (after[i - 1] as bigint)))).toBe(true);
    // a replicates b's grants (its floor passes the block it had left) without asking etcd for another.
    await waitReplicated(cluster, 'handoff-after-9', after.at(-1) as bigint, ['a'], 10_000);
    expect(cluster.node('a').tail(100_000)).not.toMatch(/token block[^\n]*(refused|not reserved)/);
  });
});
