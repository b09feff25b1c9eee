import { describe, expect, it } from 'vitest';
import { coordinationView, ETCD_ENDPOINTS } from '../ops-api/testing/coordination-fixture.ts';
import type { CoordinationView } from '../ops-api/api-types.ts';
import { coordinationModel, coordinationModelAt, type EtcdModel, grantRemainingAt, successorBadge } from './coordination-model.ts';

const etcd = (c: CoordinationView, elapsedMs = 0): EtcdModel => {
  const m = coordinationModel({ clustered: true, self: 'a', coordination: c }, elapsedMs);
  if (m?.mode !== 'etcd') throw new Error('expected the etcd model');
  return m;
};

describe('the coordination model', () => {
  it('is nothing on a single node, and a quiet "peers" in the default mode', () => {
    expect(coordinationModel({ clustered: false, self: 'a' }, 0)).toBeNull();
    expect(coordinationModel({ clustered: true, self: 'a' }, 0)).toEqual({ mode: 'peers', label: 'peers' });
  });

  it('on the etcd active: the mode, this node as holder, the grant time left, the in-sync set and healthy endpoints', () => {
    const m = etcd(coordinationView({ repliesWaiting: 2 }));
    expect(m.label).toBe('etcd (partition-safe)');
    expect(m.holder).toBe('this node (a)');
    expect(m.grant).toEqual({ text: '1.2 s left', tone: 'good', remainingMs: 1_250 });
    expect(m.ttl).toBe('2.0 s');
    expect(m.inSync).toBe('b');
    expect(m.repliesWaiting).toBe(2);
    expect(m.blocked).toBeNull();
    expect(m.healthyEndpoints).toBe(3);
    expect(m.endpoints.map((e) => [e.endpoint, e.status, e.checked])).toEqual(ETCD_ENDPOINTS.map((e) => [e, 'healthy', 'checked just now']));
  });

  it('counts the grant time down between views, and never below 0', () => {
    const c = coordinationView();
    expect(etcd(c, 300).grant.text).toBe('950 ms left');
    // Under a third of the TTL: a keep-alive round is late.
    expect(etcd(c, 700).grant).toEqual({ text: '550 ms left', tone: 'warn', remainingMs: 550 });
    expect(etcd(c, 5_000).grant).toEqual({ text: '0 ms left', tone: 'bad', remainingMs: 0 });
    expect(grantRemainingAt(c, -50)).toBe(1_250);
    // The endpoints' ages count up the same way.
    expect(etcd(c, 2_000).endpoints[0]?.checked).toBe('checked 2 s ago');
  });

  it('counts from when the view arrived, not from any later message; nothing before it arrived', () => {
    const cluster = { clustered: true, self: 'a', coordination: coordinationView() };
    const at = (arrivedAt: number | undefined, now: number) => {
      const m = coordinationModelAt(cluster, arrivedAt, now);
      return m?.mode === 'etcd' ? m.grant.remainingMs : undefined;
    };
    expect(at(10_000, 10_500)).toBe(750);
    expect(at(10_000, 9_900)).toBe(1_250);
    expect(at(undefined, 10_500)).toBe(1_250);
  });

  it('says why the node cannot grant, and shows each endpoint’s error', () => {
    const blocked = 'etcd quorum lost: no keep-alive answered for 1.9 s';
    const m = etcd(
      coordinationView({
        blocked,
        lease: { id: 'l', ttlMs: 2_000, grantRemainingMs: 0 },
        endpoints: [
          { endpoint: 'http://e0', healthy: false, lastError: '14 UNAVAILABLE: No connection established', checkedAgoMs: 1_000 },
          { endpoint: 'http://e1', healthy: false, lastError: null, checkedAgoMs: null },
          { endpoint: 'http://e2', healthy: true, lastError: null, checkedAgoMs: 10 },
        ],
        lastError: 'context deadline exceeded',
      }),
    );
    expect(m.blocked).toBe(blocked);
    expect(m.grant).toMatchObject({ text: 'not granting', tone: 'bad' });
    expect(m.endpoints.map((e) => e.status)).toEqual(['14 UNAVAILABLE: No connection established', 'not checked yet', 'healthy']);
    expect(m.endpoints[1]?.checked).toBeNull();
    expect(m.healthyEndpoints).toBe(1);
    expect(m.lastError).toBe('context deadline exceeded');
  });

  it('on a standby: who holds the role, no grant time, and an empty or unstored in-sync set', () => {
    const standby = { holding: false, holder: 'b', lease: { id: 'l2', ttlMs: 2_000, grantRemainingMs: null } };
    const m = etcd(coordinationView({ ...standby, inSync: [], electable: false }));
    expect(m.holder).toBe('b');
    expect(m.grant).toEqual({ text: 'not the holder: grants nothing', tone: 'neutral', remainingMs: null });
    expect(m.inSync).toBe('empty (no standby in sync yet)');
    expect(m.electable).toBe(false);
    expect(etcd(coordinationView({ ...standby, holder: null, inSync: null })).holder).toBe('nobody');
    expect(etcd(coordinationView({ ...standby, inSync: null })).inSync).toBe('not stored (a new cluster, or after a clean stop)');
  });

  it("says a clean stop's quiet period, counting down between views and never below 0", () => {
    const quiet = coordinationView({ holding: false, holder: null, inSync: null, quiet: { by: 'a', remainingMs: 12_400 } });
    expect(etcd(quiet).quiet).toBe('a stopped cleanly: nobody takes the role for 12.4 s (its longest lease)');
    expect(etcd(quiet, 2_000).quiet).toBe('a stopped cleanly: nobody takes the role for 10.4 s (its longest lease)');
    expect(etcd(quiet, 20_000).quiet).toBe('a stopped cleanly: nobody takes the role for 0 ms (its longest lease)');
    expect(etcd(coordinationView()).quiet).toBeNull();
    const forever = coordinationView({ holding: false, holder: null, inSync: null, quiet: { by: 'a', remainingMs: null } });
    expect(etcd(forever, 5_000).quiet).toBe('a stopped cleanly: nobody takes the role until the quiet key (no lease) is deleted');
  });
});

describe('successorBadge', () => {
  const view = (inSync: string[] | null) => coordinationView({ inSync });
  const standby = (id: string) => ({ id, role: 'standby', alive: true });

  it('names the in-sync set members among the standbys, and the synced ones outside it', () => {
    expect(successorBadge(view(['b']), standby('b'))).toMatchObject({ text: 'in-sync set', tone: 'good' });
    expect(successorBadge(view(['b']), standby('c'))).toMatchObject({ text: 'not in the in-sync set', tone: 'neutral' });
    expect(successorBadge(view(['b', 'c']), standby('c'))).toMatchObject({ text: 'in-sync set' });
  });

  it('says nothing in the peers mode, before a set was stored, on the active or a dead node', () => {
    expect(successorBadge(undefined, standby('b'))).toBeNull();
    expect(successorBadge(view(null), standby('b'))).toBeNull();
    expect(successorBadge(view(['b']), { id: 'b', role: 'active', alive: true })).toBeNull();
    expect(successorBadge(view(['b']), { id: 'b', role: 'standby', alive: false })).toBeNull();
  });
});
