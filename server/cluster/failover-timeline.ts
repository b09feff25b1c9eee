// The failover timeline a node shows (ClusterView.failovers): the active records entries and
// streams them to its standbys, a standby keeps what it is sent (and what its snapshot said).
// The node that took over also follows what became of the claims the transition touched
// (transition-report.ts) and sends the entry again, with the same id, when its figures have
// changed (checked at each heartbeat, so at most once per heartbeat), so every node shows the same
// counts: a standby used to keep the counts of its last snapshot ("2 still reconnecting" long
// after the new active said one had expired).
import type { Logger } from 'pino';
import type { FailoverView } from '../../lib/ops-api/api-types.ts';
import type { FailoverCause } from '../../lib/ops-api/cluster-vocabulary.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import { TransitionReport, type TransitionStart } from './transition-report.ts';

const MAX_FAILOVERS = 100;

/** The claim fates counted in baton_failover_claims_total. */
export const CLAIM_FATES = ['moved', 'expired', 'lost', 'ended', 'requeued', 'regranted'] as const;
export type ClaimFate = (typeof CLAIM_FATES)[number];

export interface TimelineDeps {
  /** Sends a recorded entry to the standbys (ReplicationSource.broadcastFailover). */
  broadcast(f: FailoverView): void;
  logger: Logger;
  now(): number;
  wallNow(): number;
  /** The engine's event stream, watched while re-sent keyed requests are awaited. */
  subscribe(listener: (ev: LockEvent) => void): () => void;
}

export class FailoverTimeline {
  private readonly list: FailoverView[] = [];
  /** The entries this node recorded whose claims have not all had their fate yet. */
  private live: TransitionReport[] = [];
  /**
   * Failovers this node recorded since it started, by cause (baton_failovers_recorded_total): one
   * node records each failover (the one that took over, or that stayed active in a split brain),
   * so the sum over the nodes counts the cluster's, and it never stops at the list's 100 entries.
   */
  readonly recorded: Record<FailoverCause, number> = { crash: 0, signal: 0, 'api-handoff': 0, 'priority-return': 0, 'split-brain': 0 };
  /** Claims by fate over the transitions this node recorded (baton_failover_claims_total), counted once each when its entry finishes. */
  readonly fates: Record<ClaimFate, number> = { moved: 0, expired: 0, lost: 0, ended: 0, requeued: 0, regranted: 0 };
  /** Each client stall as it is measured, with its transition's cause (baton_failover_client_stall_seconds). */
  readonly stallListeners: Array<(cause: FailoverCause, ms: number) => void> = [];

  constructor(private readonly d: TimelineDeps) {}

  /** The entries, oldest first, with the claims' fates as of now. */
  entries(): readonly FailoverView[] {
    for (const r of this.live) r.refresh();
    return this.list;
  }

  /** A failover this node made (or saw) with no claims to follow (a split brain): kept, sent to the standbys and logged. */
  record(f: FailoverView): void {
    this.recorded[f.cause]++;
    this.upsert(f);
    this.d.broadcast(f);
    this.d.logger.info(f, `failover: ${f.from ?? '(none)'} -> ${f.to} (${f.cause}), ${f.gapMs.toFixed(1)} ms without an active node`);
  }

  /** A handoff or failover that made this node active: recorded, and its claims followed until each has its fate. */
  recordTransition(f: FailoverView, start: TransitionStart): FailoverView {
    const report = new TransitionReport(f, start, {
      now: this.d.now,
      wallNow: this.d.wallNow,
      subscribe: this.d.subscribe,
      onStall: (ms) => {
        for (const l of this.stallListeners) l(f.cause, ms);
      },
    });
    this.live.push(report);
    report.dirty = false;
    this.record(report.entry);
    this.sweep();
    return report.entry;
  }

  /** Sends the entries whose figures changed (the node's heartbeat calls it), and retires the finished ones. */
  flush(): void {
    for (const r of this.live) r.refresh();
    this.sweep();
  }

  /**
   * This node stops being the active one: each entry it still follows ends with what it knows and
   * is sent once more (before the replication stream stops).
   */
  closeLive(): void {
    for (const r of this.live) r.close();
    this.sweep();
  }

  /** An entry the active sent: a new one, or the figures of one already kept (same id). */
  add(f: FailoverView): void {
    this.upsert(f);
  }

  /** The active's whole timeline, from its snapshot. */
  replace(fs: readonly FailoverView[]): void {
    // Another node is active now: what this node followed is that node's to report.
    for (const r of this.live) r.close();
    this.live = [];
    this.list.splice(0, this.list.length, ...fs);
  }

  private sweep(): void {
    for (const r of this.live) {
      if (r.dirty) this.d.broadcast(r.entry);
      r.dirty = false;
      if (r.finished) this.count(r.entry);
    }
    this.live = this.live.filter((r) => !r.finished);
  }

  private count(f: FailoverView): void {
    const c = f.clients;
    if (c === undefined) return;
    for (const fate of CLAIM_FATES) this.fates[fate] += c[fate];
    this.d.logger.info(
      { failover: f.id, ...c },
      `transition ${f.from ?? '(none)'} -> ${f.to} finished: ${c.moved} claims moved, ${c.expired} expired, ${c.lost} lost; longest client stall ${c.longestStallMs ?? 0} ms (${f.gapMs} ms without an active node)`,
    );
  }

  private upsert(f: FailoverView): void {
    const i = f.id === undefined ? -1 : this.list.findIndex((e) => e.id === f.id);
    if (i >= 0) {
      this.list[i] = f;
      return;
    }
    this.list.push(f);
    if (this.list.length > MAX_FAILOVERS) this.list.splice(0, this.list.length - MAX_FAILOVERS);
  }
}
