// Builders for the dashboard's tests: minimal API messages with one field changed at a time.
import {
  type ClusterView,
  type DeltaMessage,
  type FeedItem,
  type HistoryBucket,
  type HolderView,
  type LocksChunkMessage,
  type LockSummary,
  noHandoversByCause,
  type SnapshotMessage,
  type StatsView,
} from '../ops-api/api-types.ts';
import type { Received } from './dashboard-state.ts';

/** A moment that is a multiple of 10,000 (a bucket start). */
export const T0 = 1_700_000_000_000;

export function stats(over: Partial<StatsView> = {}): StatsView {
  return {
    asOf: T0,
    state: 'serving',
    role: 'active',
    locks: 0,
    held: 0,
    waiters: 0,
    connections: { keyed: 0, session: 0 },
    tokenHighWater: '0',
    grants: 'ok',
    grantsTotal: 0,
    handover: { count: 0, p50: null, p95: null, p99: null },
    handoverByCause: noHandoversByCause(),
    ...over,
  };
}

export function cluster(over: Partial<ClusterView> = {}): ClusterView {
  return {
    self: 'n1',
    instanceId: 'inst-1',
    clustered: false,
    phase: 'active',
    active: 'n1',
    restore: { available: false, yielded: [] },
    nodes: [],
    handoff: { available: false, reason: 'single node', targets: [] },
    failovers: [],
    ...over,
  };
}

export function holder(token: string, over: Partial<HolderView> = {}): HolderView {
  return {
    claimId: '1',
    protocol: 'keyed',
    client: '127.0.0.1:5000',
    clientName: null,
    token,
    grantedAt: T0,
    heldForMs: 0,
    leaseMs: 30_000,
    sliding: false,
    leaseRemainingMs: 30_000,
    ...over,
  };
}

export function lock(name: string, h: HolderView | null = holder('1'), queueLength = 0): LockSummary {
  return { name, holder: h, queueLength };
}

const noCauses = (): HistoryBucket['byCause'] => ({
  release: { count: 0, p50: null, p99: null },
  disconnect: { count: 0, p50: null, p99: null },
  expiry: { count: 0, p50: null, p99: null },
  'force-release': { count: 0, p50: null, p99: null },
});

export function bucket(start: number, over: Partial<HistoryBucket> = {}): HistoryBucket {
  return {
    start,
    grants: 0,
    handovers: 0,
    p50: null,
    p99: null,
    byCause: noCauses(),
    queueWait: { count: 0, p50: null, p99: null, waited: 0, waitedP50: null, waitedP99: null },
    hold: { count: 0, p50: null, p99: null },
    blocked: noCauses(),
    ...over,
  };
}

export function feedItem(seq: number, kind: FeedItem['kind'] = 'grant'): FeedItem {
  return { seq, at: T0 + seq, kind, lock: 'a', text: `item ${seq}` };
}

export function snapshot(over: Partial<SnapshotMessage> = {}): SnapshotMessage {
  return {
    instanceId: 'inst-1',
    asOf: T0,
    stats: stats(),
    cluster: cluster(),
    locks: [],
    pending: false,
    total: over.locks?.length ?? 0,
    history: [],
    feed: [],
    ...over,
  };
}

export function delta(over: Partial<DeltaMessage> = {}): DeltaMessage {
  return { asOf: T0 + 100, stats: stats({ asOf: T0 + 100 }), upserts: [], removed: [], history: [], feed: [], cluster: null, ...over };
}

/** A delta as the page receives it, at local time `receivedAt`. */
export function receivedDelta(msg: DeltaMessage, receivedAt: number): Received {
  return { kind: 'delta', msg, receivedAt };
}

/** A page of the snapshot's table as the page receives it, at local time `receivedAt`. */
export function receivedPage(msg: LocksChunkMessage, receivedAt: number): Received {
  return { kind: 'locks', msg, receivedAt };
}
