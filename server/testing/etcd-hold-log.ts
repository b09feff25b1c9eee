// The windows in which a role holder (server/coordination/etcd-role-holder.ts) may grant, rebuilt
// from its events on the monotonic clock, and the check that two holders' windows never overlap:
// the coordination tests' measure of "at most one node grants at any time".
import type { HolderEvent } from '../coordination/etcd-role-holder.ts';

export interface GrantWindow {
  readonly node: string;
  start: number;
  /** Grants allowed strictly before this (a live holder's last window ends in the future). */
  end: number;
}

export class HoldLog {
  readonly windows: GrantWindow[] = [];
  private current: GrantWindow | null = null;
  private owner = false;

  constructor(readonly node: string) {}

  /** Pass as the holder's onEvent. */
  readonly onEvent = (e: HolderEvent): void => {
    if (e.kind === 'owner') this.owner = true;
    else if (e.kind === 'until') {
      if (!this.owner) return;
      // A renewal that came while the window was still open extends it; one after a lapse opens a new one.
      if (this.current !== null && e.at < this.current.end) this.current.end = Math.max(this.current.end, e.until);
      else if (e.until > e.at) {
        this.current = { node: this.node, start: e.at, end: e.until };
        this.windows.push(this.current);
      }
    } else {
      this.owner = false;
      if (this.current !== null && this.current.end > e.at) this.current.end = e.at;
      this.current = null;
    }
  };

  /** The windows open at any moment in [from, to). */
  within(from: number, to: number): GrantWindow[] {
    return this.windows.filter((w) => w.start < to && w.end > from);
  }
}

/** Every pair of windows of different holders that overlap (none is the safety property). */
export function overlaps(logs: HoldLog[]): [GrantWindow, GrantWindow][] {
  const all = logs.flatMap((l) => l.windows);
  const out: [GrantWindow, GrantWindow][] = [];
  for (let i = 0; i < all.length; i++)
    for (let j = i + 1; j < all.length; j++) {
      const a = all[i] as GrantWindow;
      const b = all[j] as GrantWindow;
      if (a.node !== b.node && a.start < b.end && b.start < a.end) out.push([a, b]);
    }
  return out;
}
