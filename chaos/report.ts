// The printed account of a chaos run: seed, schedule, what was applied, the counts, notes and
// violations, each on its own lines so a failing seed's output can be read and replayed.
import type { ChaosResult } from './chaos-run.ts';
import { describeFault } from './fault-schedule.ts';
import { formatPartitionWindow } from './partition-windows.ts';
import type { Carryover } from './session-carryover.ts';

/** "kill9 3x 12: 0/11/1, ...": per kind, its faults, the session holds that spanned them: carried over / lost / neither. */
export function formatCarryover(byKind: Carryover['byKind']): string {
  const parts = Object.entries(byKind).map(([kind, c]) => `${kind} ${c.faults}x ${c.spanned}: ${c.carried}/${c.lost}/${c.other}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

export function formatReport(result: ChaosResult, replay: string): string {
  const { verdict } = result;
  const c = verdict.counts;
  const lines = [
    `seed ${result.seed} (replay: ${replay})`,
    `schedule (${result.schedule.length}):`,
    ...result.schedule.map((f) => `  ${describeFault(f)}`),
    `applied (${result.applied.length}):`,
    ...result.applied.map((a) => `  ${a}`),
    `faults by kind: ${JSON.stringify(c.faultsByKind)}`,
    `failovers: ${c.failovers} ${JSON.stringify(c.failoversByCause)}`,
    `grants: ${c.grants} (keyed ${c.keyedGrants}, session ${c.sessionGrants}); acquire failures ${c.acquireFailures}; session losses ${c.sessionLosses}; keyed releases answered STALE within the lease ${c.staleKeyedReleases}`,
    `keyed holders past their lease (starved clients) overlapping a grant made after it could expire: ${c.keyedLeaseLapses}`,
    `overlaps explained by a stalled client process (not violations): ${c.stalledClientOverlaps} (client stall events: ${c.clientStalls})`,
    `writes accepted: ${c.writesAccepted}; stale writes rejected: ${c.staleWritesRejected}; conflicts: ${c.conflicts} (explained ${c.conflictsExplained}, see the notes)`,
    ...(c.etcdMode
      ? [
          `etcd mode (lease TTL ${(result.history.coordination?.leaseTtlMs ?? 0) / 1000} s): no window excused; partitions, pauses and etcd faults are inside the mutual-exclusion, token-order and succession checks (any overlap is a violation)`,
          `partition windows: ${c.partitionWindows.length}`,
          ...c.partitionWindows.map((w, i) => `  ${formatPartitionWindow(w, i, result.history.runStart)}`),
        ]
      : [
          `partition windows (cut .. heal + peer timeout + a lease; overlaps allowed inside, each counted): ${c.partitionWindows.length}, overlaps inside them: ${c.partitionOverlaps}`,
          ...c.partitionWindows.map((w, i) => `  ${formatPartitionWindow(w, i, result.history.runStart)}`),
          `excluded from the mutual-exclusion check (partition windows): ${(c.excludedMs / 1000).toFixed(1)} s, ${(c.excludedShare * 100).toFixed(1)}% of the run; overlaps excused by a pause of the active (granted before it, within the holder's lease): ${c.pauseExcusedOverlaps}`,
        ]),
    `tokens: ${c.distinctTokens} distinct tokens granted, each once (a token given twice is a violation)`,
    `per-lock token order: ${c.tokenOrderChecked} grants compared with an earlier grant of their lock`,
    `session claims across faults that hit the active (kind, faults x, holds spanning them: carried over / lost / neither): ${formatCarryover(c.sessionCarryover)}; lost to a planned handoff: ${c.sessionLostToPlannedHandoff}${result.requireSessionCarryover ? ' (each a violation)' : ' (not checked: --allow-session-loss)'}`,
    `longest wait for a free lock: ${c.longestStrandedMs} ms (bound ${c.strandBoundMs} ms)`,
    `final state: ${result.history.final.error ?? `${result.history.final.active} active, ${result.history.final.locks.length} locks listed`}`,
    `run took ${(result.elapsedMs / 1000).toFixed(1)} s`,
  ];
  if (result.unsettled.length > 0) lines.push(`not settled after (${result.unsettled.length}):`, ...result.unsettled.map((u) => `  ${u}`));
  if (verdict.notes.length > 0) lines.push(`notes (${verdict.notes.length}):`, ...verdict.notes.map((n) => `  ${n}`));
  if (verdict.violations.length === 0) lines.push('violations: none');
  else lines.push(`VIOLATIONS (${verdict.violations.length}):`, ...verdict.violations.map((v) => `  [${v.property}] ${v.message}`));
  return lines.join('\n');
}
