import { describe, expect, it } from 'vitest';
import { apiRequest, asAdmin, Owner, testFacade } from '../ops-facade/testing/test-facade.ts';
import { forceRelease, kickWaiter } from './lock-actions.ts';

const post = (path: string, body?: string) => apiRequest(path, { method: 'POST', headers: asAdmin, ...(body === undefined ? {} : { body }) });
const release = (t: Awaited<ReturnType<typeof testFacade>>, name: string, body?: string) =>
  forceRelease(post(`/api/v1/locks/${encodeURIComponent(name)}/force-release`, body), t.daemon, { name });

describe('POST /api/v1/locks/{name}/force-release', () => {
  it('releases whoever holds the lock when no token is given and names the next holder', async () => {
    const t = await testFacade();
    const owner = new Owner();
    const holder = t.hold('a', owner);
    const next = t.hold('a');
    const res = await release(t, 'a');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      released: { name: 'a', token: holder.token.toString(), protocol: 'keyed', client: '127.0.0.1:5000', clientName: null },
      nextHolder: expect.objectContaining({ claimId: String(next.id), token: next.token.toString() }),
    });
    expect(owner.ended).toEqual([{ id: holder.id, reason: 'force-released' }]);
  });

  it('answers a null next holder when nobody was waiting', async () => {
    const t = await testFacade();
    t.hold('a');
    expect(await (await release(t, 'a', '{}')).json()).toMatchObject({ nextHolder: null });
    expect(t.engine.lock('a')).toBeUndefined();
  });

  it('wakes the daemon timer after releasing', async () => {
    const t = await testFacade();
    t.hold('a');
    await release(t, 'a');
    expect(t.wakes()).toBe(1);
  });

  it('releases the holder named by a decimal-string token', async () => {
    const t = await testFacade();
    const holder = t.hold('a');
    expect((await release(t, 'a', JSON.stringify({ token: holder.token.toString() }))).status).toBe(200);
  });

  it('releases the holder named by a number token', async () => {
    const t = await testFacade();
    const holder = t.hold('a');
    expect((await release(t, 'a', JSON.stringify({ token: Number(holder.token) }))).status).toBe(200);
  });

  it('refuses a stale token with 409 naming the current holder token and leaves the newer holder holding', async () => {
    const t = await testFacade();
    const old = t.hold('a');
    const newer = t.hold('a');
    t.engine.release('a', old.token);
    const res = await release(t, 'a', JSON.stringify({ token: old.token.toString() }));
    expect(res.status).toBe(409);
    const body = (await res.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('stale-token');
    expect(body.error.message).toContain(`holder's token is ${newer.token}`);
    expect(newer.state).toBe('holding');
    expect(t.wakes()).toBe(0);
  });

  it('answers 404 when nobody holds the lock', async () => {
    const t = await testFacade();
    const res = await release(t, 'free');
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ error: { code: 'not-found' } });
  });

  it('answers 400 bad-request for a body that is not JSON', async () => {
    const t = await testFacade();
    t.hold('a');
    const res = await release(t, 'a', '{"token": ');
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'bad-request' } });
    expect(t.engine.lock('a')?.holder).not.toBeNull();
  });

  it('answers 422 for tokens of the wrong shape or out of range', async () => {
    const t = await testFacade();
    t.hold('a');
    for (const token of ['"-1"', '"12abc"', '1.5', '-3', 'true', '9007199254740993', '"18446744073709551616"', '"123456789012345678901"']) {
      const res = await release(t, 'a', `{"token": ${token}}`);
      expect(res.status, token).toBe(422);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid-input', message: expect.stringContaining('token') } });
    }
    expect(t.engine.lock('a')?.holder).not.toBeNull();
  });

  it('names the rule a bad token broke, not just "invalid input"', async () => {
    const t = await testFacade();
    t.hold('a');
    const message = async (token: string) => ((await (await release(t, 'a', `{"token": ${token}}`)).json()) as { error: { message: string } }).error.message;
    expect(await message('"18446744073709551616"')).toBe('invalid input: token: expected a decimal u64 string (0 to 18446744073709551615)');
    expect(await message('-3')).toBe('invalid input: token: Too small: expected number to be >=0');
  });

  it('takes the largest u64 as a well-formed (stale) token', async () => {
    const t = await testFacade();
    t.hold('a');
    expect((await release(t, 'a', '{"token": "18446744073709551615"}')).status).toBe(409);
  });

  it('answers 422 for a body that is JSON but not an object', async () => {
    const t = await testFacade();
    t.hold('a');
    expect((await release(t, 'a', '[1]')).status).toBe(422);
  });

  it('answers 422 for a lock name no client could hold', async () => {
    const t = await testFacade();
    expect((await release(t, 'two words')).status).toBe(422);
  });

  it('refuses a misspelt token key with 422 and leaves the holder holding', async () => {
    const t = await testFacade();
    const stale = t.hold('a');
    t.engine.release('a', stale.token);
    const current = t.hold('a');
    for (const body of [`{"Token": "${stale.token}"}`, `{"fencingToken": "${stale.token}"}`]) {
      const res = await release(t, 'a', body);
      expect(res.status, body).toBe(422);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid-input' } });
    }
    expect(t.engine.lock('a')?.holder?.id).toBe(current.id);
  });

  it('refuses a token in the query string with 422 and leaves the holder holding', async () => {
    const t = await testFacade();
    const current = t.hold('a');
    const res = await forceRelease(post('/api/v1/locks/a/force-release?token=1'), t.daemon, { name: 'a' });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid-input', message: expect.stringContaining('token') } });
    expect(t.engine.lock('a')?.holder?.id).toBe(current.id);
  });
});

describe('POST /api/v1/locks/{name}/waiters/{id}/kick', () => {
  const kick = (t: Awaited<ReturnType<typeof testFacade>>, name: string, id: string) =>
    kickWaiter(post(`/api/v1/locks/${name}/waiters/${id}/kick`), t.daemon, { name, id });

  it('removes the waiter, tells its owner it was kicked and keeps the rest of the queue', async () => {
    const t = await testFacade();
    t.hold('a');
    const owner = new Owner();
    const kicked = t.hold('a', owner);
    const stays = t.hold('a');
    const res = await kick(t, 'a', String(kicked.id));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ kicked: { name: 'a', id: String(kicked.id) } });
    expect(owner.ended).toEqual([{ id: kicked.id, reason: 'kicked' }]);
    expect(t.engine.lock('a')?.head).toBe(stays);
    expect(t.wakes()).toBe(1);
  });

  it('answers 404 when there is no such waiter', async () => {
    const t = await testFacade();
    const holder = t.hold('a');
    expect((await kick(t, 'a', '999')).status).toBe(404);
    // The holder is not a waiter: kicking its id changes nothing.
    expect((await kick(t, 'a', String(holder.id))).status).toBe(404);
    expect(holder.state).toBe('holding');
  });

  it('answers 404 for a lock nobody holds', async () => {
    const t = await testFacade();
    expect((await kick(t, 'nobody', '1')).status).toBe(404);
  });

  it('answers 422 for an id that is not a decimal claim id', async () => {
    const t = await testFacade();
    for (const id of ['abc', '0', '-1', '01', '1e3', '99999999999999999']) expect((await kick(t, 'a', id)).status, id).toBe(422);
  });
});
