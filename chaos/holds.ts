// Client events folded into hold and wait intervals, per client, in the order each client saw them.
//
// A hold is client-observed: it starts when the grant arrived and ends when the client stopped
// counting on it: just before it sent its release (keyed `R`, session close), when it learned it
// had lost the lock (a session's lease.signal aborted), or when its process was killed. The
// server may keep the lock longer than that (a killed keyed holder's grant lives until its lease
// ends); `occupiedUntil` is the latest the server may still have held it, for the stranding check.
import type { ClientEvent, ClientProtocol } from './history.ts';

export interface Hold {
  client: string;
  lock: string;
  protocol: ClientProtocol;
  token: string;
  leaseMs: number;
  /** When the client started to queue for this grant (its `acquire`); the grant time if unknown. */
  requestedAt: number;
  start: number;
  end: number;
  endedBy: 'release' | 'lost' | 'killed' | 'run-end';
  /** For a hold ended by a release: how the release went (undefined until the answer came, or never). */
  releaseOutcome: 'ok' | 'stale' | 'error' | undefined;
  /** When that answer came (undefined until then, or never). */
  releaseAnsweredAt?: number;
  /** Until when the server may still hold it on the client's behalf. */
  occupiedUntil: number;
  /**
   * Keyed: the client was still at it when its lease ran out (counted from when the grant
   * arrived), so the hold ends there: a fixed lease is over whatever the client does.
   */
  leaseCapped: boolean;
}

export interface Wait {
  client: string;
  lock: string;
  start: number;
  end: number;
  outcome: 'granted' | 'failed' | 'killed' | 'run-end';
}

export interface ClientIntervals {
  holds: Hold[];
  waits: Wait[];
  /** When each client's process was not running (from its `stall` events). */
  stalls: Map<string, Array<{ start: number; end: number }>>;
}

type Open = { kind: 'waiting'; wait: Wait } | { kind: 'holding'; hold: Hold } | { kind: 'idle' };

export function foldClientEvents(events: readonly ClientEvent[], runEnd: number): ClientIntervals {
  const holds: Hold[] = [];
  const waits: Wait[] = [];
  const stalls = new Map<string, Array<{ start: number; end: number }>>();
  const state = new Map<string, Open>();
  /** Holds that ended by a release whose outcome has not arrived yet, by client and token. */
  const awaitingOutcome = new Map<string, Hold>();
  const closeWait = (open: Open, t: number, outcome: Wait['outcome']) => {
    if (open.kind !== 'waiting') return;
    open.wait.end = t;
    open.wait.outcome = outcome;
    waits.push(open.wait);
  };
  const closeHold = (open: Open, t: number, endedBy: Hold['endedBy']) => {
    if (open.kind !== 'holding') return;
    const hold = open.hold;
    hold.end = t;
    hold.endedBy = endedBy;
    if (hold.protocol === 'keyed' && t > hold.start + hold.leaseMs) {
      hold.end = hold.start + hold.leaseMs;
      hold.leaseCapped = true;
    }
    // Keyed: until an OK says otherwise, the server holds it to the end of its lease (which it
    // counts from its grant, before the client saw it: grant arrival + lease is an upper bound).
    // Session: the server frees it at once when the connection closes, but a lost session may
    // linger on the server for up to a lease after its last heartbeat.
    if (hold.protocol === 'keyed') hold.occupiedUntil = hold.start + hold.leaseMs;
    else hold.occupiedUntil = endedBy === 'lost' ? t + hold.leaseMs : t;
    holds.push(hold);
    if (endedBy === 'release') awaitingOutcome.set(`${hold.client} ${hold.token}`, hold);
  };
  // Each process stamps its events in order; the runner's `killed` comes after the process died.
  const ordered = [...events].sort((x, y) => x.t - y.t);
  for (const e of ordered) {
    const open = state.get(e.client) ?? { kind: 'idle' };
    switch (e.kind) {
      case 'acquire':
        closeWait(open, e.t, 'failed');
        state.set(e.client, { kind: 'waiting', wait: { client: e.client, lock: e.lock, start: e.t, end: e.t, outcome: 'granted' } });
        break;
      case 'grant':
        closeWait(open, e.t, 'granted');
        state.set(e.client, {
          kind: 'holding',
          hold: {
            client: e.client,
            lock: e.lock,
            protocol: e.protocol,
            token: e.token,
            leaseMs: e.leaseMs,
            requestedAt: open.kind === 'waiting' ? open.wait.start : e.t,
            start: e.t,
            end: e.t,
            endedBy: 'run-end',
            releaseOutcome: undefined,
            occupiedUntil: e.t,
            leaseCapped: false,
          },
        });
        break;
      case 'acquire-failed':
        closeWait(open, e.t, 'failed');
        state.set(e.client, { kind: 'idle' });
        break;
      case 'release':
        closeHold(open, e.t, 'release');
        state.set(e.client, { kind: 'idle' });
        break;
      case 'lost':
        closeHold(open, e.t, 'lost');
        state.set(e.client, { kind: 'idle' });
        break;
      case 'released': {
        const hold = awaitingOutcome.get(`${e.client} ${e.token}`);
        if (hold !== undefined) {
          hold.releaseOutcome = e.outcome;
          hold.releaseAnsweredAt = e.t;
          // An OK release freed it then; a session's close frees it at once whatever we heard.
          if (e.outcome === 'ok') hold.occupiedUntil = Math.min(hold.occupiedUntil, e.t);
          awaitingOutcome.delete(`${e.client} ${e.token}`);
        }
        break;
      }
      case 'resumed':
        // The hold goes on with its token: carried over is inferred from how (and when) it ends.
        break;
      case 'stall': {
        const list = stalls.get(e.client);
        if (list) list.push({ start: e.t, end: e.until });
        else stalls.set(e.client, [{ start: e.t, end: e.until }]);
        break;
      }
      case 'killed':
        closeWait(open, e.t, 'killed');
        closeHold(open, e.t, 'killed');
        state.set(e.client, { kind: 'idle' });
        break;
    }
  }
  for (const open of state.values()) {
    closeWait(open, runEnd, 'run-end');
    closeHold(open, runEnd, 'run-end');
  }
  return { holds, waits, stalls };
}
