import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { leaseToWireSeconds, waitToWireSeconds } from './duration-text.ts';
import {
  encodeKeyedAcquireRequest,
  encodeGranted,
  encodeKeyedError,
  encodeKeyedRedirect,
  encodeReleased,
  encodeReleaseRequest,
  parseKeyedRequest,
} from './keyed-codec.ts';

function parse(line: string) {
  const buf = Buffer.from(line, 'utf8');
  return parseKeyedRequest(buf, 0, buf.length);
}

describe('keyed protocol codec', () => {
  it('parses an acquire with decimal seconds into milliseconds', () => {
    expect(parse('A jobs/nightly 0.25 30')).toEqual({ kind: 'acquire', key: 'jobs/nightly', leaseMs: 250, waitMs: 30_000 });
    expect(parse('A k 5 0')).toEqual({ kind: 'acquire', key: 'k', leaseMs: 5_000, waitMs: 0 });
  });

  it('parses a release with a token above 2^53 exactly', () => {
    const big = (1n << 53n) + 1n;
    expect(parse(`R k ${big}`)).toEqual({ kind: 'release', key: 'k', token: big });
    expect(parse('R k 18446744073709551615')).toEqual({ kind: 'release', key: 'k', token: (1n << 64n) - 1n });
  });

  it('rejects a token above u64', () => {
    expect(parse('R k 18446744073709551616')).toMatchObject({ kind: 'error', error: 'bad-token' });
  });

  it('accepts UTF-8 keys up to 250 bytes and rejects longer, invalid or spaced ones', () => {
    expect(parse(`A ${'é'.repeat(125)} 1 0`)).toMatchObject({ kind: 'acquire', key: 'é'.repeat(125) });
    expect(parse(`A ${'é'.repeat(126)} 1 0`)).toMatchObject({ kind: 'error', error: 'bad-key' });
    expect(parse('A a\u00a0b 1 0')).toMatchObject({ kind: 'error', error: 'bad-key' });
    const invalid = Buffer.concat([Buffer.from('A '), Buffer.from([0xc3, 0x28]), Buffer.from(' 1 0')]);
    expect(parseKeyedRequest(invalid, 0, invalid.length)).toMatchObject({ kind: 'error', error: 'bad-key' });
    expect(parse('A  1 0')).toMatchObject({ kind: 'error', error: 'bad-key' });
  });

  it('rejects a zero or malformed lease and a malformed wait', () => {
    for (const lease of ['0', '0.0', '-1', '1.', '.5', 'x', '1e3', '1234567890123']) {
      expect(parse(`A k ${lease} 0`)).toMatchObject({ kind: 'error', op: 'A', key: 'k', error: 'bad-lease' });
    }
    for (const wait of ['-1', 'x', '', '1 2']) {
      expect(parse(`A k 1 ${wait}`)).toMatchObject({ kind: 'error', op: 'A', key: 'k', error: 'bad-wait' });
    }
  });

  it('names unknown ops and empty lines', () => {
    expect(parse('Z k 1')).toMatchObject({ kind: 'error', op: 'Z', key: 'k', error: 'unknown-op' });
    expect(parse('AA k 1 0')).toMatchObject({ kind: 'error', op: 'AA', error: 'unknown-op' });
    expect(parse('')).toMatchObject({ kind: 'error', op: '?', key: '?', error: 'protocol-error' });
    expect(parse('Z')).toMatchObject({ kind: 'error', op: 'Z', key: '?', error: 'unknown-op' });
    expect(parse('A')).toMatchObject({ kind: 'error', op: 'A', key: '?', error: 'bad-key' });
  });

  it('never throws and always yields one printable reply line for random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const buf = Buffer.from(bytes);
        const req = parseKeyedRequest(buf, 0, buf.length);
        if (req.kind === 'error') {
          const line = encodeKeyedError(req.op, req.key, req.error);
          expect(line.endsWith('\n')).toBe(true);
          expect(line.slice(0, -1)).not.toMatch(/[\r\n]/);
        }
      }),
      { numRuns: 2_000 },
    );
  });

  it("parses every line alike with and without the chunk's latin1 text, wherever the line sits in the chunk", () => {
    // A line inside a chunk of other bytes, as the line splitter hands it over with the chunk's text.
    const line = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc
        .tuple(fc.constantFrom('A', 'R', 'I', 'X'), fc.string({ unit: 'grapheme', maxLength: 30 }), fc.constantFrom(' 5 0', ' 12', '', ' 5'))
        .map(([op, key, rest]) => Buffer.from(`${op} ${key}${rest}`, 'utf8')),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 20 }), line, fc.uint8Array({ maxLength: 20 }), (before, bytes, after) => {
        const buf = Buffer.concat([Buffer.from(before), bytes, Buffer.from(after)]);
        const start = before.length;
        const end = start + bytes.length;
        expect(parseKeyedRequest(buf, start, end, buf.toString('latin1'))).toEqual(parseKeyedRequest(buf, start, end));
      }),
      { numRuns: 3_000 },
    );
  });

  it('round-trips generated valid requests', () => {
    const key = fc.stringMatching(/^[!-~]{1,250}$/);
    fc.assert(
      fc.property(key, fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 0, max: 10_000_000 }), (k, lease, wait) => {
        const line = `A ${k} ${lease / 1000} ${wait / 1000}`;
        const req = parse(line);
        expect(req.kind).toBe('acquire');
        if (req.kind === 'acquire') {
          expect(req.key).toBe(k);
          expect(req.leaseMs).toBeCloseTo(lease, 6);
          expect(req.waitMs).toBeCloseTo(wait, 6);
        }
      }),
    );
  });

  it('encodes replies as single lines', () => {
    expect(encodeGranted('k', 12n)).toBe('A k 12\n');
    expect(encodeReleased('k', true)).toBe('R k OK\n');
    expect(encodeReleased('k', false)).toBe('R k STALE\n');
    expect(encodeKeyedError('A', 'k', 'bad-lease')).toBe('E A k bad-lease bad lease: a decimal number of seconds > 0\n');
    expect(encodeKeyedRedirect('10.0.0.2:7070')).toBe('M 10.0.0.2:7070\n');
  });
});

describe("the keyed protocol's request lines (the client's half)", () => {
  it('are read back by the server parser as the same request', () => {
    fc.assert(
      fc.property(
        fc.stringMatching(/^[a-z0-9/_.-]{1,40}$/),
        fc.integer({ min: 1, max: 86_400_000 }),
        fc.integer({ min: 0, max: 86_400_000 }),
        fc.bigInt({ min: 1n, max: (1n << 64n) - 1n }),
        (key, leaseMs, waitMs, token) => {
          expect(parse(encodeKeyedAcquireRequest(key, leaseToWireSeconds(leaseMs), waitToWireSeconds(waitMs)))).toEqual({
            kind: 'acquire',
            key,
            leaseMs,
            waitMs,
          });
          expect(parse(encodeReleaseRequest(key, token))).toEqual({ kind: 'release', key, token });
        },
      ),
    );
  });
});
