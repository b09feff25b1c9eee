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
