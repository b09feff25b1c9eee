// How many sign-ins a client may try, and how many of them reach the audit log. A sign-in is
// cheap to ask for and each one costs a session and an audit line, so both are bounded:
// - per client address (an IPv6 client per /64): SIGN_INS_PER_WINDOW attempts (right or wrong token) per minute; past
//   that the answer is 429 `too-many-sign-ins` with a Retry-After, and nothing else happens;
// - the addresses tracked are bounded too (the oldest window is forgotten first), so a client
//   with many addresses costs memory only up to MAX_TRACKED_ADDRESSES;
// - audit lines for routine outcomes (a read sign-in, a refusal) are written at most
//   AUDITED_PER_WINDOW a minute each; an admin sign-in is always written.
// Time is injected (epoch ms), so tests move it instead of waiting.

import { clientKey } from './client-key.ts';

export const SIGN_INS_PER_WINDOW = 10;
export const SIGN_IN_WINDOW_MS = 60_000;
export const MAX_TRACKED_ADDRESSES = 4096;
export const AUDITED_PER_WINDOW = 10;

interface Window {
  start: number;
  count: number;
}

/** Attempts per client address (IPv6: per /64) in fixed one-minute windows. */
export class SignInLimiter {
  /** Map order is the order windows started (re-inserted on each new window): oldest first. */
  private readonly windows = new Map<string, Window>();

  constructor(private readonly now: () => number) {}

  /** Counts an attempt from `client`: null when it may go on, else the seconds until it may try again. */
  admit(address: string): number | null {
    const client = clientKey(address);
    const now = this.now();
    let w = this.windows.get(client);
    if (w === undefined || now - w.start >= SIGN_IN_WINDOW_MS) {
      if (w !== undefined) this.windows.delete(client);
      else this.makeRoom(now);
      w = { start: now, count: 0 };
      this.windows.set(client, w);
    }
    if (w.count >= SIGN_INS_PER_WINDOW) return Math.max(1, Math.ceil((w.start + SIGN_IN_WINDOW_MS - now) / 1000));
    w.count++;
    return null;
  }

  get trackedAddresses(): number {
    return this.windows.size;
  }

  private makeRoom(now: number): void {
    if (this.windows.size < MAX_TRACKED_ADDRESSES) return;
    // Windows that are over first; failing that, the oldest one still running.
    for (const [client, w] of this.windows) {
      if (now - w.start < SIGN_IN_WINDOW_MS) break;
      this.windows.delete(client);
    }
    if (this.windows.size >= MAX_TRACKED_ADDRESSES) {
      const oldest = this.windows.keys().next();
      if (oldest.done !== true) this.windows.delete(oldest.value);
    }
  }
}

/** At most AUDITED_PER_WINDOW true answers per minute. */
export class AuditBudget {
  private windowStart = Number.NEGATIVE_INFINITY;
  private used = 0;

  constructor(private readonly now: () => number) {}

  /** Counts one event; true when it should be written. */
  take(): boolean {
    const now = this.now();
    if (now - this.windowStart >= SIGN_IN_WINDOW_MS) {
      this.windowStart = now;
      this.used = 0;
    }
    this.used++;
    return this.used <= AUDITED_PER_WINDOW;
  }
}
