// The grant gate, a part of the engine (lock-engine.ts): whether a grant may be made now (the
// cluster's grant window, held handovers), which free locks wait for one, and why no token could
// be issued. It decides nothing about claims: the serving operations (serving-ops.ts) ask it
// where they grant (`isOpenAt`, `issue`), file a lock with it when they cannot (`fileHeld`), and
// hand the held locks on when it opens (`takeHeld`).
import type { LockState } from './claim.ts';
import type { Clock } from './clock.ts';
import { NEVER } from './lock-table.ts';
import type { TokenSource } from '../tokens/token-source.ts';
import { TokensUnavailable } from '../tokens/token-contract.ts';

export class GrantGate {
  /**
   * A grant (or handover) is made only while `clock.now() < openUntil`. It is the one check
   * every path that grants goes through (acquire, and handOver for release, disconnect, lease
   * expiry, force-release and a handoff called off), made with the clock read of the grant
   * itself, so no order of timers and socket reads after a pause can get past it. +Infinity on a
   * node that never gates (a single daemon: one comparison, nothing else); -Infinity while
   * handovers are held. See setGrantWindow and server/cluster/role-lease.ts.
   */
  private openUntil = NEVER;
  /** The window the cluster gave (setGrantWindow); +Infinity when it never did. */
  private windowUntil = NEVER;
  private handoversHeld = false;
  /** No token can be had until a block arrives (the etcd mode's token source, awaitTokens). */
  private tokensAwaited = false;
  /**
   * Free locks with a queue that got no holder: the gate was shut, or no token could be issued
   * (storage unavailable, u64 exhausted). Handed on by releaseHandovers / retryHeldGrants.
   */
  private readonly heldLocks = new Set<LockState>();
  /** Why the last grant that needed a token could not be made, while that lasts (null once a token is issued again). */
  private refusal: TokensUnavailable | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly tokens: TokenSource,
  ) {}

  /** Whether a grant may be made at `now`, the clock read of the operation that grants. */
  isOpenAt(now: number): boolean {
    return now < this.openUntil;
  }

  /** Whether a grant could be made now (the gate; not whether a token can be issued). */
  grantsOpen(): boolean {
    return this.clock.now() < this.openUntil;
  }

  /**
   * A node handing its role to a successor makes no new grant after its last replicated event:
   * a lock that comes free meanwhile (a session holder's connection closed) keeps its queue
   * and no holder, and a request for a free lock waits, until releaseHandovers(), so no grant
   * can be made that the successor never hears of. A node that was frozen holds them the same
   * way until it knows whether it keeps its role.
   */
  holdHandovers(): void {
    this.handoversHeld = true;
    this.openUntil = Number.NEGATIVE_INFINITY;
  }

  /** Handovers go on, as far as the grant window allows (the engine then hands on the held locks). */
  stopHolding(): void {
    this.handoversHeld = false;
    if (!this.tokensAwaited) this.openUntil = this.windowUntil;
  }

  /**
   * The token source has no block to issue from until one arrives (the etcd mode reserves them
   * over the network, lib/tokens/supplied-token-source.ts): shut like held handovers, so a request
   * for a free lock queues as a waiter rather than failing, until tokensArrived().
   */
  awaitTokens(): void {
    this.tokensAwaited = true;
    this.openUntil = Number.NEGATIVE_INFINITY;
  }

  /** A block arrived: open again as far as held handovers and the grant window allow. */
  tokensArrived(): void {
    this.tokensAwaited = false;
    if (!this.handoversHeld) this.openUntil = this.windowUntil;
  }

  /**
   * Grants are made only while `clock.now() < until` (monotonic ms): the cluster's word that no
   * peer can have taken the role over before then. A window that has passed shuts the gate by
   * itself, with no call: that is the point. Widening it hands nothing on; releaseHandovers and
   * retryHeldGrants do.
   */
  setGrantWindow(until: number): void {
    this.windowUntil = until;
    if (!this.handoversHeld && !this.tokensAwaited) this.openUntil = until;
  }

  /**
   * At a promotion: a replicated lock may be free with a queue (the old active released it while
   * its handovers were held for a handoff, and a standby never hands over). Once the waiters that
   * survive a promotion are kept (resumable sessions), nothing else would hand such a lock on:
   * each is filed as held, for releaseHandovers to give to the head of its queue. Found by the
   * chaos checker: a lock stranded for 12.8 s, its queue refilled by clients that timed out.
   * `locks`: the table's object-form locks (LockTable.objectLocks): a compact lock has nobody waiting.
   */
  fileFreeQueues(locks: Iterable<LockState>): number {
    let filed = 0;
    for (const lock of locks) {
      if (lock.holder === null && lock.head !== null) {
        this.heldLocks.add(lock);
        filed++;
      }
    }
    return filed;
  }

  /** A free lock with a queue got no holder (gate shut, or no token): it waits here to be handed on. */
  fileHeld(lock: LockState): void {
    this.heldLocks.add(lock);
  }

  /** Free locks with waiters that are waiting for the gate or for a token. */
  get heldGrantCount(): number {
    return this.heldLocks.size;
  }

  /** The held locks, for the engine to hand on now; none is held any more. */
  takeHeld(): LockState[] {
    const held = [...this.heldLocks];
    this.heldLocks.clear();
    return held;
  }

  /** The state is replaced (a reset): nothing held before is handed on later. */
  forgetHeld(): void {
    this.heldLocks.clear();
  }

  /** A token, remembering why there was none (try/catch costs nothing on the path that does not throw). */
  issue(): bigint {
    try {
      const token = this.tokens.next();
      if (this.refusal !== null) this.refusal = null;
      return token;
    } catch (err) {
      if (err instanceof TokensUnavailable) this.refusal = err;
      throw err;
    }
  }

  /**
   * Nobody waits, but the last save failed: try one now (a token skipped), so that health says
   * when storage is back without waiting for a client to ask.
   */
  retryRefusedIssue(): void {
    if (this.refusal?.reason !== 'storage-unavailable' || !this.grantsOpen()) return;
    try {
      this.issue();
    } catch (err) {
      if (!(err instanceof TokensUnavailable)) throw err;
    }
  }

  /** Why grants that need a new token fail now, or null: the last issue failed and none has succeeded since. */
  get tokenRefusal(): TokensUnavailable | null {
    return this.refusal;
  }

  /**
   * Why this node grants nothing that needs a new token, for people (health, metrics, the
   * dashboard): every u64 token is used, or the last try to store a block's ceiling failed.
   */
  grantRefusal(): TokensUnavailable['reason'] | null {
    if (this.tokens.exhausted) return 'tokens-exhausted';
    return this.refusal?.reason ?? null;
  }
}
