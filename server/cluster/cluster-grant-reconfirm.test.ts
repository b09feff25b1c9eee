// An active whose heartbeats came too far apart for its grant window (a stop shorter than the
// peer timeout: a long GC, a loaded host) is not frozen long enough for a peer to promote, and
// it must not fail over for nothing. It holds its grants (a request read meanwhile waits), asks
// its peers, and opens again once every live peer says, after a heartbeat sent since, that it
// still follows it (lib/cluster/grant-reconfirm.ts). Three real processes, --peer-timeout 1s.
//
// How the stop lands in the band. With a 1 s peer timeout a heartbeats every 200 ms and grants
// until (the heartbeat before the last) + 950 ms, i.e. until last + 750 ms; b promotes at
// last + 1 s. So a is stopped right after b has read a heartbeat and let go at last + 870 ms
// (b's own view of when it last heard a): the window has passed, nobody has promoted.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LineClient } from '../testing/line-client.ts';
import { startCluster, waitFor, waitSettled, type Cluster, type NodeProcess } from '../testing/cluster-harness.ts';

const ROUNDS = 3;
const RESUME_AFTER_LAST_HEARD_MS = 870;

async function lastHeardOfA(b: NodeProcess): Promise<number> {
  const view = await b.cluster();
  const a = view.nodes.find((n) => n.id === 'a');
  if (a?.lastSeen === null || a === undefined) throw new Error('b has not heard a');
  return a.lastSeen;
}

/** Waits for b to hear a new message from a, then stops a at once; returns when b heard it (wall ms). */
async function stopRightAfterAHeartbeat(cluster: Cluster): Promise<number> {
  const a = cluster.node('a');
  const b = cluster.node('b');
  const before = await lastHeardOfA(b);
  const heard = await waitFor(
    async () => {
      const t = await lastHeardOfA(b);
      return t !== before ? t : null;
    },
    { timeoutMs: 2_000, intervalMs: 2, what: 'b to hear a heartbeat of a' },
  );
  cluster.defer(() => {
    if (a.stopped) a.signal('SIGCONT');
  });
  a.signal('SIGSTOP');
  await waitFor(() => /^\d+ \(.*\) T /.test(readFileSync(`/proc/${a.pid}/stat`, 'utf8')), { timeoutMs: 2_000, intervalMs: 1, what: 'a to be stopped' });
  return heard;
}

const HELD = 'heartbeats too far apart to be sure no peer has promoted (grant window passed): grants held';
const OPENED = 'grant window open again';

/** Where a round's log starts: the end of the log, or an earlier "grants held" line not yet followed by a reopening. */
function roundStart(messages: string[]): number {
  const held = messages.findLastIndex((m) => m.startsWith(HELD));
  const opened = messages.findLastIndex((m) => m.startsWith(OPENED));
  return held > opened ? held : messages.length;
}

describe('an active whose grant window lapsed without a freeze', () => {
  it(`holds grants, is confirmed by its peers and grants again without a failover (${ROUNDS} rounds)`, { timeout: 120_000 }, async () => {
    const cluster = await startCluster({ peerTimeoutMs: 1_000 });
    await waitSettled(cluster, 'a', 10_000);
    const a = cluster.node('a');
    const failoversBefore = (await a.cluster()).failovers.length;
    const client = await LineClient.open(a.ports.lock, '127.0.0.1', { timeoutMs: 5_000 });
    cluster.defer(() => client.close());
    for (let n = 1; n <= ROUNDS; n++) {
      const key = `reconfirm/k${n}`;
      // On a loaded machine a's heartbeats can also come too far apart between rounds: then its
      // grants are already held when this round starts, and the round's stop is answered by the
      // same confirmation. Count from that outstanding "held" line in that case.
      const logBefore = roundStart(a.logEntries().map((e) => String(e.msg)));
      const heard = await stopRightAfterAHeartbeat(cluster);
      // Read by a only after SIGCONT, when its window has passed: it must wait, not be granted at once.
      client.send(`A ${key} 30 5`);
      const wake = heard + RESUME_AFTER_LAST_HEARD_MS - Date.now();
      expect(wake, 'the stop came too late to land inside the band').toBeGreaterThan(0);
      await new Promise((resolve) => setTimeout(resolve, wake));
      a.signal('SIGCONT');
      const line = await client.next();
      expect(line).toMatch(new RegExp(`^A reconfirm/k${n} \\d+$`));
      // The log reaches us through a pipe, possibly after the reply: wait for the reopening line.
      const messagesOf = () =>
        a
          .logEntries()
          .slice(logBefore)
          .map((e) => String(e.msg));
      await waitFor(() => messagesOf().some((m) => m.startsWith('grant window open again') || m.includes('stepping out')), {
        timeoutMs: 3_000,
        what: `a to log how round ${n} ended`,
      });
      const messages = messagesOf();
      const held = messages.findIndex((m) => m.startsWith(HELD));
      const opened = messages.findIndex((m) => m.startsWith(OPENED));
      expect(held, `round ${n}: a's log ${JSON.stringify(messages)}`).toBeGreaterThanOrEqual(0);
      expect(opened).toBeGreaterThan(held);
      expect(messages.filter((m) => m.includes('stepping out'))).toEqual([]);
      client.send(`R ${key} ${line.split(' ')[2]}`);
      expect(await client.next()).toBe(`R ${key} OK`);
      await waitSettled(cluster, 'a', 5_000);
    }
    // Nobody promoted: no failover on the timeline.
    expect((await a.cluster()).failovers.length).toBe(failoversBefore);
  });
});
