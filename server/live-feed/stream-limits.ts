// How many event streams (GET /api/v1/events) may be open at once: per client address, and in
// all. Each open stream costs memory (its queue, up to the slow-reader limit) and a share of
// every delta, so one client that opens streams in a loop must not be able to hold them all.
// A client is counted by clientKey (client-key.ts): IPv4 address, or IPv6 /64.

export const DEFAULT_STREAMS_PER_CLIENT = 8;
export const DEFAULT_MAX_STREAMS = 256;

export class StreamLimits {
  private readonly open = new Map<string, number>();
  private total = 0;

  constructor(
    readonly perClient = DEFAULT_STREAMS_PER_CLIENT,
    readonly max = DEFAULT_MAX_STREAMS,
  ) {}

  /** Counts one more stream for `key`, or says why not. */
  take(key: string): { ok: true } | { ok: false; detail: string } {
    const mine = this.open.get(key) ?? 0;
    if (mine >= this.perClient) return { ok: false, detail: `${this.perClient} already open from ${key}; close one (a dashboard tab) first` };
    if (this.total >= this.max) return { ok: false, detail: `${this.max} already open on this node` };
    this.open.set(key, mine + 1);
    this.total++;
    return { ok: true };
  }

  give(key: string): void {
    const mine = this.open.get(key) ?? 0;
    if (mine <= 0) return;
    this.total--;
    if (mine === 1) this.open.delete(key);
    else this.open.set(key, mine - 1);
  }
}
