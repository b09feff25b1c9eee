import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LineSplitter } from './line-splitter.ts';

function collect(max = 4096) {
  const lines: string[] = [];
  let overflow = 0;
  const splitter = new LineSplitter(
    {
      onLine: (buf, start, end, text) => {
        // The text handed along is the whole buffer in latin1: the same line at the same offsets.
        if (text.length !== buf.length || text.slice(start, end) !== buf.toString('latin1', start, end)) throw new Error('text is not the buffer in latin1');
        lines.push(buf.toString('latin1', start, end));
      },
      onOverflow: () => overflow++,
    },
    max,
  );
  return { splitter, lines, overflows: () => overflow };
}

describe('LineSplitter', () => {
  it('splits on LF and CRLF and keeps a partial line for the next chunk', () => {
    const { splitter, lines } = collect();
    splitter.push(Buffer.from('one\r\ntwo\nthr'));
    expect(lines).toEqual(['one', 'two']);
    expect(splitter.hasPartial).toBe(true);
    splitter.push(Buffer.from('ee\n'));
    expect(lines).toEqual(['one', 'two', 'three']);
    expect(splitter.hasPartial).toBe(false);
  });

  it('yields the same lines however the stream is cut into chunks', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[a-z ]{0,20}$/), { maxLength: 20 }), fc.array(fc.nat(), { maxLength: 10 }), (want, cuts) => {
        const text = want.map((l) => `${l}\n`).join('');
        const { splitter, lines } = collect();
        const points = [...new Set(cuts.map((c) => (text.length ? c % text.length : 0)))].sort((a, b) => a - b);
        let at = 0;
        for (const p of [...points, text.length]) {
          splitter.push(Buffer.from(text.slice(at, p)));
          at = p;
        }
        expect(lines).toEqual(want);
      }),
    );
  });

  it('reports overflow for a line over the limit, whole or in pieces, and stops', () => {
    const a = collect(8);
    a.splitter.push(Buffer.from('123456789\nok\n'));
    expect(a.overflows()).toBe(1);
    expect(a.lines).toEqual([]);
    const b = collect(8);
    b.splitter.push(Buffer.from('12345'));
    b.splitter.push(Buffer.from('6789'));
    expect(b.overflows()).toBe(1);
    b.splitter.push(Buffer.from('\nmore\n'));
    expect(b.lines).toEqual([]);
  });

  it('accepts a line of exactly the limit', () => {
    const { splitter, lines, overflows } = collect(8);
    splitter.push(Buffer.from('12345678\r\n'));
    expect(lines).toEqual(['12345678']);
    expect(overflows()).toBe(0);
  });

  it('says when a partial line started in this chunk, for the io-timeout clock', () => {
    const { splitter } = collect();
    splitter.push(Buffer.from('ab'));
    expect(splitter.startedPartial).toBe(true);
    splitter.push(Buffer.from('cd'));
    expect(splitter.startedPartial).toBe(false);
    splitter.push(Buffer.from('\nnew'));
    expect(splitter.startedPartial).toBe(true);
  });
});

describe('LineSplitter at the limit', () => {
  it('accepts a line of exactly the limit whose CRLF is split across chunks', () => {
    const lines: string[] = [];
    let overflow = 0;
    const splitter = new LineSplitter({ onLine: (b, s, e) => lines.push(b.toString('latin1', s, e)), onOverflow: () => overflow++ }, 8);
    splitter.push(Buffer.from('12345678\r'));
    splitter.push(Buffer.from('\n'));
    expect([lines, overflow]).toEqual([['12345678'], 0]);
  });
});
