// Queue wait and hold time histograms, on an engine whose clock the test moves: which grants
// count as a wait, which ends count as a hold, and which bucket each lands in.
import { describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { createMetrics } from './metrics.ts';

const live: ClaimOwner = { onGranted: () => true, onEnded: () => {} };

function fixture(role: 'active' | 'standby' = 'active') {
  const f = engineFixture({ blockSize: 100n });
  const registry = createMetrics(f.engine, () => ({ keyed: 0, session: 0 }), { role: () => role, nodeId: 'n', instanceId: 'i' });
  const keyed = (name: string, leaseMs = 60_000) => f.engine.acquire({ name, owner: live, protocol: 'keyed', client: 'k', leaseMs, waitMs: 0, sliding: false });
  const session = (name: string) => f.engine.acquire({ name, owner: live, protocol: 'session', client: 's', leaseMs: 60_000, waitMs: 0, sliding: true });
  const read = async (series: string) => {
    const line = (await registry.metrics()).split('\n').find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };
  return { ...f, keyed, session, read };
}

describe('baton_queue_wait_seconds', () => {
  it('counts a grant from the queue with its wait, and not an immediate grant', async () => {
    const f = fixture();
    const holder = f.keyed('q');
    f.session('q');
    f.clock.advance(700);
    f.engine.release('q', holder.token);
    expect(await f.read('baton_queue_wait_seconds_count{protocol="session"}')).toBe(1);
    expect(await f.read('baton_queue_wait_seconds_bucket{le="0.5",protocol="session"}')).toBe(0);
    expect(await f.read('baton_queue_wait_seconds_bucket{le="1",protocol="session"}')).toBe(1);
    expect(await f.read('baton_queue_wait_seconds_sum{protocol="session"}')).toBeCloseTo(0.7, 9);
    // The keyed holder was granted at once.
    expect(await f.read('baton_queue_wait_seconds_count{protocol="keyed"}')).toBe(0);
  });

  it("does not count a standby's mirrored grants (the active counted their wait)", async () => {
    const f = fixture();
    f.engine.replicaGrant({
      lock: 'm',
      claimId: 9,
      token: 5n,
      protocol: 'keyed',
      client: 'k',
      leaseMs: 10_000,
      sliding: false,
      handoverMs: 3,
      handoverCause: 'release',
      remainingMs: 10_000,
      heldForMs: 0,
    });
    expect(await f.read('baton_grants_total{protocol="keyed"}')).toBe(1);
    expect(await f.read('baton_queue_wait_seconds_count{protocol="keyed"}')).toBe(0);
  });

  it('does not count a mirrored grant of a replicated waiter on a standby, though the grant event carries its wait', async () => {
    const f = fixture('standby');
    const grant = (claimId: number) =>
      f.engine.replicaGrant({
        lock: 'w',
        claimId,
        token: BigInt(claimId),
        protocol: 'keyed',
        client: 'k',
        leaseMs: 10_000,
        sliding: false,
        handoverMs: claimId === 1 ? null : 0,
        handoverCause: claimId === 1 ? null : 'release',
        remainingMs: 10_000,
        heldForMs: 0,
      });
    const waits: number[] = [];
    f.engine.subscribe((e) => (e.type === 'grant' ? waits.push(e.waitedMs) : undefined));
    grant(1);
    f.engine.replicaEnqueue({ lock: 'w', claimId: 2, protocol: 'keyed', client: 'k', leaseMs: 0, sliding: false, waitingForMs: 0, waitRemainingMs: null });
    f.clock.advance(700);
    f.engine.replicaEndHolder('w', 1, 'release');
    grant(2);
    expect(waits).toEqual([0, 700]);
    expect(await f.read('baton_grants_total{protocol="keyed"}')).toBe(2);
    expect(await f.read('baton_queue_wait_seconds_count{protocol="keyed"}')).toBe(0);
  });
});

describe('baton_hold_seconds', () => {
  it('times holds that end by release, expiry, force-release and a reset, each in its bucket', async () => {
    const f = fixture();
    const released = f.keyed('r');
    f.keyed('e', 2_000);
    f.keyed('f');
    f.keyed('reset');
    f.clock.advance(40);
    f.engine.release('r', released.token); // 40 ms
    f.tick(1_960); // the lease of e ends at 2 s
    f.clock.advance(8_000);
    f.engine.forceRelease('f'); // 10 s
    f.clock.advance(50_000);
    f.engine.reset(); // 60 s: this node stops serving "reset"
    expect(await f.read('baton_hold_seconds_count{protocol="keyed"}')).toBe(4);
    expect(await f.read('baton_hold_seconds_bucket{le="0.01",protocol="keyed"}')).toBe(0);
    expect(await f.read('baton_hold_seconds_bucket{le="0.05",protocol="keyed"}')).toBe(1);
    expect(await f.read('baton_hold_seconds_bucket{le="1",protocol="keyed"}')).toBe(1);
    expect(await f.read('baton_hold_seconds_bucket{le="5",protocol="keyed"}')).toBe(2);
    expect(await f.read('baton_hold_seconds_bucket{le="10",protocol="keyed"}')).toBe(3);
    expect(await f.read('baton_hold_seconds_bucket{le="30",protocol="keyed"}')).toBe(3);
    expect(await f.read('baton_hold_seconds_bucket{le="60",protocol="keyed"}')).toBe(4);
    expect(await f.read('baton_hold_seconds_sum{protocol="keyed"}')).toBeCloseTo(0.04 + 2 + 10 + 60, 9);
  });
});
