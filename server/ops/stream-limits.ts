// How many event streams (GET /api/v1/events) may be open at once: per client address, and in
// all. Each open stream costs memory (its queue, up to the slow-reader limit) and a share of
// every delta, so one client that opens streams in a loop must not be able to hold them all.
// An IPv6 client is counted by its /64, the block one host or network usually gets whole.
import { isIPv6 } from 'node:net';

export const DEFAULT_STREAMS_PER_CLIENT = 8;
export const DEFAULT_MAX_STREAMS = 256;

/** The key a client address is counted under: IPv4 as is, IPv6 by its first 64 bits. */
export function clientKey(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return mapped[1] as string;
  if (!isIPv6(address)) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  const groups = address.includes('::') ? [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

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
