// The case an outside probe found: the active `a` is cut off from `b` and `c`, `b` promotes, and
// `a` goes on granting past the blocks it reserved before the cut while `b` grants from the
// block it reserved at its promotion. Before token slots both reserved the same next block, and
// every token of b's was also given by a. Each node now reserves only blocks of its own slot:
// no token is given on both sides, however long the partition lasts, and after the heal every
// new token is above everything either side gave.
import { describe, expect, it } from 'vitest';
import { slotOfToken, TOKEN_SLOTS } from '../../lib/tokens/token-slots.ts';
import { activeOf, startCluster, waitFor, waitSettled } from '../testing/cluster-harness.ts';
import { churnTokens } from '../testing/token-churn.ts';

const BLOCK = 100_000n;

describe('fencing tokens across a partition', () => {
  it('are never given by both sides, even when one side uses up every block it had reserved', { timeout: 120_000 }, async () => {
    const cluster = await startCluster({ proxied: true });
    await waitSettled(cluster, 'a');
    const [a, b] = [cluster.node('a'), cluster.node('b')];
    // Some grants before the cut (not half a block: no block reserved ahead yet).
    const before = await churnTokens(a.ports.lock, 1_000, 'part/before');

    a.proxy?.block();
    await waitFor(async () => (await b.cluster()).phase === 'active', { timeoutMs: cluster.peerTimeoutMs + 3_000, what: 'b to promote' });
    expect((await activeOf(cluster)).sort()).toEqual(['a', 'b']);

    // a, cut off, grants through the block it had and well past the next one (the one b took,
    // on the code before slots); b grants meanwhile on its side.
    const [onA, onB] = await Promise.all([churnTokens(a.ports.lock, 230_000, 'part/a'), churnTokens(b.ports.lock, 20_000, 'part/b')]);
    const givenByA = new Set(onA.map(String));
    const twice = onB.filter((t) => givenByA.has(String(t)));
    expect(twice.length, `tokens given by both a and b (first: ${twice.slice(0, 3).join(', ')})`).toBe(0);
    for (const [side, tokens] of [
      ['a', onA],
      ['b', onB],
    ] as const) {
      for (let i = 1; i < tokens.length; i++) expect((tokens[i] as bigint) > (tokens[i - 1] as bigint), `${side}'s tokens increase`).toBe(true);
    }
    // Each side's tokens come from its own slot's blocks only.
    expect(new Set(onA.map((t) => slotOfToken(t, BLOCK, TOKEN_SLOTS)))).toEqual(new Set([0]));
    expect(new Set(onB.map((t) => slotOfToken(t, BLOCK, TOKEN_SLOTS)))).toEqual(new Set([1]));
    expect(onA[0] as bigint).toBeGreaterThan(before.at(-1) as bigint);

    a.proxy?.heal();
    await waitFor(
      async () => {
        const actives = await activeOf(cluster);
        return actives.length === 1 && actives[0] === 'a';
      },
      { timeoutMs: cluster.peerTimeoutMs + 5_000, what: 'only a to be active after the heal' },
    );
    await waitSettled(cluster, 'a', 10_000);
    let highest = 0n;
    for (const t of [...onA, ...onB]) if (t > highest) highest = t;
    const after = await churnTokens(a.ports.lock, 10, 'part/after');
    expect(after[0] as bigint, 'the first token after the heal is above everything either side gave').toBeGreaterThan(highest);
  });
});
