// A graceful handoff from the operator's side: the API answers once the successor has taken the
// role, but the clients' part (claims reconnecting, re-sent requests, a claim that has to expire)
// comes after. The status used to stop at "Graceful handoff to b started." for good; it now
// follows the successor's timeline entry (named in the answer) until it is finished, and ends
// with the figures.
import type { FailoverView } from '@/lib/ops-api/api-types.ts';
import { formatStall, handoffStatusText } from '../../lib/dashboard/transition-format.ts';
import { ApiRequestError, opsApi } from './api-client.ts';

/** Who took over and the id of the timeline entry for it (null from a node that does not name it). */
export interface HandoffTaken {
  target: string;
  failover: string | null;
  gapMs: number | null;
}

/** How often the status reads the cluster view while the handoff's claims settle. */
const POLL_MS = 500;
/**
 * How long it follows the entry: past the 60 s the successor watches for re-sent keyed requests
 * and a default lease; an entry still open then is left to the failover list.
 */
export const FOLLOW_MS = 120_000;

/** `{handoff: {target, gapMs, failover}}` from the handoff API, read defensively. */
export function handoffTaken(answer: unknown, wanted: string): HandoffTaken {
  const h = typeof answer === 'object' && answer !== null && 'handoff' in answer ? answer.handoff : null;
  const field = (name: string): unknown => (typeof h === 'object' && h !== null && name in h ? (h as Record<string, unknown>)[name] : undefined);
  const target = field('target');
  const failover = field('failover');
  const gapMs = field('gapMs');
  return {
    target: typeof target === 'string' ? target : wanted,
    failover: typeof failover === 'string' ? failover : null,
    gapMs: typeof gapMs === 'number' ? gapMs : null,
  };
}

/**
 * A refused handoff as the status says it: "Graceful handoff to b failed: <the server's reason>".
 * The status code and error code stay (a 401 still sends the operator to sign in).
 */
export function handoffFailed(err: unknown, wanted: string): unknown {
  if (!(err instanceof ApiRequestError)) return err;
  return new ApiRequestError(err.status, err.code, `Graceful handoff to ${wanted} failed: ${err.message}`);
}

/** The entry `id` in this node's timeline, or undefined (not there yet, or the node did not answer). */
async function readEntry(id: string): Promise<FailoverView | undefined> {
  try {
    return (await opsApi.cluster()).failovers.find((f) => f.id === id);
  } catch {
    return undefined;
  }
}

/** Resolves with the finished status line once the entry has every claim's fate (or FOLLOW_MS passed). */
export async function waitHandoffFinished(taken: HandoffTaken, followMs = FOLLOW_MS): Promise<string> {
  const { target, failover } = taken;
  const gap = taken.gapMs === null ? '' : ` (no active node for ${formatStall(taken.gapMs)})`;
  if (failover === null) return `Graceful handoff to ${target} done${gap}; the clients' figures are in the failover list.`;
  const deadline = Date.now() + followMs;
  let last: FailoverView | undefined;
  for (;;) {
    last = (await readEntry(failover)) ?? last;
    const status = handoffStatusText(target, last);
    if (status.finished) return status.text;
    if (Date.now() >= deadline) return `${status.text} Still under way after ${Math.round(followMs / 1000)} s: the failover list has the figures as they come.`;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
