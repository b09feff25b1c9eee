import { describe, expect, it } from 'vitest';
import type { ClusterView, NodeView } from '../ops-api/api-types.ts';
import { activeProbeUrl, followCandidates, switchUrl } from './follow-cluster.ts';

const node = (id: string, priority: number, self: boolean, httpAddress = `127.0.0.1:${3000 + priority}`): NodeView => ({
  id,
  role: 'standby',
  priority,
  self,
  alive: true,
  lastSeen: null,
  replicationLag: null,
  inSync: true,
  yielded: false,
  lockAddress: '',
  sessionAddress: '',
  httpAddress,
});
const cluster = (nodes: NodeView[], clustered = true): Pick<ClusterView, 'nodes' | 'clustered'> => ({ nodes, clustered });

describe('followCandidates', () => {
  it('lists the other nodes with a console, highest priority first', () => {
    const c = cluster([node('c', 2, false), node('a', 0, true), node('b', 1, false), node('d', 3, false, '')]);
    expect(followCandidates(c)).toEqual([
      { id: 'b', httpAddress: '127.0.0.1:3001' },
      { id: 'c', httpAddress: '127.0.0.1:3002' },
    ]);
  });

  it('has nobody to follow on a single node or before any view arrived', () => {
    expect(followCandidates(cluster([node('a', 0, true)], false))).toEqual([]);
    expect(followCandidates(undefined)).toEqual([]);
  });
});

describe('activeProbeUrl and switchUrl', () => {
  it('asks the node’s /readyz?role=active over the page’s scheme', () => {
    expect(activeProbeUrl('http:', '127.0.0.1:3001')).toBe('http://127.0.0.1:3001/readyz?role=active');
  });

  it('keeps the page’s query (the selected lock) and fragment on the other node', () => {
    expect(switchUrl('http:', '127.0.0.1:3001', '?lock=jobs%2Fnightly&q=jobs', '#locks')).toBe('http://127.0.0.1:3001/?lock=jobs%2Fnightly&q=jobs#locks');
    expect(switchUrl('https:', '[::1]:3001', '')).toBe('https://[::1]:3001/');
  });
});
