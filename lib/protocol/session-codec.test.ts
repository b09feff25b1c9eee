import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  BAD_LEASE,
  BAD_NAME,
  EXPECTED_ACQUIRE,
  HEARTBEAT_FIELDS,
  SESSION_GOODBYE,
  SESSION_REFUSAL,
  encodeAcquired,
  encodeSessionAcquireRequest,
  encodeResumeRequest,
  HEARTBEAT_LINE,
  encodeSessionRedirect,
  encodeSessionError,
  encodeWaiting,
  parseSessionRequest,
  type SessionRequest,
} from './session-codec.ts';

function parse(line: string | Buffer): SessionRequest {
  const buf = typeof line === 'string' ? Buffer.from(line, 'utf8') : line;
  return parseSessionRequest(buf, 0, buf.length);
}

describe('parseSessionRequest', () => {
  it("parses every line alike with and without the chunk's latin1 text, wherever the line sits in the chunk", () => {
    const line = fc.oneof(
      fc.uint8Array({ maxLength: 300 }),
      fc
        .tuple(
          fc.constantFrom('ACQUIRE', 'RESUME', 'CLIENT', 'HEARTBEAT'),
          fc.string({ unit: 'grapheme', maxLength: 30 }),
          fc.constantFrom(' 5000', ' 5000 0123456789abcdef0123456789abcdef', ''),
        )
        .map(([op, name, rest]) => Buffer.from(`${op} ${name}${rest}`, 'utf8')),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 20 }), line, fc.uint8Array({ maxLength: 20 }), (before, bytes, after) => {
        const buf = Buffer.concat([Buffer.from(before), bytes, Buffer.from(after)]);
        const start = before.length;
        const end = start + bytes.length;
        expect(parseSessionRequest(buf, start, end, buf.toString('latin1'))).toEqual(parseSessionRequest(buf, start, end));
      }),
      { numRuns: 3_000 },
    );
  });

  it('reads ACQUIRE <name> <lease_ms>', () => {
    expect(parse('ACQUIRE jobs/nightly 30000')).toEqual({ kind: 'acquire', name: 'jobs/nightly', leaseMs: 30000, claimKey: null });
  });

  it('accepts a UTF-8 name and a 250-byte name', () => {
    expect(parse('ACQUIRE café-∑ 1')).toEqual({ kind: 'acquire', name: 'café-∑', leaseMs: 1, claimKey: null });
    const long = 'n'.repeat(250);
    expect(parse(`ACQUIRE ${long} 5`)).toEqual({ kind: 'acquire', name: long, leaseMs: 5, claimKey: null });
  });

  it('accepts a lease of up to 15 digits and no more', () => {
    expect(parse('ACQUIRE k 999999999999999')).toEqual({ kind: 'acquire', name: 'k', leaseMs: 999_999_999_999_999, claimKey: null });
    expect(parse('ACQUIRE k 1000000000000000')).toEqual({ kind: 'error', detail: BAD_LEASE });
  });

  it('reads HEARTBEAT', () => {
    expect(parse('HEARTBEAT')).toEqual({ kind: 'heartbeat' });
  });

  it('reads only bytes [start, end) of the buffer', () => {
    const buf = Buffer.from('xxACQUIRE k 25\nHEARTBEAT yy', 'latin1');
    expect(parseSessionRequest(buf, 2, 14)).toEqual({ kind: 'acquire', name: 'k', leaseMs: 25, claimKey: null });
    expect(parseSessionRequest(buf, 15, 24)).toEqual({ kind: 'heartbeat' });
  });

  it('rejects an ACQUIRE without both fields as the wrong shape', () => {
    for (const line of ['ACQUIRE', 'ACQUIRE ', 'ACQUIRE k']) {
      expect(parse(line), line).toEqual({ kind: 'error', detail: EXPECTED_ACQUIRE });
    }
  });

  it('rejects an empty lease field as a bad lease', () => {
    expect(parse('ACQUIRE k ')).toEqual({ kind: 'error', detail: BAD_LEASE });
  });

  it('rejects a bad name: empty, too long, control bytes, invalid UTF-8, Unicode spaces', () => {
    const bad: Buffer[] = [
      Buffer.from('ACQUIRE  100'),
      Buffer.from(`ACQUIRE ${'n'.repeat(251)} 100`),
      Buffer.from('ACQUIRE a\tb 100'),
      Buffer.from('ACQUIRE a\x7fb 100'),
      Buffer.concat([Buffer.from('ACQUIRE a'), Buffer.from([0xc3, 0x28]), Buffer.from(' 100')]),
      Buffer.from('ACQUIRE a\u00a0b 100'),
    ];
    for (const line of bad) expect(parse(line), line.toString('latin1')).toEqual({ kind: 'error', detail: BAD_NAME });
  });

  it('rejects a lease that is zero, signed, fractional, not a number, or followed by more fields', () => {
    for (const lease of ['0', '-1', '+1', '1.5', '1e3', 'abc', '100 extra', '100  ']) {
      expect(parse(`ACQUIRE k ${lease}`), lease).toEqual({ kind: 'error', detail: BAD_LEASE });
    }
  });

  it('rejects HEARTBEAT with fields', () => {
    expect(parse('HEARTBEAT 1')).toEqual({ kind: 'error', detail: HEARTBEAT_FIELDS });
    expect(parse('HEARTBEAT ')).toEqual({ kind: 'error', detail: HEARTBEAT_FIELDS });
  });

  it('calls anything else unknown: other words, lower case, leading spaces, empty lines, RELEASE', () => {
    for (const line of ['', ' ', 'acquire k 100', 'heartbeat', ' ACQUIRE k 100', 'ACQUIREX k 1', 'HEARTBEATS', 'RELEASE', 'A k 1 0']) {
      expect(parse(line), JSON.stringify(line)).toEqual({ kind: 'unknown' });
    }
  });

  it('never throws on random bytes and returns a well-formed variant', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 600 }), (bytes) => {
        const req = parse(Buffer.from(bytes));
        if (req.kind === 'acquire') {
          expect(Buffer.byteLength(req.name)).toBeGreaterThanOrEqual(1);
          expect(Number.isSafeInteger(req.leaseMs) && req.leaseMs > 0).toBe(true);
        } else if (req.kind === 'error') {
          expect(req.detail).not.toContain('\n');
        } else {
          expect(['heartbeat', 'unknown']).toContain(req.kind);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('returns an error variant for random bytes after "ACQUIRE " unless they form <name> <lease_ms>', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const req = parse(Buffer.concat([Buffer.from('ACQUIRE '), Buffer.from(bytes)]));
        expect(['acquire', 'error']).toContain(req.kind);
        if (req.kind === 'acquire') {
          const text = Buffer.from(bytes).toString('utf8');
          const lease = text.slice(text.indexOf(' ') + 1);
          expect(text.slice(0, text.indexOf(' '))).toBe(req.name);
          expect(lease).toMatch(/^[0-9]{1,15}$/);
          expect(Number(lease)).toBe(req.leaseMs);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('round-trips any valid name and lease', () => {
    const nameChar = fc.constantFrom(...'abcXYZ019-_./:é漢🔒');
    const name = fc
      .array(nameChar, { minLength: 1, maxLength: 60 })
      .map((cs) => cs.join(''))
      .filter((s) => Buffer.byteLength(s) <= 250);
    fc.assert(
      fc.property(name, fc.integer({ min: 1, max: 999_999_999_999_999 }), (n, lease) => {
        expect(parse(`ACQUIRE ${n} ${lease}`)).toEqual({ kind: 'acquire', name: n, leaseMs: lease, claimKey: null });
      }),
    );
  });
});

describe('session encoders', () => {
  it('writes ACQUIRED with the full u64 token and WAITING with the position', () => {
    expect(encodeAcquired(42n)).toBe('ACQUIRED 42\n');
    expect(encodeAcquired((1n << 64n) - 1n)).toBe('ACQUIRED 18446744073709551615\n');
    expect(encodeWaiting(1)).toBe('WAITING 1\n');
  });

  it('writes ERROR with the hex code and the text from lib/errors.ts, and an optional detail', () => {
    expect(encodeSessionError('protocol-error', EXPECTED_ACQUIRE)).toBe('ERROR 0x02 protocol error: expected ACQUIRE <name> <lease_ms>\n');
    expect(encodeSessionError('lease-expired')).toBe('ERROR 0x03 lease expired\n');
    expect(encodeSessionError('force-released')).toBe('ERROR 0x04 force-released by an admin\n');
    expect(encodeSessionError('kicked')).toBe('ERROR 0x05 removed from the queue by an admin\n');
    expect(encodeSessionError('io-timeout', 'no ACQUIRE in time')).toBe('ERROR 0x02 io timeout: no ACQUIRE in time\n');
  });

  it('has the goodbye and refusal lines the daemon sends', () => {
    expect(SESSION_GOODBYE).toBe('ERROR 0x01 server going away\n');
    expect(SESSION_REFUSAL).toBe('ERROR 0x06 too many connections\n');
  });

  it('writes the REDIRECT line', () => {
    expect(encodeSessionRedirect('10.0.0.2:7071')).toBe('REDIRECT 10.0.0.2:7071\n');
  });
});

describe("the session protocol's request lines (the client's half)", () => {
  it('are read back by the server parser as the same request', () => {
    const key = 'ab'.repeat(16);
    expect(parse(encodeSessionAcquireRequest('jobs/nightly', 30_000))).toEqual({ kind: 'acquire', name: 'jobs/nightly', leaseMs: 30_000, claimKey: null });
    expect(parse(encodeSessionAcquireRequest('jobs/nightly', 30_000, key))).toEqual({ kind: 'acquire', name: 'jobs/nightly', leaseMs: 30_000, claimKey: key });
    expect(parse(encodeResumeRequest('jobs/nightly', key))).toEqual({ kind: 'resume', name: 'jobs/nightly', claimKey: key });
    expect(parse(HEARTBEAT_LINE)).toEqual({ kind: 'heartbeat' });
  });
});
