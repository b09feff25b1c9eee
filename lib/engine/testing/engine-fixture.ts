// The lock engine as its unit tests build it: on a FakeClock that starts at 1,000 ms and that
// only the test moves, with fencing tokens from an in-memory ceiling store, so every grant,
// deadline and token a test sees follows from what the test did.
import type { Claim, ClaimOwner, EndReason } from '../claim.ts';
import { FakeClock } from '../clock.ts';
import { LockEngine } from '../lock-engine.ts';
import { BlockTokenSource, MemoryCeilingStore } from '../../tokens/token-source.ts';

/** A connection stand-in that records what the engine told it. */
export class Owner implements ClaimOwner {
  readonly granted: Claim[] = [];
  readonly ended: Array<{ id: number; reason: EndReason }> = [];
  /** `deliverable: false` plays a connection that is gone by the time its grant comes. */
  constructor(private readonly deliverable = true) {}
  onGranted(claim: Claim): boolean {
    this.granted.push(claim);
    return this.deliverable;
  }
  onEnded(claim: Claim, reason: EndReason): void {
    this.ended.push({ id: claim.id, reason });
  }
}

export interface EngineFixtureOptions {
  /** The stored ceiling; the first token issued is one above it. */
  startCeiling?: bigint;
  /** Tokens reserved per ceiling save: small by default, so tests run across block ends. */
  blockSize?: bigint;
  /** Keyed holders may take the compact form (compact-holders.ts); false: object form only. */
  compact?: boolean;
}

export function engineFixture({ startCeiling = 0n, blockSize = 4n, compact = true }: EngineFixtureOptions = {}) {
  const clock = new FakeClock(1_000);
  const engine = new LockEngine(clock, new BlockTokenSource(new MemoryCeilingStore(startCeiling), blockSize), { compactHolders: compact });
  /** A keyed-protocol claim: a fixed lease; waitMs 0 waits forever. */
  const fixed = (name: string, owner: ClaimOwner, leaseMs = 10_000, waitMs = 0) =>
    engine.acquire({ name, owner, protocol: 'keyed', client: 'k', leaseMs, waitMs, sliding: false });
  /** A session-protocol claim: a sliding lease that each touch restarts. */
  const sliding = (name: string, owner: ClaimOwner, leaseMs = 10_000, waitMs = 0) =>
    engine.acquire({ name, owner, protocol: 'session', client: 's', leaseMs, waitMs, sliding: true });
  /** Moves the clock and runs every deadline that has come, as the server's timer would. */
  const tick = (ms: number) => {
    clock.advance(ms);
    engine.advance();
  };
  return { clock, engine, fixed, sliding, tick };
}
