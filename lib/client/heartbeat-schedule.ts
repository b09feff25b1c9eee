// When a session sends its next HEARTBEAT. The server restarts the lease when a heartbeat
// arrives, so the client must leave room for the trip: it sends every lease/4, minus twice the
// smoothed round-trip time, and never more often than the caller's floor.

/** EWMA weight of a new round-trip sample (the rest stays with the history). */
export const RTT_ALPHA = 0.2;

export class HeartbeatSchedule {
  private srtt: number | undefined;
  private last: number | undefined;
  private samples = 0;

  constructor(
    private readonly leaseMs: number,
    private readonly minIntervalMs: number,
  ) {}

  /** Records one HEARTBEAT → reply round trip, in ms. */
  sample(rttMs: number): void {
    this.last = rttMs;
    this.samples++;
    this.srtt = this.srtt === undefined ? rttMs : this.srtt + RTT_ALPHA * (rttMs - this.srtt);
  }

  get smoothedRtt(): number | undefined {
    return this.srtt;
  }

  get lastRtt(): number | undefined {
    return this.last;
  }

  get sampleCount(): number {
    return this.samples;
  }

  /**
   * clamp(lease/4 - 2 x srtt, minInterval, lease/4), in ms. Should the floor exceed lease/4
   * (a tiny lease), lease/4 wins: a heartbeat too late loses the lock, one too early costs a line.
   */
  get intervalMs(): number {
    const ceiling = this.leaseMs / 4;
    const wanted = ceiling - 2 * (this.srtt ?? 0);
    return Math.min(ceiling, Math.max(this.minIntervalMs, wanted));
  }
}
