// Keeps the in-sync set in etcd (issue 32 rule 6): the standbys an active waits for before it
// answers, and the only nodes that may campaign after it. The set starts empty (the role holder
// stores [] when it wins, before the node answers anything). A standby is added once it has had
// all of its snapshot and has acked everything already answered (SyncGate.mayJoin); a member
// whose stream is gone, that is re-syncing, or whose oldest unacked batch is older than the lag
// bound is taken out. Every change is a write guarded by the role lease (`store`): from the
// moment it is sent replies wait for the old and the new members both, and only once etcd has
// stored it does the new set alone count. So a member is waited for until etcd says it is no
// longer electable, and a node is waited for as soon as it might be.
//
// One write at a time. A write whose outcome is unknown (a timeout: etcd may have stored it) is
// sent again, the same set, until etcd says yes or no: the gate keeps waiting for both sets
// meanwhile, so whichever of them etcd holds, its members are waited for.
//
// The set is bounded (`maxMembers`, `--etcd-in-sync`): every reply waits for every member, so each
// member is one more ack each turn's replies wait for, and the turn waits for the slowest. The keeper keeps at most that many: a member that is still fine stays, a
// member taken out is replaced by another synced standby that has acked everything answered (the
// same propose-then-store write, so nothing about safety changes: a node outside the stored set
// is not electable, and every answered reply is held by every stored member), and among the
// standbys that may be members it prefers the highest-priority ones (front of the cluster file),
// so that after a crash the node that wins is the one the priorities name. The price of a small
// set is availability, not safety: with one member, the active and that member lost together
// leave nobody electable (docs/cluster.md, "How many members").
//
// A member that stalls (a gray link: it delivers in bursts, or a standby that is slow now and
// then) would hold every reply for up to the lag bound again and again without ever passing it:
// a link held 900 ms of every second kept its member in the set and cut the active's answers to
// a twentieth (server/cluster/cluster-etcd-flap.test.ts). So a standby whose oldest unacked batch
// is older than the stall bound (a quarter of the lag bound) is marked as having stalled, and for
// the stall hold-down (30 lag bounds) it ranks after every standby that has not: with a healthy
// synced standby to take its place, it is replaced at once (the same propose-then-store write),
// and it does not take its place back by priority until the hold-down is over. A member whose
// stream went (a dropped link) or that re-syncs is marked the same way. With nobody healthy to
// take its place it stays a member, and the lag bound still applies.
//
// A handoff (server/cluster/etcd-handoff.ts) narrows the set to its successor through here too
// (narrow): the gate waits for the old set and the successor until etcd has stored the narrowed
// one, then for the successor alone, so the gate, this keeper and etcd agree at every step. If the
// handoff is called off, resume() lets the keeper's next check widen the set again (standbys that
// are synced and have acked everything answered, up to the bound), as it would after any change.
import { DEFAULT_ETCD_LAG_BOUND_MS } from '../../lib/cluster/cluster-config.ts';

/** What the keeper uses of the reply gate (reply-gate.ts). */
export interface KeptGate {
  readonly members: ReadonlySet<string>;
  mayJoin(node: string): boolean;
  propose(members: Iterable<string>): void;
  stored(members: Iterable<string>): void;
}

/** One standby the replication source streams to. */
export interface StandbyState {
  readonly id: string;
  /** It has had all of its snapshot. */
  readonly synced: boolean;
  /** Age of its oldest unacked batch (0: none). */
  readonly lagMs: number;
}

/** The replication source as the keeper sees it (ReplicationSource fits). */
export interface StandbySource {
  lags(): Record<string, { ms: number }>;
  streaming(id: string): boolean;
}

/** The standbys of a replication source, as the keeper reads them. */
export function standbysOf(source: StandbySource): () => StandbyState[] {
  return () => Object.entries(source.lags()).map(([id, lag]) => ({ id, synced: source.streaming(id), lagMs: lag.ms }));
}

export interface InSyncKeeperOptions {
  gate: KeptGate;
  /** Writes the set to etcd if this node still holds the role key (EtcdRoleHolder.storeInSync); rejects when the outcome is unknown. */
  store: (members: string[]) => Promise<boolean>;
  standbys: () => StandbyState[];
  /** A member whose oldest unacked batch is older than this is taken out of the set (replies wait for it until then). */
  lagBoundMs: number;
  /** How often the set is checked (ms). */
  checkEveryMs?: number;
  /** Whether the keeper may change the set now (not while a handoff narrows it itself); always if not given. */
  mayChange?: () => boolean;
  /** At most this many members (at least 1); every synced standby if not given. */
  maxMembers?: number;
  /** Node ids in priority order (front = highest): with more candidates than maxMembers, the first ones are kept. */
  priority?: readonly string[];
  /** A change etcd stored, or a write that failed (for the log). */
  onChange?: (event: { members: string[]; stored: boolean; error?: Error }) => void;
  /** The monotonic clock (ms) the stall hold-down is measured on; performance.now if not given. */
  now?: () => number;
}

/** `--etcd-lag-bound` when not given (lib/cluster/cluster-config.ts). */
export const DEFAULT_LAG_BOUND_MS = DEFAULT_ETCD_LAG_BOUND_MS;
/** A standby whose oldest unacked batch is older than this share of the lag bound has stalled. */
export const STALL_SHARE = 0.25;
/** How long a standby that stalled ranks after those that did not, in lag bounds. */
export const STALL_HOLD_DOWN_BOUNDS = 30;
const DEFAULT_CHECK_EVERY_MS = 50;

export class InSyncKeeper {
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  /** The set sent and not yet answered yes or no: sent again until it is. */
  private unsettled: string[] | null = null;
  /** A handoff is narrowing the set (or has): the keeper leaves it alone until resume() or stop(). */
  private narrowing = false;

  /** A standby's place in the priority order (unlisted ones after every listed one). */
  private readonly rank: (id: string) => number;
  /** When each standby was last seen stalled (monotonic ms); one entry per standby at most. */
  private readonly stalledAt = new Map<string, number>();
  private readonly now: () => number;

  constructor(private readonly o: InSyncKeeperOptions) {
    if (o.maxMembers !== undefined && !(Number.isInteger(o.maxMembers) && o.maxMembers >= 1))
      throw new RangeError(`maxMembers must be a whole number of at least 1, not ${o.maxMembers}`);
    const places = new Map((o.priority ?? []).map((id, i) => [id, i]));
    this.rank = (id) => places.get(id) ?? places.size;
    this.now = o.now ?? (() => performance.now());
  }

  /** Starts keeping the set (the gate is active with the set the role holder stored). */
  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => this.check(), this.o.checkEveryMs ?? DEFAULT_CHECK_EVERY_MS);
    this.timer.unref();
  }

  /** Stops; a write on its way finishes but changes nothing more. */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.unsettled = null;
    this.narrowing = false;
  }

  get running(): boolean {
    return this.timer !== null;
  }

  /** A write is on its way (resolves when it is answered). */
  get pending(): Promise<void> | null {
    return this.writing;
  }

  /** The set the next write would store, or null when the stored one is right. */
  wanted(): string[] | null {
    const members = this.o.gate.members;
    const byId = new Map(this.o.standbys().map((s) => [s.id, s]));
    const ok = (s: StandbyState | undefined): boolean => s?.synced === true && s.lagMs <= this.o.lagBoundMs;
    const now = this.now();
    const stallMs = this.o.lagBoundMs * STALL_SHARE;
    for (const s of byId.values()) if (s.lagMs > stallMs) this.stalledAt.set(s.id, now);
    // A member whose stream went (a link that dropped) or that re-syncs counts as stalled too: a
    // link that drops every few hundred ms would otherwise take its place back after each resync.
    for (const m of members) if (byId.get(m)?.synced !== true) this.stalledAt.set(m, now);
    const holdDownMs = this.o.lagBoundMs * STALL_HOLD_DOWN_BOUNDS;
    const stalled = (id: string): number => {
      const at = this.stalledAt.get(id);
      return at !== undefined && now - at < holdDownMs ? 1 : 0;
    };
    // Who may be a member: a member still fine, or a standby that may join (it has acked
    // everything answered, so adding it holds no reply already sent). Then the bound: those that
    // have not stalled lately first, each group by priority.
    const candidates = [...members].filter((m) => ok(byId.get(m)));
    for (const s of byId.values()) if (!members.has(s.id) && ok(s) && this.o.gate.mayJoin(s.id)) candidates.push(s.id);
    candidates.sort((x, y) => stalled(x) - stalled(y) || this.rank(x) - this.rank(y) || (x < y ? -1 : x > y ? 1 : 0));
    const next = candidates.slice(0, this.o.maxMembers ?? candidates.length).sort();
    if (next.length === members.size && next.every((m) => members.has(m))) return null;
    return next;
  }

  /** One look at the set; writes a change when one is due and no write is on its way. */
  check(): void {
    if (this.writing !== null || this.timer === null || this.narrowing || this.o.mayChange?.() === false) return;
    const next = this.unsettled ?? this.wanted();
    if (next === null) return;
    this.write(next);
  }

  /**
   * A handoff to `to`: stores the set narrowed to `to` (etcd gets `alsoElectable` too: the node
   * handing off, which may have to campaign again if the handoff fails after it resigned; it
   * never acks its own stream, so the gate does not wait for it). Replies wait for the old set
   * and `to` until etcd answers, then for `to` alone. `to` must be a member or able to join (it
   * has acked everything answered). True once stored; false (the keeper still holds off: call
   * resume()) when it is not: not joinable, the role key is not this node's, or the outcome is
   * unknown (then resume() sends the narrowed set again until etcd answers, the gate waiting for
   * both sets meanwhile).
   */
  async narrow(to: string, alsoElectable: readonly string[] = []): Promise<boolean> {
    this.narrowing = true;
    while (this.writing !== null) await this.writing;
    const gate = this.o.gate;
    if (this.timer === null || this.unsettled !== null || (!gate.members.has(to) && !gate.mayJoin(to))) return false;
    const before = [...gate.members];
    const next = [to];
    gate.propose(next);
    this.unsettled = next;
    let ok: boolean;
    const writing = this.o.store([...new Set([to, ...alsoElectable])].sort());
    this.writing = writing.then(
      () => {},
      () => {},
    );
    try {
      ok = await writing;
    } catch (err) {
      this.o.onChange?.({ members: next, stored: false, error: err as Error });
      return false;
    } finally {
      this.writing = null;
    }
    if (this.unsettled !== next) return false; // stopped meanwhile
    this.unsettled = null;
    gate.stored(ok ? next : before);
    this.o.onChange?.({ members: ok ? next : before, stored: ok });
    return ok;
  }

  /** The handoff is over without this node leaving the role: the keeper keeps the set again from its next check. */
  resume(): void {
    this.narrowing = false;
  }

  private write(next: string[]): void {
    const before = [...this.o.gate.members];
    this.o.gate.propose(next);
    this.unsettled = next;
    this.writing = this.o
      .store(next)
      .then(
        (ok) => {
          if (this.unsettled !== next) return; // stopped meanwhile
          this.unsettled = null;
          // No: the role key is not under this node's lease; etcd holds the old set still.
          this.o.gate.stored(ok ? next : before);
          this.o.onChange?.({ members: ok ? next : before, stored: ok });
        },
        (err: Error) => {
          // Unknown: it may be stored. The gate keeps waiting for both; the next check sends it again.
          this.o.onChange?.({ members: next, stored: false, error: err });
        },
      )
      .finally(() => {
        this.writing = null;
      });
  }
}
