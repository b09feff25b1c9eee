// One node of a test cluster: a real `bin/baton serve --config` process that a test can kill,
// stop and restart with the same ports and data dir, and ask about over its HTTP API. Its
// output is kept across restarts so a failing test can show what each node said.
import { type ChildProcess, spawn } from 'node:child_process';
import type { ClusterView } from '../../lib/ops-api/api-types.ts';
import type { EtcdProxies } from './etcd-cluster.ts';
import type { TcpFaultProxy } from './tcp-fault-proxy.ts';
import { BATON_BIN } from './serve-args.ts';

const BATON = BATON_BIN;
const SERVING = /^baton serving /m;

export interface NodePorts {
  lock: number;
  session: number;
  http: number;
  /** The peer port in cluster.json: the node's own listener, or its proxy when proxied. */
  peer: number;
  /** Where the node really listens for peer links (differs from `peer` when proxied). */
  peerListen: number;
}

export interface NodeSpec {
  id: string;
  /** 0 = highest (front of the peers list). */
  priority: number;
  ports: NodePorts;
  dataDir: string;
  /** The full `baton` argument list (after the script). */
  args: string[];
  adminToken: string;
  proxy: TcpFaultProxy | null;
  /** Etcd mode: this node's own proxies to the etcd members (cut them to cut it from etcd). */
  etcd?: EtcdProxies | null;
  /** How long to wait for the serving line (ms). */
  startTimeoutMs: number;
  /** The host it binds (its cluster.json entry's); 127.0.0.1 if not given. */
  host?: string;
}

export interface ApiReply<T> {
  status: number;
  body: T;
}

/** A start that failed because a port was taken meanwhile: the cluster retries with new ports. */
export class PortClash extends Error {}

interface Run {
  child: ChildProcess;
  stdout: string;
  stderr: string;
  exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export class NodeProcess {
  readonly id: string;
  readonly priority: number;
  readonly ports: NodePorts;
  readonly dataDir: string;
  readonly proxy: TcpFaultProxy | null;
  /** Etcd mode: the node's link to etcd (null in the default mode). */
  readonly etcd: EtcdProxies | null;
  readonly lockAddress: string;
  readonly sessionAddress: string;
  readonly httpAddress: string;
  private run: Run | undefined;
  /** Sent SIGSTOP and not SIGCONT since: stop() and sigterm() resume it first, or a pending SIGTERM would never run. */
  private paused = false;
  /** Output of earlier runs of this node, so a restart does not hide what came before. */
  private earlier = '';
  private runs = 0;
  /** The bin/baton the next start() runs: this checkout's unless switchBuild() named another build. */
  private bin = BATON;

  constructor(private readonly spec: NodeSpec) {
    this.id = spec.id;
    this.priority = spec.priority;
    this.ports = spec.ports;
    this.dataDir = spec.dataDir;
    this.proxy = spec.proxy;
    this.etcd = spec.etcd ?? null;
    const host = spec.host ?? '127.0.0.1';
    this.lockAddress = `${host}:${spec.ports.lock}`;
    this.sessionAddress = `${host}:${spec.ports.session}`;
    this.httpAddress = `${host}:${spec.ports.http}`;
  }

  get running(): boolean {
    return this.run !== undefined && this.run.exit === undefined;
  }

  /** Runs another build of baton from the next start() on (a rolling upgrade between two builds). */
  switchBuild(bin: string): void {
    this.bin = bin;
  }

  get pid(): number | undefined {
    return this.run?.child.pid;
  }

  /** Spawns the process and resolves once it printed its serving line. */
  async start(): Promise<void> {
    if (this.running) throw new Error(`node ${this.id} is already running`);
    if (this.run) this.earlier += this.describeRun(this.run);
    this.runs++;
    this.paused = false;
    const child = spawn(process.execPath, [this.bin, ...this.spec.args], {
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so teardown can kill whatever it started along with it.
      detached: true,
      env: { ...process.env, BATON_ADMIN_TOKEN: this.spec.adminToken, BATON_READ_TOKEN: undefined },
    });
    const run: Run = { child, stdout: '', stderr: '', exit: undefined, exited: undefined as never };
    run.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => resolve((run.exit = { code, signal })));
    });
    child.stdout?.setEncoding('utf8').on('data', (text: string) => (run.stdout += text));
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (run.stderr += text));
    this.run = run;
    const deadline = performance.now() + this.spec.startTimeoutMs;
    while (!SERVING.test(run.stdout)) {
      if (run.exit !== undefined) {
        const why = `node ${this.id} exited with ${run.exit.code ?? run.exit.signal} before serving`;
        throw /EADDRINUSE/.test(run.stderr) ? new PortClash(`${why} (port taken)`) : new Error(`${why}; stderr:\n${run.stderr}`);
      }
      if (performance.now() > deadline) throw new Error(`node ${this.id} printed no serving line in ${this.spec.startTimeoutMs} ms; stderr:\n${run.stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }

  /** kill -9 of the whole process group; resolves once the node has exited. */
  async kill9(): Promise<void> {
    const run = this.run;
    if (!run || run.exit !== undefined) return;
    this.signalGroup(run, 'SIGKILL');
    await run.exited;
  }

  /**
   * Sends `sig` to the node's process group: SIGSTOP freezes it (a VM pause, a swap storm), SIGCONT
   * lets it run again. A node left stopped is resumed by stop() and sigterm(), and kill9() kills it anyway.
   */
  signal(sig: NodeJS.Signals): void {
    const run = this.run;
    if (!run || run.exit !== undefined) throw new Error(`node ${this.id} is not running`);
    this.signalGroup(run, sig);
    if (sig === 'SIGSTOP' || sig === 'SIGTSTP') this.paused = true;
    if (sig === 'SIGCONT') this.paused = false;
  }

  /** Whether signal('SIGSTOP') froze the process and nothing resumed it yet. */
  get stopped(): boolean {
    return this.running && this.paused;
  }

  /**
   * SIGTERM (a graceful stop: the active hands off first); resolves with the exit code (null when
   * a signal ended it). Past `timeoutMs` it is killed and the call rejects.
   */
  async sigterm(timeoutMs = 15_000): Promise<number | null> {
    const run = this.run;
    if (!run) throw new Error(`node ${this.id} was never started`);
    if (run.exit === undefined) {
      this.resume(run);
      run.child.kill('SIGTERM');
    }
    const exit = await Promise.race([run.exited, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), timeoutMs))]);
    if (exit === undefined) {
      this.signalGroup(run, 'SIGKILL');
      await run.exited;
      throw new Error(`node ${this.id} did not exit within ${timeoutMs} ms of SIGTERM`);
    }
    return exit.code;
  }

  /** Starts the node again with the same arguments, ports and data dir. */
  /**
   * Starts the node again on its own ports. Another test running in parallel may hold one of
   * them for a moment (its free-port probe binds and releases): try again a few times.
   */
  async restart(): Promise<void> {
    if (this.running) throw new Error(`node ${this.id} is still running; kill9() or sigterm() it first`);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.start();
        return;
      } catch (error) {
        if (!(error instanceof PortClash) || attempt >= 5) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  }

  /** For teardown: SIGTERM, SIGKILL once `graceMs` passed, and the group killed either way. */
  async stop(graceMs: number): Promise<void> {
    const run = this.run;
    if (!run) return;
    if (run.exit === undefined) {
      this.resume(run);
      run.child.kill('SIGTERM');
      await Promise.race([run.exited, new Promise((resolve) => setTimeout(resolve, graceMs))]);
    }
    this.signalGroup(run, 'SIGKILL');
    await run.exited;
  }

  /** A request to this node's HTTP API with the admin token; the body read as JSON (or text). */
  async api<T = unknown>(path: string, init: RequestInit = {}, timeoutMs = 2_000): Promise<ApiReply<T>> {
    const headers = new Headers(init.headers);
    headers.set('authorization', `Bearer ${this.spec.adminToken}`);
    if (init.body !== undefined && !headers.has('content-type')) headers.set('content-type', 'application/json');
    const response = await fetch(`http://${this.httpAddress}${path}`, { ...init, headers, signal: AbortSignal.timeout(timeoutMs) });
    const text = await response.text();
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // Not JSON: the text itself is the most useful thing to show.
    }
    return { status: response.status, body: body as T };
  }

  /** POST with a JSON body. */
  post<T = unknown>(path: string, body: unknown = {}): Promise<ApiReply<T>> {
    return this.api<T>(path, { method: 'POST', body: JSON.stringify(body) });
  }

  /** GET /api/v1/cluster; throws unless it answered 200. */
  async cluster(): Promise<ClusterView> {
    const reply = await this.api<ClusterView>('/api/v1/cluster');
    if (reply.status !== 200) throw new Error(`node ${this.id}: GET /api/v1/cluster answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    return reply.body;
  }

  /** stderr of every run so far (pino JSON lines). */
  logs(): string {
    return this.earlier + (this.run ? this.run.stderr : '');
  }

  /** The log parsed: one object per JSON line (other lines kept as { msg }). */
  logEntries(): Array<Record<string, unknown>> {
    return this.logs()
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          return { msg: line };
        }
      });
  }

  stdout(): string {
    return this.run?.stdout ?? '';
  }

  /** The last `lines` lines of output, with how the process stands, for a failure report. */
  tail(lines = 50): string {
    const state = !this.run ? 'never started' : this.run.exit ? `exited ${this.run.exit.code ?? this.run.exit.signal}` : `running pid ${this.run.child.pid}`;
    const all = (this.earlier + (this.run ? this.describeRun(this.run) : '')).split('\n');
    const proxy = this.proxy ? `, peer proxy ${this.proxy.blocked ? 'blocked' : 'open'}: ${this.proxy.forwarded} forwarded, ${this.proxy.refused} refused` : '';
    const etcd = this.etcd ? `, etcd proxies: ${this.etcd.proxies.map((p) => (p.blocked ? 'blocked' : 'open')).join('/')}` : '';
    return `--- node ${this.id} (${state}, run ${this.runs}${proxy}${etcd}) last ${lines} lines ---\n${all.slice(-lines - 1).join('\n')}`;
  }

  private describeRun(run: Run): string {
    const end = run.exit ? `[exited ${run.exit.code ?? run.exit.signal}]\n` : '';
    return `[stdout] ${run.stdout.trimEnd()}\n${run.stderr}${end}`;
  }

  /** A frozen node cannot act on SIGTERM: let it run first. */
  private resume(run: Run): void {
    if (!this.paused) return;
    this.signalGroup(run, 'SIGCONT');
    this.paused = false;
  }

  private signalGroup(run: Run, signal: NodeJS.Signals): void {
    if (run.child.pid === undefined) return;
    try {
      process.kill(-run.child.pid, signal);
    } catch {
      // ESRCH: the group is gone already.
    }
  }
}
