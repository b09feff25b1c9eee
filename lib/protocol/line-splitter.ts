// Splits a TCP byte stream into lines ("\n" or "\r\n") without copying complete lines:
// the sink gets (buffer, start, end) views. Only a partial line at the end of a chunk is kept,
// and it is bounded: a line over `maxLine` bytes stops the splitter and reports overflow.

export interface LineSink {
  /**
   * One line, without its line ending, as bytes [start, end) of buf. `text` is the whole of
   * `buf` decoded as latin1 (one char per byte: the same offsets), made once per chunk, so a
   * parser can slice short fields from it instead of asking Buffer to decode each one.
   */
  onLine(buf: Buffer, start: number, end: number, text: string): void;
  /** A line grew past the limit; no further lines are delivered. */
  onOverflow(): void;
}

export const MAX_LINE_BYTES = 4096;
const LF = 10;
const CR = 13;

export class LineSplitter {
  private pending: Buffer | null = null;
  private stopped = false;
  /** True when the last push ended inside a line that a previous push did not start. */
  startedPartial = false;

  constructor(
    private readonly sink: LineSink,
    private readonly maxLine = MAX_LINE_BYTES,
  ) {}

  /** Bytes of an unfinished line are waiting. */
  get hasPartial(): boolean {
    return this.pending !== null;
  }

  stop(): void {
    this.stopped = true;
    this.pending = null;
  }

  push(chunk: Buffer): void {
    if (this.stopped) return;
    const hadPartial = this.pending !== null;
    let completed = false;
    const buf = chunk;
    let pos = 0;
    if (this.pending !== null) {
      const nl = chunk.indexOf(LF);
      if (nl < 0) {
        this.keep(Buffer.concat([this.pending, chunk]));
        this.startedPartial = false;
        return;
      }
      // Finish the pending line, then go on in the chunk itself.
      const line = Buffer.concat([this.pending, chunk.subarray(0, nl)]);
      this.pending = null;
      if (!this.deliver(line, 0, line.length, line.toString('latin1'))) return;
      completed = true;
      pos = nl + 1;
    }
    // The chunk is decoded once, at its first whole line (a chunk of a partial line only is not).
    let text: string | null = null;
    for (;;) {
      const nl = buf.indexOf(LF, pos);
      if (nl < 0) break;
      text ??= buf.toString('latin1');
      if (!this.deliver(buf, pos, nl, text)) return;
      completed = true;
      pos = nl + 1;
      if (this.stopped) return;
    }
    if (pos < buf.length) {
      this.keep(pos === 0 ? buf : buf.subarray(pos));
      // A fresh partial line starts its io-timeout clock now.
      this.startedPartial = completed || !hadPartial;
    } else {
      this.startedPartial = false;
    }
  }

  private keep(rest: Buffer): void {
    // A line of exactly maxLine bytes may stop between its CR and LF: allow that one byte.
    const limit = rest[rest.length - 1] === CR ? this.maxLine + 1 : this.maxLine;
    if (rest.length > limit) {
      this.stop();
      this.sink.onOverflow();
      return;
    }
    // Copy so a small tail does not pin a large socket chunk.
    this.pending = rest.length < 512 ? Buffer.from(rest) : rest;
  }

  private deliver(buf: Buffer, start: number, end: number, text: string): boolean {
    let e = end;
    if (e > start && buf[e - 1] === CR) e--;
    if (e - start > this.maxLine) {
      this.stop();
      this.sink.onOverflow();
      return false;
    }
    this.sink.onLine(buf, start, e, text);
    return !this.stopped;
  }
}
