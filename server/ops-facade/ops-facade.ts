// Builds the DaemonFacade route code gets (daemon-facade.ts): the views that need the engine
// (lock pages, lock detail, the grant figures) are made here, so the facade hands out JSON
// shapes and never the engine or its clock. The daemon builds it once at start; the ops API's
// tests build theirs with the same function (testing/test-facade.ts).
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { ClusterView, DaemonState, HistoryRange, LockHistory, NodeRole, StatsHistory, StatsView } from '../../lib/ops-api/api-types.ts';
import type { AdminFacade, AuditFacade, DaemonFacade, FeedFacade, SecurityFacade } from '../../lib/ops-api/daemon-facade.ts';
import { clientHeldPage } from '../admin-ops/client-held-page.ts';
import { clientWaitingPage } from '../lock-views/client-waiting-page.ts';
import type { ContentionTracker } from '../lock-views/contention-tracker.ts';
import type { LockIndex } from '../lock-views/lock-index.ts';
import { searchWaiters } from '../lock-views/waiter-search.ts';
import { lockDetail, locksPage, type ViewClock } from '../lock-views/lock-views.ts';

export interface OpsFacadeParts {
  instanceId: string;
  /** Read only, by the views below; mutations go through `admin`. */
  engine: LockEngine;
  clock: ViewClock;
  /** The engine's sorted names (one per engine, made with the console services): lock pages and held pages walk it. */
  lockIndex: LockIndex;
  /** The locks with queues now and the most waited-for over the last day (one per engine, made with the console services). */
  contention: ContentionTracker;
  state(): DaemonState;
  role(): NodeRole;
  stats(): StatsView;
  cluster(): ClusterView;
  /** The charts' history and each lock's grant log (history-recorder.ts). */
  history: { range(range: HistoryRange): StatsHistory; lockHistory(name: string): LockHistory };
  admin: AdminFacade;
  metrics(): Promise<{ contentType: string; body: string }>;
  security: SecurityFacade;
  audit: AuditFacade;
  feed: FeedFacade;
}

export function createOpsFacade(p: OpsFacadeParts): DaemonFacade {
  const { engine, clock } = p;
  return {
    instanceId: p.instanceId,
    state: p.state,
    role: p.role,
    grants: () => ({ refusal: engine.grantRefusal(), tokenHighWater: engine.tokenHighWater }),
    stats: p.stats,
    cluster: p.cluster,
    locksPage: (query) => locksPage(engine, p.lockIndex, clock, query),
    lockDetail: (name, page) => {
      const lock = engine.lock(name);
      return lock === undefined ? undefined : lockDetail(lock, clock, page);
    },
    statsHistory: (range) => p.history.range(range),
    lockHistory: (name) => p.history.lockHistory(name),
    clientHeld: (client, page) => clientHeldPage(engine, p.lockIndex, clock, client, page),
    clientWaiting: (client, page) => clientWaitingPage(engine, p.lockIndex, clock, client, page),
    contention: (range, limit) => {
      const now = p.contention.now(limit);
      return { asOf: Math.round(clock.wall(clock.now())), range, now: now.locks, over: p.contention.over(range, limit), queuedLocks: now.queuedLocks };
    },
    searchWaiters: (q, limit) => searchWaiters(p.contention, clock, q, limit),
    admin: p.admin,
    metrics: p.metrics,
    security: p.security,
    audit: p.audit,
    feed: p.feed,
  };
}
