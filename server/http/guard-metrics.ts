// The series the alert rules (ops/prometheus/baton-alerts.yml) watch that no other group has:
// the age of the oldest hold, the tokens left before this node's slot runs out, and console
// sign-ins throttled. All read at scrape time, none labelled (a lock name would be a label of
// unbounded cardinality: the age of the single oldest hold says "some lock is stuck" without it).
import { Counter, Gauge, type Registry } from 'prom-client';

export interface GuardSources {
  /** Seconds; 0 when nothing is held. */
  oldestHoldSeconds?: (() => Promise<number>) | undefined;
  tokensRemaining?: (() => bigint) | undefined;
  signInsThrottled?: (() => number) | undefined;
}

export function registerGuardMetrics(registry: Registry, sources: GuardSources): void {
  const { oldestHoldSeconds, tokensRemaining, signInsThrottled } = sources;
  if (oldestHoldSeconds !== undefined) {
    new Gauge({
      name: 'baton_oldest_hold_seconds',
      help: 'Age of the longest current hold on this node (0 when none); a standby shows the holds it mirrors',
      registers: [registry],
      async collect() {
        this.set(await oldestHoldSeconds());
      },
    });
  }
  if (tokensRemaining !== undefined) {
    new Gauge({
      name: 'baton_tokens_remaining',
      help: "Fencing tokens this node can still issue before its token slot is used up (as a float: about 2.9e17 in a fresh cluster node's slot)",
      registers: [registry],
      collect() {
        this.set(Number(tokensRemaining()));
      },
    });
  }
  if (signInsThrottled !== undefined) {
    new Counter({
      name: 'baton_console_sign_ins_throttled_total',
      help: 'Console sign-ins answered 429 too-many-sign-ins (more than 10 a minute from one address)',
      registers: [registry],
      collect() {
        this.reset();
        this.inc(signInsThrottled());
      },
    });
  }
}
