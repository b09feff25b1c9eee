import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BAD_LEASE, BAD_NAME, EXPECTED_RESUME, encodeMoved, encodeSessionError, parseSessionRequest, type SessionRequest } from './session-codec.ts';

function parse(line: string): SessionRequest {
  const buf = Buffer.from(line, 'utf8');
  return parseSessionRequest(buf, 0, buf.length);
}

const KEY = '0123456789abcdef0123456789abcdef';

describe('the resumable-session extension of the session codec', () => {
  it('reads an ACQUIRE with a claim key of 32 to 64 hex characters, lower-cased', () => {
    expect(parse(`ACQUIRE jobs/a 5000 ${KEY}`)).toEqual({ kind: 'acquire', name: 'jobs/a', leaseMs: 5000, claimKey: KEY });
    expect(parse(`ACQUIRE a 1 ${'AB'.repeat(32)}`)).toEqual({ kind: 'acquire', name: 'a', leaseMs: 1, claimKey: 'ab'.repeat(32) });
  });

  it('answers a third field that is not a claim key exactly as before the extension (bad lease)', () => {
    for (const third of ['x', KEY.slice(1), `${KEY}${'0'.repeat(33)}`, `${KEY.slice(1)}g`, `${KEY} extra`, `${KEY} `]) {
      expect(parse(`ACQUIRE a 100 ${third}`), third).toEqual({ kind: 'error', detail: BAD_LEASE });
    }
    expect(parse(`ACQUIRE a 0 ${KEY}`)).toEqual({ kind: 'error', detail: BAD_LEASE });
  });

  it('reads RESUME <name> <claim_key> and refuses other shapes with a protocol error naming it', () => {
    expect(parse(`RESUME jobs/a ${KEY.toUpperCase()}`)).toEqual({ kind: 'resume', name: 'jobs/a', claimKey: KEY });
    for (const line of ['RESUME', 'RESUME a', `RESUME a ${KEY} 1`, 'RESUME a short', `RESUME a ${KEY}0g`]) {
      expect(parse(line), line).toEqual({ kind: 'error', detail: EXPECTED_RESUME });
    }
    // The name is checked as ACQUIRE checks it (an empty one included).
    expect(parse(`RESUME a\u0001 ${KEY}`)).toEqual({ kind: 'error', detail: BAD_NAME });
    expect(parse(`RESUME  a ${KEY}`)).toEqual({ kind: 'error', detail: BAD_NAME });
  });

  it('round-trips any key of 16 to 32 random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 32 }), (bytes) => {
        const key = Buffer.from(bytes).toString('hex');
        expect(parse(`RESUME k ${key}`)).toEqual({ kind: 'resume', name: 'k', claimKey: key });
        expect(parse(`ACQUIRE k 10 ${key}`)).toEqual({ kind: 'acquire', name: 'k', leaseMs: 10, claimKey: key });
      }),
    );
  });

  it('takes a claim key exactly when it matches /^[0-9a-f]{32,64}$/i, whatever its bytes (0x10-0x19 are no digits)', () => {
    const HEX = [...'0123456789abcdefABCDEF'].map((c) => c.charCodeAt(0));
    // Mostly hex digits, sometimes any byte but a line ending (the line splitter takes those).
    const byte = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(...HEX) },
      { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }).filter((b) => b !== 10 && b !== 13) },
    );
    fc.assert(
      fc.property(fc.array(byte, { minLength: 30, maxLength: 66 }), (bytes) => {
        const field = Buffer.from(bytes);
        const text = field.toString('latin1');
        const isKey = /^[0-9a-f]{32,64}$/i.test(text);
        const line = Buffer.concat([Buffer.from('ACQUIRE k 10 '), field]);
        const resume = Buffer.concat([Buffer.from('RESUME k '), field]);
        expect(parseSessionRequest(line, 0, line.length)).toEqual(
          isKey ? { kind: 'acquire', name: 'k', leaseMs: 10, claimKey: text.toLowerCase() } : { kind: 'error', detail: BAD_LEASE },
        );
        expect(parseSessionRequest(resume, 0, resume.length)).toEqual(
          isKey ? { kind: 'resume', name: 'k', claimKey: text.toLowerCase() } : { kind: 'error', detail: EXPECTED_RESUME },
        );
      }),
      { numRuns: 2000 },
    );
    // The probe's key: a valid one with one digit replaced by the control byte 0x10.
    const probe = Buffer.concat([Buffer.from(`RESUME k ${KEY.slice(1)}`), Buffer.from([0x10])]);
    expect(parseSessionRequest(probe, 0, probe.length)).toEqual({ kind: 'error', detail: EXPECTED_RESUME });
  });

  it('writes MOVED and the claim-unknown error (0x09)', () => {
    expect(encodeMoved('127.0.0.1:7171')).toBe('MOVED 127.0.0.1:7171\n');
    expect(encodeSessionError('claim-unknown')).toBe('ERROR 0x09 claim unknown: no claim with that key is waiting to be resumed here\n');
  });
});
