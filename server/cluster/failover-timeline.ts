// The failover timeline a node shows (ClusterView.failovers): the active records entries and
// streams them to its standbys, a standby keeps what it is sent (and what its snapshot said).
// It also follows the resumable claims the node kept at its last promotion, whose fate (resumed,
// expired, ended) is written into that promotion's entry as it comes.
import type { Logger } from 'pino';
import type { CarriedClaims } from '../../lib/engine/carried-claims.ts';
import type { FailoverView } from '../../lib/ops-api/api-types.ts';
import type { FailoverCause } from '../../lib/ops-api/cluster-vocabulary.ts';

const MAX_FAILOVERS = 100;

export interface TimelineDeps {
  /** Sends a recorded entry to the standbys (ReplicationSource.broadcastFailover). */
  broadcast(f: FailoverView): void;
  logger: Logger;
}

export class FailoverTimeline {
  private readonly list: FailoverView[] = [];
  /** The resumable claims this node kept at its last promotion, and the timeline entry that reports them. */
  private carried: { entry: FailoverView; tally: CarriedClaims } | null = null;
  /**
   * Failovers this node recorded since it started, by cause (baton_failovers_recorded_total): one
   * node records each failover (the one that took over, or that stayed active in a split brain),
   * so the sum over the nodes counts the cluster's, and it never stops at the list's 100 entries.
   */
  readonly recorded: Record<FailoverCause, number> = { crash: 0, signal: 0, 'api-handoff': 0, 'priority-return': 0, 'split-brain': 0 };

  constructor(private readonly d: TimelineDeps) {}

  /** The entries, oldest first, with the kept claims' fate as of now. */
  entries(): readonly FailoverView[] {
    this.refreshCarried();
    return this.list;
  }

  /** A failover this node made (or saw): kept, sent to the standbys and logged. */
  record(f: FailoverView): void {
    this.recorded[f.cause]++;
    this.add(f);
    this.d.broadcast(f);
    this.d.logger.info(f, `failover: ${f.from ?? '(none)'} -> ${f.to} (${f.cause}), ${f.gapMs.toFixed(1)} ms without an active node`);
  }

  /** An entry the active sent. */
  add(f: FailoverView): void {
    this.list.push(f);
    if (this.list.length > MAX_FAILOVERS) this.list.splice(0, this.list.length - MAX_FAILOVERS);
  }

  /** The active's whole timeline, from its snapshot. */
  replace(fs: readonly FailoverView[]): void {
    this.list.splice(0, this.list.length, ...fs);
  }

  /** A failover entry with the resumable claims this node kept; their fate is filled in as it comes. */
  withCarried(f: FailoverView, tally: CarriedClaims): FailoverView {
    const entry: FailoverView = { ...f, claimsCarried: tally.carried, claimsResumed: 0, claimsExpired: 0, claimsEnded: 0 };
    this.carried = { entry, tally };
    return entry;
  }

  /** Writes how the kept resumable claims ended so far into their timeline entry (a snapshot sends it on too). */
  private refreshCarried(): void {
    const c = this.carried;
    if (c === null) return;
    c.entry.claimsResumed = c.tally.resumed;
    c.entry.claimsExpired = c.tally.expired;
    c.entry.claimsEnded = c.tally.ended;
  }
}
