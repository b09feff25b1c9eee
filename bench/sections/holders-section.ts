// Section `holders` of bench/cluster-cost.ts: the issue's "done means", counted. Three `baton
// serve` nodes on loopback (peer-timeout 1 s); 1,000 resumable session leases (`holders/s/<i>`,
// 10 s lease, one SessionClient on all three session ports) and 1,000 keyed grants
// (`holders/k/<i>`, 60 s lease, one KeyedClient on all three lock ports) are taken on `a`, every
// token recorded and every lease's signal watched. Then:
//   1. Graceful handoff a -> b by the API; once b is active with in-sync standbys and 2 s more,
//      every lock is read on b (holder token against the recorded one, per protocol), with the
//      session leases aborted so far and those still between connections.
//   2. kill -9 of b; once a node reports itself active and every lease is back on a connection
//      (or 8 s passed), the same reading on the new active.
//   3. Every keyed grant released (OK / STALE / error) and every lease closed.
// "Lost" is the server's side (the lock is held by another token, or by nobody); "aborted" is
// the client's (the lease's signal fired: its work would have been told to stop).
import type { ClusterView, FailoverView } from '../../lib/ops-api/api-types.ts';
import type { KeyedGrant, SessionLease } from '../../lib/client/index.ts';
import { activeOf, type Cluster, holderOn, startCluster, waitFor, waitSettled } from '../../server/testing/cluster-harness.ts';
import { round } from '../stats.ts';

export const HOLDERS_PEER_TIMEOUT_MS = 1_000;
const SESSION_LEASE_MS = 10_000;
const KEYED_LEASE_MS = 60_000;
/** Leases opened / grants taken / locks read at a time. */
const CONCURRENCY = 50;
const READ_CONCURRENCY = 25;

export interface ProtocolCount {
  /** Held on the node read, by the token the client was granted. */
  same: number;
  /** Held by another token. */
  changed: number;
  /** Held by nobody. */
  missing: number;
  /** The read failed (the node did not answer). */
  unread: number;
}

export interface Reading {
  /** The node read (the active at that point). */
  node: string;
  /** ms from the event (handoff pressed / kill -9) to the reading. */
  atMs: number;
  /** ms from the event until the node read was active with the others in-sync standbys (handoff) or reported itself active (kill). */
  activeAfterMs: number;
  /**
   * Leases between connections (resuming) after the event, polled every 5 ms: the most at once,
   * and the first and last time one was seen (ms after the event); null when none was seen.
   */
  reconnectingPeak: number;
  firstReconnectingAtMs: number | null;
  lastReconnectingAtMs: number | null;
  sessions: ProtocolCount & {
    /** Leases whose signal aborted, counted since the start. */
    aborted: number;
    /** Of the leases not aborted: back on a connection / still between connections. */
    resumed: number;
    reconnecting: number;
  };
  keyed: ProtocolCount;
  /** The successor's failover entry for this event. */
  failover: FailoverView | null;
}

export interface HoldersResult {
  peerTimeoutMs: number;
  sessionLeaseMs: number;
  keyedLeaseMs: number;
  sessions: number;
  keyed: number;
  /** ms to open the sessions / take the grants. */
  openMs: { sessions: number; keyed: number };
  /** Of the held locks, read on b before the handoff: replicated with the same token. */
  replicatedOnB: { sessions: number; keyed: number };
  handoff: Reading;
  kill: Reading;
  /** Each lease abort: ms since the handoff was pressed, and the reason's message. */
  aborts: { name: string; atMs: number; reason: string }[];
  release: { ok: number; stale: number; errors: number; errorMessages: string[] };
  /** Node log lines at warn or above, and the handoff / promotion lines (at most 30). */
  logNotes: string[];
  totalMs: number;
}

/** Runs `fn` over `items`, `limit` at a time. */
async function pool<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i] as T, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const isReconnecting = (lease: SessionLease) => (lease as SessionLease & { reconnecting?: boolean }).reconnecting === true;

/** Counts the leases between connections every 5 ms; keeps only the samples where some were. */
class ReconnectSampler {
  private readonly samples: { at: number; n: number }[] = [];
  private readonly timer: NodeJS.Timeout;
  constructor(private readonly leases: SessionLease[]) {
    this.timer = setInterval(() => {
      const n = this.now();
      if (n > 0) this.samples.push({ at: performance.now(), n });
    }, 5);
  }
  now(): number {
    let n = 0;
    for (const l of this.leases) if (!l.signal.aborted && isReconnecting(l)) n++;
    return n;
  }
  /** Peak and last sighting in [from, to). */
  window(from: number, to: number): { peak: number; firstAt: number | null; lastAt: number | null } {
    let peak = 0;
    let firstAt: number | null = null;
    let lastAt: number | null = null;
    for (const s of this.samples) {
      if (s.at < from || s.at >= to) continue;
      peak = Math.max(peak, s.n);
      firstAt ??= s.at;
      lastAt = s.at;
    }
    return { peak, firstAt, lastAt };
  }
  stop(): void {
    clearInterval(this.timer);
  }
}

export async function holdersSection(count = 1_000): Promise<HoldersResult> {
  const startedAt = performance.now();
  const cluster = await startCluster({ nodes: 3, peerTimeoutMs: HOLDERS_PEER_TIMEOUT_MS });
  const leases: SessionLease[] = [];
  const grants: KeyedGrant[] = [];
  let sampler: ReconnectSampler | undefined;
  try {
    await waitSettled(cluster, 'a', 15_000);
    const sessionClient = cluster.sessionClient(['a', 'b', 'c']);
    const keyedClient = cluster.keyedClient(['a', 'b', 'c']);
    const sessionNames = Array.from({ length: count }, (_, i) => `holders/s/${i}`);
    const keyedNames = Array.from({ length: count }, (_, i) => `holders/k/${i}`);

    // Every abort, with its time relative to the handoff (negative: before it).
    let handoffAt = Number.NaN;
    let closing = false; // our own close() aborts a lease's signal too: not counted
    const aborts: HoldersResult['aborts'] = [];
    process.stderr.write(`bench: holders: opening ${count} session leases and ${count} keyed grants\n`);
    const t0 = performance.now();
    const opened = await pool(sessionNames, CONCURRENCY, async (name) => {
      const lease = await sessionClient.open(name, { lease: SESSION_LEASE_MS, wait: 10_000 });
      lease.signal.addEventListener(
        'abort',
        () => {
          if (closing) return;
          const reason = lease.signal.reason instanceof Error ? lease.signal.reason.message : String(lease.signal.reason);
          aborts.push({ name, atMs: round(performance.now() - handoffAt, 1), reason });
        },
        { once: true },
      );
      return lease;
    });
    leases.push(...opened);
    const sessionsMs = performance.now() - t0;
    const t1 = performance.now();
    grants.push(...(await pool(keyedNames, CONCURRENCY, (name) => keyedClient.acquire(name, { lease: KEYED_LEASE_MS, wait: 10_000 }))));
    const keyedMs = performance.now() - t1;
    const sessionTokens = new Map(leases.map((l) => [l.name, l.token]));
    const keyedTokens = new Map(grants.map((g) => [g.key, g.token]));
    const abortedNow = () => aborts.length;
    const watch = new ReconnectSampler(leases);
    sampler = watch;

    // Wait until the standbys are in sync again (the grants above are replicated), then read b.
    await waitSettled(cluster, 'a', 15_000);
    const before = await readAll(cluster, 'b', sessionTokens, keyedTokens);

    // 1. Graceful handoff a -> b.
    process.stderr.write('bench: holders: graceful handoff a -> b\n');
    const failoversBefore = (await cluster.node('b').cluster()).failovers.length;
    handoffAt = performance.now();
    const reply = await cluster.node('a').post('/api/v1/cluster/handoff', { target: 'b' });
    if (reply.status !== 200) throw new Error(`handoff a -> b: ${reply.status} ${JSON.stringify(reply.body)}`);
    await waitSettled(cluster, 'b', 15_000);
    const handoffActiveMs = performance.now() - handoffAt;
    await sleep(2_000);
    const handoff = await reading(cluster, 'b', handoffAt, handoffActiveMs, watch, failoversBefore, sessionTokens, keyedTokens, leases, abortedNow);

    // 2. kill -9 of the active (b).
    process.stderr.write('bench: holders: kill -9 of b\n');
    const survivorsBefore = new Map<string, number>();
    for (const id of ['a', 'c']) survivorsBefore.set(id, (await cluster.node(id).cluster()).failovers.length);
    await cluster.node('b').kill9();
    const killAt = performance.now();
    const successor = await waitFor(async () => (await activeOf(cluster))[0], { timeoutMs: 15_000, intervalMs: 10, what: 'a new active after the kill -9' });
    const killActiveMs = performance.now() - killAt;
    // Every lease back on a connection (after some were seen off one), or 8 s.
    await waitFor(() => watch.window(killAt, Infinity).peak > 0 && watch.now() === 0, {
      timeoutMs: Math.max(0, 8_000 - (performance.now() - killAt)),
      intervalMs: 20,
    }).catch(() => undefined);
    await sleep(500); // let the failover entry's resumed count catch up with the last RESUMEs
    const kill = await reading(
      cluster,
      successor,
      killAt,
      killActiveMs,
      watch,
      survivorsBefore.get(successor) ?? 0,
      sessionTokens,
      keyedTokens,
      leases,
      abortedNow,
    );

    // 3. Release every keyed grant, close every lease.
    process.stderr.write('bench: holders: releasing\n');
    watch.stop();
    closing = true;
    const release = { ok: 0, stale: 0, errors: 0, errorMessages: [] as string[] };
    await pool(grants, CONCURRENCY, async (g) => {
      try {
        if (await g.release()) release.ok++;
        else release.stale++;
      } catch (error) {
        release.errors++;
        if (release.errorMessages.length < 5) release.errorMessages.push(error instanceof Error ? error.message : String(error));
      }
    });
    await pool(leases, CONCURRENCY, (l) => l.close());

    // The cluster's own account: warnings and errors, and the handoff and promotion lines.
    const logNotes: string[] = [];
    for (const n of cluster.nodes) {
      for (const e of n.logEntries()) {
        const noted = Number(e.level) >= 40 || /took over by handoff|resumable sessions moved|promoted: this node is active/.test(String(e.msg));
        if (noted && logNotes.length < 30) logNotes.push(`${n.id}: ${JSON.stringify(e).slice(0, 400)}`);
      }
    }
    return {
      peerTimeoutMs: HOLDERS_PEER_TIMEOUT_MS,
      sessionLeaseMs: SESSION_LEASE_MS,
      keyedLeaseMs: KEYED_LEASE_MS,
      sessions: leases.length,
      keyed: grants.length,
      openMs: { sessions: Math.round(sessionsMs), keyed: Math.round(keyedMs) },
      replicatedOnB: { sessions: before.sessions.same, keyed: before.keyed.same },
      handoff,
      kill,
      aborts,
      release,
      logNotes,
      totalMs: Math.round(performance.now() - startedAt),
    };
  } catch (error) {
    process.stderr.write(`bench: holders failed; node logs:\n${cluster.dumpLogs(40)}\n`);
    throw error;
  } finally {
    sampler?.stop();
    await Promise.all(leases.map((l) => l.close().catch(() => undefined)));
    await cluster.close();
  }
}

async function readAll(
  cluster: Cluster,
  id: string,
  sessionTokens: Map<string, bigint>,
  keyedTokens: Map<string, bigint>,
): Promise<{ sessions: ProtocolCount; keyed: ProtocolCount }> {
  const node = cluster.node(id);
  const count = async (tokens: Map<string, bigint>): Promise<ProtocolCount> => {
    const c: ProtocolCount = { same: 0, changed: 0, missing: 0, unread: 0 };
    await pool([...tokens], READ_CONCURRENCY, async ([name, token]) => {
      try {
        const holder = await holderOn(node, name);
        if (holder === null) c.missing++;
        else if (holder.token === token.toString()) c.same++;
        else c.changed++;
      } catch {
        c.unread++;
      }
    });
    return c;
  };
  return { sessions: await count(sessionTokens), keyed: await count(keyedTokens) };
}

async function reading(
  cluster: Cluster,
  id: string,
  eventAt: number,
  activeAfterMs: number,
  watch: ReconnectSampler,
  failoversBefore: number,
  sessionTokens: Map<string, bigint>,
  keyedTokens: Map<string, bigint>,
  leases: SessionLease[],
  abortedNow: () => number,
): Promise<Reading> {
  const atMs = performance.now() - eventAt;
  const aborted = abortedNow();
  const live = leases.filter((l) => !l.signal.aborted);
  const reconnecting = live.filter(isReconnecting).length;
  const seen = watch.window(eventAt, performance.now());
  const counts = await readAll(cluster, id, sessionTokens, keyedTokens);
  const view: ClusterView = await cluster.node(id).cluster();
  const failover = view.failovers.length > failoversBefore ? (view.failovers.at(-1) ?? null) : null;
  return {
    node: id,
    atMs: Math.round(atMs),
    activeAfterMs: round(activeAfterMs, 1),
    reconnectingPeak: seen.peak,
    firstReconnectingAtMs: seen.firstAt === null ? null : Math.round(seen.firstAt - eventAt),
    lastReconnectingAtMs: seen.lastAt === null ? null : Math.round(seen.lastAt - eventAt),
    sessions: { ...counts.sessions, aborted, resumed: live.length - reconnecting, reconnecting },
    keyed: counts.keyed,
    failover,
  };
}
