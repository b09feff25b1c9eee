// The same danger in a cluster (docs/operations.md, "Backing up and restoring the data dir"):
// the active's data dir is backed up, the active issues tokens past the backup's ceiling, then the
// whole cluster goes down and that node's disk is lost. Restored and started alone plainly, it
// promotes on the backup's old ceiling and issues its own earlier tokens again; started alone once
// with --token-floor at the recorded high water, every token is above all earlier ones, and the
// cluster it then rejoins goes on above them too.
import { spawnSync } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CLUSTER_ADMIN_TOKEN, type Cluster, NodeProcess, startCluster, waitFor, waitSettled } from '../../server/testing/cluster-harness.ts';
import { churnTokens } from '../../server/testing/token-churn.ts';

function tar(...args: string[]): void {
  const ran = spawnSync('tar', args, { encoding: 'utf8' });
  if (ran.status !== 0) throw new Error(`tar ${args.join(' ')} failed: ${ran.stderr}`);
}

async function highWater(node: NodeProcess): Promise<bigint> {
  return BigInt((await node.api<{ tokenHighWater: string }>('/healthz')).body.tokenHighWater);
}

/** Node a of `cluster` started alone from its (restored) data dir, with `extra` flags; waits until it is active. */
async function aloneAsA(cluster: Cluster, ...extra: string[]): Promise<NodeProcess> {
  const a = cluster.node('a');
  const args = [
    'serve',
    '--config',
    cluster.configPath,
    '--node',
    'a',
    '--no-console',
    '--data-dir',
    a.dataDir,
    '--peer-timeout',
    `${cluster.peerTimeoutMs}ms`,
    ...extra,
  ];
  const node = new NodeProcess({
    id: 'a',
    priority: 0,
    ports: a.ports,
    dataDir: a.dataDir,
    args,
    adminToken: CLUSTER_ADMIN_TOKEN,
    proxy: null,
    startTimeoutMs: 15_000,
  });
  cluster.defer(() => node.stop(1_000));
  await node.start();
  await waitFor(async () => (await node.cluster()).phase === 'active', { timeoutMs: 10_000, what: 'a alone to promote' });
  return node;
}

async function restoreA(cluster: Cluster, backup: string): Promise<void> {
  await rm(cluster.node('a').dataDir, { recursive: true, force: true });
  tar('-C', dirname(cluster.node('a').dataDir), '-xf', backup);
}

describe('restoring a cluster node from an old backup', () => {
  it('started alone plainly it reissues its own tokens; with --token-floor it never does, and the cluster goes on above them', {
    timeout: 90_000,
  }, async () => {
    const cluster = await startCluster();
    await waitSettled(cluster, 'a');
    const a = cluster.node('a');
    const backup = join(cluster.dir, 'a-backup.tar');
    tar('-C', dirname(a.dataDir), '-cf', backup, 'a');
    // a's slot is block 0 then block 64: 120,000 grants go past the backup's ceiling.
    const issued = await churnTokens(a.ports.lock, 120_000, 'before');
    const recorded = await highWater(a);
    const top = issued.reduce((x, y) => (x > y ? x : y));
    expect(recorded).toBe(top);
    // The whole cluster goes down (a hands off to b on the way); then a's disk is lost.
    for (const id of ['a', 'b', 'c']) expect(await cluster.node(id).sigterm()).toBe(0);
    const seen = new Set(issued);

    await restoreA(cluster, backup);
    const unsafe = await aloneAsA(cluster);
    const reissued = await churnTokens(unsafe.ports.lock, 10, 'unsafe');
    expect(reissued.filter((t) => seen.has(t)).length).toBeGreaterThan(0);
    expect(await unsafe.sigterm()).toBe(0);

    await restoreA(cluster, backup);
    const safe = await aloneAsA(cluster, '--token-floor', recorded.toString());
    const first = await churnTokens(safe.ports.lock, 1_000, 'safe');
    expect(first.filter((t) => seen.has(t))).toEqual([]);
    expect(first.every((t) => t > top)).toBe(true);
    // b and c come back (with their own, newer data dirs) and the cluster goes on above it all.
    await Promise.all([cluster.node('b').restart(), cluster.node('c').restart()]);
    await waitFor(async () => (await safe.cluster()).nodes.every((n) => n.alive && (n.id === 'a' || n.inSync)), {
      timeoutMs: 10_000,
      what: 'b and c in sync with a',
    });
    const after = await churnTokens(safe.ports.lock, 10, 'after');
    expect(after.every((t) => t > (first.at(-1) as bigint))).toBe(true);
    console.log(
      `cluster backup/restore: ${issued.length} tokens issued by a up to ${top}; restored a alone, plain: reissued ${reissued.filter((t) => seen.has(t)).length}/10 (from ${reissued[0]}); with --token-floor ${recorded}: first token ${first[0]}, after b and c rejoined ${after[0]}`,
    );
  });
});
