import { useCluster, useStats } from '../data/queries.ts';
import { Badge } from '../ui/badge.tsx';
import { Card, Waiting } from '../ui/card.tsx';
import { HandoffControl } from './handoff-control.tsx';
import { RestoreControl } from './restore-control.tsx';

/** This node: its id, role, phase and daemon state, and the handoff and restore controls. */
export function NodeCard() {
  const cluster = useCluster();
  const stats = useStats();
  if (cluster === undefined || stats === undefined)
    return (
      <Card title="This node">
        <Waiting />
      </Card>
    );
  const self = cluster.nodes.find((n) => n.self);
  return (
    <Card title="This node">
      <dl className="mb-4 grid grid-cols-2 gap-3">
        <div>
          <dt className="text-xs text-slate-500 dark:text-slate-400">Node</dt>
          <dd className="truncate font-mono text-sm font-semibold">{cluster.self}</dd>
        </div>
        <div>
          <dt className="text-xs text-slate-500 dark:text-slate-400">Role</dt>
          <dd>
            <Badge tone={stats.role === 'active' ? 'good' : 'info'}>{stats.role}</Badge>
          </dd>
        </div>
        <div>
          <dt className="text-xs text-slate-500 dark:text-slate-400">State</dt>
          <dd>
            <Badge tone={stats.state === 'serving' ? 'good' : 'warn'}>{stats.state}</Badge>
          </dd>
        </div>
        <div>
          <dt className="text-xs text-slate-500 dark:text-slate-400">Phase</dt>
          <dd data-testid="node-phase" className="text-sm font-semibold">
            {cluster.phase}
          </dd>
        </div>
        <div>
          <dt className="text-xs text-slate-500 dark:text-slate-400">Active node</dt>
          <dd className="truncate font-mono text-sm font-semibold">{cluster.active ?? 'none known'}</dd>
        </div>
        <div>
          <dt className="text-xs text-slate-500 dark:text-slate-400">Priority</dt>
          <dd className="text-sm font-semibold tabular-nums">{self === undefined ? '—' : self.priority}</dd>
        </div>
      </dl>
      <div className="flex flex-col gap-4">
        <HandoffControl handoff={cluster.handoff} />
        <RestoreControl cluster={cluster} />
      </div>
    </Card>
  );
}
