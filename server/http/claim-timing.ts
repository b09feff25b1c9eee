// The histograms that the engine's event stream feeds on every grant and every end of a hold:
// handover latency by cause, queue wait and hold time by protocol. Each is a TypedHistogram
// (typed arrays, no allocation per event), so the metrics listener stays cheap on the lock
// path; what does not need every event (the age of the oldest hold) is read at scrape time.
import type { HandoverCause, Protocol } from '../../lib/engine/claim.ts';
import type { EndedHolder, GrantEvent, ResetEvent } from '../../lib/engine/events.ts';
import { HANDOVER_CAUSES } from '../../lib/ops-api/api-types.ts';
import { TypedHistogram } from './typed-histogram.ts';

/** Upper bounds (seconds): handovers are sub-millisecond when a release hands over, up to timer lateness for expiries. */
export const HANDOVER_BOUNDS = [0.00001, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.05, 0.25, 1];
/** Queue waits: from a release's handover (sub-millisecond) to workers queued behind long holds (minutes). */
export const QUEUE_WAIT_BOUNDS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
/** Holds: a short critical section (milliseconds) to a batch job's lease (an hour). */
export const HOLD_BOUNDS = [0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

const PROTOCOLS: readonly Protocol[] = ['keyed', 'session'];
const PROTOCOL_INDEX: Record<Protocol, number> = { keyed: 0, session: 1 };
const CAUSE_INDEX: Record<HandoverCause, number> = { release: 0, disconnect: 1, expiry: 2, 'force-release': 3 };

export class ClaimTiming {
  private readonly handover = new TypedHistogram({
    name: 'baton_handover_latency_seconds',
    help: 'Time from the previous holder ending to the next grant, by what ended it',
    label: 'cause',
    values: HANDOVER_CAUSES,
    bounds: HANDOVER_BOUNDS,
  });
  private readonly waits = new TypedHistogram({
    name: 'baton_queue_wait_seconds',
    help: 'Time from enqueue to grant, for each grant of a claim that had to queue (a standby does not count the grants it mirrors)',
    label: 'protocol',
    values: PROTOCOLS,
    bounds: QUEUE_WAIT_BOUNDS,
  });
  private readonly holds = new TypedHistogram({
    name: 'baton_hold_seconds',
    help: 'Length of each hold when it ends: release, disconnect, expiry, force-release or failover',
    label: 'protocol',
    values: PROTOCOLS,
    bounds: HOLD_BOUNDS,
  });

  /** `countWait` false: a standby's mirrored grant, whose wait the active counted. */
  granted(e: GrantEvent, countWait = true): void {
    if (e.handoverCause !== null) this.handover.observe(CAUSE_INDEX[e.handoverCause], (e.handoverMs ?? 0) / 1000);
    // An immediate grant waited exactly 0 (enqueuedAt is the grant's own clock read); one from
    // the queue was granted by a later operation, which read the clock again.
    if (countWait && e.waitedMs > 0) this.waits.observe(PROTOCOL_INDEX[e.protocol], e.waitedMs / 1000);
  }

  ended(h: EndedHolder): void {
    this.holds.observe(PROTOCOL_INDEX[h.protocol], (h.at - h.grantedAt) / 1000);
  }

  /** The holders a reset ended (this node stopped serving them) ended there too. */
  reset(e: ResetEvent): void {
    for (let i = 0; i < e.ended.length; i++) {
      const h = e.ended[i];
      if (h !== undefined) this.ended(h);
    }
  }

  exposition(): string {
    return this.handover.exposition() + this.waits.exposition() + this.holds.exposition();
  }
}
