// What a cluster node needs from the daemon it runs in, in small groups by concern: its clock,
// the client listeners it steers, the store of token ceilings, and the admin operations it runs
// locally. The node's parts (transitions, decisions, messages, admin) each take the groups they
// use, not the whole set (see the contexts in cluster-transitions.ts and its siblings).
import type { Route } from '../lines/routing.ts';
import type { Clock } from '../../lib/engine/clock.ts';
import type { AdminOp, AdminResult } from '../../lib/ops-api/daemon-facade.ts';

/** The injected clock: monotonic ms for every decision, and epoch ms for what people read. */
export interface NodeClock extends Clock {
  /** Epoch ms now (failover timestamps, last-seen times for people). */
  wallNow(): number;
}

/** The lock listeners, as the node steers them when its role changes. */
export interface ClientRouting {
  setRoute(route: Route): void;
  /** Ends every session claim that is not resumable with a redirect there, now (other clients keep the route). */
  redirectSessions(route: Extract<Route, { kind: 'redirect' }>): void;
  /** Tells every resumable session its claim moved to `sessionAddress` (MOVED) and closes it; returns how many. */
  moveSessions(sessionAddress: string): number;
}

/** The engine's lease timer, which runs on the active only. */
export interface EngineDriver {
  pause(): void;
  resume(): void;
}

/** The token ceilings stored in this node's data dir. */
export interface StoredCeilings {
  /** Persists a ceiling a standby is told about (serialized with the token source's own saves). */
  persist(ceiling: bigint): Promise<void>;
  /** The highest ceiling stored. */
  stored(): bigint;
}

/** The admin operations the active runs on its own engine, and their audit trail. */
export interface LocalAdmin {
  /** Runs a force-release, kick or bulk release on this node's engine (the active); a bulk release stops between slices on `stopReason`. */
  run(op: AdminOp & { op: 'force-release' | 'kick' | 'release-client' }, stopReason: () => string | null): Promise<AdminResult>;
  audit(who: string, op: AdminOp, result: AdminResult): void;
}
