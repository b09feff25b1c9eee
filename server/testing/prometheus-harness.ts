// A real Prometheus server for tests: Debian's `prometheus` binary (scripts/ensure-prometheus.sh
// extracts it from the package, installing nothing) started on a free loopback port with a config
// written to a temp dir, scraping the given Baton nodes' /metrics and evaluating the given rule
// files. The tests that check the alert rules and the Grafana dashboard against real series use
// it: a typo in an expression or a renamed metric shows up as an error or an empty answer here.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePorts } from './free-ports.ts';

const ROOT = resolve(import.meta.dirname, '../..');
/** How long Prometheus gets to answer /-/ready after its start. */
const READY_MS = 20_000;

export interface PrometheusOptions {
  /** `host:port` of each node's HTTP port; Prometheus scrapes `/metrics` there. */
  targets: string[];
  /** Rule files to load (absolute paths or relative to the repository). */
  rulesFiles?: string[];
  scrapeIntervalSeconds?: number;
  evaluationIntervalSeconds?: number;
}

export interface Sample {
  metric: Record<string, string>;
  value: number;
}

export interface ActiveAlert {
  name: string;
  state: 'pending' | 'firing';
  labels: Record<string, string>;
  activeAt: string;
}

export interface PrometheusServer {
  /** Base URL, e.g. http://127.0.0.1:41234 */
  readonly url: string;
  /** An instant query; throws with Prometheus's own error text when the expression is bad. */
  query(expr: string): Promise<Sample[]>;
  /** Alerts pending or firing now. */
  alerts(): Promise<ActiveAlert[]>;
  /** Resolves once every target has been scraped successfully (health "up"). */
  waitForTargetsUp(timeoutMs?: number): Promise<void>;
  /** What Prometheus printed (stderr), for a failing test's message. */
  log(): string;
  stop(): Promise<void>;
}

/** The path of the `prometheus` binary, extracted on first use. */
export function prometheusBinary(): string {
  const out = execFileSync('sh', [join(ROOT, 'scripts/ensure-prometheus.sh')], { cwd: ROOT, encoding: 'utf8' });
  const path = out.trim().split('\n').pop() ?? '';
  return resolve(ROOT, path);
}

function configText(options: PrometheusOptions): string {
  const scrape = options.scrapeIntervalSeconds ?? 1;
  const evaluation = options.evaluationIntervalSeconds ?? 1;
  const rules = (options.rulesFiles ?? []).map((f) => `  - ${JSON.stringify(resolve(ROOT, f))}`);
  // JSON is YAML: every value quoted as JSON, so a path or target with odd characters stays one string.
  return [
    'global:',
    `  scrape_interval: ${scrape}s`,
    `  scrape_timeout: ${scrape}s`,
    `  evaluation_interval: ${evaluation}s`,
    rules.length > 0 ? `rule_files:\n${rules.join('\n')}` : '',
    'scrape_configs:',
    '  - job_name: "baton"',
    '    metrics_path: "/metrics"',
    `    static_configs: [{ targets: ${JSON.stringify(options.targets)} }]`,
    '',
  ].join('\n');
}

interface ApiAnswer<T> {
  status: 'success' | 'error';
  data?: T;
  error?: string;
  errorType?: string;
}

async function api<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const body = (await res.json()) as ApiAnswer<T>;
  if (body.status !== 'success' || body.data === undefined) throw new Error(`prometheus: ${body.errorType ?? res.status}: ${body.error ?? 'no data'} (${url})`);
  return body.data;
}

async function sleep(ms: number): Promise<void> {
  await new Promise((r) => setTimeout(r, ms));
}

class RunningPrometheus implements PrometheusServer {
  private stderr = '';
  private exited = false;

  constructor(
    private readonly child: ChildProcess,
    readonly url: string,
    private readonly dir: string,
  ) {
    child.stderr?.setEncoding('utf8');
    // Keep the last 64 KiB: enough to see why it refused a config or a rule.
    child.stderr?.on('data', (chunk: string) => {
      this.stderr = (this.stderr + chunk).slice(-65_536);
    });
    child.once('exit', () => {
      this.exited = true;
    });
  }

  log(): string {
    return this.stderr;
  }

  async ready(): Promise<void> {
    const deadline = Date.now() + READY_MS;
    while (Date.now() < deadline) {
      if (this.exited) throw new Error(`prometheus exited at start:\n${this.stderr}`);
      try {
        const res = await fetch(`${this.url}/-/ready`);
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      await sleep(100);
    }
    throw new Error(`prometheus not ready after ${READY_MS} ms:\n${this.stderr}`);
  }

  async query(expr: string): Promise<Sample[]> {
    const data = await api<{ resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] }>(
      `${this.url}/api/v1/query?query=${encodeURIComponent(expr)}`,
    );
    if (data.resultType !== 'vector') {
      // A scalar or string answer has no series: report it as one unlabelled sample.
      const value = (data.result as unknown as [number, string])[1];
      return [{ metric: {}, value: Number(value) }];
    }
    return data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
  }

  async alerts(): Promise<ActiveAlert[]> {
    const data = await api<{ alerts: { labels: Record<string, string>; state: string; activeAt: string }[] }>(`${this.url}/api/v1/alerts`);
    return data.alerts.map((a) => ({
      name: a.labels.alertname ?? '',
      state: a.state === 'firing' ? 'firing' : 'pending',
      labels: a.labels,
      activeAt: a.activeAt,
    }));
  }

  async waitForTargetsUp(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      const data = await api<{ activeTargets: { health: string; scrapeUrl: string; lastError: string }[] }>(`${this.url}/api/v1/targets`);
      const down = data.activeTargets.filter((t) => t.health !== 'up');
      if (data.activeTargets.length > 0 && down.length === 0) return;
      last = down.map((t) => `${t.scrapeUrl}: ${t.health} ${t.lastError}`).join('; ');
      await sleep(200);
    }
    throw new Error(`prometheus targets not up after ${timeoutMs} ms: ${last}`);
  }

  async stop(): Promise<void> {
    if (!this.exited) {
      const exited = new Promise<void>((r) => this.child.once('exit', () => r()));
      this.child.kill('SIGTERM');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Starts Prometheus on a free loopback port; the caller stops it (register `stop` as teardown). */
export async function startPrometheus(options: PrometheusOptions): Promise<PrometheusServer> {
  const binary = prometheusBinary();
  const dir = mkdtempSync(join(tmpdir(), 'baton-prometheus-'));
  const config = join(dir, 'prometheus.yml');
  writeFileSync(config, configText(options));
  const [port] = await freePorts(1);
  const child = spawn(
    binary,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // A test's series are minutes old at most; nothing needs the default 15 days.
      '--storage.tsdb.retention.time=1h',
      '--log.level=warn',
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  const server = new RunningPrometheus(child, `http://127.0.0.1:${port}`, dir);
  try {
    await server.ready();
  } catch (error) {
    await server.stop();
    throw error;
  }
  return server;
}
