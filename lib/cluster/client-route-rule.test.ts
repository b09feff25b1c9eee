import { describe, expect, it } from 'vitest';
import { type ClientRouteInput, clientRoute } from './client-route-rule.ts';

const input = (over: Partial<ClientRouteInput<string>> = {}): ClientRouteInput<string> => ({
  phase: 'standby',
  followed: { peer: 'a', linkUp: true, alive: true },
  ...over,
});

describe('clientRoute', () => {
  it('a standby or syncing node in touch with its active sends clients there', () => {
    expect(clientRoute(input())).toEqual({ kind: 'redirect', to: 'a' });
    expect(clientRoute(input({ phase: 'syncing' }))).toEqual({ kind: 'redirect', to: 'a' });
  });

  it('holds clients when the link to its active is down, the active went silent, or it follows none', () => {
    expect(clientRoute(input({ followed: { peer: 'a', linkUp: false, alive: true } }))).toEqual({ kind: 'hold' });
    expect(clientRoute(input({ followed: { peer: 'a', linkUp: true, alive: false } }))).toEqual({ kind: 'hold' });
    expect(clientRoute(input({ phase: 'syncing', followed: null }))).toEqual({ kind: 'hold' });
  });

  it('leaves the route alone in every other phase', () => {
    for (const phase of ['discovering', 'promoting', 'active', 'handing-off'] as const) expect(clientRoute(input({ phase }))).toEqual({ kind: 'keep' });
  });
});
