// Each configured etcd endpoint probed on its own, for the console, /metrics and the logs
// (CoordinationView['endpoints']). The role holder's client talks to whichever endpoint answers, so
// its errors cannot say which member is down; here every endpoint has its own etcd3 client and its
// own chain of status calls (Maintenance.Status: answered by that member alone, no quorum needed).
// A call that hangs holds back only its own endpoint: the next one starts when it ends (never two
// at once on one endpoint, so a dead member costs one call per deadline, not a pile of them).
// Nothing here is on the grant path or decides anything: it only describes.
import type { IStatusResponse } from 'etcd3';
import { etcdClient } from './etcd-client.ts';

/**
 * One endpoint as probed: the shape of CoordinationView['endpoints'] (lib/ops-api/api-types.ts),
 * written out here because server/coordination may not import the ops contract; the view takes it
 * as it is (the two are the same shape, so a change to either fails the type check where they meet).
 */
export interface EndpointHealthRow {
  endpoint: string;
  healthy: boolean;
  lastError: string | null;
  checkedAgoMs: number | null;
}

/** The one call this file makes of a client (etcd3's Maintenance.status), so a test can stand in for it. */
export interface StatusClient {
  maintenance: { status(options: { deadline: number }): Promise<Pick<IStatusResponse, 'leader'>> };
  close(): void;
}

export interface EndpointHealthOptions {
  endpoints: readonly string[];
  /** The monotonic clock (ms) the ages are read on. */
  now: () => number;
  /** From the start of one status call to the start of the next on the same endpoint; 2,000 if not given. */
  everyMs?: number;
  /** Each call's deadline; 1,000 if not given (under everyMs, so a hung member is retried on time). */
  timeoutMs?: number;
  /** One client per endpoint; etcd-client.ts's if not given. */
  client?: (endpoint: string) => StatusClient;
}

/** An error's text as shown: etcd and gRPC messages can be long, and they reach every page and scrape. */
export const MAX_ERROR_CHARS = 200;

interface Probe {
  readonly endpoint: string;
  readonly client: StatusClient;
  healthy: boolean;
  lastError: string | null;
  /** When the last call ended (monotonic ms); null before the first. */
  checkedAt: number | null;
  timer: NodeJS.Timeout | undefined;
  inFlight: Promise<void> | null;
}

export class EndpointHealth {
  private readonly probes: Probe[];
  private running = false;
  private stopping: Promise<void> | undefined;

  constructor(private readonly o: EndpointHealthOptions) {
    const make = o.client ?? ((endpoint: string): StatusClient => etcdClient([endpoint]));
    // One probe per distinct endpoint: a list given twice is still one member.
    this.probes = [...new Set(o.endpoints)].map((endpoint) => ({
      endpoint,
      client: make(endpoint),
      healthy: false,
      lastError: null,
      checkedAt: null,
      timer: undefined,
      inFlight: null,
    }));
  }

  /** Starts every endpoint's first call now. */
  start(): void {
    if (this.running || this.stopping !== undefined) return;
    this.running = true;
    for (const p of this.probes) this.probe(p);
  }

  /** Each endpoint as last probed: healthy when it answered its last call and has a raft leader. */
  view(now: number = this.o.now()): EndpointHealthRow[] {
    return this.probes.map((p) => ({
      endpoint: p.endpoint,
      healthy: p.healthy,
      lastError: p.lastError,
      checkedAgoMs: p.checkedAt === null ? null : Math.max(0, Math.round(now - p.checkedAt)),
    }));
  }

  /** Stops the probes, waits for the calls under way (each bounded by its deadline) and closes the clients. Safe to call twice. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.running = false;
      for (const p of this.probes) clearTimeout(p.timer);
      await Promise.all(this.probes.map((p) => p.inFlight));
      for (const p of this.probes) p.client.close();
    })();
    return this.stopping;
  }

  private probe(p: Probe): void {
    const startedAt = this.o.now();
    const timeoutMs = this.o.timeoutMs ?? 1_000;
    p.inFlight = this.check(p, timeoutMs).then(() => {
      p.inFlight = null;
      if (!this.running) return;
      const wait = Math.max(0, startedAt + (this.o.everyMs ?? 2_000) - this.o.now());
      p.timer = setTimeout(() => this.probe(p), wait);
    });
  }

  private async check(p: Probe, timeoutMs: number): Promise<void> {
    try {
      const status = await p.client.maintenance.status({ deadline: Date.now() + timeoutMs });
      // A member that answers but follows no leader cannot serve a linearizable read or a write (quorum lost).
      const leaderless = String(status.leader) === '0';
      p.healthy = !leaderless;
      p.lastError = leaderless ? 'answers, but has no raft leader (quorum lost?)' : null;
    } catch (err) {
      p.healthy = false;
      p.lastError = errorText(err);
    }
    p.checkedAt = this.o.now();
  }
}

function errorText(err: unknown): string {
  // grpc-js ends an unreachable host's message with an empty "Resolution note:"; it says nothing.
  const text = (err instanceof Error ? err.message : String(err)).replace(/\s*Resolution note:\s*$/, '');
  return text.length <= MAX_ERROR_CHARS ? text : `${text.slice(0, MAX_ERROR_CHARS - 1)}…`;
}

/** A probe of `o.endpoints` behind the seam EtcdCoordination reads endpoints through (its EndpointHealthSource). */
export function endpointHealthSource(o: EndpointHealthOptions): { start(): void; stop(): Promise<void>; snapshot(now: number): EndpointHealthRow[] } {
  const health = new EndpointHealth(o);
  return { start: () => health.start(), stop: () => health.stop(), snapshot: (now) => health.view(now) };
}
