// How many connections the process can really hold. Every connection is a file descriptor, and
// past the open-file limit the kernel refuses the accept itself: the client is closed without
// the protocol's "too many connections" line and the listener's own limit never comes into
// play. So the two protocols together take only what the limit holds, and the daemon says so.
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';

/** Descriptors kept for everything else: HTTP clients, the data dir, logs, peer links, Next. */
export const RESERVED_FDS = 128;
/** Refused connections a listener says goodbye to at once (line-listener.ts), at most. */
export const MAX_REFUSING = 256;

/** The soft open-file limit (node raises it to the hard one at start), or null off Linux. */
export function openFileLimit(path = '/proc/self/limits'): number | null {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync(path, 'utf8'));
    if (m === null || m[1] === 'unlimited') return null;
    return Number(m[1]);
  } catch {
    return null;
  }
}

export interface ConnectionBudget {
  /** Open connections per protocol (--max-connections, when it fits). */
  maxConnections: number;
  /** Open connections of both protocols together. */
  maxTotal: number;
  /** Refused connections each listener says goodbye to at once. */
  maxRefusing: number;
  /** Both protocols at their maximum would not fit the limit. */
  lowered: boolean;
}

/**
 * What the limit leaves after RESERVED_FDS goes to connections, less each listener's refusals
 * in flight (at most MAX_REFUSING, fewer under a small limit), so that refused clients are told
 * why rather than dropped by the kernel. One protocol may use all of it when the other is idle.
 */
export function connectionBudget(requested: number, limit: number | null): ConnectionBudget {
  if (limit === null) return { maxConnections: requested, maxTotal: 2 * requested, maxRefusing: MAX_REFUSING, lowered: false };
  const room = Math.max(8, limit - RESERVED_FDS);
  const maxRefusing = Math.max(1, Math.min(MAX_REFUSING, Math.floor(room / 8)));
  const fits = Math.max(2, room - 2 * maxRefusing);
  return { maxConnections: Math.min(requested, fits), maxTotal: Math.min(2 * requested, fits), maxRefusing, lowered: 2 * requested > fits };
}

/** The budget for `requested` under `limit`, with a warning in the log when it had to be lowered. */
export function fitConnections(requested: number, limit: number | null, log: Logger): ConnectionBudget {
  const budget = connectionBudget(requested, limit);
  if (budget.lowered) {
    log.warn(
      { requested, maxConnections: budget.maxConnections, maxTotal: budget.maxTotal, openFileLimit: limit },
      'the open-file limit (ulimit -n) holds fewer connections than --max-connections for both protocols: the two together take at most maxTotal, and refuse the rest with the too-many-connections error',
    );
  }
  return budget;
}

/** Open connections of both protocols against their shared maximum (one object per daemon). */
export class ConnectionSlots {
  open = 0;
  constructor(readonly max: number) {}
}

/**
 * What both listeners of one daemon take: the per-protocol maximum, refusals in flight, and the
 * shared slots. `limit` is the process's own unless given (tests pin it, so their budget does
 * not follow the machine's `ulimit -n`).
 */
export function listenerLimits(
  requested: number,
  log: Logger,
  limit: number | null = openFileLimit(),
): { maxConnections: number; maxRefusing: number; slots: ConnectionSlots } {
  const budget = fitConnections(requested, limit, log);
  return { maxConnections: budget.maxConnections, maxRefusing: budget.maxRefusing, slots: new ConnectionSlots(budget.maxTotal) };
}
