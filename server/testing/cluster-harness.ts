// A real Baton cluster for multi-process tests: N `baton serve --config` processes on
// 127.0.0.1 with free ports, a shared admin token and a data dir each, optionally with a
// TcpFaultProxy in front of every node's peer port so a test can cut a node off. In etcd mode
// (`etcd`) every node runs `--coordination etcd` and reaches each etcd member through fault
// proxies of its own (node.etcd), so a test can cut one Baton node from etcd while the others
// keep it. Everything is torn down when the test ends (processes killed, proxies closed, temp
// dirs removed), and a failing test prints the end of each node's log.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { freePorts } from './free-ports.ts';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { ClusterView, HolderView, LockDetail } from '../../lib/ops-api/api-types.ts';
import { KeyedClient, SessionClient } from '../../lib/client/index.ts';
import type { KeyedClientOptions, SessionClientOptions } from '../../lib/client/index.ts';
import type { EtcdCluster } from './etcd-cluster.ts';
import { NodeProcess, PortClash } from './node-process.ts';
import { TcpFaultProxy } from './tcp-fault-proxy.ts';
import { pskIdentity } from './tls-psk-identity.ts';

export { NodeProcess } from './node-process.ts';
export type { ApiReply } from './node-process.ts';

export const CLUSTER_ADMIN_TOKEN = 'cluster-test-admin-token-0123456789abcdef';
const IDS = ['a', 'b', 'c', 'd', 'e'];

export interface StartClusterOptions {
  /** 3 if not given. */
  nodes?: number;
  /** --peer-timeout in ms; 1000 (the default) if not given. */
  peerTimeoutMs?: number;
  /** Put a TcpFaultProxy in front of each node's peer port (node.proxy). */
  proxied?: boolean;
  /** Appended to every node's arguments. */
  extraArgs?: string[];
  /** Appended to one node's arguments, after extraArgs (e.g. its own etcd endpoints, through a fault proxy). */
  nodeArgs?: Record<string, string[]>;
  /** Per node, for the serving line; 15,000 ms if not given. */
  startTimeoutMs?: number;
  /** Start only these nodes (the rest are configured but left for the test to start()); all if not given. */
  start?: string[];
  /** SIGTERM grace at teardown before SIGKILL; 1,000 ms if not given. */
  teardownGraceMs?: number;
  /** A different admin token for some nodes (a misconfiguration); CLUSTER_ADMIN_TOKEN for the rest. */
  adminTokens?: Record<string, string>;
  /** Start in etcd mode on this etcd cluster (see EtcdModeOptions); the default (peers) mode if not given. */
  etcd?: EtcdModeOptions;
}

export interface EtcdModeOptions {
  cluster: EtcdCluster;
  /** --etcd-prefix: distinct per test (the etcd cluster may be shared). */
  prefix: string;
  /** --etcd-lease-ttl in whole seconds; the node's default if not given. */
  leaseTtlS?: number;
}

/** The flags of etcd mode for one node: the endpoints are that node's own proxies. */
export function etcdModeArgs(endpoints: readonly string[], options: Pick<EtcdModeOptions, 'prefix' | 'leaseTtlS'>): string[] {
  return [
    '--coordination',
    'etcd',
    '--etcd-endpoints',
    endpoints.join(','),
    '--etcd-prefix',
    options.prefix,
    ...(options.leaseTtlS === undefined ? [] : ['--etcd-lease-ttl', String(options.leaseTtlS)]),
  ];
}

export interface Cluster {
  dir: string;
  configPath: string;
  peerTimeoutMs: number;
  nodes: NodeProcess[];
  node(id: string): NodeProcess;
  /** Lock or session addresses of the given nodes (all, in priority order, if none given). */
  lockAddresses(...ids: string[]): string[];
  sessionAddresses(...ids: string[]): string[];
  /**
   * A KeyedClient on the given nodes' lock ports, closed at teardown. It reconnects every 250 ms
   * unless told otherwise (not the default 3 s), so a test does not sit out a failover.
   */
  keyedClient(ids: string[], options?: KeyedClientOptions): KeyedClient;
  /** A SessionClient on the given nodes' session ports, closed at teardown. */
  sessionClient(ids: string[], options?: SessionClientOptions): SessionClient;
  /** Runs `fn` at teardown, before the nodes are stopped (latest first). */
  defer(fn: () => unknown): void;
  /** The end of every node's log. */
  dumpLogs(lines?: number): string;
  /** Tears everything down; safe to call more than once (teardown calls it anyway). */
  close(): Promise<void>;
}

export async function startCluster(options: StartClusterOptions = {}): Promise<Cluster> {
  let lastClash: Error | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const cluster = await build(options);
    try {
      // The first node starts first: started together, a node that came up more than a
      // peer-timeout before it (a loaded machine starts processes seconds apart) would promote
      // itself, and the tests' failover timelines would open with a start-up failover.
      const [first, ...rest] = cluster.nodes.filter((n) => options.start === undefined || options.start.includes(n.id));
      if (first !== undefined) await first.start();
      await Promise.all(rest.map((n) => n.start()));
      return cluster;
    } catch (error) {
      if (!(error instanceof PortClash)) {
        console.error(cluster.dumpLogs());
        await cluster.close();
        throw error;
      }
      // Another process took a port between our probe and the node's bind: try new ports.
      lastClash = error;
      await cluster.close();
    }
  }
  throw lastClash;
}

async function build(options: StartClusterOptions): Promise<Cluster> {
  const count = options.nodes ?? 3;
  if (count < 1 || count > IDS.length) throw new Error(`1 to ${IDS.length} nodes, not ${count}`);
  const peerTimeoutMs = options.peerTimeoutMs ?? 1_000;
  const dir = await mkdtemp(join(tmpdir(), 'baton-cluster-'));
  const configPath = join(dir, 'cluster.json');
  const ports = await freePorts(count * 4);
  const nodes: NodeProcess[] = [];
  const deferred: Array<() => unknown> = [];
  let closing: Promise<void> | undefined;
  const cluster: Cluster = {
    dir,
    configPath,
    peerTimeoutMs,
    nodes,
    node(id) {
      const node = nodes.find((n) => n.id === id);
      if (!node) throw new Error(`no node ${id}`);
      return node;
    },
    lockAddresses: (...ids) => pick(nodes, ids).map((n) => n.lockAddress),
    sessionAddresses: (...ids) => pick(nodes, ids).map((n) => n.sessionAddress),
    keyedClient(ids, clientOptions = {}) {
      const client = new KeyedClient({ reconnectInterval: 250, ...clientOptions, addresses: cluster.lockAddresses(...ids) });
      deferred.push(() => client.close());
      return client;
    },
    sessionClient(ids, clientOptions = {}) {
      const client = new SessionClient({ ...clientOptions, addresses: cluster.sessionAddresses(...ids) });
      deferred.push(() => client.close());
      return client;
    },
    defer: (fn) => deferred.push(fn),
    dumpLogs: (lines = 50) => nodes.map((n) => n.tail(lines)).join('\n'),
    close() {
      closing ??= (async () => {
        for (const fn of deferred.splice(0).reverse()) {
          try {
            await fn();
          } catch {
            // Teardown goes on: a client that cannot close must not leave processes behind.
          }
        }
        await Promise.all(nodes.map((n) => n.stop(options.teardownGraceMs ?? 1_000)));
        await Promise.all(nodes.map((n) => n.proxy?.close()));
        await rm(dir, { recursive: true, force: true });
      })();
      return closing;
    },
  };
  registerTeardown(cluster);
  const peers = [];
  for (let i = 0; i < count; i++) {
    const id = IDS[i] as string;
    const [lock, session, peerListen, http] = ports.slice(i * 4, i * 4 + 4) as [number, number, number, number];
    const proxy = options.proxied ? await TcpFaultProxy.start({ host: '127.0.0.1', port: peerListen }, { identify: pskIdentity }) : null;
    const peer = proxy ? proxy.port : peerListen;
    peers.push({ id, host: '127.0.0.1', lockPort: lock, sessionPort: session, peerPort: peer, httpPort: http });
    const dataDir = join(dir, id);
    // Its own proxy per etcd member: cutting them cuts this node from etcd and no other.
    const etcd = options.etcd === undefined ? null : await options.etcd.cluster.proxies();
    const args = [
      'serve',
      '--config',
      configPath,
      '--node',
      id,
      '--no-console',
      '--data-dir',
      dataDir,
      '--peer-timeout',
      `${peerTimeoutMs}ms`,
      '--log-level',
      'info',
      ...(proxy ? ['--peer-listen', `127.0.0.1:${peerListen}`] : []),
      ...(etcd === null || options.etcd === undefined ? [] : etcdModeArgs(etcd.endpoints, options.etcd)),
      ...(options.extraArgs ?? []),
      ...(options.nodeArgs?.[id] ?? []),
    ];
    nodes.push(
      new NodeProcess({
        id,
        priority: i,
        ports: { lock, session, http, peer, peerListen },
        dataDir,
        args,
        adminToken: options.adminTokens?.[id] ?? CLUSTER_ADMIN_TOKEN,
        proxy,
        etcd,
        startTimeoutMs: options.startTimeoutMs ?? 15_000,
      }),
    );
  }
  await writeFile(configPath, `${JSON.stringify({ peers }, null, 2)}\n`);
  return cluster;
}

/** Inside a test: tear down when it ends, and print the logs first if it failed. */
function registerTeardown(cluster: Cluster): void {
  try {
    onTestFinished(async (context) => {
      const state = context.task.result?.state;
      if (state === 'fail') console.error(`cluster logs for the failed test "${context.task.name}":\n${cluster.dumpLogs()}`);
      await cluster.close();
    });
  } catch {
    // Not inside a test (a beforeAll): the caller closes it.
  }
}

function pick(nodes: NodeProcess[], ids: string[]): NodeProcess[] {
  if (ids.length === 0) return nodes;
  return ids.map((id) => {
    const node = nodes.find((n) => n.id === id);
    if (!node) throw new Error(`no node ${id}`);
    return node;
  });
}

export interface WaitOptions {
  /** 5,000 ms if not given. */
  timeoutMs?: number;
  /** 20 ms if not given. */
  intervalMs?: number;
  /** Named in the timeout error. */
  what?: string;
}

/**
 * Polls `probe` until it returns something truthy, and returns that. A probe that throws (a node
 * that is down or restarting) counts as not ready; the last error or value is in the timeout error.
 */
export async function waitFor<T>(probe: () => Promise<T> | T, options: WaitOptions = {}): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 5_000;
  const intervalMs = options.intervalMs ?? 20;
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (error) {
      last = error;
    }
    if (performance.now() >= deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what ?? 'a condition'}; last seen: ${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** Each running node's own view; a node that does not answer maps to its error. */
export async function views(cluster: Cluster): Promise<Map<string, ClusterView | Error>> {
  const running = cluster.nodes.filter((n) => n.running);
  const answers = await Promise.all(running.map((n) => n.cluster().catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))))));
  return new Map(running.map((n, i) => [n.id, answers[i] as ClusterView | Error]));
}

/** The ids of the running nodes that say their own phase is 'active'. */
export async function activeOf(cluster: Cluster): Promise<string[]> {
  const all = await views(cluster);
  return [...all].filter(([, view]) => !(view instanceof Error) && view.phase === 'active').map(([id]) => id);
}

/**
 * Throws, saying what is off, unless the roles have settled: exactly `active` is active, every
 * other running node is a standby, and every running node sees them all alive and in sync.
 */
export async function checkSettled(cluster: Cluster, active: string): Promise<void> {
  const all = await views(cluster);
  for (const [id, view] of all) {
    if (view instanceof Error) throw view;
    const phase = id === active ? 'active' : 'standby';
    if (view.phase !== phase || view.active !== active)
      throw new Error(`${id} is ${view.phase} with active ${view.active}, not ${phase} with active ${active}`);
    for (const node of view.nodes) {
      if (!cluster.node(node.id).running) continue;
      const role = node.id === active ? 'active' : 'standby';
      if (!node.alive || !node.inSync || node.role !== role) {
        throw new Error(
          `${id} sees ${node.id} as ${node.role}, alive ${node.alive}, in sync ${node.inSync} (lag ${JSON.stringify(node.replicationLag)}), not an alive in-sync ${role}`,
        );
      }
    }
  }
}

/** Waits until the roles settled as checkSettled() says; returns the ms it took. */
export async function waitSettled(cluster: Cluster, active: string, timeoutMs = 5_000): Promise<number> {
  const startedAt = performance.now();
  await waitFor(
    async () => {
      await checkSettled(cluster, active);
      return true;
    },
    { timeoutMs, what: `${active} active with in-sync standbys` },
  );
  return performance.now() - startedAt;
}

/** The holder of `name` as `node` sees it (a standby reads its replica); null when nobody holds it. */
export async function holderOn(node: NodeProcess, name: string): Promise<HolderView | null> {
  const reply = await node.api<LockDetail>(`/api/v1/locks/${encodeURIComponent(name)}`);
  if (reply.status === 404) return null;
  if (reply.status !== 200) throw new Error(`node ${node.id}: GET /api/v1/locks/${name} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply.body.holder;
}

/** Waits until every given node shows `token` holding `name`: the grant has been replicated there. */
export async function waitReplicated(cluster: Cluster, name: string, token: bigint, ids: string[], timeoutMs = 3_000): Promise<void> {
  await waitFor(
    async () => {
      const holders = await Promise.all(ids.map((id) => holderOn(cluster.node(id), name)));
      return holders.every((h) => h?.token === token.toString());
    },
    { timeoutMs, what: `${name} held by token ${token} on ${ids.join(', ')}` },
  );
}

/** A view's failover timeline, one "from->to cause" string each: readable in a failed assertion. */
export function timeline(view: ClusterView): string[] {
  return view.failovers.map((f) => `${f.from ?? '-'}->${f.to} ${f.cause}`);
}
