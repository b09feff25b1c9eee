// Both lock listeners steered as one, the way a cluster node moves its clients when its role
// changes: one route for both protocols; on a handoff, the session claims that cannot move are
// redirected at once, and the resumable ones are told where their claim went (MOVED) once the
// successor has promoted. The cluster decides when (server/cluster); how is the listeners' own.
import type { Route } from './routing.ts';

/** A session connection as the steering sees it (SessionConnection). */
export interface MovableSession {
  /** Whether its claim may outlive the connection (it sent a claim key, and is live). */
  readonly resumable: boolean;
  /** Says MOVED with the successor's session address and closes, keeping the claim; false when it has no such claim. */
  moveTo(sessionAddress: string): boolean;
}

/** A listener as the steering sees it (LineListener). */
export interface SteeredListener {
  setRoute(route: Route): void;
}

/** The session listener as the steering sees it (LineListener<SessionConnection>). */
export interface SteeredSessions<S extends MovableSession> extends SteeredListener {
  readonly connections: Iterable<S>;
  redirectOpen(route: Extract<Route, { kind: 'redirect' }>, spare?: (conn: S) => boolean): void;
}

export class ClientSteering<S extends MovableSession> {
  constructor(
    private readonly keyed: SteeredListener,
    private readonly sessions: SteeredSessions<S>,
  ) {}

  /** Both protocols' clients, present and to come, take `route`. */
  setRoute(route: Route): void {
    this.keyed.setRoute(route);
    this.sessions.setRoute(route);
  }

  /** Ends every session claim that is not resumable with a redirect there, now; resumable ones are spared (moveSessions moves them). */
  redirectSessions(route: Extract<Route, { kind: 'redirect' }>): void {
    this.sessions.redirectOpen(route, (conn) => conn.resumable);
  }

  /** Tells every resumable session its claim moved to `sessionAddress` and closes it; returns how many. */
  moveSessions(sessionAddress: string): number {
    let moved = 0;
    for (const conn of this.sessions.connections) if (conn.moveTo(sessionAddress)) moved++;
    return moved;
  }
}
