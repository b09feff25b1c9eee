// The grant gate, the layer between the replica operations and what clients and admins do:
// whether a grant may be made now (the cluster's grant window, held handovers), which free
// locks wait for one, and why no token could be issued. LockEngine (lock-engine.ts) checks
// `openUntil` where it grants, and hands the held locks on through handOver.
import { NEVER } from './engine-core.ts';
import type { LockState } from './claim.ts';
import { ReplicaOps } from './replica-ops.ts';
import { TokensUnavailable } from './token-contract.ts';

export abstract class GrantGate extends ReplicaOps {
  /**
   * The grant gate: a grant (or handover) is made only while `clock.now() < openUntil`. It is
   * the one check every path that grants goes through (acquire, and handOver for release,
   * disconnect, lease expiry, force-release and a handoff called off), made with the clock read
   * of the grant itself, so no order of timers and socket reads after a pause can get past it.
   * +Infinity on a node that never gates (a single daemon: one comparison, nothing else);
   * -Infinity while handovers are held. See setGrantWindow and server/cluster/role-lease.ts.
   */
  protected openUntil = NEVER;
  /** The window the cluster gave (setGrantWindow); +Infinity when it never did. */
  private windowUntil = NEVER;
  private handoversHeld = false;
  /**
   * Free locks with a queue that got no holder: the gate was shut, or no token could be issued
   * (storage unavailable, u64 exhausted). Handed on by releaseHandovers / retryHeldGrants.
   */
  protected readonly heldLocks = new Set<LockState>();
  /** Why the last grant that needed a token could not be made, while that lasts (null once a token is issued again). */
  private refusal: TokensUnavailable | null = null;

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

  /**
   * At a promotion: a replicated lock may be free with a queue (the old active released it while
   * its handovers were held for a handoff, and a standby never hands over). Once the waiters that
   * survive a promotion are kept (resumable sessions), nothing else would hand such a lock on:
   * each is filed as held, for releaseHandovers to give to the head of its queue. Found by the
   * chaos checker: a lock stranded for 12.8 s, its queue refilled by clients that timed out.
   */
  fileFreeQueues(): number {
    let filed = 0;
    for (const lock of this.locks.values()) {
      if (lock.holder === null && lock.head !== null) {
        this.heldLocks.add(lock);
        filed++;
      }
    }
    return filed;
  }

  /** Handovers go on (as far as the grant window allows); locks that came free meanwhile go to the head of their queue now. */
  releaseHandovers(): void {
    this.handoversHeld = false;
    this.openUntil = this.windowUntil;
    this.retryHeldGrants();
  }

  /**
   * Grants are made only while `clock.now() < until` (monotonic ms): the cluster's word that no
   * peer can have taken the role over before then. A window that has passed shuts the gate by
   * itself, with no call: that is the point. Widening it hands nothing on; releaseHandovers and
   * retryHeldGrants do.
   */
  setGrantWindow(until: number): void {
    this.windowUntil = until;
    if (!this.handoversHeld) this.openUntil = until;
  }

  /**
   * Replaces the whole state (see ReplicaOps.reset): the held locks go with it, so that nothing
   * held before a node followed another is handed on later, and a standby never advances.
   */
  override reset(): void {
    this.heldLocks.clear();
    super.reset();
  }

  /** Whether a grant could be made now (the gate; not whether a token can be issued). */
  grantsOpen(): boolean {
    return this.clock.now() < this.openUntil;
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

  /** Free locks with waiters that are waiting for the gate or for a token. */
  get heldGrantCount(): number {
    return this.heldLocks.size;
  }

  /**
   * Hands on the locks that came free while no grant could be made, if one can be made now.
   * The daemon calls it when storage may be back (a timer while heldGrantCount > 0).
   */
  retryHeldGrants(): void {
    if (this.heldLocks.size === 0) {
      // Nobody waits, but the last save failed: try one now (a token skipped), so that health
      // says when storage is back without waiting for a client to ask.
      if (this.refusal?.reason === 'storage-unavailable' && this.grantsOpen()) {
        try {
          this.issue();
        } catch (err) {
          if (!(err instanceof TokensUnavailable)) throw err;
        }
      }
      return;
    }
    const now = this.catchUp();
    if (!(now < this.openUntil)) return;
    const held = [...this.heldLocks];
    this.heldLocks.clear();
    for (const lock of held) {
      if (lock.holder === null && lock.filed) this.handOver(lock, now);
    }
  }

  /** A token, remembering why there was none (try/catch costs nothing on the path that does not throw). */
  protected issue(): bigint {
    try {
      const token = this.tokens.next();
      if (this.refusal !== null) this.refusal = null;
      return token;
    } catch (err) {
      if (err instanceof TokensUnavailable) this.refusal = err;
      throw err;
    }
  }

  /** Runs deadlines that have passed but whose timer has not fired yet (LockEngine). */
  /** Ends what is due and returns the time the calling operation runs at (LockEngine). */
  protected abstract catchUp(): number;

  /** Hands a free lock to the head of its queue, as far as the gate and the tokens allow (LockEngine). */
  protected abstract handOver(lock: LockState, now: number): void;
}
