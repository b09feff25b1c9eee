// The finding views of the ops API (issue 30) on a real daemon over real sockets: the most
// contended locks, what one client waits for, and the locks whose waiters match a search; and
// their documented errors.
import { describe, expect, it } from 'vitest';
import type { ClientWaitingView, ContentionView, WaiterSearchView } from '../../lib/ops-api/lock-views-types.ts';
import type { Daemon } from '../daemon/daemon.ts';
import { daemonKit } from '../testing/daemon-kit.ts';
import { eventually } from '../testing/line-client.ts';

const kit = daemonKit();
const { daemon, client } = kit;

async function get<T>(d: Daemon, path: string, status = 200): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${d.httpAddress.port}${path}`);
  expect(res.status).toBe(status);
  return (await res.json()) as T;
}

/** A keyed client named `identity` that asks for `lock` (30 s lease, waiting for ever). */
async function ask(d: Daemon, identity: string, lock: string): Promise<void> {
  const c = await client(d.lockAddress.port);
  c.send(`I ${identity}`, `A ${lock} 30 0`);
  expect(await c.next()).toBe('I OK');
}

describe('the finding views of the ops API', () => {
  it('ranks the locks with the longest queues first, not the merely held ones', async () => {
    const d = await daemon();
    for (let i = 0; i < 20; i++) await ask(d, 'stuck-client', `stuck/${i}`);
    await ask(d, 'holder', 'hot/a');
    for (let i = 0; i < 3; i++) await ask(d, `waiter-${i}`, 'hot/a');
    await ask(d, 'holder', 'hot/b');
    await ask(d, 'waiter-x', 'hot/b');
    await eventually(() => d.engine.waiterCount === 4, 3_000, 'four waiters');
    const view = await get<ContentionView>(d, '/api/v1/contention?range=1h&limit=5');
    expect(view.range).toBe('1h');
    expect(view.queuedLocks).toBe(2);
    expect(view.now.map((l) => [l.name, l.queueLength, l.holder?.clientName])).toEqual([
      ['hot/a', 3, 'holder'],
      ['hot/b', 1, 'holder'],
    ]);
    // Over the hour: nothing granted from a queue yet; the longest queues joined so far.
    expect(view.over.map((o) => [o.name, o.queuedGrants, o.maxQueue])).toEqual([
      ['hot/a', 0, 3],
      ['hot/b', 0, 1],
    ]);
  });

  it('lists what one client waits for across locks, by identity and by nothing else', async () => {
    const d = await daemon();
    await ask(d, 'holder', 'a');
    await ask(d, 'holder', 'b');
    await ask(d, 'holder', 'c');
    await ask(d, 'deploy-bot pid 7', 'a');
    await ask(d, 'other', 'b');
    await ask(d, 'deploy-bot pid 7', 'c');
    await eventually(() => d.engine.waiterCount === 3, 3_000, 'three waiters');
    const view = await get<ClientWaitingView>(d, `/api/v1/clients/waiting?identity=${encodeURIComponent('deploy-bot pid 7')}`);
    expect(view.waiting.map((w) => [w.name, w.position, w.holderClientName])).toEqual([
      ['a', 1, 'holder'],
      ['c', 1, 'holder'],
    ]);
    expect(view.nextCursor).toBeNull();
    // Page by page: one entry each, the cursor moving on.
    const first = await get<ClientWaitingView>(d, `/api/v1/clients/waiting?identity=${encodeURIComponent('deploy-bot pid 7')}&limit=1`);
    expect([first.waiting.map((w) => w.name), first.nextCursor]).toEqual([['a'], 'a']);
    const second = await get<ClientWaitingView>(d, `/api/v1/clients/waiting?identity=${encodeURIComponent('deploy-bot pid 7')}&limit=1&after=a`);
    expect(second.waiting.map((w) => w.name)).toEqual(['c']);
  });

  it('finds the locks by a waiter identity or address, ignoring case', async () => {
    const d = await daemon();
    await ask(d, 'holder', 'one');
    await ask(d, 'Billing-Worker-9', 'one');
    await ask(d, 'holder', 'two');
    await ask(d, 'someone', 'two');
    await eventually(() => d.engine.waiterCount === 2, 3_000, 'two waiters');
    const found = await get<WaiterSearchView>(d, '/api/v1/waiters/search?q=billing-worker');
    expect([found.locks, found.truncated]).toEqual([['one'], false]);
    // The holders are not waiters: the table's own search finds those.
    expect((await get<WaiterSearchView>(d, '/api/v1/waiters/search?q=holder')).locks).toEqual([]);
    const limited = await get<WaiterSearchView>(d, '/api/v1/waiters/search?q=127.0.0.1&limit=1');
    expect([limited.locks.length, limited.truncated]).toEqual([1, true]);
  });

  it('refuses bad queries with invalid-input (422) and says what is wrong', async () => {
    const d = await daemon();
    const cases: Array<[string, RegExp]> = [
      ['/api/v1/contention?range=7d', /range/],
      ['/api/v1/contention?limit=51', /limit/],
      ['/api/v1/contention?rnage=1h', /rnage/],
      ['/api/v1/waiters/search', /q/],
      [`/api/v1/waiters/search?q=${'x'.repeat(201)}`, /q/],
      ['/api/v1/clients/waiting?identity=a&address=b', /exactly one/],
      ['/api/v1/clients/waiting', /exactly one/],
    ];
    for (const [path, detail] of cases) {
      const body = await get<{ error: { code: string; message: string } }>(d, path, 422);
      expect(body.error.code).toBe('invalid-input');
      expect(body.error.message).toMatch(detail);
    }
  });
});
