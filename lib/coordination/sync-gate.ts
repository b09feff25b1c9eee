// The in-sync-standby rule of issue 32, pure (not wired into the daemon yet): an active in the
// partition-safe mode answers a grant, a release or a renewal only once every standby of the
// in-sync set stored in etcd has applied the replication events that made it, and only members of
// that set may campaign for the role. So whichever node wins after the active is cut off, it has
// every change a client was told of, and does not grant a lock again that the old active granted.
//
// Batched per event-loop turn: the replies of one turn wait behind one stream position (the last
// event of that turn), and one acknowledgement from each in-sync standby releases every turn at or
// below it. Pipelined clients pay nothing per request; one client alone pays a round trip to the
// slowest in-sync standby.
//
// Why "every member", not "one of them": every member is electable; a member that had not applied
// an answered grant could win and give that lock again. A member that is slow or gone is taken out
// of the set by the active, but the set in force is the one etcd has stored: a reply waits until
// the removal is stored (a compare-and-swap guarded by the active's role lease), so a node that
// the gate stopped waiting for can no longer win. A node joins the set only once it has applied
// everything already answered, and from the moment the write that adds it is sent, replies wait
// for it too (it may be electable as soon as etcd stores the write, before the active hears so).
// While a change is on its way, the gate waits for the union of the old set and the new one. With the set empty the active answers at once and nobody else is
// electable: the cluster then waits for that active (or an operator) after a crash, which is the
// price of never giving a lock twice.

/** What release() returns when nothing is answerable (one frozen array for every caller). */
const NONE: readonly never[] = Object.freeze([]);

export interface HeldTurn<R> {
  /** The replication stream position of the turn's last event (replies need it applied). */
  readonly position: bigint;
  readonly replies: R;
}

export class SyncGate<R> {
  private readonly held: HeldTurn<R>[] = [];
  private readonly acked = new Map<string, bigint>();
  private inSync: ReadonlySet<string>;
  /** A set sent to etcd and not yet known stored: its members hold replies back too. */
  private proposed: ReadonlySet<string> = new Set();
  /** The highest position answered so far: a joining node must have applied it. */
  private answered = 0n;

  constructor(storedInSync: Iterable<string>) {
    this.inSync = new Set(storedInSync);
  }

  /** The set in force (as etcd stores it). */
  get members(): ReadonlySet<string> {
    return this.inSync;
  }

  get answeredPosition(): bigint {
    return this.answered;
  }

  /** Replies waiting for acknowledgements. */
  get waiting(): number {
    return this.held.length;
  }

  /** One turn's replies, after its events up to `position`; returns what can be answered now (maybe these). */
  hold(position: bigint, replies: R): readonly R[] {
    const last = this.held.at(-1);
    if (last !== undefined && position < last.position) throw new Error(`stream position went back: ${position} after ${last.position}`);
    this.held.push({ position, replies });
    return this.release();
  }

  /** A standby has applied the stream up to `position`; returns the turns now answerable, in order. */
  ack(node: string, position: bigint): readonly R[] {
    if (position > (this.acked.get(node) ?? -1n)) this.acked.set(node, position);
    return this.release();
  }

  /** Whether `node` may join the set now: it has applied every change already answered. */
  mayJoin(node: string): boolean {
    return (this.acked.get(node) ?? -1n) >= this.answered;
  }

  /**
   * A new in-sync set is being written to etcd (each member added passed mayJoin): until stored()
   * or stored() with the old set (the write lost), replies wait for the members of both sets.
   */
  propose(members: Iterable<string>): void {
    this.proposed = new Set(members);
  }

  /**
   * etcd has stored a new in-sync set (written by this active, guarded by its lease): it is in
   * force from now. A member added must have been able to join (mayJoin) when the write was sent;
   * a member removed no longer holds replies back. Returns the turns now answerable.
   */
  stored(members: Iterable<string>): readonly R[] {
    this.inSync = new Set(members);
    this.proposed = new Set();
    return this.release();
  }

  /** The lowest position every member has applied (every position when the set is empty). */
  // Called on every turn and every ack: no array is built for the members (the sets are walked
  // as they are) and nothing is allocated when no turn is released.
  private covered(): bigint | null {
    const low = this.lowest(this.inSync, null);
    return low === -1n || this.proposed.size === 0 ? low : this.lowest(this.proposed, low);
  }

  private lowest(members: ReadonlySet<string>, from: bigint | null): bigint | null {
    let low = from;
    for (const m of members) {
      const a = this.acked.get(m);
      if (a === undefined) return -1n;
      if (low === null || a < low) low = a;
    }
    return low;
  }

  private release(): readonly R[] {
    const covered = this.covered();
    let out: R[] | null = null;
    while (this.held.length > 0) {
      const turn = this.held[0] as HeldTurn<R>;
      if (covered !== null && turn.position > covered) break;
      this.held.shift();
      if (turn.position > this.answered) this.answered = turn.position;
      if (out === null) out = [];
      out.push(turn.replies);
    }
    return out ?? NONE;
  }
}

/**
 * Whether a node may campaign for the role: a member of the in-sync set etcd stores, or anyone when
 * no set was ever stored (`null`: no active has ever answered anything). A new active stores its
 * set (empty: nobody has synced from it yet) before it answers anything, so from then on only
 * the standbys it admits are electable.
 */
export function electable(node: string, storedInSync: ReadonlySet<string> | null): boolean {
  return storedInSync === null || storedInSync.has(node);
}

/** The in-sync set's text in etcd: a JSON array of node ids, sorted, nothing else. */
export function encodeInSync(members: Iterable<string>): string {
  return JSON.stringify([...new Set(members)].sort());
}

export function parseInSync(text: string): ReadonlySet<string> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`etcd in-sync set is not JSON: ${JSON.stringify(text.slice(0, 40))}`);
  }
  if (!Array.isArray(value) || !value.every((v): v is string => typeof v === 'string' && v.length > 0 && v.length <= 64))
    throw new Error(`etcd in-sync set is not an array of node ids: ${JSON.stringify(text.slice(0, 40))}`);
  return new Set(value);
}
