// Prometheus metrics, fed by the engine's event stream. The event listener only bumps plain
// numbers (the hot path must stay cheap); prom-client reads them at scrape time.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { LockEngine } from '../lib/engine/lock-engine.ts';
import type { LockEvent } from '../lib/engine/events.ts';
import type { Protocol } from '../lib/engine/claim.ts';

type Tally = Record<Protocol, number>;
const tally = (): Tally => ({ keyed: 0, session: 0 });

export interface ConnectionCounts {
  keyed(): number;
  session(): number;
}

export function createMetrics(engine: LockEngine, connections: ConnectionCounts): Registry {
  const registry = new Registry();
  // The standard process_* and nodejs_* names, unprefixed, as dashboards for Node services expect.
  collectDefaultMetrics({ register: registry });
  const grants = tally();
  const releases = tally();
  const expiries = tally();
  const timeouts = tally();
  const forced = tally();
  const kicks = tally();
  const handover = new Histogram({
    name: 'baton_handover_latency_seconds',
    help: 'Time from the previous holder ending to the next grant, by what ended it',
    labelNames: ['cause'] as const,
    buckets: [0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1],
    registers: [registry],
  });

  engine.subscribe((e: LockEvent) => {
    switch (e.type) {
      case 'grant':
        grants[e.protocol]++;
        if (e.handoverCause !== null && e.handoverMs !== null) handover.observe({ cause: e.handoverCause }, e.handoverMs / 1000);
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
        return;
    }
  });

  const counter = (name: string, help: string, source: Tally): void => {
    new Counter({
      name, help, labelNames: ['protocol'] as const, registers: [registry],
      collect() {
        this.reset();
        this.inc({ protocol: 'keyed' }, source.keyed);
        this.inc({ protocol: 'session' }, source.session);
      },
    });
  };
  counter('baton_grants_total', 'Locks granted', grants);
  counter('baton_releases_total', 'Locks released by their holder (or its disconnect)', releases);
  counter('baton_expiries_total', 'Locks reclaimed at the end of their lease', expiries);
  counter('baton_wait_timeouts_total', 'Waiters that left the queue at their wait deadline', timeouts);
  counter('baton_force_releases_total', 'Locks force-released by an admin', forced);
  counter('baton_kicks_total', 'Waiters removed from a queue by an admin', kicks);

  const gauge = (name: string, help: string, read: () => number): void => {
    new Gauge({ name, help, registers: [registry], collect() { this.set(read()); } });
  };
  gauge('baton_locks_held', 'Locks with a holder', () => engine.heldCount);
  gauge('baton_waiters', 'Requests waiting in lock queues', () => engine.waiterCount);
  gauge('baton_token_high_water', 'Largest fencing token issued (as a float; exact value in /api)', () => Number(engine.tokenHighWater));
  new Gauge({
    name: 'baton_connections', help: 'Open client connections', labelNames: ['protocol'] as const, registers: [registry],
    collect() {
      this.set({ protocol: 'keyed' }, connections.keyed());
      this.set({ protocol: 'session' }, connections.session());
    },
  });
  return registry;
}
