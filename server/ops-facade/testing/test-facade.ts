// A DaemonFacade for tests of the ops API, built by the daemon's own createOpsFacade: a real
// LockEngine on a FakeClock, real Security and a real AuditLog, the single-node cluster (its
// admin ops act on the engine through the same localLockOps as the daemon's), and plain
// stand-ins for what other tests cover (the SSE feed). Handlers are called directly with Web
// Requests; no HTTP server, no Next. The engine and clock are handed to the test, not to the
// handlers: the facade has neither.
import { Owner } from '../../../lib/engine/testing/engine-fixture.ts';
import type { Claim } from '../../../lib/engine/claim.ts';
import { FakeClock } from '../../../lib/engine/clock.ts';
import { LockEngine } from '../../../lib/engine/lock-engine.ts';
import { type ClusterView, type DaemonState, type NodeRole, noHandoversByCause, type StatsView } from '../../../lib/ops-api/api-types.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../../../lib/tokens/token-source.ts';
import type { AdminFacade, DaemonFacade, FeedFacade } from '../../../lib/ops-api/daemon-facade.ts';
import { localLockOps } from '../../admin-ops/admin-ops.ts';
import { AuditLog } from '../../audit/audit-log.ts';
import { HistoryRecorder } from '../../chart-history/history-recorder.ts';
import { ContentionTracker } from '../../lock-views/contention-tracker.ts';
import { LockIndex } from '../../lock-views/lock-index.ts';
import { createOpsFacade } from '../ops-facade.ts';
import { Security } from '../../console-auth/security.ts';
import { SINGLE_NODE_HANDOFF_REASON, SingleNodeCluster } from '../../admin-ops/single-node-cluster.ts';

export const ADMIN_TOKEN = 'admin-token-for-tests';
export const READ_TOKEN = 'read-token-for-tests';
/** Engine ms 0 is this epoch ms, so views show plausible dates and tests can compute them. */
export const EPOCH_BASE = 1_700_000_000_000;
export const SINGLE_NODE_REASON = SINGLE_NODE_HANDOFF_REASON;
export const METRICS_TEXT = '# HELP baton_test 1\nbaton_test 1\n';
export const METRICS_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export interface TestFacadeOptions {
  /** Defaults to loopback, so reads are open unless a read token is set. */
  host?: string;
  readToken?: string | null;
  /** Defaults to a memory-only log. */
  audit?: AuditLog;
  /** Replaces the single-node cluster's admin ops (a standby that forwards, say). */
  admin?: AdminFacade;
  /** Replaces the single-node cluster's view. */
  cluster?: () => ClusterView;
  role?: () => NodeRole;
}

export interface TestFacade {
  daemon: DaemonFacade;
  engine: LockEngine;
  clock: FakeClock;
  audit: AuditLog;
  security: Security;
  /** How many times an admin op woke the daemon's timer. */
  wakes(): number;
  setState(state: DaemonState): void;
  /** Takes or queues for `name` as a keyed client would; waitMs 0 waits forever. */
  hold(name: string, owner?: Owner, leaseMs?: number, waitMs?: number): Claim;
  /** Like hold, for a client at `client` that gave the identity `clientName` (null: none). */
  holdAs(name: string, client: string, clientName: string | null, owner?: Owner): Claim;
}

const noFeed: FeedFacade = { subscribe: () => ({ ok: true, leave: () => {}, pull: () => {} }), subscriberCount: 0 };

export async function testFacade(options: TestFacadeOptions = {}): Promise<TestFacade> {
  const clock = new FakeClock(1_000);
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore(0n), 16n));
  const security = new Security({ adminToken: ADMIN_TOKEN, readToken: options.readToken ?? null, host: options.host ?? '127.0.0.1' });
  const audit = options.audit ?? (await AuditLog.open(null));
  let state: DaemonState = 'serving';
  let wakes = 0;
  const viewClock = { now: () => clock.now(), wall: (ms: number) => EPOCH_BASE + ms };
  const single = new SingleNodeCluster({
    nodeId: 'local',
    instanceId: 'test-instance',
    addresses: () => ({ lock: '127.0.0.1:7070', session: '127.0.0.1:7071', http: '127.0.0.1:3000' }),
    lockOps: localLockOps(engine, viewClock, () => {
      wakes++;
    }),
  });
  const cluster = options.cluster ?? (() => single.view());
  const role = options.role ?? (() => 'active');
  const stats = (): StatsView => ({
    asOf: EPOCH_BASE + clock.now(),
    state,
    role: role(),
    locks: engine.lockCount,
    held: engine.heldCount,
    waiters: engine.waiterCount,
    connections: { keyed: 0, session: 0 },
    tokenHighWater: engine.tokenHighWater.toString(),
    grants: engine.grantRefusal() ?? 'ok',
    grantsTotal: 0,
    handover: { count: 0, p50: null, p95: null, p99: null },
    handoverByCause: noHandoversByCause(),
  });
  const history = new HistoryRecorder(engine, viewClock, () => EPOCH_BASE + clock.now());
  const daemon = createOpsFacade({
    instanceId: 'test-instance',
    engine,
    clock: viewClock,
    lockIndex: new LockIndex(engine),
    contention: new ContentionTracker(engine, viewClock),
    state: () => state,
    role,
    stats,
    cluster,
    history,
    admin: options.admin ?? single,
    metrics: async () => ({ contentType: METRICS_TYPE, body: METRICS_TEXT }),
    security,
    audit,
    feed: noFeed,
  });
  return {
    daemon,
    engine,
    clock,
    audit,
    security,
    wakes: () => wakes,
    setState: (s) => {
      state = s;
    },
    hold: (name, owner = new Owner(), leaseMs = 30_000, waitMs = 0) =>
      engine.acquire({ name, owner, protocol: 'keyed', client: '127.0.0.1:5000', leaseMs, waitMs, sliding: false }),
    holdAs: (name, client, clientName, owner = new Owner()) =>
      engine.acquire({ name, owner, protocol: 'keyed', client, clientName, leaseMs: 30_000, waitMs: 0, sliding: false }),
  };
}

export { Owner };

/** A request as the console's own page would send it to the test host. */
export function apiRequest(path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Request {
  return new Request(`http://127.0.0.1:3000${path}`, {
    method: init.method ?? 'GET',
    headers: { host: '127.0.0.1:3000', ...init.headers },
    body: init.body ?? null,
  });
}

export const asAdmin = { authorization: `Bearer ${ADMIN_TOKEN}` };
export const asReader = { authorization: `Bearer ${READ_TOKEN}` };
