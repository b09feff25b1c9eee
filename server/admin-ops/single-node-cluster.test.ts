import { describe, expect, it } from 'vitest';
import { engineFixture, Owner } from '../../lib/engine/testing/engine-fixture.ts';
import { localLockOps } from './admin-ops.ts';
import { lockNameSchema } from '../../lib/ops-api/admin-request.ts';
import { SINGLE_NODE_HANDOFF_REASON, SINGLE_NODE_RESTORE_REASON, SingleNodeCluster } from './single-node-cluster.ts';

const name = (text: string) => lockNameSchema.parse(text);

function setup() {
  const f = engineFixture();
  let wakes = 0;
  const cluster = new SingleNodeCluster({
    nodeId: 'solo',
    instanceId: 'inst',
    addresses: () => ({ lock: '127.0.0.1:1', session: '127.0.0.1:2', http: '127.0.0.1:3' }),
    lockOps: localLockOps(f.engine, { now: () => f.clock.now(), wall: (ms) => ms }, () => {
      wakes++;
    }),
  });
  return { ...f, cluster, wakes: () => wakes };
}

describe('SingleNodeCluster', () => {
  it('is its own active node, not clustered, with nothing to hand off or restore', () => {
    const view = setup().cluster.view();
    expect(view).toMatchObject({
      self: 'solo',
      instanceId: 'inst',
      clustered: false,
      phase: 'active',
      active: 'solo',
      restore: { available: false, yielded: [] },
      handoff: { available: false, reason: SINGLE_NODE_HANDOFF_REASON, targets: [] },
      failovers: [],
    });
    expect(view.nodes).toEqual([
      expect.objectContaining({
        id: 'solo',
        role: 'active',
        priority: 0,
        self: true,
        alive: true,
        inSync: true,
        yielded: false,
        replicationLag: null,
        httpAddress: '127.0.0.1:3',
      }),
    ]);
  });

  it('runs force-release and kick on the engine and wakes the timer only when something changed', async () => {
    const s = setup();
    const holder = s.engine.acquire({ name: 'a', owner: new Owner(), protocol: 'keyed', client: 'c:1', leaseMs: 10_000, waitMs: 0, sliding: false });
    const waiter = s.engine.acquire({ name: 'a', owner: new Owner(), protocol: 'keyed', client: 'c:2', leaseMs: 10_000, waitMs: 0, sliding: false });
    const third = s.engine.acquire({ name: 'a', owner: new Owner(), protocol: 'keyed', client: 'c:3', leaseMs: 10_000, waitMs: 0, sliding: false });
    expect(await s.cluster.run({ op: 'kick', lock: name('a'), claimId: third.id }, 'bearer:admin')).toMatchObject({ ok: true });
    expect(s.wakes()).toBe(1);
    expect(await s.cluster.run({ op: 'force-release', lock: name('a'), token: holder.token }, 'bearer:admin')).toMatchObject({ ok: true });
    expect(waiter.state).toBe('holding');
    expect(s.wakes()).toBe(2);
    expect(await s.cluster.run({ op: 'force-release', lock: name('free'), token: null }, 'bearer:admin')).toMatchObject({ ok: false, error: 'not-found' });
    expect(s.wakes()).toBe(2);
  });

  it('refuses handoff and restore as conflicts with a reason', async () => {
    const { cluster } = setup();
    expect(await cluster.run({ op: 'handoff', target: null }, 'x')).toEqual({ ok: false, error: 'conflict', detail: SINGLE_NODE_HANDOFF_REASON });
    expect(await cluster.run({ op: 'restore', node: 'solo' }, 'x')).toEqual({ ok: false, error: 'conflict', detail: SINGLE_NODE_RESTORE_REASON });
  });
});
