import type { ClusterView, NodeView } from '@/lib/ops-api/api-types.ts';
import { successorBadge } from '@/lib/dashboard/coordination-model.ts';
import { formatAgo } from '@/lib/dashboard/dashboard-format.ts';
import { useCluster, useMessageClock } from '../data/queries.ts';
import { useDataNow } from '../data/use-data-now.ts';
import { Badge } from '../ui/badge.tsx';
import { Card } from '../ui/card.tsx';
import { cn } from '../ui/cn.ts';
import { CoordinationSection } from './coordination-panel.tsx';

function LastSeen({ lastSeen }: { lastSeen: number | null }) {
  const clock = useMessageClock();
  const now = useDataNow(1_000);
  if (lastSeen === null) return <>never seen</>;
  if (clock === undefined) return null;
  // The age at the newest message, plus the local time since it arrived.
  const age = clock.asOf - lastSeen + Math.max(0, now - clock.receivedAt);
  return <>seen {formatAgo(age)}</>;
}

/**
 * A dead node shows what it was when it was lost ("was active", "was standby"), not a role it
 * does not have: a crashed active must not read "standby · dead".
 */
function roleLabel(node: NodeView): string {
  if (node.alive || node.lastRole === undefined) return node.role;
  return node.lastRole === null ? 'role unknown' : `was ${node.lastRole}`;
}

/** Only this node knows its own phase; a peer shows its role. */
function PeerRow({ node, phase, coordination }: { node: NodeView; phase: ClusterView['phase'] | null; coordination: ClusterView['coordination'] }) {
  const successor = successorBadge(coordination, node);
  return (
    <li
      data-testid={`peer-row-${node.id}`}
      className={cn('flex flex-col gap-1 rounded-md border p-2', node.self ? 'border-sky-300 dark:border-sky-700' : 'border-slate-200 dark:border-slate-800')}
    >
      <div className="flex flex-wrap items-center gap-2">
        <span className="text-xs text-slate-600 tabular-nums dark:text-slate-400" title="Priority (0 is highest)">
          <span className="sr-only">priority </span>#{node.priority}
        </span>
        <span className="font-mono text-sm font-semibold">{node.id}</span>
        {node.self && <Badge tone="info">this node</Badge>}
        <span data-testid="peer-role">
          <Badge tone={node.role === 'active' && node.alive ? 'good' : node.alive ? 'neutral' : 'warn'}>{roleLabel(node)}</Badge>
        </span>
        {phase !== null && phase !== node.role && <Badge tone="warn">{phase}</Badge>}
        <Badge tone={node.alive ? 'good' : 'bad'}>{node.alive ? 'alive' : 'dead'}</Badge>
        {node.role === 'standby' && node.alive && <Badge tone={node.inSync ? 'good' : 'warn'}>{node.inSync ? 'in sync' : 'not in sync'}</Badge>}
        {successor !== null && (
          <span data-testid="peer-successor" title={successor.title}>
            <Badge tone={successor.tone}>{successor.text}</Badge>
          </span>
        )}
        {node.yielded && (
          <span title="Handed the active role away: does not take it back by priority until restored">
            <Badge tone="warn">yielded</Badge>
          </span>
        )}
      </div>
      <div className="flex flex-wrap gap-x-3 text-xs text-slate-600 dark:text-slate-300">
        {/* This node's own "last seen" is always now; peers' ages count up between messages. */}
        {!node.self && (
          <span data-testid="peer-last-seen">
            <LastSeen lastSeen={node.lastSeen} />
          </span>
        )}
        {node.replicationLag !== null && (
          <span data-testid="replication-lag">
            replication lag {node.replicationLag.events} events / {node.replicationLag.ms} ms
          </span>
        )}
        <span className="font-mono break-all text-slate-600 dark:text-slate-400">{node.lockAddress}</span>
        {node.httpAddress !== '' && (
          // Protocol-relative: the peer's console over the scheme this page came with.
          <a
            href={`//${node.httpAddress}/`}
            className="font-mono break-all text-sky-700 underline hover:text-sky-900 dark:text-sky-300 dark:hover:text-sky-200"
          >
            <span className="sr-only">console of {node.id} at </span>
            {node.httpAddress}
          </a>
        )}
      </div>
    </li>
  );
}

/** Every node of the cluster, in priority order (the server sends them sorted). */
export function PeersCard({ className }: { className?: string }) {
  const cluster = useCluster();
  const nodes = cluster === undefined ? [] : [...cluster.nodes].sort((a, b) => a.priority - b.priority);
  return (
    <Card title="Cluster" className={className}>
      {cluster !== undefined && <CoordinationSection cluster={cluster} />}
      {nodes.length === 0 ? (
        <p className="text-sm text-slate-500 dark:text-slate-400">{cluster === undefined ? 'Waiting for data…' : 'No peers configured.'}</p>
      ) : (
        <ol className="flex flex-col gap-2" aria-label="Nodes in priority order">
          {nodes.map((n) => (
            <PeerRow key={n.id} node={n} phase={n.self && cluster !== undefined ? cluster.phase : null} coordination={cluster?.coordination} />
          ))}
        </ol>
      )}
    </Card>
  );
}
