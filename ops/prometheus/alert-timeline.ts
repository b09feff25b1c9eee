// A timeline of what a real Prometheus says about its alerts while a test injects faults: it
// polls /api/v1/alerts every POLL_MS and records each alert (name and labels) going pending,
// firing and cleared, next to the faults the test marks, in ms since the recorder started.
// alerts-live.test.ts asserts on it and prints it (the figures of docs/operations.md, "Alerts").
import type { ActiveAlert, PrometheusServer } from '../../server/testing/prometheus-harness.ts';

const POLL_MS = 250;

export type AlertState = 'pending' | 'firing' | 'cleared';

export interface TimelineEntry {
  /** ms since the recorder started. */
  at: number;
  /** A fault the test caused, or an alert's change. */
  fault?: string;
  alert?: string;
  state?: AlertState;
}

function keyOf(a: ActiveAlert, rename: (label: string, value: string) => string): string {
  const labels = Object.entries(a.labels)
    .filter(([k]) => k !== 'alertname' && k !== 'severity' && k !== 'job')
    .sort(([x], [y]) => x.localeCompare(y))
    .map(([k, v]) => `${k}=${rename(k, v)}`);
  return labels.length === 0 ? a.name : `${a.name}{${labels.join(',')}}`;
}

export class AlertTimeline {
  readonly entries: TimelineEntry[] = [];
  private readonly now = new Map<string, 'pending' | 'firing'>();
  private readonly t0 = performance.now();
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> = Promise.resolve();
  /** Polls that failed (Prometheus busy): counted, not fatal. */
  failedPolls = 0;

  constructor(
    private readonly prometheus: PrometheusServer,
    /** Shows a label's value more readably (an instance address as its node id). */
    private readonly rename: (label: string, value: string) => string = (_l, v) => v,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.poll(), POLL_MS);
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.polling;
  }

  elapsed(): number {
    return performance.now() - this.t0;
  }

  mark(fault: string): number {
    const at = this.elapsed();
    this.entries.push({ at, fault });
    return at;
  }

  /** Polls now (besides the timer), after any poll under way: answers are applied in order. */
  poll(): Promise<void> {
    this.polling = this.polling.then(() => this.pollOnce());
    return this.polling;
  }

  private async pollOnce(): Promise<void> {
    let alerts: ActiveAlert[];
    try {
      alerts = await this.prometheus.alerts();
    } catch {
      this.failedPolls++;
      return;
    }
    const at = this.elapsed();
    const seen = new Map(alerts.map((a) => [keyOf(a, this.rename), a.state] as const));
    for (const [alert, state] of seen) {
      if (this.now.get(alert) !== state) this.entries.push({ at, alert, state });
      this.now.set(alert, state);
    }
    for (const alert of [...this.now.keys()]) {
      if (!seen.has(alert)) {
        this.entries.push({ at, alert, state: 'cleared' });
        this.now.delete(alert);
      }
    }
  }

  /** The alerts (with their labels) of `name` in `state` now. */
  current(name: string, state: 'pending' | 'firing'): string[] {
    return [...this.now].filter(([alert, s]) => s === state && (alert === name || alert.startsWith(`${name}{`))).map(([alert]) => alert);
  }

  /** Entries of alert `name` since `from` (ms). */
  changes(name: string, from: number, to = Number.POSITIVE_INFINITY): TimelineEntry[] {
    return this.entries.filter((e) => e.alert !== undefined && (e.alert === name || e.alert.startsWith(`${name}{`)) && e.at >= from && e.at <= to);
  }

  /** Polls until `name` is in `state` ('cleared': in neither pending nor firing); the ms it took. */
  async waitFor(name: string, state: AlertState, timeoutMs: number): Promise<number> {
    const from = this.elapsed();
    for (;;) {
      await this.poll();
      const pending = this.current(name, 'pending').length > 0;
      const firing = this.current(name, 'firing').length > 0;
      if (state === 'firing' ? firing : state === 'pending' ? pending || firing : !pending && !firing) return this.elapsed() - from;
      if (this.elapsed() - from > timeoutMs) {
        throw new Error(`${name} not ${state} after ${timeoutMs} ms; timeline:\n${this.format()}`);
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  /** Each fault, then what the alerts did after it (seconds after the fault). */
  format(): string {
    const lines: string[] = [];
    let since = 0;
    for (const e of this.entries) {
      if (e.fault !== undefined) {
        since = e.at;
        lines.push(`${(e.at / 1000).toFixed(1).padStart(6)} s  ${e.fault}`);
      } else {
        lines.push(`${''.padStart(8)}  +${((e.at - since) / 1000).toFixed(1).padStart(5)} s  ${e.alert} ${e.state}`);
      }
    }
    return lines.join('\n');
  }
}
