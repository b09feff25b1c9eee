// Wakes the engine at its next deadline with a single timer for the whole daemon. After any
// input the servers call poke(); the timer is re-armed only when the next deadline moved
// earlier, so the hot path costs one heap peek.
import type { LockEngine } from '../../lib/engine/lock-engine.ts';
import type { Clock } from '../../lib/engine/clock.ts';

const MAX_DELAY = 2_147_483_647; // setTimeout's limit (~24.8 days); a later deadline re-arms on wake.

export class EngineDriver {
  private timer: NodeJS.Timeout | null = null;
  private armedFor = Number.POSITIVE_INFINITY;
  private stopped = false;
  /** A standby's engine is a mirror (it never advances on its own), and a handing-off active holds still. */
  private paused = false;
  private readonly fire = (): void => {
    this.timer = null;
    this.armedFor = Number.POSITIVE_INFINITY;
    this.engine.advance();
    this.poke();
  };

  constructor(
    private readonly engine: LockEngine,
    private readonly clock: Clock,
  ) {}

  poke(): void {
    if (this.stopped || this.paused) return;
    const due = this.engine.nextDeadline();
    if (due >= this.armedFor) return;
    if (this.timer !== null) clearTimeout(this.timer);
    this.armedFor = due;
    if (due === Number.POSITIVE_INFINITY) {
      this.timer = null;
      return;
    }
    // +1: timers may fire a hair early relative to performance.now(); advance() would then find nothing due.
    const delay = Math.min(MAX_DELAY, Math.max(0, Math.ceil(due - this.clock.now()) + 1));
    this.timer = setTimeout(this.fire, delay);
  }

  pause(): void {
    this.paused = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.armedFor = Number.POSITIVE_INFINITY;
  }

  resume(): void {
    this.paused = false;
    this.poke();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }
}
