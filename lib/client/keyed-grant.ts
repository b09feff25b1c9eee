// A lock held through the keyed protocol: the fencing token plus a way to let go of it.

/** What a grant needs from its client; kept narrow so the grant does not see the pool. */
export interface Releaser {
  releaseVia(via: object | undefined, key: string, token: bigint): Promise<boolean>;
}

export class KeyedGrant {
  readonly key: string;
  /** The fencing token: a u64, kept as bigint because a JS number would lose digits. */
  readonly token: bigint;
  private released: Promise<boolean> | undefined;

  constructor(
    private readonly releaser: Releaser,
    private readonly via: object | undefined,
    key: string,
    token: bigint,
  ) {
    this.key = key;
    this.token = token;
  }

  /**
   * Resolves true when the server released the lock, false when the token no longer held it
   * (the lease ran out or an admin took it). An attempt whose answer was lost is retried, and the
   * retry gets `STALE` if that attempt did release: after a retry, false means "released, or no
   * longer held". Calling it again returns the same promise.
   */
  release(): Promise<boolean> {
    this.released ??= this.releaser.releaseVia(this.via, this.key, this.token);
    return this.released;
  }
}
