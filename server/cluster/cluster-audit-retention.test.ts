// The audit after a bad night, with real processes on 127.0.0.1: every node pages and filters
// the whole cluster's entries (past the 200 of earlier versions); a node restarted with the same
// data dir alone, its peers down, shows what it kept before (persistence: its own entries and
// those its peers replicated to it); a node that was down gets everything the cluster recorded
// meanwhile once its links come up (replication: a catch-up of all that is kept, not 200).
import { describe, expect, it } from 'vitest';
import type { AuditPage } from '../../lib/ops-api/audit-filter.ts';
import { type ApiReply, type NodeProcess, startCluster, waitFor, waitSettled } from '../testing/cluster-harness.ts';

/** Every entry matching `query` on `node`, oldest first, read page by page. */
async function walk(node: NodeProcess, query = ''): Promise<AuditPage['entries']> {
  const all: AuditPage['entries'] = [];
  let before: string | null = null;
  for (;;) {
    const reply: ApiReply<AuditPage> = await node.api<AuditPage>(`/api/v1/audit?limit=100${query}${before === null ? '' : `&before=${before}`}`);
    if (reply.status !== 200) throw new Error(`audit of ${node.id}: ${reply.status} ${JSON.stringify(reply.body)}`);
    all.unshift(...reply.body.entries);
    if (reply.body.older === null) return all;
    before = reply.body.older;
  }
}

/** `count` refused force-releases on `node` (nobody holds the locks): each is one audit entry there. */
async function record(node: NodeProcess, prefix: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const reply = await node.api(`/api/v1/locks/${prefix}-${i}/force-release`, { method: 'POST', body: '{}' });
    if (reply.status !== 404) throw new Error(`force-release on ${node.id}: ${reply.status}`);
  }
}

const targets = (entries: AuditPage['entries'], prefix: string) => entries.filter((e) => e.target.startsWith(`${prefix}-`)).map((e) => e.target);
const expected = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}-${i}`);

describe('the audit kept and caught up', () => {
  it('pages and filters every node’s entries on each node; a restarted node reloads its retention alone; a node that was down gets all it missed', {
    timeout: 120_000,
  }, async () => {
    const cluster = await startCluster({ nodes: 3 });
    await waitSettled(cluster, 'a');
    const [a, b, c] = [cluster.node('a'), cluster.node('b'), cluster.node('c')];

    // 250 entries recorded on a (the active), 30 on b: on b, a force-release is forwarded to a,
    // and both record it (b as itself, a under "<who> via b").
    await record(a, 'on-a', 250);
    await record(b, 'on-b', 30);
    for (const n of [a, b, c]) {
      await waitFor(async () => ((await walk(n, '&node=b')).length === 30 ? true : null), { timeoutMs: 10_000 });
      const mine = await walk(n, '&node=a&lock=on-a-');
      expect(targets(mine, 'on-a')).toEqual(expected('on-a', 250));
      expect(targets(await walk(n, '&node=b'), 'on-b')).toEqual(expected('on-b', 30));
      // Filters narrow server-side: one lock, and the actions of one node.
      expect((await walk(n, '&lock=on-a-249')).map((e) => e.target)).toEqual(['on-a-249']);
      expect((await walk(n, '&action=handoff')).length).toBe(0);
    }
    const before = (await walk(c)).map((e) => e.id);
    expect(new Set(before).size).toBe(before.length);

    // Persistence: c restarts with its data dir while a and b are down, so nothing can reach it
    // over a link: what it shows is what it read back from its files.
    await c.kill9();
    await a.kill9();
    await b.kill9();
    await c.restart();
    expect((await walk(c)).map((e) => e.id)).toEqual(before);

    // Replication: c is down while a (the active again) records 300 more; when c comes back,
    // its links bring every one of them (not the 200 newest).
    await c.kill9();
    await a.restart();
    await b.restart();
    await waitSettled(cluster, 'a', 15_000);
    await record(a, 'while-c-down', 300);
    await c.restart();
    const caught = await waitFor(
      async () => {
        const got = targets(await walk(c, '&lock=while-c-down'), 'while-c-down');
        return got.length === 300 ? got : null;
      },
      { timeoutMs: 15_000 },
    );
    // All 300, each once. Their order is time order; entries within one millisecond keep the
    // order they reached c in (their `seq`, docs/console.md), and a's and b's catch-ups may interleave.
    expect([...caught].sort()).toEqual(expected('while-c-down', 300).sort());
    const times = (await walk(c, '&lock=while-c-down')).map((e) => e.at);
    expect(times).toEqual([...times].sort((x, y) => x - y));
    const after = (await walk(c)).map((e) => e.id);
    expect(new Set(after).size).toBe(after.length);
    expect(after.length).toBe(before.length + 300);
  });
});
