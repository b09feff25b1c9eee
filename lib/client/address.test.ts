import { describe, it, expect } from 'vitest';
import { formatAddress, normalizeAddresses, parseAddress } from './address.ts';

describe('addresses', () => {
  it('reads host:port, [v6]:port and a bare host with the default port', () => {
    expect(parseAddress('127.0.0.1:7070')).toEqual({ host: '127.0.0.1', port: 7070 });
    expect(parseAddress('[::1]:7071')).toEqual({ host: '::1', port: 7071 });
    expect(parseAddress('baton.internal', 7070)).toEqual({ host: 'baton.internal', port: 7070 });
    expect(parseAddress('::1', 7070)).toEqual({ host: '::1', port: 7070 });
  });

  it('refuses ports outside 1..65535 and empty hosts', () => {
    expect(parseAddress('h:0')).toBeUndefined();
    expect(parseAddress('h:65536')).toBeUndefined();
    expect(parseAddress(':7070')).toBeUndefined();
    expect(parseAddress('h:70x')).toBeUndefined();
  });

  it('normalizes a mixed list and refuses an empty one', () => {
    expect(normalizeAddresses(['a:1', { host: 'b', port: 2 }, 'c'], 7070)).toEqual([
      { host: 'a', port: 1 },
      { host: 'b', port: 2 },
      { host: 'c', port: 7070 },
    ]);
    expect(() => normalizeAddresses([], 7070)).toThrow(expect.objectContaining({ code: 'bad-usage' }));
    expect(() => normalizeAddresses(['a:x'], 7070)).toThrow(expect.objectContaining({ code: 'bad-usage' }));
  });

  it('writes IPv6 hosts in brackets so the port stays readable', () => {
    expect(formatAddress({ host: '::1', port: 7070 })).toBe('[::1]:7070');
    expect(formatAddress({ host: 'h', port: 1 })).toBe('h:1');
  });
});
