// A handoff or failover as its clients saw it, measured on the node that took over: what became
// of every claim the transition touched (moved, expired, lost, ended by an admin, still
// reconnecting; keyed waiters re-sent and re-granted) and how long clients stalled. A stall runs
// from the old active's last grant-capable moment (the handoff's start on the old node, or the
// last line heard from a crashed one) to the claim's RESUME here, or to the grant of a re-sent
// keyed request for a lock whose waiters the promotion dropped. The daemon's gap (no active node)
// is only the start of that: a client waits longer for a claim that has to expire first.
import type { Claim, EndReason } from '../../lib/engine/claim.ts';
import { CarriedClaims } from '../../lib/engine/carried-claims.ts';
import type { LockEvent } from '../../lib/engine/events.ts';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { FailoverView, TransitionClients } from '../../lib/ops-api/api-types.ts';

/** How long after a promotion the re-sent requests of dropped keyed waiters are watched for their grant. */
export const KEYED_WATCH_MS = 60_000;

/**
 * The owner of the resumable session claims kept at a promotion (CarriedClaims) that also times
 * each RESUME from the transition's start, so the stall of a claim is measured as it resumes.
 */
export class TransitionClaims extends CarriedClaims {
  /** Stalls measured (ms), in the order their claims resumed; the report takes them. */
  readonly stalls: number[] = [];
  /** Called when a kept claim resumes or ends, so its report can refresh at once. */
  onChange: () => void = () => {};

  constructor(
    private readonly now: () => number,
    /** Monotonic ms on this node: the old active's last grant-capable moment. */
    readonly startedAt: number,
  ) {
    super();
  }

  override onResumed(claim: Claim): void {
    super.onResumed(claim);
    this.stalls.push(Math.max(0, this.now() - this.startedAt));
    this.onChange();
  }

  override onEnded(claim: Claim, reason: EndReason): void {
    super.onEnded(claim, reason);
    this.onChange();
  }
}

/** What the promotion knew of the claims, for the report. */
export interface TransitionStart {
  claims: TransitionClaims;
  /** Keyed grants left held at the promotion. */
  keyedHolders: number;
  /** Session claims the transition ended (both nodes: REDIRECT at a handoff, drops at the promotion). */
  lost: number;
  /** Keyed waiters the promotion dropped, by lock. */
  keyedWaiters: ReadonlyMap<string, number>;
}

export interface ReportDeps {
  now(): number;
  wallNow(): number;
  subscribe(listener: (ev: LockEvent) => void): () => void;
  /** Each stall as it is measured (ms), for /metrics. */
  onStall(ms: number): void;
}

/** One timeline entry's client figures, kept up to date until every claim has its fate. */
export class TransitionReport {
  readonly entry: FailoverView;
  private readonly clients: TransitionClients;
  private readonly keyedLeft = new Map<string, number>();
  private unsubscribe: (() => void) | null = null;
  private readonly watchUntil: number;
  private taken = 0;
  /** The figures changed since the last flush (FailoverTimeline sends the entry again). */
  dirty = false;

  constructor(
    base: FailoverView,
    private readonly start: TransitionStart,
    private readonly d: ReportDeps,
  ) {
    const c = start.claims;
    let requeued = 0;
    for (const [lock, n] of start.keyedWaiters) {
      this.keyedLeft.set(lock, n);
      requeued += n;
    }
    this.clients = {
      moved: start.keyedHolders,
      expired: 0,
      lost: start.lost,
      ended: 0,
      reconnecting: c.carried,
      requeued,
      regranted: 0,
      longestStallMs: null,
      stalls: 0,
      finishedAt: null,
    };
    this.entry = {
      ...base,
      id: `${base.to}/${base.at}`,
      claimsCarried: c.carried,
      claimsResumed: 0,
      claimsExpired: 0,
      claimsEnded: 0,
      clients: this.clients,
    };
    this.watchUntil = d.now() + KEYED_WATCH_MS;
    // Only while re-sent keyed requests are awaited: every listener is a cost on the lock path.
    if (requeued > 0) this.unsubscribe = d.subscribe((ev) => this.onEvent(ev));
    c.onChange = () => this.refresh();
    this.refresh();
  }

  get finished(): boolean {
    return this.clients.finishedAt !== null;
  }

  /** Writes the claims' fates so far into the entry; finishes it when nothing is left to wait for. */
  refresh(): void {
    if (this.finished) return;
    const c = this.start.claims;
    const e = this.entry;
    const k = this.clients;
    while (this.taken < c.stalls.length) this.stall(c.stalls[this.taken++] as number);
    const before = `${k.moved}/${k.expired}/${k.ended}/${k.reconnecting}/${k.regranted}`;
    e.claimsResumed = c.resumed;
    e.claimsExpired = c.expired;
    e.claimsEnded = c.ended;
    k.moved = this.start.keyedHolders + c.resumed;
    k.expired = c.expired;
    k.ended = c.ended;
    k.reconnecting = Math.max(0, c.carried - c.resumed - c.expired - c.ended);
    if (before !== `${k.moved}/${k.expired}/${k.ended}/${k.reconnecting}/${k.regranted}`) this.dirty = true;
    if (k.reconnecting === 0 && (this.keyedLeft.size === 0 || this.d.now() >= this.watchUntil)) this.finish();
  }

  /**
   * This node stops being the active one (a handoff, a step-down) before every claim had its
   * fate: the entry ends here with what it knows; the claims still reconnecting moved on with the
   * lock table, and the next transition's entry counts them again.
   */
  close(): void {
    this.refresh();
    if (!this.finished) this.finish();
  }

  private finish(): void {
    this.clients.finishedAt = this.d.wallNow();
    this.unsubscribe?.();
    this.unsubscribe = null;
    this.keyedLeft.clear();
    this.dirty = true;
  }

  private stall(ms: number): void {
    const k = this.clients;
    const rounded = Math.round(ms * 10) / 10;
    k.stalls++;
    k.longestStallMs = k.longestStallMs === null ? rounded : Math.max(k.longestStallMs, rounded);
    this.dirty = true;
    this.d.onStall(ms);
  }

  /**
   * A keyed grant on a lock whose waiters were dropped is taken for one of their re-sent requests
   * (a keyed request carries no identity: the first grants of the lock after the promotion).
   */
  private onEvent(ev: LockEvent): void {
    if (ev.type !== 'grant' || ev.protocol !== 'keyed') return;
    const left = this.keyedLeft.get(ev.lock);
    if (left === undefined) return;
    if (left <= 1) this.keyedLeft.delete(ev.lock);
    else this.keyedLeft.set(ev.lock, left - 1);
    this.clients.regranted++;
    this.stall(this.d.now() - this.start.claims.startedAt);
    if (this.keyedLeft.size === 0) this.refresh();
  }
}

/** Session claims (held or queued) that `run` ends: at a handoff, those that cannot move (lost to it). */
export function countSessionEnds(engine: Pick<LockEngine, 'subscribe'>, run: () => void): number {
  let ended = 0;
  const off = engine.subscribe((ev) => {
    if ((ev.type === 'release' || ev.type === 'leave-queue') && ev.protocol === 'session') ended++;
  });
  try {
    run();
  } finally {
    off();
  }
  return ended;
}
