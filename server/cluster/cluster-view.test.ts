import { describe, expect, it } from 'vitest';
import type { PeerConfig } from '../../lib/cluster/cluster-config.ts';
import type { StatusMessage } from '../../lib/cluster/peer-messages.ts';
import { clusterView, type ViewContext } from './cluster-view.ts';
import { NodeState } from './node-state.ts';
import type { MeshPeer } from './peer-mesh.ts';
import type { PeerLink } from './peer-link.ts';

const peer = (id: string, n: number): PeerConfig => ({
  id,
  host: '127.0.0.1',
  lockPort: 7000 + n,
  sessionPort: 7100 + n,
  peerPort: 7200 + n,
  httpPort: 7300 + n,
});
const A = peer('a', 0);
const B = peer('b', 1);
const status = (id: string, phase: StatusMessage['phase']): StatusMessage => ({
  t: 'status',
  id,
  instance: `i-${id}`,
  phase,
  active: phase === 'active' ? id : 'a',
  syncedWith: 'i-a',
  yielded: false,
  ceiling: '100000',
});

/** Node b, a standby following a, with a's link up or down and a heard `silentMs` ago. */
function standbyB(o: { linkUp: boolean; silentMs: number; peerTimeoutMs?: number }): ViewContext {
  const now = 10_000;
  const timeout = o.peerTimeoutMs ?? 1_000;
  const state = new NodeState();
  state.phase = 'standby';
  state.following = 'a';
  state.syncedWith = 'i-a';
  state.statuses.set('a', status('a', 'active'));
  const meshA: MeshPeer = { config: A, priority: 0, link: o.linkUp ? ({} as PeerLink) : null, lastSeen: now - o.silentMs };
  const peers = new Map([['a', meshA]]);
  const isAlive = (id: string) => id === 'a' && now - meshA.lastSeen <= timeout && state.statuses.has(id);
  return {
    self: B,
    instanceId: 'i-b',
    peers: [A, B],
    state,
    watch: {
      isAlive,
      activeId: () => (state.following !== null && isAlive(state.following) ? state.following : null),
      handoffTargets: () => [],
      yieldedNodes: () => [],
    },
    mesh: { peers },
    source: { lags: () => ({}) },
    timeline: { entries: () => [] },
    engine: { lockCount: 0 },
    loopDelay: { perSecondMaxMs: () => [], perSecondGcMs: () => [], perSecondBusyMs: () => [], perSecondWorkMs: () => [] },
  };
}

const view = (ctx: ViewContext) => clusterView(ctx, 10_000, 1_700_000_010_000);

describe('clusterView: the active and the dead as a standby shows them', () => {
  it('names the followed node active while its link is up and it is heard', () => {
    const v = view(standbyB({ linkUp: true, silentMs: 100 }));
    expect(v.active).toBe('a');
    expect(v.nodes.find((n) => n.id === 'a')).toMatchObject({ role: 'active', alive: true, lastRole: 'active' });
  });

  it('names no active, and the node dead, as soon as its link closes (kill -9), before the peer timeout runs out', () => {
    const v = view(standbyB({ linkUp: false, silentMs: 100 }));
    expect(v.active).toBeNull();
    expect(v.handoff.reason).toBe('no active node is known right now');
    expect(v.nodes.find((n) => n.id === 'a')).toMatchObject({ alive: false, role: 'standby', lastRole: 'active' });
  });

  it('names no active once a silent node (SIGSTOP, link still open) passes the peer timeout', () => {
    const v = view(standbyB({ linkUp: true, silentMs: 1_001 }));
    expect(v.active).toBeNull();
    expect(v.nodes.find((n) => n.id === 'a')).toMatchObject({ alive: false, lastRole: 'active' });
  });

  it('says what a dead node last was: standby for one that was a standby, null for one never heard', () => {
    const ctx = standbyB({ linkUp: false, silentMs: 5_000 });
    (ctx.state as NodeState).statuses.set('a', status('a', 'standby'));
    expect(view(ctx).nodes.find((n) => n.id === 'a')?.lastRole).toBe('standby');
    (ctx.state as NodeState).statuses.delete('a');
    expect(view(ctx).nodes.find((n) => n.id === 'a')?.lastRole).toBeNull();
  });

  it('gives this node its own role as lastRole', () => {
    expect(view(standbyB({ linkUp: true, silentMs: 0 })).nodes.find((n) => n.self)).toMatchObject({ id: 'b', role: 'standby', lastRole: 'standby' });
  });
});
