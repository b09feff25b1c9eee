import fc from 'fast-check';
import { describe, it, expect } from 'vitest';
import { parseSessionReply } from './session-reply-parser.ts';

describe('parseSessionReply', () => {
  it('reads ACQUIRED with its token', () => {
    expect(parseSessionReply('ACQUIRED 9007199254740993')).toEqual({ kind: 'acquired', token: 9007199254740993n });
  });

  it('reads WAITING with its queue position', () => {
    expect(parseSessionReply('WAITING 3')).toEqual({ kind: 'waiting', position: 3 });
  });

  it('reads ERROR with its hex code and text', () => {
    expect(parseSessionReply('ERROR 0x01 server going away')).toEqual({ kind: 'error', code: 1, text: 'server going away' });
    expect(parseSessionReply('ERROR 0x0A')).toEqual({ kind: 'error', code: 10, text: '' });
  });

  it('reads an ERROR code exactly when it is 0x and 1 to 4 hex digits, whatever its characters (0x10-0x19 are no digits)', () => {
    const HEX = [...'0123456789abcdefABCDEF'];
    // Mostly hex digits, sometimes any character below U+0100 but a space (the field's end).
    const char = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...HEX) },
      {
        weight: 1,
        arbitrary: fc
          .integer({ min: 0, max: 255 })
          .filter((c) => c !== 32)
          .map((c) => String.fromCharCode(c)),
      },
    );
    fc.assert(
      fc.property(fc.array(char, { minLength: 1, maxLength: 5 }), (chars) => {
        const digits = chars.join('');
        const reply = parseSessionReply(`ERROR 0x${digits} text`);
        if (/^[0-9a-f]{1,4}$/i.test(digits)) expect(reply).toEqual({ kind: 'error', code: Number.parseInt(digits, 16), text: 'text' });
        else expect(reply.kind).toBe('malformed');
      }),
      { numRuns: 2000 },
    );
    expect(parseSessionReply('ERROR 0x\u0010\u0011 text').kind).toBe('malformed');
  });

  it('reads REDIRECT with its address', () => {
    expect(parseSessionReply('REDIRECT db2.internal:7071')).toEqual({
      kind: 'redirect',
      address: { host: 'db2.internal', port: 7071 },
    });
  });

  it.each(['ACQUIRED', 'ACQUIRED x', 'WAITING 0', 'WAITING -1', 'ERROR 1 text', 'ERROR 0xZZ', 'REDIRECT :', 'HELLO'])('refuses %j', (line) => {
    expect(parseSessionReply(line).kind).toBe('malformed');
  });
});
