// How long this node may grant: the cluster side of the engine's grant gate
// (LockEngine.setGrantWindow). Pure bookkeeping over the node's own heartbeats.
//
// Why this bound. A standby promotes once it has heard nothing from the active for a peer
// timeout: no earlier than (when it last read a message from us) + peerTimeout. We cannot see
// when a peer read our messages, only when we sent them, and a message cannot be read before
// it is sent. So if a peer has read a heartbeat we sent at S, it promotes no earlier than
// S + peerTimeout, and every grant we make before then is made while no other node can be
// active (the partition case, where it never reads it at all, is split brain: see
// docs/cluster.md). Which heartbeat can we be sure a peer has read?
// - Not necessarily the last one: a peer link writes at the end of the event-loop turn, so a
//   process stopped right after queueing a heartbeat never sent it; and a live peer may run
//   its decision before reading a heartbeat that has just arrived.
// - The one before the last: it was queued in an earlier turn, so it was written before the
//   last one was even queued (heartbeats come from one interval timer, one per turn), and a
//   peer that runs reads its socket every turn, so it has read that one a full heartbeat
//   interval (peerTimeout / 5) before it could promote on it.
// So grants are allowed while now < previousBeat + peerTimeout - slack, where the slack covers
// clock-rate differences between hosts and a peer's turn: at the usual cadence that is the
// last heartbeat + peerTimeout - (interval + slack), i.e. a margin of more than the heartbeat
// interval, and a late or lost last heartbeat only makes it safer.
//
// What follows from it:
// - A lapsed window is not renewed in place. An active whose window has passed (its loop did
//   not run for about peerTimeout - 1.25 heartbeat intervals: SIGSTOP, a VM pause, a swap
//   storm, a long GC) cannot know whether a peer has promoted: noticeFreeze
//   (cluster-decisions.ts), which runs before each heartbeat is sent, steps it out of the
//   active role exactly as after a freeze (handovers held), and it grants again only after it
//   has listened to its peers and taken the role back (or never, if one took over).
// - Nothing here runs on the grant path: the engine compares its own clock read with the
//   number set here. After SIGCONT the first thing to run may be a client's buffered line,
//   the engine's lease timer or an admin request: each finds the window passed and grants
//   nothing; the requests wait as waiters, and are granted when the role is confirmed, or
//   redirected with the usual lines when the node follows another.
// - A lone active (no peer up) keeps serving: its window moves with its own heartbeats, heard
//   or not. A daemon with no cluster never sets a window at all.

export class RoleLease {
  private last: number;
  private previous: number;
  readonly slackMs: number;

  constructor(
    private readonly peerTimeoutMs: number,
    now: number,
  ) {
    this.slackMs = Math.max(10, Math.min(50, Math.floor(peerTimeoutMs / 20)));
    this.last = now;
    this.previous = now;
  }

  /** Grants are allowed strictly before this (monotonic ms). */
  get until(): number {
    return this.previous + this.peerTimeoutMs - this.slackMs;
  }

  /** Whether the window has passed at `now` (a node that is active must then step out). */
  lapsed(now: number): boolean {
    return now >= this.until;
  }

  /** Starts over at `now` (the node starts: nothing was sent before). */
  reset(now: number): void {
    this.last = now;
    this.previous = now;
  }

  /** A status heartbeat was broadcast at `now` by the heartbeat timer (one per turn). */
  beat(now: number): void {
    this.previous = this.last;
    this.last = now;
  }
}
