// The overview numbers of the console (`GET /api/v1/stats`, and every SSE message).
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { DaemonState, NodeRole, Protocol, StatsView } from '../../lib/ops-api/api-types.ts';
import { BY_CAUSE_WINDOW_MS, type HistoryFacade } from '../chart-history/history-recorder.ts';

/** The window of the "handover latency now" figures. */
export const STATS_WINDOW_MS = 60_000;

export interface StatsSources {
  engine: LockEngine;
  state(): DaemonState;
  role(): NodeRole;
  connections(): Record<Protocol, number>;
  grantsTotal(): number;
  history: HistoryFacade;
}

export function statsView(s: StatsSources): StatsView {
  return {
    asOf: Date.now(),
    state: s.state(),
    role: s.role(),
    locks: s.engine.lockCount,
    held: s.engine.heldCount,
    waiters: s.engine.waiterCount,
    connections: s.connections(),
    tokenHighWater: s.engine.tokenHighWater.toString(),
    grants: s.engine.grantRefusal() ?? 'ok',
    grantsTotal: s.grantsTotal(),
    handover: s.history.summary(STATS_WINDOW_MS),
    handoverByCause: s.history.summaryByCause(BY_CAUSE_WINDOW_MS),
  };
}
