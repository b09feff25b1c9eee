// Not getting a lock within the wait the caller chose is an expected outcome, not a fault, so
// it gets its own class that callers can catch with `instanceof`; it is still a BatonError
// (code 'lock-timeout') for callers that sort failures by code.
import { BatonError } from '../errors.ts';

export class LockTimeoutError extends BatonError {
  /** The keyed-protocol key or the session lock name. */
  readonly key: string;
  /** The wait the caller asked for, in ms (Infinity if it asked to wait forever). */
  readonly waitMs: number;

  constructor(key: string, waitMs: number) {
    super('lock-timeout', `lock ${JSON.stringify(key)} not acquired within ${waitMs} ms`);
    this.name = 'LockTimeoutError';
    this.key = key;
    this.waitMs = waitMs;
  }
}
