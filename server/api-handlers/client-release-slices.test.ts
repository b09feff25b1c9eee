// The bulk release by client in slices (issue 26): 10,000 locks released in one piece held the
// event loop for 0.2-0.6 s. These tests count loop turns, not milliseconds: a task queued on the
// loop must run between every two slices, and what changes meanwhile must come out right.
import { describe, expect, it } from 'vitest';
import type { ClientReleaseResult } from '../../lib/ops-api/client-release-types.ts';
import type { Claim } from '../../lib/engine/claim.ts';
import { clientMatchTextSchema } from '../../lib/ops-api/admin-request.ts';
import { localLockOps } from '../admin-ops/admin-ops.ts';
import { MAX_BULK_AUDIT_LOCKS } from '../../lib/ops-api/admin-result.ts';
import { RELEASE_SLICE, WALK_SLICE } from '../admin-ops/client-release.ts';
import { apiRequest, asAdmin, type TestFacade, testFacade } from '../ops-facade/testing/test-facade.ts';
import { releaseClient } from './client-actions.ts';

const WORKER = 'worker-7@host-3 pid 4121';

function holdMany(t: TestFacade, count: number, client = '127.0.0.1:6001'): Claim[] {
  return Array.from({ length: count }, (_, i) => t.holdAs(`bulk/${String(i).padStart(5, '0')}`, client, WORKER));
}

async function release(t: TestFacade, claims: readonly Claim[]): Promise<ClientReleaseResult> {
  const body = JSON.stringify({ identity: WORKER, tokens: claims.map((c) => c.token.toString()) });
  const res = await releaseClient(apiRequest('/api/v1/clients/force-release', { method: 'POST', headers: asAdmin, body }), t.daemon);
  expect(res.status).toBe(200);
  return (await res.json()) as ClientReleaseResult;
}

/** Runs `each` once per loop turn (a setImmediate chain, as a slice's own) until `done` settles. */
async function everyTurn<T>(done: Promise<T>, each: () => void): Promise<T> {
  let settled = false;
  const turn = () => {
    if (settled) return;
    each();
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return await done;
  } finally {
    settled = true;
  }
}

describe('a bulk release of 10,000 locks', () => {
  it('releases at most one slice per loop turn, answers after the last one, and releases them all', async () => {
    const t = await testFacade();
    const claims = holdMany(t, 10_000);
    const heldSeen: number[] = [];
    const body = await everyTurn(release(t, claims), () => heldSeen.push(t.engine.heldCount));
    expect(body.released).toHaveLength(10_000);
    expect(body.stale).toEqual([]);
    expect(t.engine.heldCount).toBe(0);
    // Another task ran between every two slices: no turn saw more than one slice's releases.
    const drops = heldSeen.slice(1).map((h, i) => (heldSeen[i] ?? h) - h);
    expect(Math.max(...drops)).toBeLessThanOrEqual(RELEASE_SLICE);
    expect(heldSeen.filter((h) => h > 0 && h < 10_000).length).toBeGreaterThanOrEqual(10_000 / RELEASE_SLICE - 1);
    // The timer is re-armed after each slice: the locks' next holders have leases.
    expect(t.wakes()).toBe(10_000 / RELEASE_SLICE);
  });

  it('writes one summary entry and at most 100 per-lock entries, so the history beside it stays', async () => {
    const t = await testFacade();
    for (let i = 0; i < 500; i++) t.audit.record({ who: 'bearer:admin', action: 'kick', target: `earlier-${i}`, result: 'ok', detail: null });
    const claims = holdMany(t, 10_000);
    await release(t, claims);
    const entries = t.audit.recent(2000);
    const bulk = entries.filter((e) => e.action !== 'kick');
    expect(bulk).toHaveLength(1 + MAX_BULK_AUDIT_LOCKS);
    expect(bulk[0]?.detail).toBe(
      `identity ${WORKER}: released 10000, stale 0; the first 100 by name have an entry each, the other 9900 (bulk/00100 to bulk/09999) are counted here only`,
    );
    expect(bulk.slice(1).map((e) => e.target)).toEqual(claims.slice(0, MAX_BULK_AUDIT_LOCKS).map((_, i) => `bulk/${String(i).padStart(5, '0')}`));
    expect(entries.filter((e) => e.action === 'kick')).toHaveLength(500);
  });
});

describe('a bulk release on a large table', () => {
  it(`walks the table for the client's locks ${WALK_SLICE} locks per loop turn before releasing any`, async () => {
    const t = await testFacade();
    // Other clients' locks first in the table, then the client's own.
    for (let i = 0; i < 2 * WALK_SLICE + 100; i++) t.holdAs(`other/${i}`, '127.0.0.1:6002', 'someone else');
    const claims = holdMany(t, 10);
    const total = t.engine.heldCount;
    const heldSeen: number[] = [];
    const body = await everyTurn(release(t, claims), () => heldSeen.push(t.engine.heldCount));
    expect(body.released).toHaveLength(10);
    // Two turns ran while the walk went on (nothing released yet), before the one slice of releases.
    expect(heldSeen.slice(0, 2)).toEqual([total, total]);
    expect(t.engine.heldCount).toBe(total - 10);
  });
});

describe('what changes between slices', () => {
  it('a lock its client released, or that changed hands, after the first slice is stale, and the new holder keeps it', async () => {
    const t = await testFacade();
    const claims = holdMany(t, 2 * RELEASE_SLICE + 100);
    const late = claims[RELEASE_SLICE + 10] as Claim;
    const moved = claims[RELEASE_SLICE + 20] as Claim;
    const next = t.holdAs(`bulk/${String(RELEASE_SLICE + 20).padStart(5, '0')}`, '127.0.0.1:7000', 'next in line');
    let meddled = false;
    const body = await everyTurn(release(t, claims), () => {
      if (meddled || claims[0]?.state !== 'ended') return;
      meddled = true;
      expect(late.state).toBe('holding'); // the first slice is done, the second has not begun
      t.engine.release(late.name, late.token);
      t.engine.release(moved.name, moved.token); // hands it to `next`
    });
    expect(meddled).toBe(true);
    expect(body.stale.sort()).toEqual([late.token, moved.token].map(String).sort());
    expect(body.released).toHaveLength(claims.length - 2);
    expect(next.state).toBe('holding');
  });

  it('two bulk releases at once release each lock once: what one released is stale to the other', async () => {
    const t = await testFacade();
    const claims = holdMany(t, 3 * RELEASE_SLICE);
    const [first, second] = await Promise.all([release(t, claims), release(t, claims)]);
    const a = (first?.released ?? []).map((r) => r.token);
    const b = (second?.released ?? []).map((r) => r.token);
    expect([...a, ...b].sort()).toEqual(claims.map((c) => c.token.toString()).sort());
    expect(new Set([...a, ...b]).size).toBe(claims.length);
    expect(first?.stale.sort()).toEqual([...b].sort());
    expect(second?.stale.sort()).toEqual([...a].sort());
  });
});

describe('a node that stops being the active one during a bulk release', () => {
  it('stops between slices: the rest stay held and come back stale, and the summary says why', async () => {
    const t = await testFacade();
    const claims = holdMany(t, 2 * RELEASE_SLICE);
    const ops = localLockOps(t.engine, { now: () => t.clock.now(), wall: (ms) => ms }, () => {});
    let asked = 0;
    const result = await ops.run(
      { op: 'release-client', client: { by: 'identity', value: clientMatchTextSchema.parse(WORKER) }, tokens: claims.map((c) => c.token) },
      () => {
        asked++;
        return 'node a is standby';
      },
    );
    expect(asked).toBe(1);
    expect(result).toMatchObject({ ok: true, detail: expect.stringMatching(/released 250, stale 250; .*; stopped early: node a is standby$/) });
    expect(claims.filter((c) => c.state === 'holding')).toHaveLength(RELEASE_SLICE);
  });
});
