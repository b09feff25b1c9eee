// How many connections the process can really hold. Every connection is a file descriptor, and
// past the open-file limit the kernel refuses the accept itself: the client is closed without
// the protocol's "too many connections" line and the listener's own limit never comes into
// play. So the daemon takes --max-connections only as far as the limit allows, and says so.
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
  /** Per protocol: open connections, and refused ones saying goodbye at once. */
  maxConnections: number;
  maxRefusing: number;
  /** The requested maximum did not fit the limit. */
  lowered: boolean;
}

/**
 * Splits what the limit leaves after RESERVED_FDS between the two protocols; within a
 * protocol's share, up to a quarter (at most MAX_REFUSING) goes to refusals in flight, so that
 * refused clients are told why rather than dropped by the kernel.
 */
export function connectionBudget(requested: number, limit: number | null): ConnectionBudget {
  if (limit === null) return { maxConnections: requested, maxRefusing: MAX_REFUSING, lowered: false };
  const share = Math.max(2, Math.floor((limit - RESERVED_FDS) / 2));
  const maxRefusing = Math.max(1, Math.min(MAX_REFUSING, Math.floor(share / 4)));
  const fits = Math.max(1, share - maxRefusing);
  return { maxConnections: Math.min(requested, fits), maxRefusing, lowered: requested > fits };
}

/** The budget for `requested` under `limit`, with a warning in the log when it had to be lowered. */
export function fitConnections(requested: number, limit: number | null, log: Logger): ConnectionBudget {
  const budget = connectionBudget(requested, limit);
  if (budget.lowered) {
    log.warn(
      { requested, maxConnections: budget.maxConnections, openFileLimit: limit },
      'max-connections lowered to fit the open-file limit (ulimit -n): past it the kernel drops clients without the too-many-connections error',
    );
  }
  return budget;
}
