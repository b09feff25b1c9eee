// A real three-member etcd cluster on 127.0.0.1 for the coordination tests: Debian's etcd
// (scripts/ensure-etcd.sh installs it), free ports, data dirs on /dev/shm when there is one (etcd
// fsyncs its WAL on every write; on a shared disk that is the test's whole run time), torn down
// when the test ends. A test can kill -9 a member and start it again on its data dir, and put
// fault proxies (tcp-fault-proxy.ts) in front of the client ports to cut one client off etcd.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Etcd3 } from 'etcd3';
import { onTestFinished } from 'vitest';
import { etcdClient } from '../coordination/etcd-client.ts';
import { freePorts } from './free-ports.ts';
import { TcpFaultProxy } from './tcp-fault-proxy.ts';

export interface EtcdMember {
  readonly name: string;
  readonly clientPort: number;
  readonly peerPort: number;
  readonly clientUrl: string;
  readonly dataDir: string;
}

export interface EtcdClusterOptions {
  /** 3 if not given. */
  size?: number;
  /**
   * etcd's raft heartbeat and election timeout (ms): 100 and 1,000 if not given (etcd's defaults).
   * Shorter ones flap leaders on a loaded 2-core machine, and a test then measures the flapping.
   */
  heartbeatMs?: number;
  electionMs?: number;
}

/** The client side of a cut: one fault proxy per member, and the endpoints through them. */
export interface EtcdProxies {
  readonly endpoints: string[];
  readonly proxies: TcpFaultProxy[];
  /** Drops every connection through the proxies and refuses new ones (the client is cut off etcd). */
  cut(): void;
  /** etcd gone without a word: open connections stay open and silent, new ones are accepted and never answered (only timeouts tell). */
  blackhole(): void;
  heal(): void;
}

interface Running {
  child: ChildProcess;
  exited: Promise<void>;
}

const live = new Set<ChildProcess>();
let exitHooked = false;

/** A test runner that dies before teardown still takes its etcd members with it. */
function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
  if (exitHooked) return;
  exitHooked = true;
  process.once('exit', () => {
    for (const c of live) c.kill('SIGKILL');
  });
}

export class EtcdCluster {
  private readonly running = new Map<string, Running>();
  private readonly logs = new Map<string, string[]>();
  private readonly clients = new Set<Etcd3>();
  private readonly proxySets: TcpFaultProxy[] = [];
  private closing: Promise<void> | undefined;

  private constructor(
    readonly members: readonly EtcdMember[],
    private readonly flags: { heartbeatMs: number; electionMs: number },
    private readonly root: string,
  ) {}

  /** Starts the members and waits until the cluster answers a linearizable write. */
  static async start(options: EtcdClusterOptions = {}): Promise<EtcdCluster> {
    const size = options.size ?? 3;
    const ports = await freePorts(size * 2);
    const root = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'baton-etcd-'));
    const members: EtcdMember[] = [];
    for (let i = 0; i < size; i++) {
      const clientPort = ports[2 * i] as number;
      const peerPort = ports[2 * i + 1] as number;
      members.push({ name: `e${i}`, clientPort, peerPort, clientUrl: `http://127.0.0.1:${clientPort}`, dataDir: join(root, `e${i}`) });
    }
    const cluster = new EtcdCluster(members, { heartbeatMs: options.heartbeatMs ?? 100, electionMs: options.electionMs ?? 1_000 }, root);
    registerTeardown(cluster);
    for (const m of members) cluster.spawnMember(m);
    await cluster.waitWritable(20_000);
    return cluster;
  }

  get endpoints(): string[] {
    return this.members.map((m) => m.clientUrl);
  }

  member(i: number): EtcdMember {
    const m = this.members[i];
    if (m === undefined) throw new Error(`no etcd member ${i}`);
    return m;
  }

  isRunning(i: number): boolean {
    return this.running.has(this.member(i).name);
  }

  /** The process ids of the running members (a benchmark reads their CPU time from /proc). */
  get pids(): number[] {
    return [...this.running.values()].flatMap((r) => (r.child.pid === undefined ? [] : [r.child.pid]));
  }

  /** kill -9 of one member; resolves once it has exited. Its data dir stays for restart(). */
  async kill9(i: number): Promise<void> {
    const m = this.member(i);
    const run = this.running.get(m.name);
    if (run === undefined) return;
    run.child.kill('SIGKILL');
    await run.exited;
  }

  /** Starts a killed member again on its data dir and ports (it rejoins as the member it was). */
  restart(i: number): void {
    const m = this.member(i);
    if (this.running.has(m.name)) throw new Error(`etcd member ${m.name} is running`);
    this.spawnMember(m);
  }

  /** The index of the member that is etcd's raft leader now, as the running members report it. */
  async leaderIndex(): Promise<number> {
    for (const [i, m] of this.members.entries()) {
      if (!this.isRunning(i)) continue;
      try {
        const status = await this.client([m.clientUrl]).maintenance.status({ deadline: Date.now() + 1_000 });
        if (status.leader !== '0' && status.leader === status.header.member_id) return i;
      } catch {
        // Down or unsure: ask the next one.
      }
    }
    throw new Error('no etcd member says it is the leader');
  }

  /** An etcd3 client closed at teardown. No retries and no circuit breaker: the caller sees every failure. */
  client(endpoints: string[] = this.endpoints): Etcd3 {
    const client = etcdClient(endpoints);
    this.clients.add(client);
    return client;
  }

  /** One fault proxy per member's client port; closed at teardown. */
  async proxies(): Promise<EtcdProxies> {
    const proxies = await Promise.all(this.members.map((m) => TcpFaultProxy.start({ host: '127.0.0.1', port: m.clientPort })));
    this.proxySets.push(...proxies);
    return {
      endpoints: proxies.map((p) => `http://127.0.0.1:${p.port}`),
      proxies,
      cut: () => {
        for (const p of proxies) p.block();
      },
      blackhole: () => {
        for (const p of proxies) p.blackhole();
      },
      heal: () => {
        for (const p of proxies) p.heal();
      },
    };
  }

  /** Whether a linearizable write through `endpoints` is answered within `deadlineMs` (needs quorum). */
  async writable(deadlineMs = 1_500, endpoints: string[] = this.endpoints): Promise<boolean> {
    const client = this.client(endpoints);
    try {
      await client
        .put('baton-test/probe')
        .value(String(Date.now()))
        .options({ deadline: Date.now() + deadlineMs });
      return true;
    } catch {
      return false;
    } finally {
      client.close();
      this.clients.delete(client);
    }
  }

  /** Polls until the cluster takes a write (quorum and a leader). */
  async waitWritable(timeoutMs: number): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!(await this.writable())) {
      const dead = this.members.filter((m) => !this.running.has(m.name)).map((m) => m.name);
      if (performance.now() >= deadline)
        throw new Error(`etcd took no write within ${timeoutMs} ms (members down: ${dead.join(', ') || 'none'})\n${this.dumpLogs()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** The last lines each member wrote to stderr (printed when a test fails). */
  dumpLogs(): string {
    return [...this.logs].map(([name, lines]) => `--- etcd ${name}\n${lines.join('\n')}`).join('\n');
  }

  /** Closes the clients and proxies, kills every member and removes the data dirs. Safe to call twice. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const c of this.clients) c.close();
      this.clients.clear();
      await Promise.all(this.proxySets.map((p) => p.close()));
      await Promise.all(this.members.map((_, i) => this.kill9(i)));
      rmSync(this.root, { recursive: true, force: true });
    })();
    return this.closing;
  }

  private spawnMember(m: EtcdMember): void {
    const cluster = this.members.map((x) => `${x.name}=http://127.0.0.1:${x.peerPort}`).join(',');
    const peerUrl = `http://127.0.0.1:${m.peerPort}`;
    // With a data dir from an earlier run the --initial-* flags are ignored: the member rejoins as itself.
    const args = [
      ['--name', m.name],
      ['--data-dir', m.dataDir],
      ['--listen-client-urls', m.clientUrl],
      ['--advertise-client-urls', m.clientUrl],
      ['--listen-peer-urls', peerUrl],
      ['--initial-advertise-peer-urls', peerUrl],
      ['--initial-cluster', cluster],
      ['--initial-cluster-state', 'new'],
      ['--initial-cluster-token', `baton-test-${this.members[0]?.clientPort}`],
      ['--heartbeat-interval', String(this.flags.heartbeatMs)],
      ['--election-timeout', String(this.flags.electionMs)],
      ['--log-level', 'warn'],
      ['--logger', 'zap'],
    ].flat();
    const child = spawn('etcd', args, { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, ETCD_UNSUPPORTED_ARCH: '' } });
    track(child);
    const lines = this.logs.get(m.name) ?? [];
    this.logs.set(m.name, lines);
    child.stderr?.setEncoding('utf8').on('data', (text: string) => {
      lines.push(...text.trimEnd().split('\n'));
      if (lines.length > 200) lines.splice(0, lines.length - 200);
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.once('error', (error) => lines.push(`spawn failed: ${error.message} (run scripts/ensure-etcd.sh)`));
    this.running.set(m.name, { child, exited });
    void exited.then(() => {
      if (this.running.get(m.name)?.child === child) this.running.delete(m.name);
    });
  }
}

/** Inside a test: torn down when it ends (logs printed first if it failed). */
function registerTeardown(cluster: EtcdCluster): void {
  try {
    onTestFinished(async (context) => {
      if (context.task.result?.state === 'fail') console.error(`etcd logs for the failed test "${context.task.name}":\n${cluster.dumpLogs()}`);
      await cluster.close();
    });
  } catch {
    // Not inside a test (a beforeAll): the caller closes it.
  }
}
