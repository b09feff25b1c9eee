// A CoordinationView as an etcd-mode active sees it when all is well (three healthy endpoints,
// this node holding the role, one in-sync standby), for the tests of what reads the view: /readyz,
// /metrics and the console. Each test overrides the fields it is about.
import type { CoordinationView } from '../api-types.ts';

export const ETCD_ENDPOINTS = ['http://127.0.0.1:2379', 'http://127.0.0.1:22379', 'http://127.0.0.1:32379'];

export function coordinationView(over: Partial<CoordinationView> = {}): CoordinationView {
  return {
    mode: 'etcd',
    endpoints: ETCD_ENDPOINTS.map((endpoint) => ({ endpoint, healthy: true, lastError: null, checkedAgoMs: 400 })),
    holding: true,
    holder: 'a',
    lease: { id: '694d8c4c1f8e0a11', ttlMs: 2_000, grantRemainingMs: 1_250 },
    inSync: ['b'],
    electable: true,
    quiet: null,
    repliesWaiting: 0,
    blocked: null,
    lastError: null,
    ...over,
  };
}
