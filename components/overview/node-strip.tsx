import type { ReactNode } from 'react';
import { formatCount, groupDigits } from '@/lib/dashboard/dashboard-format.ts';
import { useCluster, useStats } from '../data/queries.ts';
import { Badge } from '../ui/badge.tsx';

function Figure({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="flex items-baseline gap-1">
      <dt className="text-xs text-slate-600 dark:text-slate-400">{label}</dt>
      <dd className="font-semibold tabular-nums">{children}</dd>
    </div>
  );
}

/**
 * The node and its cluster in one line above the lock table (the detailed cards are below it):
 * role, state, token high-water mark, lock totals, and each peer as a badge. So the table's
 * first rows fit on a laptop screen without scrolling.
 */
export function NodeStrip() {
  const cluster = useCluster();
  const stats = useStats();
  if (cluster === undefined || stats === undefined) return null;
  const nodes = [...cluster.nodes].sort((a, b) => a.priority - b.priority);
  const blocked = cluster.coordination?.blocked ?? null;
  return (
    <section
      aria-label="This node at a glance"
      data-testid="node-strip"
      className="rounded-lg border border-slate-200 bg-white px-3 py-2 text-sm shadow-sm dark:border-slate-800 dark:bg-slate-900"
    >
      <dl className="flex flex-wrap items-center gap-x-5 gap-y-1">
        <div className="flex items-center gap-1">
          <dt className="sr-only">Node</dt>
          <dd className="font-mono font-semibold">{cluster.self}</dd>
        </div>
        <div className="flex items-center gap-1">
          <dt className="sr-only">Role</dt>
          <dd>
            <Badge tone={stats.role === 'active' ? 'good' : 'info'}>{stats.role}</Badge>
          </dd>
        </div>
        <div className="flex items-center gap-1">
          <dt className="sr-only">State</dt>
          <dd>
            <Badge tone={stats.state === 'serving' ? 'good' : 'warn'}>{stats.state}</Badge>
          </dd>
        </div>
        {stats.grants !== 'ok' && (
          <div className="flex items-center gap-1">
            <dt className="sr-only">Grants</dt>
            <dd>
              <Badge tone="bad">grants refused: {stats.grants}</Badge>
            </dd>
          </div>
        )}
        {blocked !== null && (
          // The etcd mode's active that cannot grant says why above the fold (the Cluster card has the details).
          <div className="flex items-center gap-1">
            <dt className="sr-only">etcd coordination</dt>
            <dd data-testid="strip-coordination-blocked">
              <Badge tone="bad">cannot grant: {blocked}</Badge>
            </dd>
          </div>
        )}
        <Figure label="Locks">{formatCount(stats.locks)}</Figure>
        <Figure label="Held">{formatCount(stats.held)}</Figure>
        <Figure label="Waiters">{formatCount(stats.waiters)}</Figure>
        <Figure label="Token high water">
          <span className="font-mono" title={stats.tokenHighWater}>
            {groupDigits(stats.tokenHighWater)}
          </span>
        </Figure>
        {cluster.clustered && (
          <div className="flex flex-wrap items-center gap-1">
            <dt className="text-xs text-slate-600 dark:text-slate-400">Peers</dt>
            {nodes.map((n) => (
              <dd key={n.id} data-testid={`strip-peer-${n.id}`}>
                <Badge tone={!n.alive ? 'bad' : n.role === 'active' ? 'good' : n.inSync ? 'neutral' : 'warn'}>
                  {n.id} {n.alive ? n.role : 'dead'}
                  {n.role === 'standby' && n.alive && !n.inSync ? ' (not in sync)' : ''}
                </Badge>
              </dd>
            ))}
          </div>
        )}
      </dl>
    </section>
  );
}
