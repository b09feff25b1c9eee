// Test doubles for the reply gate: a connection that records what it writes (and when it ends),
// and a stream whose position the test moves. Shared by the unit and property tests.
import type { Flushable } from '../lines/flush-scheduler.ts';
import type { GatedStream } from '../coordination/reply-gate.ts';

export class FakeConnection implements Flushable {
  out = '';
  readonly written: string[] = [];
  closed = false;
  ended = false;
  abandoned = false;
  /** Turns of output that were cut (to check nothing is lost). */
  cuts = 0;

  constructor(readonly name: string) {}

  send(text: string): void {
    this.out += text;
  }
  flush(): void {
    if (this.out === '' || this.closed) return;
    this.written.push(this.out);
    this.out = '';
  }
  cut(): string {
    if (this.closed) return '';
    const data = this.out;
    this.out = '';
    if (data !== '') this.cuts++;
    return data;
  }
  writeCut(data: string): void {
    if (this.ended) throw new Error(`${this.name}: write after end`);
    this.written.push(data);
  }
  abandon(): void {
    this.abandoned = true;
    this.closed = true;
  }
  endTransport(): void {
    this.ended = true;
  }
}

export class FakeStream implements GatedStream {
  lastSeq = 0;
  numbered = false;
  numberRenewals(on: boolean): void {
    this.numbered = on;
  }
}
