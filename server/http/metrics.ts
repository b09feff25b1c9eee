// Prometheus metrics (/metrics). The engine listener only bumps plain numbers (the hot path
// must stay cheap and allocation-free); everything else is read at scrape time: per-protocol
// holders and waiters by walking the engine's locks, connections, role and identity through
// callbacks. The output passes `promtool check metrics` (see server/http/metrics-promtool.test.ts).
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { HandoverCause, Protocol } from '../../lib/engine/claim.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import { FAILOVER_CAUSES, type FailoverCause, type NodeRole } from '../../lib/ops-api/cluster-vocabulary.ts';
import { type ClusterView, HANDOVER_CAUSES } from '../../lib/ops-api/api-types.ts';
import type { AuditHealth } from '../../lib/ops-api/daemon-facade.ts';
import { registerAuditMetrics } from './audit-metrics.ts';

type Tally = Record<Protocol, number>;
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
}

/** prom-client defaults that promtool rejects: gauges named *_total. Their per-type siblings stay (sum them). */
const LINT_FAILING_DEFAULTS = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** Upper bounds (seconds): handovers are sub-millisecond when a release hands over, up to timer lateness for expiries. */
export const HANDOVER_BOUNDS = [0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1];
const CAUSE_INDEX: Record<HandoverCause, number> = { release: 0, disconnect: 1, expiry: 2, 'force-release': 3 };

/**
 * The handover histogram, counted in typed arrays: prom-client's Histogram.observe builds a
 * label object and a hash string per call, too much for 60k grants a second. Exposed by hand
 * in the text format (every cause from the start, zeros included).
 */
class HandoverHistogram {
  /** Per cause: non-cumulative counts, one slot per bound plus one for +Inf. */
  private readonly counts = HANDOVER_CAUSES.map(() => new Float64Array(HANDOVER_BOUNDS.length + 1));
  private readonly sums = new Float64Array(HANDOVER_CAUSES.length);

  observe(cause: HandoverCause, seconds: number): void {
    const c = CAUSE_INDEX[cause];
    const counts = this.counts[c];
    if (counts === undefined) return; // one array per cause, made from HANDOVER_CAUSES: never
    let i = 0;
    while (i < HANDOVER_BOUNDS.length && seconds > (HANDOVER_BOUNDS[i] as number)) i++;
    counts[i] = (counts[i] ?? 0) + 1;
    this.sums[c] = (this.sums[c] ?? 0) + seconds;
  }

  exposition(): string {
    const name = 'baton_handover_latency_seconds';
    const lines = [`# HELP ${name} Time from the previous holder ending to the next grant, by what ended it`, `# TYPE ${name} histogram`];
    HANDOVER_CAUSES.forEach((cause, c) => {
      const counts = this.counts[c];
      if (counts === undefined) return; // one array per cause, made from HANDOVER_CAUSES: never
      let cumulative = 0;
      HANDOVER_BOUNDS.forEach((bound, i) => {
        cumulative += counts[i] ?? 0;
        lines.push(`${name}_bucket{le="${bound}",cause="${cause}"} ${cumulative}`);
      });
      cumulative += counts[HANDOVER_BOUNDS.length] ?? 0;
      lines.push(`${name}_bucket{le="+Inf",cause="${cause}"} ${cumulative}`);
      lines.push(`${name}_sum{cause="${cause}"} ${this.sums[c] ?? 0}`);
      lines.push(`${name}_count{cause="${cause}"} ${cumulative}`);
    });
    return `${lines.join('\n')}\n`;
  }
}

/** Adds the handover histogram to what prom-client renders; one claim census per scrape. */
class BatonRegistry extends Registry {
  private census: ReturnType<typeof claimCensus> | null = null;

  constructor(
    private readonly handover: HandoverHistogram,
    private readonly engine: Pick<LockEngine, 'allLocks'>,
  ) {
    super();
  }

  /** The census of the scrape under way, walked once for all the gauges that read it. */
  currentCensus(): ReturnType<typeof claimCensus> {
    this.census ??= claimCensus(this.engine);
    return this.census;
  }

  override async metrics(): Promise<string> {
    this.census = null;
    try {
      return `${await super.metrics()}\n${this.handover.exposition()}`;
    } finally {
      this.census = null;
    }
  }
}

/** Locks walked per event-loop turn by a scrape's census: about a millisecond of work. */
export const CENSUS_SLICE = 4_096;

/**
 * Holders and waiters per protocol, by walking every lock and queue: O(locks + waiters), at
 * scrape time only, and in slices of CENSUS_SLICE locks with the loop let go between them (one
 * walk at 100k locks held the lock path for about 70 ms). A Map iterator stays valid while the
 * table changes under it, so the figures are a sample of a moving table, as any gauge is.
 */
export async function claimCensus(engine: Pick<LockEngine, 'allLocks'>, slice = CENSUS_SLICE): Promise<{ held: Tally; waiting: Tally }> {
  const held = tally();
  const waiting = tally();
  let inSlice = 0;
  for (const lock of engine.allLocks()) {
    if (lock.holder !== null) held[lock.holder.protocol]++;
    for (let c = lock.head; c !== null; c = c.next) waiting[c.protocol]++;
    if (++inSlice === slice) {
      inSlice = 0;
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
  }
  return { held, waiting };
}

export function createMetrics(engine: LockEngine, connections: () => Record<Protocol, number>, node: NodeIdentity): Registry {
  const handover = new HandoverHistogram();
  const registry = new BatonRegistry(handover, engine);
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
        if (e.handoverCause !== null) handover.observe(e.handoverCause, (e.handoverMs ?? 0) / 1000);
        return;
      case 'release':
        releases[e.protocol]++;
        return;
      case 'expire':
        expiries[e.protocol]++;
        return;
      case 'force-release':
        forced[e.protocol]++;
        return;
      case 'kick':
        kicks[e.protocol]++;
        return;
      case 'leave-queue':
        if (e.reason === 'timeout') timeouts[e.protocol]++;
        return;
      case 'enqueue':
      case 'detach':
      case 'resume':
      case 'reset':
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
  if (node.cluster !== undefined) clusterGauges(registry, node.cluster);
  const info = new Gauge({
    name: 'baton_node_info',
    help: "This node's id and this process's instance id (always 1)",
    labelNames: ['node', 'instance_id'] as const,
    registers: [registry],
  });
  info.set({ node: node.nodeId, instance_id: node.instanceId }, 1);
  return registry;
}

/**
 * Peers, replication lag and failovers from the cluster view. Gauges reset at each scrape: a
 * node's lag series exists only while it is a standby with a known lag.
 */
function clusterGauges(registry: Registry, cluster: () => ClusterView): void {
  new Gauge({
    name: 'baton_peer_up',
    help: 'Whether this node sees the node alive (1) or not (0), for every node of the cluster, itself included',
    labelNames: ['node'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const n of cluster().nodes) this.set({ node: n.id }, n.alive ? 1 : 0);
    },
  });
  const lag = (name: string, help: string, read: (l: { events: number; ms: number }) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['node'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const n of cluster().nodes) if (n.replicationLag !== null) this.set({ node: n.id }, read(n.replicationLag));
      },
    });
  };
  lag('baton_replication_lag_events', 'Engine events the standby has not acknowledged yet, for standbys with a known lag', (l) => l.events);
  lag('baton_replication_lag_seconds', 'Age of the oldest event the standby has not acknowledged, for standbys with a known lag', (l) => l.ms / 1000);
  new Gauge({
    name: 'baton_failovers',
    help: "Failovers in the cluster view's retained list, by cause (a gauge: old entries leave the list, so it can go down)",
    labelNames: ['cause'] as const,
    registers: [registry],
    collect() {
      // Every cause, so each series exists (at 0) from the first scrape.
      const counts = new Map<FailoverCause, number>(FAILOVER_CAUSES.map((c) => [c, 0]));
      for (const f of cluster().failovers) counts.set(f.cause, (counts.get(f.cause) ?? 0) + 1);
      for (const [cause, n] of counts) this.set({ cause }, n);
    },
  });
}
