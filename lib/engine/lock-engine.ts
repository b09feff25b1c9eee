// The lock engine: a pure state machine over named locks. No sockets, no real clock, no
// timers: time comes from the injected Clock, and the engine reports its next deadline
// (`nextDeadline()`) for the caller to wake it (`advance()`). Every state change is emitted
// on one event stream.
//
// LockEngine is the one object the rest of the tree holds. It owns five parts, each in its own
// file, and offers their operations as its own (this file only says which part does what):
// - the lock table (lock-table.ts): the state they share, locks, counts, deadlines, listeners;
// - the serving operations (serving-ops.ts): what clients and admins ask of a serving node;
// - the handovers (handovers.ts): grants, a free lock going to the head of its queue, and the
//   deadlines that end holders and waiters (advance);
// - the grant gate (grant-gate.ts): whether a grant may be made now, which free locks wait for
//   one, why no token could be issued;
// - the replica operations (replica-ops.ts): how a standby mirrors the active from its stream.
// Each forwarding method is a single call V8 inlines at the caller, so the hot path (acquire,
// release) costs what it did when this was one class.
import { latestLeaseEnd } from './lease-horizon.ts';
import type { AcquireRequest, Claim, ClaimOwner, ClaimState, LockState } from './claim.ts';
import type { Clock } from './clock.ts';
import type { LockEventListener } from './events.ts';
import { GrantGate } from './grant-gate.ts';
import { Handovers } from './handovers.ts';
import { type DetachLimits, LockTable } from './lock-table.ts';
import { ReplicaOps, type ReplicaGrant, type ReplicaHolderEnd, type ReplicaQueueLeave, type ReplicaWaiter } from './replica-ops.ts';
import { type ForceReleaseResult, ServingOps } from './serving-ops.ts';
import type { TokensUnavailable } from '../tokens/token-contract.ts';
import type { TokenSource } from '../tokens/token-source.ts';

export { DETACHED_OWNER, type ReplicaGrant, type ReplicaWaiter } from './replica-ops.ts';
export { DEFAULT_DETACH_LIMITS, type DetachLimits } from './lock-table.ts';
export type { ForceReleaseResult } from './serving-ops.ts';

export class LockEngine {
  private readonly table = new LockTable();
  private readonly gate: GrantGate;
  private readonly handovers: Handovers;
  private readonly serving: ServingOps;
  private readonly replica: ReplicaOps;

  /**
   * `compactHolders: false` keeps every lock in the object form (compact-holders.ts): only for
   * tests that check the compact form against it. `splitAt`: the lock count at which the table
   * splits into shards as it grows (lock-map.ts; tests make it small to split under way).
   */
  constructor(
    clock: Clock,
    private readonly tokens: TokenSource,
    options: { compactHolders?: boolean; splitAt?: number } = {},
  ) {
    this.table.compactOn = options.compactHolders ?? true;
    if (options.splitAt !== undefined) this.table.locks.splitAt = options.splitAt;
    this.gate = new GrantGate(clock, tokens);
    this.handovers = new Handovers(this.table, this.gate, clock);
    this.serving = new ServingOps(this.table, this.gate, this.handovers, clock);
    this.replica = new ReplicaOps(this.table, clock, tokens);
  }

  // --- what clients and admins do (serving-ops.ts) ---

  acquire(request: AcquireRequest): Claim {
    return this.serving.acquire(request);
  }

  release(name: string, token: bigint): 'ok' | 'stale' | 'session-claim' {
    return this.serving.release(name, token);
  }

  end(claim: Claim): void {
    this.serving.end(claim);
  }

  touch(claim: Claim): void {
    this.serving.touch(claim);
  }

  heartbeat(claim: Claim): ClaimState {
    return this.serving.heartbeat(claim);
  }

  detach(claim: Claim, owner: ClaimOwner): boolean {
    return this.serving.detach(claim, owner);
  }

  resume(name: string, keyHash: string, owner: ClaimOwner): Claim | null {
    return this.serving.resume(name, keyHash, owner);
  }

  forceRelease(name: string, token?: bigint): ForceReleaseResult {
    return this.serving.forceRelease(name, token);
  }

  kick(name: string, claimId: number): boolean {
    return this.serving.kick(name, claimId);
  }

  // --- the handovers (handovers.ts) ---

  advance(): void {
    this.handovers.advance();
  }

  releaseHandovers(): void {
    this.handovers.releaseHandovers();
  }

  retryHeldGrants(): void {
    this.handovers.retryHeldGrants();
  }

  // --- the grant gate (grant-gate.ts) ---

  holdHandovers(): void {
    this.gate.holdHandovers();
  }

  setGrantWindow(until: number): void {
    this.gate.setGrantWindow(until);
  }

  /** No token until a block arrives: requests for free locks wait (grant-gate.ts). */
  awaitTokens(): void {
    this.gate.awaitTokens();
  }

  /** A block arrived: the locks that came free meanwhile go to the head of their queue now. */
  tokensArrived(): void {
    this.gate.tokensArrived();
    this.handovers.retryHeldGrants();
  }

  fileFreeQueues(): number {
    return this.gate.fileFreeQueues(this.table.objectLocks);
  }

  grantsOpen(): boolean {
    return this.gate.grantsOpen();
  }

  get tokenRefusal(): TokensUnavailable | null {
    return this.gate.tokenRefusal;
  }

  grantRefusal(): TokensUnavailable['reason'] | null {
    return this.gate.grantRefusal();
  }

  get heldGrantCount(): number {
    return this.gate.heldGrantCount;
  }

  // --- the replica operations (replica-ops.ts) ---

  replicaGrant(g: ReplicaGrant, emit = true): void {
    this.replica.replicaGrant(g, emit);
  }

  replicaEndHolder(name: string, claimId: number, how: ReplicaHolderEnd, emit = true): boolean {
    return this.replica.replicaEndHolder(name, claimId, how, emit);
  }

  replicaEnqueue(w: ReplicaWaiter, emit = true): void {
    this.replica.replicaEnqueue(w, emit);
  }

  replicaLeaveQueue(name: string, claimId: number, reason: ReplicaQueueLeave, emit = true): boolean {
    return this.replica.replicaLeaveQueue(name, claimId, reason, emit);
  }

  replicaRenew(name: string, claimId: number, remainingMs: number): void {
    this.replica.replicaRenew(name, claimId, remainingMs);
  }

  replicaRenewResumable(claimId: number, remainingMs: number): void {
    this.replica.replicaRenewResumable(claimId, remainingMs);
  }

  keepDetached(owner: ClaimOwner): number {
    return this.replica.keepDetached(owner);
  }

  replicaClearLock(name: string): void {
    this.replica.replicaClearLock(name);
  }

  replicaAnnounceReset(): void {
    this.replica.replicaAnnounceReset();
  }

  /**
   * Replaces the whole state (ReplicaOps.reset). The gate's held locks go first, so that nothing
   * held before a node followed another is handed on later, and a standby never advances.
   * `expectedLocks`: the size of the table a snapshot is bringing, if known (lock-map.ts).
   */
  reset(expectedLocks = 0): void {
    this.gate.forgetHeld();
    this.replica.reset(expectedLocks);
  }

  // --- reads and settings of the lock table (lock-table.ts) ---

  subscribe(listener: LockEventListener): () => void {
    return this.table.subscribe(listener);
  }

  /** How many listeners the engine calls per event (each is a cost on the lock path). */
  get listenerCount(): number {
    return this.table.listeners.length;
  }

  nextDeadline(): number {
    return this.table.nextDeadline();
  }

  get tokenHighWater(): bigint {
    return this.tokens.highWater;
  }

  get lockCount(): number {
    return this.table.lockCount;
  }

  get parkedLockCount(): number {
    return this.table.parkedLockCount;
  }

  get heldCount(): number {
    return this.table.heldCount;
  }

  /** The latest lease end of any holder (this engine's clock, ms); -Infinity when nobody holds (lease-horizon.ts). */
  latestLeaseEnd(): number {
    return latestLeaseEnd(this.table.compact.deadlines, this.table.objectLocks);
  }

  get waiterCount(): number {
    return this.table.waiterCount;
  }

  lock(name: string): LockState | undefined {
    return this.table.lock(name);
  }

  allLocks(): IterableIterator<LockState> {
    return this.table.allLocks();
  }

  get resumableCount(): number {
    return this.table.resumableCount;
  }

  resumableClaims(): IterableIterator<Claim> {
    return this.table.resumableClaims();
  }

  resumableClaim(claimId: number): Claim | undefined {
    return this.table.resumableClaim(claimId);
  }

  trackRenewals(on: boolean): void {
    this.table.trackRenewals(on);
  }

  takeRenewals(): Claim[] {
    return this.table.takeRenewals();
  }

  limitDetached(limits: DetachLimits): void {
    this.table.limitDetached(limits);
  }

  get detachLimit(): DetachLimits {
    return this.table.detachLimit;
  }

  get detachedCount(): number {
    return this.table.detachedCount;
  }

  get detachRefusedCount(): number {
    return this.table.detachRefusedCount;
  }
}
