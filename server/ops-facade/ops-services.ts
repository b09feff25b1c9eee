// The daemon's ops side, built once at start: security, the audit log, the latency history,
// the SSE hub and the cluster view. The facade (daemon-facade.ts) hands these to route code.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { DaemonState, NodeRole, Protocol, StatsView } from '../../lib/ops-api/api-types.ts';
import { AUDIT_ROTATE_BYTES, AuditLog } from '../audit/audit-log.ts';
import { EventHub } from '../live-feed/event-hub.ts';
import { HistoryRecorder } from '../chart-history/history-recorder.ts';
import { type HistoryLog, HistoryStore } from '../chart-history/history-store.ts';
import { ContentionTracker } from '../lock-views/contention-tracker.ts';
import { LockIndex } from '../lock-views/lock-index.ts';
import type { ViewClock } from '../lock-views/lock-views.ts';
import { Security } from '../console-auth/security.ts';
import { type NodeAddresses, SingleNodeCluster } from '../admin-ops/single-node-cluster.ts';
import { statsView } from './stats-view.ts';
import type { ClusterBackend } from '../admin-ops/cluster-backend.ts';
import type { LocalLockOps } from '../admin-ops/admin-ops.ts';

export interface OpsServicesOptions {
  /** The peer runtime of a clustered node; absent, the node is a cluster of one. */
  cluster?: ClusterBackend & { role(): NodeRole };
  engine: LockEngine;
  clock: ViewClock;
  instanceId: string;
  nodeId: string;
  host: string;
  dataDir: string | null;
  adminToken: string;
  readToken: string | null;
  state(): DaemonState;
  connections(): Record<Protocol, number>;
  addresses(): NodeAddresses;
  /** Force-release and kick on this node's engine, for the cluster of one (the peer runtime has its own way to them). */
  lockOps: LocalLockOps;
  /** Where the chart history says what it restored or refused (the daemon's logger). */
  logger?: HistoryLog;
}

export interface OpsServices {
  security: Security;
  audit: AuditLog;
  history: HistoryRecorder;
  hub: EventHub;
  /** The engine's sorted names for the lock and held pages (the facade's views walk it). */
  lockIndex: LockIndex;
  /** The contended locks now and over the last day (contention-tracker.ts). */
  contention: ContentionTracker;
  cluster: ClusterBackend;
  role(): NodeRole;
  stats(): StatsView;
  close(): Promise<void>;
}

export async function createOpsServices(o: OpsServicesOptions): Promise<OpsServices> {
  const security = new Security({ adminToken: o.adminToken, readToken: o.readToken, host: o.host });
  const audit = await AuditLog.open(o.dataDir, AUDIT_ROTATE_BYTES, { node: o.nodeId, instance: o.instanceId });
  // The charts' history, read back from the data dir (chart-history/history-store.ts).
  const history = new HistoryRecorder(o.engine, o.clock);
  let historyStore: HistoryStore | null = null;
  try {
    if (o.dataDir !== null) historyStore = await HistoryStore.open(o.dataDir, history, o.logger ?? SILENT);
    return assemble(o, security, audit, history, historyStore);
  } catch (err) {
    await historyStore?.close();
    history.close();
    await audit.close();
    throw err;
  }
}

const SILENT: HistoryLog = { info: () => {}, warn: () => {} };

function assemble(o: OpsServicesOptions, security: Security, audit: AuditLog, history: HistoryRecorder, historyStore: HistoryStore | null): OpsServices {
  const cluster: ClusterBackend =
    o.cluster ?? new SingleNodeCluster({ nodeId: o.nodeId, instanceId: o.instanceId, addresses: o.addresses, lockOps: o.lockOps });
  const role = (): NodeRole => o.cluster?.role() ?? 'active';
  const stats = (): StatsView =>
    statsView({ engine: o.engine, state: o.state, role, connections: o.connections, grantsTotal: () => history.grantsTotal, history });
  const lockIndex = new LockIndex(o.engine);
  const contention = new ContentionTracker(o.engine, o.clock);
  const hub = new EventHub({ engine: o.engine, clock: o.clock, instanceId: o.instanceId, stats, cluster: () => cluster.view(), history, audit });
  return {
    security,
    audit,
    history,
    hub,
    lockIndex,
    contention,
    cluster,
    role,
    stats,
    async close() {
      hub.close();
      lockIndex.close();
      await historyStore?.close();
      contention.close();
      history.close();
      await audit.close();
    },
  };
}
