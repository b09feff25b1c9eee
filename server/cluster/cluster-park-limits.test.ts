// The caps on claims between connections (issue 26, item 6) hold through a failover, on real
// processes: the node that takes over after a kill -9 of the active keeps at most its own
// --max-parked of the replicated resumable claims, each for at most its --max-park, whatever
// lease the clients asked for; the rest end at the promotion and their locks are free.
import { describe, expect, it } from 'vitest';
import { activeOf, holderOn, startCluster, waitFor, waitReplicated, waitSettled } from '../testing/cluster-harness.ts';
import { LineClient } from '../testing/line-client.ts';

const CLAIMS = 5;
const MAX_PARKED = 3;
const MAX_PARK_MS = 4_000;
/** The outside probe's lease: about 31,700 years. */
const HUGE_LEASE = '999999999999999';

function keyOf(i: number): string {
  return (i + 1).toString(16).padStart(32, '0');
}

describe('claims between connections through a failover', () => {
  it('kill -9: the new active keeps at most its --max-parked claims, for at most --max-park, whatever their lease', { timeout: 60_000 }, async () => {
    const cluster = await startCluster({ extraArgs: ['--max-park', `${MAX_PARK_MS}ms`, '--max-parked', String(MAX_PARKED)] });
    await waitSettled(cluster, 'a');
    const names = Array.from({ length: CLAIMS }, (_, i) => `park-${i}`);
    for (const [i, name] of names.entries()) {
      const client = await LineClient.open(cluster.node('a').ports.session, '127.0.0.1', { timeoutMs: 5_000 });
      cluster.defer(() => client.close());
      client.send(`ACQUIRE ${name} ${HUGE_LEASE} ${keyOf(i)}`);
      const token = BigInt((await client.next()).split(' ')[1] ?? '0');
      await waitReplicated(cluster, name, token, ['b', 'c']);
    }

    await cluster.node('a').kill9();
    const active = await waitFor(
      async () => {
        const ids = await activeOf(cluster);
        return ids.length === 1 ? ids[0] : undefined;
      },
      { timeoutMs: 5_000, what: 'a new active node' },
    );
    const node = cluster.node(active);
    const holders = await Promise.all(names.map((name) => holderOn(node, name)));
    // Kept for their clients: MAX_PARKED of them, each with at most --max-park left; the rest ended.
    const kept = holders.filter((h) => h !== null);
    expect(kept.map((h) => h?.reconnecting)).toEqual(Array(MAX_PARKED).fill(true));
    for (const h of kept) expect(h?.leaseRemainingMs).toBeLessThanOrEqual(MAX_PARK_MS);
    expect((await node.cluster()).failovers.at(-1)).toMatchObject({ claimsCarried: MAX_PARKED });
    // Nobody comes back: within --max-park every lock is free, not in 31,700 years.
    await waitFor(async () => (await Promise.all(names.map((name) => holderOn(node, name)))).every((h) => h === null), {
      timeoutMs: MAX_PARK_MS + 2_000,
      what: `every park-i free on ${active}`,
    });
    expect((await node.cluster()).failovers.at(-1)).toMatchObject({ claimsCarried: MAX_PARKED, claimsExpired: MAX_PARKED });
    // As the clients saw it: the claims over --max-parked were lost at the promotion, the kept ones expired.
    expect((await node.cluster()).failovers.at(-1)?.clients).toMatchObject({ moved: 0, expired: MAX_PARKED, lost: CLAIMS - MAX_PARKED, reconnecting: 0 });
  });
});
