// Hand-made histories for the checker's tests: clients, writes, faults and failovers at times in
// ms from T0, with 2 s leases.
import type { FailoverView } from '../lib/ops-api/api-types.ts';
import type { ClientEvent, ClientProtocol, FaultWindow, History, ResourceWrite } from './history.ts';

export const T0 = 1_700_000_000_000;
export const LEASE = 2_000;

/** A client that queued at `from - 5`, got `lock` at `from` with `token` and released it at `to` (OK). */
export function hold(
  client: string,
  lock: string,
  token: number,
  from: number,
  to: number,
  protocol: ClientProtocol = 'keyed',
  outcome: 'ok' | 'stale' = 'ok',
): ClientEvent[] {
  const t = T0 + from;
  return [
    { kind: 'acquire', t: t - 5, client, lock, protocol },
    { kind: 'grant', t, client, lock, protocol, token: String(token), leaseMs: LEASE },
    { kind: 'release', t: T0 + to, client, lock, token: String(token) },
    { kind: 'released', t: T0 + to + 1, client, lock, token: String(token), outcome },
  ];
}

/** A session client that got `lock` at `from` and noticed it lost it at `lostAt` (its lease.signal aborted). */
export function lostSession(client: string, lock: string, token: number, from: number, lostAt: number): ClientEvent[] {
  return [
    { kind: 'acquire', t: T0 + from - 5, client, lock, protocol: 'session' },
    { kind: 'grant', t: T0 + from, client, lock, protocol: 'session', token: String(token), leaseMs: LEASE },
    { kind: 'lost', t: T0 + lostAt, client, lock, token: String(token), reason: 'REDIRECT' },
  ];
}

export function write(
  lock: string,
  client: string,
  token: number,
  at: number,
  outcome: ResourceWrite['outcome'],
  highestBefore: number | null,
  expected = 0,
): ResourceWrite {
  return {
    t: T0 + at,
    lock,
    client,
    token: String(token),
    expected,
    value: expected + 1,
    outcome,
    highestBefore: highestBefore === null ? null : String(highestBefore),
  };
}

export function fault(kind: FaultWindow['kind'], from: number, to: number, target = 'a'): FaultWindow {
  return { kind, target, start: T0 + from, end: T0 + to };
}

export function failover(at: number, cause: FailoverView['cause'], from = 'a', to = 'b'): FailoverView {
  return { at: T0 + at, from, to, gapMs: 1_000, cause };
}

export function history(over: Partial<History> = {}): History {
  return {
    clientEvents: [],
    writes: [],
    faults: [],
    failovers: [],
    final: { active: 'a', locks: [{ name: 'L', holder: null, queueLength: 0 }] },
    maxLeaseMs: LEASE,
    peerTimeoutMs: 1_000,
    runStart: T0,
    runEnd: T0 + 60_000,
    ...over,
  };
}
