// Every node must give every node the same token slot (its position in cluster.json). A peer
// whose status says it is at another position than this node's file gives it (two files listing
// the peers in different orders) is named in an error line; peers that agree log nothing.
import { describe, expect, it } from 'vitest';
import type { PeerMessage } from '../../lib/cluster/peer-messages.ts';
import { type NodeProcess, startCluster, waitFor, waitSettled } from '../testing/cluster-harness.ts';
import { dialAsPeer } from '../testing/forged-peer.ts';

const PINO_ERROR = 50;

function mismatches(node: NodeProcess): Array<Record<string, unknown>> {
  return node.logEntries().filter((e) => e.level === PINO_ERROR && /^cluster\.json differs/.test(String(e.msg)));
}

describe('token slot agreement', () => {
  it('logs nothing while the files agree, and names a peer that says it has another position', { timeout: 30_000 }, async () => {
    const cluster = await startCluster({ nodes: 2 });
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    await waitSettled(cluster, 'a');
    expect(mismatches(a)).toEqual([]);
    expect(mismatches(b)).toEqual([]);
    await b.kill9();
    await waitFor(async () => (await a.cluster()).nodes.find((n) => n.id === 'b')?.alive === false, { timeoutMs: 5_000, what: 'a to see b gone' });

    // b as a file listing it first would make it: slot 0, a's own.
    const sendAsB = await dialAsPeer(a.ports.peer, 'b', 'other-file-b', (fn) => cluster.defer(fn));
    const status: PeerMessage = {
      t: 'status',
      id: 'b',
      instance: 'other-file-b',
      phase: 'standby',
      active: 'a',
      syncedWith: null,
      yielded: false,
      ceiling: '0',
      known: '0',
      slot: 0,
    };
    for (let i = 0; i < 3; i++) sendAsB(status);
    await waitFor(() => mismatches(a).length > 0, { timeoutMs: 5_000, what: 'a to name the mismatch' });
    expect(mismatches(a)).toHaveLength(1); // rate-limited: one line for three statuses
    expect(mismatches(a)[0]).toMatchObject({ peer: 'b', positionHere: 1, positionThere: 0 });
  });
});
