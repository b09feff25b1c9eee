// One chaos client worker: a child process running a group of clients, each looping
// acquire -> read -> hold a while -> write -> release on a few lock names, half of them with a
// KeyedClient, half with a SessionClient, every one with its own connections. It reports what
// each client saw to the runner over IPC, stamped with performance.timeOrigin + performance.now().
// The runner may kill -9 the whole process while a client holds a lock: that is the point of
// running the clients in their own processes.
// Started by the runner with fork() and its config as JSON in CHAOS_WORKER; stops on {type:'stop'}.
import { setTimeout as sleep } from 'node:timers/promises';
import { KeyedClient, SessionClient } from '../lib/client/index.ts';
import { type ClientEvent, type ClientProtocol, now } from './history.ts';
import { mulberry32 } from './fault-schedule.ts';

export interface WorkerConfig {
  group: string;
  clients: Array<{ name: string; protocol: ClientProtocol }>;
  lockAddresses: string[];
  sessionAddresses: string[];
  resourceUrl: string;
  locks: string[];
  leaseMs: number;
  waitMs: number;
  seed: number;
  /**
   * Some session holds (1 in 10) last 2.5 to 5 s, past a failover (etcd mode: the role frees only
   * when the dead active's etcd lease runs out): a grant the old active answered but its successor
   * never learned of then overlaps the successor's next grant of that lock, which short holds,
   * ended long before any successor grants, would never show. Off in the default mode's runs.
   */
  longSessionHolds?: boolean;
}

export type WorkerMessage = { type: 'ready' } | { type: 'event'; event: ClientEvent } | { type: 'done' };

const config = JSON.parse(process.env.CHAOS_WORKER ?? 'null') as WorkerConfig | null;
if (config === null || typeof process.send !== 'function') throw new Error('client-worker runs as a forked child with CHAOS_WORKER set');
let stopping = false;

function emit(event: ClientEvent): void {
  process.send?.({ type: 'event', event } satisfies WorkerMessage);
}

/** How long a client keeps the lock: mostly short, sometimes long enough to queue others for a while. */
function holdMs(random: () => number, long = false): number {
  if (long && random() < 0.1) return 2_500 + random() * 2_500;
  const r = random();
  if (r < 0.7) return random() * 30;
  if (r < 0.95) return 30 + random() * 270;
  return 300 + random() * 600;
}

async function readValue(lock: string): Promise<number> {
  const res = await fetch(`${config?.resourceUrl}/value?lock=${encodeURIComponent(lock)}`, { signal: AbortSignal.timeout(5_000) });
  return ((await res.json()) as { value: number }).value;
}

async function writeValue(lock: string, client: string, token: bigint, expected: number): Promise<void> {
  await fetch(`${config?.resourceUrl}/write?lock=${encodeURIComponent(lock)}`, {
    method: 'POST',
    body: JSON.stringify({ client, token: token.toString(), expected, value: expected + 1 }),
    signal: AbortSignal.timeout(5_000),
  });
}

/**
 * One acquire of a lock drawn at random, reported as `acquire` and, if it fails, `acquire-failed`
 * (then a 50 ms pause before the next try); undefined when it failed.
 */
async function acquireOne<T>(
  cfg: WorkerConfig,
  name: string,
  protocol: ClientProtocol,
  random: () => number,
  acquire: (lock: string) => Promise<T>,
): Promise<{ lock: string; held: T } | undefined> {
  const lock = cfg.locks[Math.floor(random() * cfg.locks.length)] as string;
  emit({ kind: 'acquire', t: now(), client: name, lock, protocol });
  try {
    return { lock, held: await acquire(lock) };
  } catch (error) {
    emit({ kind: 'acquire-failed', t: now(), client: name, lock, reason: String(error) });
    await sleep(50);
    return undefined;
  }
}

async function keyedLoop(cfg: WorkerConfig, name: string, random: () => number): Promise<void> {
  const client = new KeyedClient({ addresses: cfg.lockAddresses, reconnectInterval: 250 });
  try {
    while (!stopping) {
      const attempt = await acquireOne(cfg, name, 'keyed', random, (lock) => client.acquire(lock, { lease: cfg.leaseMs, wait: cfg.waitMs }));
      if (attempt === undefined) continue;
      const { lock, held: grant } = attempt;
      const grantedAt = now();
      const token = grant.token.toString();
      emit({ kind: 'grant', t: grantedAt, client: name, lock, protocol: 'keyed', token, leaseMs: cfg.leaseMs });
      try {
        const value = await readValue(lock);
        await sleep(holdMs(random));
        // A keyed lease is fixed: past half of it, do not touch the resource any more.
        if (now() - grantedAt < cfg.leaseMs / 2) await writeValue(lock, name, grant.token, value);
      } catch {
        // The resource is in this machine's runner; an error here is noise, the release matters.
      }
      emit({ kind: 'release', t: now(), client: name, lock, token });
      let outcome: 'ok' | 'stale' | 'error';
      try {
        outcome = (await grant.release()) ? 'ok' : 'stale';
      } catch {
        outcome = 'error';
      }
      emit({ kind: 'released', t: now(), client: name, lock, token, outcome });
      await sleep(random() * 20);
    }
  } finally {
    await client.close();
  }
}

async function sessionLoop(cfg: WorkerConfig, name: string, random: () => number): Promise<void> {
  const client = new SessionClient({ addresses: cfg.sessionAddresses });
  try {
    while (!stopping) {
      const attempt = await acquireOne(cfg, name, 'session', random, (lock) => client.open(lock, { lease: cfg.leaseMs, wait: cfg.waitMs }));
      if (attempt === undefined) continue;
      const { lock, held: lease } = attempt;
      const token = lease.token.toString();
      let releasing = false;
      emit({ kind: 'grant', t: now(), client: name, lock, protocol: 'session', token, leaseMs: cfg.leaseMs });
      const onAbort = () => {
        if (!releasing) emit({ kind: 'lost', t: now(), client: name, lock, token, reason: String(lease.signal.reason) });
      };
      if (lease.signal.aborted) onAbort();
      else lease.signal.addEventListener('abort', onAbort, { once: true });
      try {
        const value = await readValue(lock);
        await sleep(holdMs(random, cfg.longSessionHolds), undefined, { signal: lease.signal }).catch(() => undefined);
        if (!lease.signal.aborted) await writeValue(lock, name, lease.token, value);
      } catch {
        // As above: the release matters.
      }
      const lost = lease.signal.aborted;
      releasing = true;
      if (!lost) emit({ kind: 'release', t: now(), client: name, lock, token });
      await lease.close();
      if (!lost) emit({ kind: 'released', t: now(), client: name, lock, token, outcome: 'ok' });
      await sleep(random() * 20);
    }
  } finally {
    await client.close();
  }
}

/** A 20 ms tick that came this much late counts as a stall of this process. */
const STALL_MS = 100;

/** Reports every stretch this process did not run for (see the `stall` event). */
function watchStalls(cfg: WorkerConfig): void {
  let last = now();
  setInterval(() => {
    const t = now();
    if (t - last > 20 + STALL_MS) for (const c of cfg.clients) emit({ kind: 'stall', t: last, client: c.name, until: t });
    last = t;
  }, 20).unref();
}

async function main(cfg: WorkerConfig): Promise<void> {
  watchStalls(cfg);
  // The runner is gone (killed, or a test that timed out): nobody records what we do any more.
  process.on('disconnect', () => process.exit(0));
  process.on('message', (message: { type?: string }) => {
    if (message.type === 'stop') stopping = true;
  });
  process.send?.({ type: 'ready' } satisfies WorkerMessage);
  await Promise.all(
    cfg.clients.map((c, i) => {
      const random = mulberry32(cfg.seed * 131 + i);
      return c.protocol === 'keyed' ? keyedLoop(cfg, c.name, random) : sessionLoop(cfg, c.name, random);
    }),
  );
  process.send?.({ type: 'done' } satisfies WorkerMessage, undefined, {}, () => process.exit(0));
}

await main(config);
