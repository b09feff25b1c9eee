// Replication without sockets, for tests: a StandbyLink that records the lines a source sends,
// a scheduler that holds a source's snapshot slices until the test runs them, and the standby's
// side of the wire as the peer message handler does it (decode, then begin/part/end/ev to the sink).
import { decodePeerMessage, type PeerMessage } from '../../lib/cluster/peer-messages.ts';
import type { StandbyLink } from '../cluster/replication-source.ts';
import type { ReplicationSink } from '../cluster/replication-sink.ts';

export interface RecordingLink {
  link: StandbyLink;
  /** Every line sent, without its newline, oldest first (a test may splice them off). */
  lines: string[];
  /** Runs the callbacks waiting for the link to drain (the peer read what was queued). */
  drain(): void;
}

export function recordingLink(buffered: () => number = () => 0): RecordingLink {
  const lines: string[] = [];
  const drained: (() => void)[] = [];
  const link: StandbyLink = {
    send: (m: PeerMessage) => lines.push(JSON.stringify(m)),
    sendRaw: (line) => lines.push(line.trimEnd()),
    close: () => {},
    bufferedBytes: buffered,
    whenDrained: (then) => drained.push(then),
    flushNow: () => {},
  };
  return {
    link,
    lines,
    drain: () => {
      for (const then of drained.splice(0)) then();
    },
  };
}

/** Snapshot slices as a source schedules them; run() runs what is due (one, or all). */
export class HeldSlices {
  private readonly due: (() => void)[] = [];
  readonly schedule = (slice: () => void): void => {
    this.due.push(slice);
  };

  get pending(): number {
    return this.due.length;
  }

  /** Runs the oldest slice; false when none is due. */
  runOne(): boolean {
    const slice = this.due.shift();
    if (slice === undefined) return false;
    slice();
    return true;
  }

  runAll(): void {
    while (this.runOne());
  }
}

export interface Delivered {
  begun: number;
  parts: number;
  /** Snapshots that ended complete (the standby then counts as in sync). */
  finished: number;
}

/** Hands `lines` (spliced off) to `sink` as the standby's message handler would; throws on a line that does not decode. */
export function deliver(
  sink: ReplicationSink,
  from: string,
  lines: string[],
  maxToken: bigint,
  into: Delivered = { begun: 0, parts: 0, finished: 0 },
): Delivered {
  for (const line of lines.splice(0)) {
    const d = decodePeerMessage(line);
    if (!d.ok) throw new Error(d.error);
    const m = d.message;
    if (m.t === 'snapshot-begin' && sink.beginSnapshot(from, m)) into.begun++;
    else if (m.t === 'snapshot-part' && sink.applyPart(from, m)) into.parts++;
    else if (m.t === 'snapshot' && sink.finishSnapshot(from, m)) into.finished++;
    else if (m.t === 'ev') sink.applyBatch(m.seq, m.e, maxToken);
    else if (m.t === 'renew') sink.applyRenewals(m.r);
  }
  return into;
}
