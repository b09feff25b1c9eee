// GET /api/v1/audit as an operator uses it after a bad night: every entry of a filtered range,
// page by page back to the oldest kept, the filters narrowing server-side, and `after` for what
// arrived since; a query of the wrong shape is refused with the shared error body.
import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../lib/ops-api/api-types.ts';
import type { AuditPage } from '../../lib/ops-api/audit-filter.ts';
import { apiRequest, testFacade } from '../ops-facade/testing/test-facade.ts';
import { getAudit } from './overview.ts';

type Facade = Awaited<ReturnType<typeof testFacade>>;

async function page(t: Facade, query: string): Promise<AuditPage> {
  const res = getAudit(apiRequest(`/api/v1/audit?${query}`), t.daemon);
  expect(res.status).toBe(200);
  return (await res.json()) as AuditPage;
}

/** Every page of a query, oldest first, following `older`. */
async function walk(t: Facade, query: string): Promise<AuditPage['entries']> {
  const all: AuditPage['entries'] = [];
  let before: string | null = null;
  for (let i = 0; i < 100; i++) {
    const p: AuditPage = await page(t, `${query}${before === null ? '' : `&before=${before}`}`);
    all.unshift(...p.entries);
    if (p.older === null) return all;
    before = p.older;
  }
  throw new Error('the walk did not end');
}

const rec = (t: Facade, e: Partial<Omit<AuditEntry, 'at'>>) =>
  t.audit.record({ who: 'bearer:admin', action: 'kick', target: 'x', result: 'ok', detail: null, ...e });

describe('GET /api/v1/audit, paged and filtered', () => {
  it('pages back to the oldest entry kept, every entry once, past 200', async () => {
    const t = await testFacade();
    for (let i = 1; i <= 450; i++) rec(t, { target: `l${i}` });
    const first = await page(t, 'limit=200');
    expect(first.entries.map((e) => e.target).at(-1)).toBe('l450');
    expect(first.older).not.toBeNull();
    const all = await walk(t, 'limit=100');
    expect(all.map((e) => e.target)).toEqual(Array.from({ length: 450 }, (_, i) => `l${i + 1}`));
  });

  it('narrows by action, who, lock, client, node and time, server-side', async () => {
    const t = await testFacade();
    rec(t, { action: 'force-release', target: 'orders/1', detail: 'token 4 held by worker-7@host pid 9' });
    rec(t, { action: 'kick', target: 'orders/2', detail: 'waiter 3 (other@host pid 2)', who: 'session:abc' });
    rec(t, { action: 'release-client', target: 'identity worker-7@host pid 9', detail: 'Released 2 locks' });
    rec(t, { action: 'handoff', target: 'b', detail: 'to b' });
    rec(t, { action: 'sign-in', target: 'session', who: 'session:abc' });
    const targets = async (q: string) => (await walk(t, `limit=2&${q}`)).map((e) => e.target);
    expect(await targets('action=force-release,kick')).toEqual(['orders/1', 'orders/2']);
    expect(await targets('who=SESSION')).toEqual(['orders/2', 'session']);
    expect(await targets('lock=orders')).toEqual(['orders/1', 'orders/2']);
    // A lock filter does not match a node or a client named like it.
    expect(await targets('lock=b')).toEqual([]);
    expect(await targets('client=worker-7')).toEqual(['orders/1', 'identity worker-7@host pid 9']);
    expect(await targets('node=local')).toHaveLength(5);
    expect(await targets('node=other')).toEqual([]);
    const all = await walk(t, 'limit=10');
    const third = all[2] as AuditEntry;
    expect((await walk(t, `limit=10&from=${third.at}`)).every((e) => e.at >= third.at)).toBe(true);
    expect(await walk(t, `limit=10&to=${(all[0] as AuditEntry).at}`)).toEqual([]);
  });

  it('gives what arrived after a position, and its latest position', async () => {
    const t = await testFacade();
    rec(t, { target: 'old' });
    const { latest } = await page(t, 'limit=10');
    rec(t, { target: 'new-1' });
    rec(t, { target: 'new-2', action: 'handoff' });
    const since = await page(t, `after=${latest}`);
    expect(since.entries.map((e) => e.target)).toEqual(['new-1', 'new-2']);
    expect(since.latest).toBe(latest + 2);
    expect((await page(t, `after=${latest}&action=handoff`)).entries.map((e) => e.target)).toEqual(['new-2']);
    const paged = await page(t, `after=${latest}&limit=1`);
    expect(paged).toMatchObject({ more: true, latest: latest + 1 });
  });

  it.each([
    ['limit=0', 'limit'],
    ['action=reboot', 'action'],
    ['before=yesterday', 'before'],
    ['before=1_2&after=1', 'after'],
    ['from=10&to=5', 'from'],
    ['target=x', 'target'],
  ])('refuses %s with 422 invalid-input naming %s', async (query, field) => {
    const { daemon } = await testFacade();
    const res = getAudit(apiRequest(`/api/v1/audit?${query}`), daemon);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid-input', message: expect.stringContaining(field) } });
  });
});
