// Prometheus metrics (/metrics). The engine listener only bumps plain numbers and typed-array
// histograms (claim-timing.ts: the hot path must stay cheap and allocation-free); everything
// else is read at scrape time: per-protocol holders and waiters and the oldest hold from the
// claim census (claim-census.ts: a big table is walked in the background, never by a scrape), connections, role, identity, the cluster (cluster-metrics.ts) and the
// alert inputs (guard-metrics.ts) through callbacks. The output passes `promtool check metrics` (see server/http/metrics-promtool.test.ts).
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { Protocol } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import type { NodeRole } from '../../lib/ops-api/cluster-vocabulary.ts';
import type { ClusterView } from '../../lib/ops-api/api-types.ts';
import type { AuditHealth } from '../../lib/ops-api/daemon-facade.ts';
import { registerAuditMetrics } from './audit-metrics.ts';
import { type Census, ClaimCensus, type Tally } from './claim-census.ts';
import { ClaimTiming } from './claim-timing.ts';
import { type ClusterNodeSources, registerClusterMetrics } from './cluster-metrics.ts';
import { registerGuardMetrics } from './guard-metrics.ts';

const tally = (): Tally => ({ keyed: 0, session: 0 });
const PROTOCOLS: readonly Protocol[] = ['keyed', 'session'];

export interface NodeIdentity {
  /** Read at each scrape: a standby can become active. */
  role(): NodeRole;
  nodeId: string;
  instanceId: string;
  /** Open event streams (dashboards); absent without the console. */
  eventStreams?: () => number;
  /** The cluster as this node sees it, read at each scrape; without it no cluster series are exported. */
  cluster?: () => ClusterView;
  /** The audit log's health (audit-metrics.ts); without it no audit series are exported. */
  audit?: () => AuditHealth;
  /** The engine's clock (ms), for the age of the oldest hold; without it baton_oldest_hold_seconds is not exported. */
  engineNow?: () => number;
  /** Tokens this node can still issue (BlockTokenSource.remaining); without it baton_tokens_remaining is not exported. */
  tokensRemaining?: () => bigint;
  /** What only a cluster node has (not its view: `cluster` above); with it the cluster-node series are exported. */
  clusterNode?: ClusterNodeSources;
  /** Console sign-ins answered 429 (Security.throttledSignIns); without it that counter is not exported. */
  signInsThrottled?: () => number;
}

/** prom-client defaults that promtool rejects: gauges named *_total. Their per-type siblings stay (sum them). */
const LINT_FAILING_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** Adds the typed-array histograms to what prom-client renders; one claim census read per scrape. */
class BatonRegistry extends Registry {
  private census: Census | Promise<Census> | null = null;

  constructor(
    private readonly timing: ClaimTiming,
    readonly claims: ClaimCensus,
  ) {
    super();
  }

  /** The census of the scrape under way, read once for all the gauges that read it. */
  currentCensus(): Census | Promise<Census> {
    this.census ??= this.claims.read();
    return this.census;
  }

  override async metrics(): Promise<string> {
    this.census = null;
    try {
      return `${await super.metrics()}\n${this.timing.exposition()}`;
    } finally {
      this.census = null;
    }
  }
}

/** The registry of createMetrics: stopCensus() ends the census's background walks (at shutdown). */
export interface BatonMetrics extends Registry {
  stopCensus(): void;
}

export function createMetrics(engine: LockEngine, connections: () => Record<Protocol, number>, node: NodeIdentity): BatonMetrics {
  const timing = new ClaimTiming();
  const registry = new BatonRegistry(timing, new ClaimCensus(engine));
  // The standard process_* and nodejs_* names, unprefixed, as dashboards for Node services expect.
  collectDefaultMetrics({ register: registry });
  for (const name of LINT_FAILING_DEFAULTS) registry.removeSingleMetric(name);

  const grants = tally();
  const releases = tally();
  const expiries = tally();
  const timeouts = tally();
  const forced = tally();
  const kicks = tally();
  engine.subscribe((e: LockEvent) => {
    switch (e.type) {
      case 'grant':
        grants[e.protocol]++;
        // A standby's mirrored grants carry their wait now (the charts count it, so a new active
        // shows the past right); the metric leaves it to the active, which counted it.
        timing.granted(e, node.role() === 'active');
        return;
      case 'release':
        releases[e.protocol]++;
        timing.ended(e);
        return;
      case 'expire':
        expiries[e.protocol]++;
        timing.ended(e);
        return;
      case 'force-release':
        forced[e.protocol]++;
        timing.ended(e);
        return;
      case 'kick':
        kicks[e.protocol]++;
        return;
      case 'leave-queue':
        if (e.reason === 'timeout') timeouts[e.protocol]++;
        return;
      case 'reset':
        timing.reset(e);
        return;
      case 'enqueue':
      case 'detach':
      case 'resume':
        return;
    }
  });

  const counter = (name: string, help: string, source: Tally): void => {
    new Counter({
      name,
      help,
      labelNames: ['protocol'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const p of PROTOCOLS) this.inc({ protocol: p }, source[p]);
      },
    });
  };
  counter('baton_grants_total', 'Locks granted', grants);
  counter('baton_releases_total', 'Locks released by their holder (or its disconnect)', releases);
  counter('baton_expiries_total', 'Locks reclaimed at the end of their lease', expiries);
  counter('baton_wait_timeouts_total', 'Waiters that left the queue at their wait deadline', timeouts);
  counter('baton_force_releases_total', 'Locks force-released by an admin', forced);
  counter('baton_kicks_total', 'Waiters removed from a queue by an admin', kicks);

  const perProtocol = (name: string, help: string, read: () => Tally | Promise<Tally>): void => {
    new Gauge({
      name,
      help,
      labelNames: ['protocol'] as const,
      registers: [registry],
      async collect() {
        const t = await read();
        for (const p of PROTOCOLS) this.set({ protocol: p }, t[p]);
      },
    });
  };
  perProtocol('baton_locks_held', "Locks with a holder, by the holder's protocol", async () => (await registry.currentCensus()).held);
  perProtocol('baton_waiters', 'Requests waiting in lock queues, by protocol', async () => (await registry.currentCensus()).waiting);
  perProtocol('baton_sessions', 'Live claims (holding or waiting), by protocol: one per lock a client holds or waits for', async () => {
    const { held, waiting } = await registry.currentCensus();
    return { keyed: held.keyed + waiting.keyed, session: held.session + waiting.session };
  });
  perProtocol('baton_connections', 'Open client connections', connections);

  if (node.audit !== undefined) registerAuditMetrics(registry, node.audit);
  const streams = node.eventStreams;
  if (streams !== undefined) {
    new Gauge({
      name: 'baton_console_event_streams',
      help: 'Open server-sent event streams of the ops API (dashboards)',
      registers: [registry],
      collect() {
        this.set(streams());
      },
    });
  }
  // Resumable session claims whose connection is gone (the dashboard's "reconnecting"): bounded by --max-parked.
  new Gauge({
    name: 'baton_claims_between_connections',
    help: 'Resumable session claims kept for their clients to RESUME, with no connection behind them (at most --max-parked, each at most --max-park)',
    registers: [registry],
    collect() {
      this.set(engine.detachedCount);
    },
  });
  new Counter({
    name: 'baton_claims_not_kept_total',
    help: 'Resumable session claims ended when their connection was lost (as a close ends them) because --max-parked claims were waiting already',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(engine.detachRefusedCount);
    },
  });
  new Gauge({
    name: 'baton_token_high_water',
    help: 'Largest fencing token issued (as a float; exact value in /api)',
    registers: [registry],
    collect() {
      this.set(Number(engine.tokenHighWater));
    },
  });
  new Gauge({
    name: 'baton_grants_refused',
    help: 'Whether this node refuses every grant that needs a new token (1), by reason: tokens-exhausted (the u64 is used up), storage-unavailable (the token ceiling cannot be written)',
    labelNames: ['reason'] as const,
    registers: [registry],
    collect() {
      const why = engine.grantRefusal();
      this.set({ reason: 'tokens-exhausted' }, why === 'tokens-exhausted' ? 1 : 0);
      this.set({ reason: 'storage-unavailable' }, why === 'storage-unavailable' ? 1 : 0);
    },
  });
  new Gauge({
    name: 'baton_node_role',
    help: "This node's role: 1 for the current one, 0 for the other",
    labelNames: ['role'] as const,
    registers: [registry],
    collect() {
      const role = node.role();
      this.set({ role: 'active' }, role === 'active' ? 1 : 0);
      this.set({ role: 'standby' }, role === 'standby' ? 1 : 0);
    },
  });
  const now = node.engineNow;
  registerGuardMetrics(registry, {
    oldestHoldSeconds:
      now === undefined
        ? undefined
        : async () => {
            const { oldestGrantedAt } = await registry.currentCensus();
            return oldestGrantedAt === Number.POSITIVE_INFINITY ? 0 : Math.max(0, now() - oldestGrantedAt) / 1000;
          },
    tokensRemaining: node.tokensRemaining,
    signInsThrottled: node.signInsThrottled,
  });
  if (node.cluster !== undefined) registerClusterMetrics(registry, node.cluster, node.clusterNode);
  const info = new Gauge({
    name: 'baton_node_info',
    help: "This node's id and this process's instance id (always 1)",
    labelNames: ['node', 'instance_id'] as const,
    registers: [registry],
  });
  info.set({ node: node.nodeId, instance_id: node.instanceId }, 1);
  return Object.assign(registry, { stopCensus: () => registry.claims.stop() });
}
