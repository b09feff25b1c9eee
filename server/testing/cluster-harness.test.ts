// The harness itself: processes come up on the configured ports, can be killed, stopped and
// restarted, and nothing is left behind (process or temp dir) when the cluster is closed.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { CLUSTER_ADMIN_TOKEN, startCluster, waitFor } from './cluster-harness.ts';

function alive(pid: number | undefined): boolean {
  if (pid === undefined) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('startCluster', () => {
  it('writes cluster.json with every node on 127.0.0.1, proxies in front of the peer ports when proxied', { timeout: 30_000 }, async () => {
    const cluster = await startCluster({ nodes: 2, proxied: true, start: [] });
    const config = JSON.parse(await readFile(cluster.configPath, 'utf8')) as { peers: Array<Record<string, unknown>> };
    expect(config.peers.map((p) => p.id)).toEqual(['a', 'b']);
    for (const [i, node] of cluster.nodes.entries()) {
      expect(config.peers[i]).toEqual({
        id: node.id,
        host: '127.0.0.1',
        lockPort: node.ports.lock,
        sessionPort: node.ports.session,
        peerPort: node.proxy?.port,
        httpPort: node.ports.http,
      });
      expect(node.proxy?.target).toEqual({ host: '127.0.0.1', port: node.ports.peerListen });
      expect(node.ports.peer).not.toBe(node.ports.peerListen);
    }
    const ports = cluster.nodes.flatMap((n) => [n.ports.lock, n.ports.session, n.ports.http, n.ports.peerListen, n.ports.peer]);
    expect(new Set(ports).size).toBe(ports.length);
  });

  it('starts nodes that answer on their ports, kills, restarts and stops them, and leaves nothing behind', { timeout: 30_000 }, async () => {
    const cluster = await startCluster({ nodes: 2 });
    const [a, b] = cluster.nodes as [NonNullable<(typeof cluster.nodes)[0]>, NonNullable<(typeof cluster.nodes)[0]>];
    expect(a.stdout()).toMatch(new RegExp(`^baton serving lock=${a.lockAddress} session=${a.sessionAddress} http=${a.httpAddress} `));
    const health = await a.api<{ status: string }>('/healthz');
    expect(health.status).toBe(200);
    expect(a.logs()).not.toContain(CLUSTER_ADMIN_TOKEN);

    const firstPid = a.pid;
    await a.kill9();
    expect(a.running).toBe(false);
    expect(alive(firstPid)).toBe(false);
    await a.restart();
    expect(a.pid).not.toBe(firstPid);
    await waitFor(async () => (await a.api('/healthz')).status === 200, { what: 'a to answer after its restart' });
    expect(a.tail()).toContain('[exited SIGKILL]');

    expect(await b.sigterm()).toBe(0);
    const pids = cluster.nodes.map((n) => n.pid);
    await cluster.close();
    for (const pid of pids) expect(alive(pid)).toBe(false);
    expect(existsSync(cluster.dir)).toBe(false);
  });
});
