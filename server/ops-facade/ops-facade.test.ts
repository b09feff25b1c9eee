// The facade route code gets: views and operations, never the engine or its clock.
import { describe, expect, it } from 'vitest';
import { lockNameSchema } from '../../lib/ops-api/admin-request.ts';
import { EPOCH_BASE, testFacade } from './testing/test-facade.ts';

describe('the daemon facade', () => {
  it('offers no engine, clock or timer to route code', async () => {
    const { daemon } = await testFacade();
    for (const internal of ['engine', 'clock', 'wake', 'driver', 'history', 'connections', 'shutdown'])
      expect(Object.hasOwn(daemon, internal), internal).toBe(false);
  });

  it('pages locks and details one lock as the ops API shapes them', async () => {
    const t = await testFacade();
    const holder = t.hold('b');
    const waiter = t.hold('b');
    t.hold('a');
    const page = await t.daemon.locksPage({ prefix: '', limit: 1, cursor: null });
    expect(page).toMatchObject({ asOf: EPOCH_BASE + t.clock.now(), locks: [{ name: 'a' }], nextCursor: 'a' });
    expect(await t.daemon.locksPage({ prefix: '', limit: 1, cursor: 'a' })).toMatchObject({ locks: [{ name: 'b', queueLength: 1 }], nextCursor: null });
    expect(t.daemon.lockDetail(lockNameSchema.parse('b'), { limit: 100, after: null })).toMatchObject({
      name: 'b',
      holder: { token: holder.token.toString() },
      queue: [{ id: String(waiter.id), position: 1 }],
    });
    expect(t.daemon.lockDetail(lockNameSchema.parse('nobody'), { limit: 100, after: null })).toBeUndefined();
  });

  it('tells the probes whether the node can grant, and its token high water', async () => {
    const t = await testFacade();
    const held = t.hold('a');
    expect(t.daemon.grants()).toEqual({ refusal: null, tokenHighWater: held.token });
  });

  it('runs a force-release by its typed request and wakes the timer once, from the one place that changes the engine', async () => {
    const t = await testFacade();
    const held = t.hold('a');
    const result = await t.daemon.admin.run({ op: 'force-release', lock: lockNameSchema.parse('a'), token: held.token }, 'bearer:admin');
    expect(result).toMatchObject({ ok: true, body: { released: { token: held.token.toString() } } });
    expect(t.wakes()).toBe(1);
    const refused = await t.daemon.admin.run({ op: 'force-release', lock: lockNameSchema.parse('a'), token: held.token }, 'bearer:admin');
    expect(refused).toMatchObject({ ok: false, error: 'not-found' });
    expect(t.wakes()).toBe(1);
  });
});
