import { describe, it, expect } from 'vitest';
import { formatAddress, parseAddress } from './address-text.ts';

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

  it('writes IPv6 hosts in brackets so the port stays readable', () => {
    expect(formatAddress({ host: '::1', port: 7070 })).toBe('[::1]:7070');
    expect(formatAddress({ host: 'h', port: 1 })).toBe('h:1');
  });
});
