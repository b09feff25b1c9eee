/** A monotonic clock in milliseconds. The engine never reads real time itself. */
export interface Clock {
  now(): number;
}

/** A clock a test moves by hand. */
export class FakeClock implements Clock {
  private t: number;
  constructor(start = 1_000) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  advance(ms: number): void {
    if (ms < 0) throw new Error('a monotonic clock does not go back');
    this.t += ms;
  }
}
