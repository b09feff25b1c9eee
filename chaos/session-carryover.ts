// Session claims across handoffs and failovers, per fault: did a session hold that spanned the
// fault survive it (the client kept its claim: same token, no abort) or did the fault end it?
// Inferred from the holds alone, so it does not depend on how a client carries a claim over
// (a client that reports `resumed` events is counted the same way, the events are only noted):
//
// - A session hold spans a fault when it began before the fault did and was still open when the
//   fault began. Only faults that hit the active count (a standby's kill or pause moves no claim;
//   a client kill is the client's own death, not a handoff).
// - carried over: it was still held (not lost, not killed) when the fault ended: it ended later by
//   the client's own release, or was still open when the run stopped.
// - lost: the client learned it lost the claim (lease.signal aborted) inside
//   [fault start, fault end + lease]: the fault ended it (a REDIRECT, a dead connection, the
//   silence deadline of a claim nobody answered for).
// - Any other ending (released inside the window, lost later than that, process killed) is neither.
//
// Priority returns (a restarted node taking its role back, after a kill -9 or SIGTERM has been
// undone) are planned handoffs too, and they are on the nodes' failover timeline, not in the fault
// list: each is counted as a handoff at the instant of the failover, under `priority-return`.
import type { FailoverView } from '../lib/ops-api/api-types.ts';
import type { FaultKind, FaultWindow } from './history.ts';
import type { Hold } from './holds.ts';

export type HandoffKind = Exclude<FaultKind, 'client-kill'> | 'priority-return';

export interface CarryoverCount {
  /** Faults of this kind that hit the active. */
  faults: number;
  /** Session holds that were open when such a fault began. */
  spanned: number;
  carried: number;
  lost: number;
  /** Spanned but neither: released inside the window (a short hold), lost later, or its process killed. */
  other: number;
}

export interface LostClaim {
  kind: HandoffKind;
  /** Whether the handoff was planned (SIGTERM, API handoff, priority return): the claim could have moved. */
  planned: boolean;
  hold: Hold;
  faultStart: number;
  faultEnd: number;
}

export interface Carryover {
  byKind: Partial<Record<HandoffKind, CarryoverCount>>;
  lost: LostClaim[];
}

const PLANNED: ReadonlySet<HandoffKind> = new Set<HandoffKind>(['sigterm', 'api-handoff', 'priority-return']);

export function sessionCarryover(holds: readonly Hold[], faults: readonly FaultWindow[], failovers: readonly FailoverView[], leaseMs: number): Carryover {
  const sessions = holds.filter((h) => h.protocol === 'session');
  const windows: Array<{ kind: HandoffKind; start: number; end: number }> = [];
  for (const f of faults) if (f.kind !== 'client-kill' && f.hitActive !== false) windows.push({ kind: f.kind, start: f.start, end: f.end });
  // A failover's `at` is in whole ms of the successor's clock: the handoff happened within [at, at + 1).
  for (const f of failovers) if (f.cause === 'priority-return') windows.push({ kind: 'priority-return', start: f.at, end: f.at + 1 });
  const byKind: Partial<Record<HandoffKind, CarryoverCount>> = {};
  const lost: LostClaim[] = [];
  for (const w of windows) {
    const count = (byKind[w.kind] ??= { faults: 0, spanned: 0, carried: 0, lost: 0, other: 0 });
    count.faults++;
    for (const h of sessions) {
      if (!(h.start < w.start && h.end > w.start)) continue;
      count.spanned++;
      if (h.end >= w.end && (h.endedBy === 'release' || h.endedBy === 'run-end')) count.carried++;
      else if (h.endedBy === 'lost' && h.end <= w.end + leaseMs) {
        count.lost++;
        lost.push({ kind: w.kind, planned: PLANNED.has(w.kind), hold: h, faultStart: w.start, faultEnd: w.end });
      } else count.other++;
    }
  }
  return { byKind, lost };
}
