// docs/operations.md, "Upgrading one node at a time": a rolling restart of a real three-node
// cluster (standbys first, then the active after a handoff) loses no held claim, keyed or
// resumable session, and every token granted meanwhile is above the one before. One build here:
// CI's checkout may have no git history to build an older one from; rolling-upgrade-two-builds.ts
// runs the same steps from an older commit to this one by hand.
import { describe, expect, it } from 'vitest';
import { startCluster, waitSettled } from '../../server/testing/cluster-harness.ts';
import { churn, claimsMissing, holdClaims, notIncreasing, rollingUpgrade } from './rolling-upgrade.ts';

describe('a rolling upgrade, one node at a time', () => {
  it('keeps every keyed and resumable session claim with its token, and tokens only increase', { timeout: 90_000 }, async () => {
    // A 1 s hold-down: the role returns to a 1 s after it is back in sync instead of 10 s.
    const cluster = await startCluster({ extraArgs: ['--return-hold-down', '1s'] });
    await waitSettled(cluster, 'a');
    const held = await holdClaims(cluster);
    const load = churn(cluster);
    const steps = await rollingUpgrade(cluster, held, ['c', 'b', 'a'], () => undefined);
    // A few grants after the last step, so the sequence spans the whole upgrade.
    const before = load.keyedTokens.length;
    await new Promise((resolve) => setTimeout(resolve, 500));
    await load.stop();
    console.log(`rolling upgrade (one build): ${steps.map((s) => `${s.node}: ${s.log}`).join('; ')}`);
    console.log(
      `rolling upgrade (one build): ${load.keyedTokens.length} keyed and ${load.sessionTokens.length} session grants during it, ${load.errors.length} failed attempts retried`,
    );

    expect(steps.map((s) => [s.node, s.wasActive])).toEqual([
      ['c', false],
      ['b', false],
      ['a', true],
    ]);
    for (const step of steps) expect(step.missing, `after ${step.node}`).toEqual([]);
    expect(await claimsMissing(cluster.node('a'), held)).toEqual([]);
    for (const s of held.sessions) expect(s.signal.aborted).toBe(false);
    expect(load.keyedTokens.length).toBeGreaterThan(before);
    expect(load.sessionTokens.length).toBeGreaterThan(0);
    expect(notIncreasing(load.keyedTokens)).toEqual([]);
    expect(notIncreasing(load.sessionTokens)).toEqual([]);
    const all = [...held.keyed.map((g) => g.token), ...held.sessions.map((s) => s.token), ...load.keyedTokens, ...load.sessionTokens];
    expect(new Set(all).size).toBe(all.length);
    // The held keyed grants are still theirs to release.
    const keyed = cluster.keyedClient([]);
    for (const [i, g] of held.keyed.entries()) expect(await keyed.release(`upgrade-keyed-${i}`, g.token)).toBe(true);
  });

  it('notIncreasing finds a token that is not above the one before', () => {
    expect(notIncreasing([1n, 2n, 100_001n])).toEqual([]);
    expect(notIncreasing([1n, 5n, 5n, 3n])).toEqual([2, 3]);
  });
});
