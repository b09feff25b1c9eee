// The steering over recording listeners and sessions: one route for both protocols, the
// resumable sessions spared by a redirect and moved by a move, and the count of those moved.
import { describe, expect, it } from 'vitest';
import { ClientSteering, type MovableSession, type SteeredSessions } from './client-steering.ts';
import { HOLD, type Route } from './routing.ts';

const REDIRECT: Extract<Route, { kind: 'redirect' }> = { kind: 'redirect', lock: '10.0.0.2:7070', session: '10.0.0.2:7071' };

class FakeSession implements MovableSession {
  movedTo: string | null = null;
  constructor(
    readonly resumable: boolean,
    private readonly live = true,
  ) {}
  moveTo(sessionAddress: string): boolean {
    if (!this.resumable || !this.live) return false;
    this.movedTo = sessionAddress;
    return true;
  }
}

function setup(conns: FakeSession[]) {
  const routes: string[] = [];
  const redirected: FakeSession[] = [];
  const keyed = { setRoute: (r: Route) => void routes.push(`keyed ${r.kind}`) };
  const sessions: SteeredSessions<FakeSession> = {
    connections: new Set(conns),
    setRoute: (r) => void routes.push(`session ${r.kind}`),
    redirectOpen: (_route, spare) => {
      for (const c of conns) if (spare?.(c) !== true) redirected.push(c);
    },
  };
  return { steering: new ClientSteering(keyed, sessions), routes, redirected };
}

describe('ClientSteering', () => {
  it('gives both protocols the same route', () => {
    const { steering, routes } = setup([]);
    steering.setRoute(HOLD);
    steering.setRoute(REDIRECT);
    expect(routes).toEqual(['keyed hold', 'session hold', 'keyed redirect', 'session redirect']);
  });

  it('redirects the sessions that cannot move and spares the resumable ones', () => {
    const plain = new FakeSession(false);
    const resumable = new FakeSession(true);
    const { steering, redirected, routes } = setup([plain, resumable]);
    steering.redirectSessions(REDIRECT);
    expect(redirected).toEqual([plain]);
    // The route for the others and for new connections is not changed by it.
    expect(routes).toEqual([]);
  });

  it('moves every resumable session to the successor and counts them', () => {
    const a = new FakeSession(true);
    const b = new FakeSession(true);
    const plain = new FakeSession(false);
    const closing = new FakeSession(true, false);
    const { steering } = setup([a, plain, b, closing]);
    expect(steering.moveSessions('10.0.0.2:7071')).toBe(2);
    expect([a.movedTo, b.movedTo, plain.movedTo, closing.movedTo]).toEqual(['10.0.0.2:7071', '10.0.0.2:7071', null, null]);
  });
});
