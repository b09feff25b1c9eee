// One peer connection: newline-delimited messages in, batched writes out (everything sent in
// one event-loop turn leaves in one socket write). A peer that sends garbage or a line past
// MAX_LINE is cut off; the mesh dials again and the two sides start over with hello.
import type { Socket } from 'node:net';
import { decodePeerMessage, encodePeerMessage, type PeerMessage, type ReceivedPeerMessage } from '../../lib/cluster/peer-messages.ts';

/**
 * The longest line from an authenticated peer. No message comes near it: a snapshot is sent in
 * parts of about 1 MiB, a replication batch is one event-loop turn of events. Before the hello
 * is accepted only a short line is taken.
 */
export const MAX_PEER_LINE = 4 * 1024 * 1024;
const MAX_HELLO_LINE = 4096;

/**
 * How long one event-loop turn may spend handling received lines before the rest wait for the
 * next turn (the socket paused meanwhile, so the sender feels it). A joining standby gets its
 * snapshot as fast as the active can encode it, and handling every line of a read in one turn
 * held its loop for hundreds of ms at a million locks (its own heartbeats, clients, timers waited).
 */
export const INBOUND_TURN_MS = 2;

export interface PeerLinkEvents {
  onMessage(link: PeerLink, message: ReceivedPeerMessage): void;
  onClose(link: PeerLink, reason: string): void;
}

export class PeerLink {
  /** The peer's node id, once its hello is accepted. */
  peerId: string | null = null;
  peerInstance: string | null = null;
  /** Longest line accepted: short until the peer's hello is accepted (the mesh raises it). */
  maxLine = MAX_HELLO_LINE;
  /** The unfinished line, in pieces (joined once, when its newline comes). */
  private partial: string[] = [];
  private partialLength = 0;
  /** Whole lines received and not handled yet, in order (from `inboxHead` on). */
  private inbox: string[] = [];
  private inboxHead = 0;
  private inboxScheduled = false;
  /** This link paused its socket (and so resumes it); nothing else here pauses it. */
  private inboxPaused = false;
  private readonly drainInbox = (): void => {
    this.inboxScheduled = false;
    this.handleInbox();
  };
  /**
   * When this turn's handling of received lines began; -1 between turns. libuv reads a socket
   * up to 32 times in one poll phase, each read a 'data' event: a budget counted per event let
   * a standby spend 30 to 100 ms a turn on snapshot parts (32 reads of 64 KiB). Counted from the
   * turn's first line, the budget is the turn's.
   */
  private turnStart = -1;
  private readonly endTurn = (): void => {
    this.turnStart = -1;
  };
  private out: string[] = [];
  /** The stream position to ack at the end of this turn (-1: none): see sendAck. */
  private ackSeq = -1;
  private scheduled = false;
  private closed = false;
  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.closed) return;
    if (this.ackSeq >= 0) {
      this.out.push(encodePeerMessage({ t: 'ack', seq: this.ackSeq }));
      this.ackSeq = -1;
    }
    if (this.out.length === 0) return;
    const text = this.out.length === 1 ? (this.out[0] ?? '') : this.out.join('');
    this.out = [];
    this.socket.write(text);
  };

  constructor(
    readonly socket: Socket,
    private readonly events: PeerLinkEvents,
  ) {
    socket.setNoDelay(true);
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (err) => this.close(err.message));
    socket.on('close', () => this.close('closed by the peer'));
    socket.on('end', () => this.close('closed by the peer'));
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  send(message: PeerMessage): void {
    this.sendRaw(encodePeerMessage(message));
  }

  /** An already encoded line (a batch encoded once for every standby). */
  sendRaw(line: string): void {
    if (this.closed) return;
    this.out.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /**
   * Acks the replication stream up to `seq` (a batch just applied) in this turn's write, after
   * everything else sent this turn. Of several batches applied in one turn (a read that brought
   * more than one) only the last one's ack leaves: it covers the others, and the active (whose
   * reply gate in the etcd mode waits for it) parses and handles one ack instead of many.
   */
  sendAck(seq: number): void {
    if (this.closed) return;
    this.ackSeq = seq;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Set while the parts of a snapshot arrive on this link (the handler sets it). */
  assembling = false;

  /** Part of a line, or part of a snapshot, has arrived and the rest has not (a large snapshot on its way). */
  get receiving(): boolean {
    return this.partialLength > 0 || this.assembling || this.inboxHead < this.inbox.length;
  }

  bufferedBytes(): number {
    return this.socket.writableLength;
  }

  /**
   * Calls `then` once what this link has written is down to the socket's high-water mark (soon, when it is),
   * so a snapshot is not read faster than the peer takes it. Never called if the link closes first.
   */
  whenDrained(then: () => void): void {
    if (this.closed) return;
    // At or above the high-water mark the last write returned false, so 'drain' will come.
    if (this.socket.writableLength < this.socket.writableHighWaterMark) setImmediate(then);
    else this.socket.once('drain', then);
  }

  /** Writes what is queued now rather than at the end of the turn (a handoff's last events). */
  flushNow(): void {
    this.flush();
  }

  close(reason: string): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    this.socket.destroy();
    this.events.onClose(this, reason);
  }

  private onData(chunk: string): void {
    let start = 0;
    let nl = chunk.indexOf('\n');
    while (nl >= 0 && !this.closed) {
      if (this.partialLength + (nl - start) > this.maxLine) {
        this.close('line too long');
        return;
      }
      const piece = chunk.slice(start, nl);
      this.inbox.push(this.partialLength > 0 ? this.partial.join('') + piece : piece);
      this.partial = [];
      this.partialLength = 0;
      start = nl + 1;
      nl = chunk.indexOf('\n', start);
    }
    if (!this.closed && start < chunk.length) {
      this.partialLength += chunk.length - start;
      if (this.partialLength > this.maxLine) {
        this.close('line too long');
        return;
      }
      this.partial.push(start === 0 ? chunk : chunk.slice(start));
    }
    // Lines still waiting from an earlier read go first: the next turn takes them, in order.
    if (!this.inboxScheduled) this.handleInbox();
  }

  /** Handles received lines for at most INBOUND_TURN_MS; what is left waits for the next turn, with the socket paused. */
  private handleInbox(): void {
    if (this.turnStart < 0) {
      this.turnStart = performance.now();
      // Scheduled before any drainInbox of this turn, so it runs first: the drain starts a new turn.
      setImmediate(this.endTurn);
    }
    while (this.inboxHead < this.inbox.length && !this.closed) {
      if (performance.now() - this.turnStart >= INBOUND_TURN_MS) {
        this.socket.pause();
        this.inboxPaused = true;
        this.inboxScheduled = true;
        setImmediate(this.drainInbox);
        return;
      }
      const line = this.inbox[this.inboxHead] ?? '';
      this.inbox[this.inboxHead++] = '';
      this.deliver(line);
    }
    this.inbox = [];
    this.inboxHead = 0;
    if (this.inboxPaused && !this.closed) {
      this.inboxPaused = false;
      this.socket.resume();
    }
  }

  private deliver(line: string): void {
    const decoded = decodePeerMessage(line);
    if (!decoded.ok) {
      this.close(`bad message: ${decoded.error}`);
      return;
    }
    try {
      this.events.onMessage(this, decoded.message);
    } catch (err) {
      // A message this node cannot act on (say, a token past u64) ends the link, not the process.
      this.close(`message could not be handled: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
