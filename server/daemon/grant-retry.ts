// Grants refused for want of a token (a full disk, an I/O error on the ceiling file) are
// retried here, outside the engine, once a second: granting resumes by itself when the disk
// does. Each change of the refusal (refused, resumed, exhausted) is logged once, not every second.
import type { Logger } from 'pino';
import type { LockEngine } from '../../lib/engine/lock-engine.ts';

export const GRANT_RETRY_MS = 1_000;

/** What the retry reads and drives of the engine. */
export type RefusingEngine = Pick<LockEngine, 'grantRefusal' | 'retryHeldGrants' | 'tokenRefusal'>;

/** Runs `fn` every `ms` until the returned function is called; tests pass a fake. */
export type Repeat = (ms: number, fn: () => void) => () => void;

/** setInterval, unref'd: the retry never holds the process open by itself. */
export const repeatUnref: Repeat = (ms, fn) => {
  const timer = setInterval(fn, ms);
  timer.unref();
  return () => clearInterval(timer);
};

export interface GrantRetryDeps {
  engine: RefusingEngine;
  /** Wakes the engine's timer after a retry (EngineDriver.poke): a lock granted now has a lease to time. */
  wake(): void;
  /** The token source's high water, for the log line when the tokens are exhausted at start. */
  tokenHighWater(): bigint;
  logger: Pick<Logger, 'info' | 'error'>;
  repeat?: Repeat;
}

export class GrantRetry {
  private refusal: ReturnType<RefusingEngine['grantRefusal']>;
  private readonly cancel: () => void;

  /** Starts retrying at once; says so now if this node starts with its tokens exhausted. */
  constructor(private readonly d: GrantRetryDeps) {
    this.refusal = d.engine.grantRefusal();
    if (this.refusal === 'tokens-exhausted')
      d.logger.error(
        { tokenHighWater: d.tokenHighWater().toString() },
        'fencing tokens exhausted: this node grants nothing; releases, probes and the console still work',
      );
    this.cancel = (d.repeat ?? repeatUnref)(GRANT_RETRY_MS, () => this.retry());
  }

  /** One turn: hand held locks on if a token can be had, and log the refusal if it changed. */
  private retry(): void {
    const { engine, logger } = this.d;
    engine.retryHeldGrants();
    this.d.wake();
    const now = engine.grantRefusal();
    if (now === this.refusal) return;
    if (now === null) logger.info({ was: this.refusal }, 'grants resumed: the token ceiling can be stored again');
    else
      logger.error(
        { reason: now, err: engine.tokenRefusal?.cause },
        now === 'tokens-exhausted'
          ? 'fencing tokens exhausted: this node grants nothing more'
          : 'grants refused: the token ceiling cannot be written to the data dir (retried every second)',
      );
    this.refusal = now;
  }

  stop(): void {
    this.cancel();
  }
}
