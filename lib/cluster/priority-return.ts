// When an active hands its role back to a higher-priority node (the priority return of
// role-decider.ts, rule 4): a pure rule over what the active has seen of its standbys, on its
// own monotonic clock.
//
// Why a hold-down. A node that lost the role (it was paused or frozen, it crashed and
// restarted, its link flapped) re-syncs from the new active in milliseconds, and was then handed
// the role back at once: a paused active took it back about 30 ms after SIGCONT, so every
// seed-protocol session lost its claim twice within a second and a half (once to the failover,
// once to the handoff), and a node that keeps freezing would bounce the cluster each time. A
// returning node first proves itself: it must be a standby of this active, in sync with it, its
// statuses arriving without a gap, for the whole hold-down, and caught up when the role goes
// back (still by a graceful handoff). Any break starts the hold-down over: a silence or a freeze
// (it is not alive, or comes back discovering), a re-sync, a restart (another instance), or two
// statuses further apart than a grant window allows an active (3/4 of a peer timeout: the gap
// that makes an active hold its grants, freeze-rule.ts). An operator can still hand the role to it
// earlier (POST /api/v1/cluster/handoff): that is a decision, not a bounce.
import type { NodePhase } from '../ops-api/cluster-vocabulary.ts';

/** The hold-down when none is configured: 10 peer timeouts, and never less than 10 s. */
export function defaultReturnHoldDownMs(peerTimeoutMs: number): number {
  return Math.max(10_000, 10 * peerTimeoutMs);
}

/** The longest gap between two statuses of a standby that still counts as steady. */
export function steadyGapMs(peerTimeoutMs: number): number {
  return (peerTimeoutMs * 3) / 4;
}

/** What the active keeps of a standby that is steady: since when, and its last status. */
export interface SteadyRecord {
  /** The standby's process instance: a restart starts the hold-down over. */
  instance: string;
  /** Since when (monotonic ms) it has been a synced standby of this active without a break. */
  since: number;
  /** When its last status was received (monotonic ms). */
  statusAt: number;
}

/** A peer as the active hears it now. */
export interface SteadySample {
  instance: string;
  phase: NodePhase;
  syncedWith: string | null;
  /** Heard from within the peer timeout. */
  alive: boolean;
  /** When its last status was received (monotonic ms). */
  statusAt: number;
}

/**
 * The next record for one peer (null: it is not steady now). `activeInstance` is this active's
 * instance: only a standby synced with it counts.
 */
export function trackSteady(prev: SteadyRecord | null, peer: SteadySample, activeInstance: string, now: number, peerTimeoutMs: number): SteadyRecord | null {
  const gap = steadyGapMs(peerTimeoutMs);
  if (!peer.alive || peer.phase !== 'standby' || peer.syncedWith !== activeInstance || now - peer.statusAt > gap) return null;
  if (prev === null || prev.instance !== peer.instance || peer.statusAt - prev.statusAt > gap) {
    return { instance: peer.instance, since: peer.statusAt, statusAt: peer.statusAt };
  }
  return { ...prev, statusAt: peer.statusAt };
}

/** A standby the active might hand back to. */
export interface ReturnCandidate {
  id: string;
  /** 0 = highest. */
  priority: number;
  yielded: boolean;
  leaving: boolean;
  /** How long it has been steady (trackSteady), ms; null when it is not. */
  steadyMs: number | null;
  /** Replication lag in events as the active measures it; null when not known. */
  lagEvents: number | null;
}

export type ReturnVerdict =
  | { kind: 'none' }
  | { kind: 'handoff'; to: string }
  /** The highest-priority returning node, and why it does not get the role yet. */
  | { kind: 'wait'; node: string; inMs: number; reason: string };

/** Whether an active of priority `selfPriority` hands its role back now, and if not, to whom it will. */
export function priorityReturn(selfPriority: number, peers: readonly ReturnCandidate[], holdDownMs: number): ReturnVerdict {
  const returning = peers.filter((p) => p.priority < selfPriority && p.steadyMs !== null && !p.yielded && !p.leaving).sort((x, y) => x.priority - y.priority);
  const ready = returning.find((p) => (p.steadyMs ?? 0) >= holdDownMs && p.lagEvents === 0);
  if (ready !== undefined) return { kind: 'handoff', to: ready.id };
  const first = returning[0];
  if (first === undefined) return { kind: 'none' };
  const steadyMs = first.steadyMs ?? 0;
  if (steadyMs < holdDownMs) {
    return {
      kind: 'wait',
      node: first.id,
      inMs: Math.ceil(holdDownMs - steadyMs),
      reason: `hold-down: a node takes the role back by priority only after ${holdDownMs} ms as a synced standby without a break (${first.id}: ${Math.floor(steadyMs)} ms so far)`,
    };
  }
  return { kind: 'wait', node: first.id, inMs: 0, reason: `${first.id} is not caught up yet (replication lag ${first.lagEvents ?? 'unknown'} events)` };
}
