// The bulk release by client: GET /api/v1/clients/held and POST /api/v1/clients/force-release,
// through their handlers on a test facade (a real engine on a fake clock).
import { describe, expect, it } from 'vitest';
import type { ClientHeldView, ClientReleaseResult } from '../../lib/ops-api/client-release-types.ts';
import { Owner, apiRequest, asAdmin, asReader, testFacade } from '../ops-facade/testing/test-facade.ts';
import { MAX_RELEASE_BODY_BYTES, getClientHeld, releaseClient } from './client-actions.ts';
import { forceRelease, kickWaiter } from './lock-actions.ts';

const WORKER = 'worker-7@host-3 pid 4121';
const held = (t: Awaited<ReturnType<typeof testFacade>>, client: string, headers: Record<string, string> = {}, by: 'identity' | 'address' = 'identity') =>
  getClientHeld(apiRequest(`/api/v1/clients/held?${by}=${encodeURIComponent(client)}`, { headers }), t.daemon);
const release = (t: Awaited<ReturnType<typeof testFacade>>, body: string, headers: Record<string, string> = asAdmin) =>
  releaseClient(apiRequest('/api/v1/clients/force-release', { method: 'POST', headers, body }), t.daemon);

describe('GET /api/v1/clients/held', () => {
  it('lists, in name order, the locks held by the client of that identity, or of that address, not its waits', async () => {
    const t = await testFacade();
    const b = t.holdAs('b', '127.0.0.1:6001', WORKER);
    const a = t.holdAs('a', '127.0.0.1:6002', WORKER);
    t.holdAs('other', '127.0.0.1:6003', 'someone else');
    t.holdAs('mine-by-address', '127.0.0.1:6001', null);
    t.holdAs('a', '127.0.0.1:6001', WORKER); // queued behind its own holder: not held
    const res = await held(t, WORKER);
    expect(res.status).toBe(200);
    const view = (await res.json()) as ClientHeldView;
    expect(view).toEqual({
      asOf: expect.any(Number),
      by: 'identity',
      client: WORKER,
      nextCursor: null,
      truncated: false,
      held: [
        { name: 'a', token: a.token.toString(), protocol: 'keyed', client: '127.0.0.1:6002', clientName: WORKER, heldForMs: 0, leaseRemainingMs: 30_000 },
        { name: 'b', token: b.token.toString(), protocol: 'keyed', client: '127.0.0.1:6001', clientName: WORKER, heldForMs: 0, leaseRemainingMs: 30_000 },
      ],
    });
    const byAddress = (await (await held(t, '127.0.0.1:6001', {}, 'address')).json()) as ClientHeldView;
    expect([byAddress.by, byAddress.held.map((h) => h.name)]).toEqual(['address', ['b', 'mine-by-address']]);
  });

  it('answers 422 invalid-input for a missing, empty, too long or control-character client, for both kinds at once, and for other fields', async () => {
    const t = await testFacade();
    const queries = ['', '?identity=', `?identity=${'x'.repeat(129)}`, '?address=a%09b', '?identity=a&extra=1', '?identity=a&address=b'];
    for (const query of queries) {
      const res = await getClientHeld(apiRequest(`/api/v1/clients/held${query}`), t.daemon);
      expect([query, res.status]).toEqual([query, 422]);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid-input' } });
    }
  });

  it('refuses the old ?client=, which matched an identity or an address alike, saying what to send instead', async () => {
    const t = await testFacade();
    t.holdAs('a', '127.0.0.1:6001', WORKER);
    const res = await getClientHeld(apiRequest(`/api/v1/clients/held?client=${encodeURIComponent(WORKER)}`), t.daemon);
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      error: { code: 'invalid-input', message: expect.stringMatching(/client: no longer taken .*`identity` or by `address`/) },
    });
  });

  it('needs read access off loopback', async () => {
    const t = await testFacade({ readToken: 'read-token-for-tests', host: '0.0.0.0' });
    expect((await held(t, WORKER)).status).toBe(401);
    expect((await held(t, WORKER, asReader)).status).toBe(200);
  });
});

describe('POST /api/v1/clients/force-release', () => {
  it('releases each listed grant the client still holds, hands each lock on, and names the rest stale', async () => {
    const t = await testFacade();
    const owner = new Owner();
    const a = t.holdAs('a', '127.0.0.1:6001', WORKER, owner);
    const b = t.holdAs('b', '127.0.0.1:6001', WORKER, owner);
    const next = t.holdAs('b', '127.0.0.1:7000', 'next in line');
    const gone = t.holdAs('gone', '127.0.0.1:6001', WORKER, owner);
    t.engine.release('gone', gone.token);
    const newer = t.holdAs('gone', '127.0.0.1:7001', null); // same lock, new holder, other client
    const foreign = t.holdAs('foreign', '127.0.0.1:7002', 'not the worker');
    const tokens = [a.token, b.token, gone.token, newer.token, foreign.token].map(String);
    const res = await release(t, JSON.stringify({ identity: WORKER, tokens }));
    expect(res.status).toBe(200);
    const body = (await res.json()) as ClientReleaseResult;
    expect(body.released).toEqual([
      { name: 'a', token: a.token.toString() },
      { name: 'b', token: b.token.toString() },
    ]);
    expect(body.stale.sort()).toEqual([gone.token, newer.token, foreign.token].map(String).sort());
    expect(owner.ended).toEqual([
      { id: a.id, reason: 'force-released' },
      { id: b.id, reason: 'force-released' },
    ]);
    expect([next.state, newer.state, foreign.state]).toEqual(['holding', 'holding', 'holding']);
    expect(t.wakes()).toBe(1);
  });

  it('audits the bulk action and each lock it released as a force-release naming the client', async () => {
    const t = await testFacade();
    const a = t.holdAs('a', '127.0.0.1:6001', WORKER);
    const b = t.holdAs('b', '127.0.0.1:6001', WORKER);
    await release(t, JSON.stringify({ identity: WORKER, tokens: [a.token.toString(), Number(b.token), '999'] }));
    expect(t.audit.recent(10).map((e) => [e.who, e.action, e.target, e.result, e.detail])).toEqual([
      ['bearer:admin', 'release-client', `identity ${WORKER}`, 'ok', `identity ${WORKER}: released 2, stale 1`],
      ['bearer:admin', 'force-release', 'a', 'ok', `bulk by identity ${WORKER}: token ${a.token} held by ${WORKER} (127.0.0.1:6001, keyed)`],
      ['bearer:admin', 'force-release', 'b', 'ok', `bulk by identity ${WORKER}: token ${b.token} held by ${WORKER} (127.0.0.1:6001, keyed)`],
    ]);
  });

  it('matches the client by address when the body says address', async () => {
    const t = await testFacade();
    const a = t.holdAs('a', '127.0.0.1:6001', null);
    const body = (await (await release(t, JSON.stringify({ address: '127.0.0.1:6001', tokens: [a.token.toString()] }))).json()) as ClientReleaseResult;
    expect(body).toEqual({ released: [{ name: 'a', token: a.token.toString() }], stale: [] });
    expect(t.audit.recent(1).map((e) => e.detail)).toEqual([`bulk by address 127.0.0.1:6001: token ${a.token} held by 127.0.0.1:6001 (keyed)`]);
  });

  it('needs the admin token: 401 without credentials, 403 for the read token, and nothing changes', async () => {
    const t = await testFacade({ readToken: 'read-token-for-tests' });
    const a = t.holdAs('a', '127.0.0.1:6001', WORKER);
    const body = JSON.stringify({ identity: WORKER, tokens: [a.token.toString()] });
    expect((await release(t, body, {})).status).toBe(401);
    expect((await release(t, body, asReader)).status).toBe(403);
    expect(a.state).toBe('holding');
  });

  it('answers 422 for a bad client, both kinds or the old `client`, no tokens, a bad token, an unknown field or over 10,000 tokens; 400 for non-JSON', async () => {
    const t = await testFacade();
    const a = t.holdAs('a', '127.0.0.1:6001', WORKER);
    const tooMany = Array.from({ length: 10_001 }, (_, i) => String(i + 1));
    const bodies = [
      { identity: ' lead', tokens: ['1'] },
      { identity: WORKER, address: '127.0.0.1:6001', tokens: ['1'] },
      { client: WORKER, tokens: [a.token.toString()] },
      { identity: WORKER, tokens: [] },
      { identity: WORKER, tokens: ['-1'] },
      { identity: WORKER, tokens: ['1'], token: '1' },
      { tokens: ['1'] },
      { identity: WORKER, tokens: tooMany },
    ];
    for (const body of bodies) {
      const res = await release(t, JSON.stringify(body));
      expect(res.status).toBe(422);
      expect(await res.json()).toMatchObject({ error: { code: 'invalid-input' } });
    }
    expect((await release(t, '{"identity": ')).status).toBe(400);
    expect(a.state).toBe('holding');
  });

  it('takes a body of 10,000 tokens (over the usual 16 KiB) and refuses one over 512 KiB with 413', async () => {
    const t = await testFacade();
    const tokens = Array.from({ length: 10_000 }, (_, i) => String(10_000_000_000_000 + i));
    const big = JSON.stringify({ identity: WORKER, tokens });
    expect(big.length).toBeGreaterThan(16 * 1024);
    const res = await release(t, big);
    expect(res.status).toBe(200);
    expect(((await res.json()) as ClientReleaseResult).stale).toHaveLength(10_000);
    const huge = JSON.stringify({ identity: WORKER, tokens: ['1'], pad: 'x'.repeat(MAX_RELEASE_BODY_BYTES) });
    expect((await release(t, huge)).status).toBe(413);
  });
});

describe("an identity that reads as another client's address (issue 26)", () => {
  it('is matched as an identity only: the listing and the release leave the client at that address alone, and the audit says which kind matched', async () => {
    const t = await testFacade();
    const victim = t.holdAs('victim-lock', '127.0.0.1:6001', null);
    const attacker = t.holdAs('attacker-lock', '127.0.0.1:6002', '127.0.0.1:6001');
    const view = (await (await held(t, '127.0.0.1:6001')).json()) as ClientHeldView;
    expect([view.by, view.held.map((h) => h.name)]).toEqual(['identity', ['attacker-lock']]);
    const tokens = [victim.token, attacker.token].map(String);
    const body = (await (await release(t, JSON.stringify({ identity: '127.0.0.1:6001', tokens }))).json()) as ClientReleaseResult;
    expect(body).toEqual({ released: [{ name: 'attacker-lock', token: attacker.token.toString() }], stale: [victim.token.toString()] });
    expect([victim.state, attacker.state]).toEqual(['holding', 'ended']);
    expect(t.audit.recent(2).map((e) => [e.target, e.detail])).toEqual([
      ['identity 127.0.0.1:6001', 'identity 127.0.0.1:6001: released 1, stale 1'],
      ['attacker-lock', `bulk by identity 127.0.0.1:6001: token ${attacker.token} held by 127.0.0.1:6001 (127.0.0.1:6002, keyed)`],
    ]);
  });

  it('and by address only the client at that address is matched, not the one that took it as its identity', async () => {
    const t = await testFacade();
    t.holdAs('victim-lock', '127.0.0.1:6001', null);
    t.holdAs('attacker-lock', '127.0.0.1:6002', '127.0.0.1:6001');
    const view = (await (await held(t, '127.0.0.1:6001', {}, 'address')).json()) as ClientHeldView;
    expect([view.by, view.held.map((h) => h.name)]).toEqual(['address', ['victim-lock']]);
  });
});

describe('force-release and kick name the client in the audit', () => {
  it('writes the holder and the waiter identity in the entry detail', async () => {
    const t = await testFacade();
    t.holdAs('a', '127.0.0.1:6001', WORKER);
    const waiter = t.holdAs('a', '127.0.0.1:6002', 'waiting worker');
    await kickWaiter(apiRequest(`/api/v1/locks/a/waiters/${waiter.id}/kick`, { method: 'POST', headers: asAdmin }), t.daemon, {
      name: 'a',
      id: String(waiter.id),
    });
    await forceRelease(apiRequest('/api/v1/locks/a/force-release', { method: 'POST', headers: asAdmin }), t.daemon, { name: 'a' });
    expect(t.audit.recent(2).map((e) => e.detail)).toEqual([
      `waiter ${waiter.id} of waiting worker (127.0.0.1:6002, keyed)`,
      expect.stringMatching(new RegExp(`^token \\d+ held by ${WORKER} \\(127\\.0\\.0\\.1:6001, keyed\\)$`)),
    ]);
  });
});
