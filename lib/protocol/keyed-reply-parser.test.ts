import { describe, it, expect } from 'vitest';
import { parseKeyedReply } from './keyed-reply-parser.ts';

describe('parseKeyedReply', () => {
  it('reads a grant with a token past 2^53 without losing digits', () => {
    expect(parseKeyedReply('A jobs/x 18446744073709551615')).toEqual({
      kind: 'granted',
      slot: 'A jobs/x',
      key: 'jobs/x',
      token: 18446744073709551615n,
    });
  });

  it('reads T as a timeout of an acquire on that key', () => {
    expect(parseKeyedReply('T jobs/x')).toEqual({ kind: 'timed-out', slot: 'A jobs/x', key: 'jobs/x' });
  });

  it('reads R OK and R STALE as the two release outcomes', () => {
    expect(parseKeyedReply('R k OK')).toEqual({ kind: 'released', slot: 'R k', key: 'k' });
    expect(parseKeyedReply('R k STALE')).toEqual({ kind: 'stale', slot: 'R k', key: 'k' });
  });

  it('reads an error about one request with its op, key, name and text', () => {
    expect(parseKeyedReply('E A jobs/x bad-lease bad lease: a decimal number of seconds > 0')).toEqual({
      kind: 'request-error',
      slot: 'A jobs/x',
      op: 'A',
      key: 'jobs/x',
      name: 'bad-lease',
      text: 'bad lease: a decimal number of seconds > 0',
    });
  });

  it('reads an error with op and key "-" as about the whole connection', () => {
    expect(parseKeyedReply('E - - server-going-away server going away')).toEqual({
      kind: 'connection-error',
      name: 'server-going-away',
      text: 'server going away',
    });
  });

  it('reads M as a redirect to host:port', () => {
    expect(parseKeyedReply('M 10.0.0.2:7070')).toEqual({ kind: 'redirect', address: { host: '10.0.0.2', port: 7070 } });
    expect(parseKeyedReply('M [::1]:7070')).toEqual({ kind: 'redirect', address: { host: '::1', port: 7070 } });
  });

  it.each([
    ['', 'empty'],
    ['A k', 'a grant without a token'],
    ['A k 12x', 'a token with a letter'],
    ['A k 18446744073709551616', 'a token past u64'],
    ['A k -1', 'a negative token'],
    ['R k MAYBE', 'an unknown release outcome'],
    ['T a b', 'a timeout with two keys'],
    ['E A', 'an error without a key'],
    ['M nowhere', 'a redirect without a port'],
    ['Z k 1', 'an unknown op'],
    ['Ak 1', 'no space after the op'],
  ])('refuses %j (%s)', (line) => {
    expect(parseKeyedReply(line).kind).toBe('malformed');
  });
});
