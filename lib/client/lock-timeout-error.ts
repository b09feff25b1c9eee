// Not getting a lock within the wait the caller chose is an expected outcome, not a fault, so
// it gets its own class that callers can catch with `instanceof` apart from BatonError faults.
// (errors.ts has no name for it yet; see the client's report.)

export class LockTimeoutError extends Error {
  /** The keyed-protocol key or the session lock name. */
  readonly key: string;
  /** The wait the caller asked for, in ms (Infinity if it asked to wait forever). */
  readonly waitMs: number;

  constructor(key: string, waitMs: number) {
    super(`lock ${JSON.stringify(key)} not acquired within ${waitMs} ms`);
    this.name = 'LockTimeoutError';
    this.key = key;
    this.waitMs = waitMs;
  }
}
