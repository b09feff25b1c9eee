import type { ReactNode } from 'react';
import type { ClusterView } from '@/lib/ops-api/api-types.ts';
import { type CoordinationModel, coordinationModel, coordinationModelAt, type EtcdModel } from '@/lib/dashboard/coordination-model.ts';
import { useClusterReceivedAt } from '../data/queries.ts';
import { useDataNow } from '../data/use-data-now.ts';
import { PAGE_BEAT_MS } from '../data/use-now.ts';
import { Badge } from '../ui/badge.tsx';
import { cn } from '../ui/cn.ts';

const TERM = 'text-slate-600 dark:text-slate-400';

/** One term and its value: a row of the list's grid (a subgrid, so every term lines up). */
function Row({ term, children, testId, className }: { term: string; children: ReactNode; testId?: string; className?: string }) {
  return (
    <div className="col-span-2 grid grid-cols-subgrid items-baseline">
      <dt className={TERM}>{term}</dt>
      <dd data-testid={testId} className={cn('min-w-0', className)}>
        {children}
      </dd>
    </div>
  );
}

/**
 * The etcd mode's lines. Every row is always there (a blocked node's reason takes the grant row's
 * place, across the whole width; an absent error reads "none"), and the countdown keeps a fixed
 * width, so nothing moves as the figures change.
 */
function EtcdDetails({ model }: { model: EtcdModel }) {
  return (
    <section aria-label="Coordination" data-testid="coordination" className="mb-3 rounded-md border border-slate-200 p-2 text-xs dark:border-slate-800">
      <dl className="grid grid-cols-[max-content_minmax(0,1fr)] gap-x-3 gap-y-1">
        <Row term="Coordination" testId="coordination-mode">
          <Badge tone="info">{model.label}</Badge>
        </Row>
        {model.blocked === null ? (
          <Row term="Grants" testId="coordination-grant">
            <Badge tone={model.grant.tone}>
              <span data-testid="coordination-grant-left" className="inline-block min-w-[10ch] tabular-nums">
                {model.grant.text}
              </span>
            </Badge>{' '}
            <span className={cn('whitespace-nowrap', TERM)}>lease TTL {model.ttl}</span>
          </Row>
        ) : (
          <div className="col-span-2">
            <dt className="sr-only">Grants</dt>
            <dd
              data-testid="coordination-blocked"
              className="rounded border border-red-300 bg-red-50 px-2 py-1 text-sm font-semibold text-red-900 dark:border-red-700 dark:bg-red-950 dark:text-red-100"
            >
              Cannot grant: {model.blocked}
            </dd>
          </div>
        )}
        <Row term="Role held by" testId="coordination-holder" className="font-mono">
          {model.holder}
        </Row>
        <Row term="In-sync set" testId="coordination-in-sync">
          <span className="font-mono">{model.inSync}</span>
          {!model.electable && <span className={TERM}> · this node may not campaign</span>}
        </Row>
        <Row term="Quiet period" testId="coordination-quiet">
          {model.quiet === null ? <span className={TERM}>none</span> : <Badge tone="warn">{model.quiet}</Badge>}
        </Row>
        <Row term="Replies waiting" testId="coordination-replies-waiting" className="tabular-nums">
          {model.repliesWaiting}
        </Row>
        <Row term="Endpoints">
          <span data-testid="etcd-endpoints-summary">
            {model.healthyEndpoints}/{model.endpoints.length} healthy
          </span>
          <ul data-testid="etcd-endpoints" className="mt-0.5 flex flex-col gap-1">
            {model.endpoints.map((e) => (
              <li key={e.endpoint} data-testid="etcd-endpoint" data-healthy={e.healthy}>
                <div className="flex flex-wrap items-baseline gap-x-2">
                  <Badge tone={e.healthy ? 'good' : 'bad'}>{e.healthy ? 'healthy' : 'unhealthy'}</Badge>
                  <span className="font-mono break-all">{e.endpoint}</span>
                  {e.checked !== null && <span className={TERM}>{e.checked}</span>}
                </div>
                {!e.healthy && <p className="break-words text-red-800 dark:text-red-300">{e.status}</p>}
              </li>
            ))}
          </ul>
        </Row>
        <Row term="Last etcd error" testId="coordination-last-error" className={cn('break-words', model.lastError === null && TERM)}>
          {model.lastError ?? 'none'}
        </Row>
      </dl>
    </section>
  );
}

/** The mode, and in the etcd mode everything about it; the default mode is one quiet line. */
export function CoordinationDetails({ model }: { model: CoordinationModel }) {
  if (model.mode === 'etcd') return <EtcdDetails model={model} />;
  return (
    <p data-testid="coordination-mode" className={cn('mb-3 text-xs', TERM)}>
      Coordination: {model.label}
    </p>
  );
}

/** The etcd mode's details, with the grant time and the endpoints' ages moving on the page's beat between views. */
function EtcdCoordination({ cluster }: { cluster: ClusterView }) {
  const arrivedAt = useClusterReceivedAt();
  const now = useDataNow(PAGE_BEAT_MS);
  const model = coordinationModelAt(cluster, arrivedAt, now);
  return model === null ? null : <CoordinationDetails model={model} />;
}

/** Nothing on a single node. */
export function CoordinationSection({ cluster }: { cluster: ClusterView }) {
  if (cluster.coordination !== undefined) return <EtcdCoordination cluster={cluster} />;
  const model = coordinationModel(cluster, 0);
  return model === null ? null : <CoordinationDetails model={model} />;
}
