// The harness in etcd mode: every node runs --coordination etcd and reaches each etcd member
// through fault proxies of its own, so cutting one node's proxies cuts that node from etcd and
// no other (the chaos runs and the etcd-mode benchmark stand on this).
import { describe, expect, it } from 'vitest';
import { etcdModeArgs, startCluster, waitFor } from './cluster-harness.ts';
import { EtcdCluster } from './etcd-cluster.ts';

describe('startCluster in etcd mode', () => {
  it('names the etcd flags exactly as baton serve takes them', () => {
    expect(etcdModeArgs(['http://127.0.0.1:1', 'http://127.0.0.1:2'], { prefix: 'baton/t', leaseTtlS: 2 })).toEqual([
      '--coordination',
      'etcd',
      '--etcd-endpoints',
      'http://127.0.0.1:1,http://127.0.0.1:2',
      '--etcd-prefix',
      'baton/t',
      '--etcd-lease-ttl',
      '2',
    ]);
    expect(etcdModeArgs(['http://127.0.0.1:1'], { prefix: 'p' })).not.toContain('--etcd-lease-ttl');
  });

  it('gives each node its own proxy to each etcd member, and cutting one node cuts only that node', { timeout: 60_000 }, async () => {
    const etcd = await EtcdCluster.start();
    const cluster = await startCluster({ nodes: 2, etcd: { cluster: etcd, prefix: 'baton/harness-etcd', leaseTtlS: 2 } });
    const [a, b] = cluster.nodes;
    if (a?.etcd == null || b?.etcd == null) throw new Error('no etcd proxies');
    // Each node's proxies lead to the members, one each, and they are not shared.
    expect(a.etcd.proxies.map((p) => p.target.port)).toEqual(etcd.members.map((m) => m.clientPort));
    expect(new Set([...a.etcd.endpoints, ...b.etcd.endpoints]).size).toBe(2 * etcd.members.length);
    const open = (n: typeof a) => n.etcd?.proxies.reduce((s, p) => s + p.open, 0) ?? 0;
    // Both nodes talk to etcd through their own proxies (the role holder's keep-alives).
    await waitFor(() => open(a) > 0 && open(b) > 0, { timeoutMs: 15_000, what: 'both nodes connected to etcd through their proxies' });
    a.etcd.cut();
    expect(open(a)).toBe(0);
    expect(open(b)).toBeGreaterThan(0);
    // a redials and is refused; b's connections stay up.
    await waitFor(() => (a.etcd?.proxies.reduce((s, p) => s + p.refused, 0) ?? 0) > 0, { timeoutMs: 10_000, what: 'a redialling etcd' });
    expect(open(b)).toBeGreaterThan(0);
    a.etcd.heal();
    await waitFor(() => open(a) > 0, { timeoutMs: 15_000, what: 'a back on etcd' });
  });
});
