import { describe, expect, it } from 'vitest';
import { hostnameOf, refuseHost } from './host-guard.ts';

describe('the DNS rebinding guard', () => {
  it('lets loopback names and IP literals through on a loopback bind', () => {
    for (const host of ['127.0.0.1:3000', 'localhost:3000', 'LOCALHOST', '[::1]:3000', 'app.localhost:3000', '10.1.2.3:3000', '127.0.0.1']) {
      expect(refuseHost('127.0.0.1', host)).toBeNull();
    }
  });

  it('refuses another name on a loopback bind, and a missing Host', () => {
    expect(refuseHost('127.0.0.1', 'evil.example:3000')).toMatch(/DNS rebinding/);
    expect(refuseHost('localhost', 'rebind.attacker.test')).toMatch(/DNS rebinding/);
    expect(refuseHost('::1', '127.0.0.1.nip.io:3000')).toMatch(/DNS rebinding/);
    expect(refuseHost('127.0.0.1', undefined)).toMatch(/Host header is required/);
  });

  it('accepts any name when bound beyond loopback (the operator names it)', () => {
    expect(refuseHost('0.0.0.0', 'baton.internal:3000')).toBeNull();
    expect(refuseHost('10.0.0.5', 'baton.internal')).toBeNull();
  });

  it('reads the hostname out of a Host header', () => {
    expect(hostnameOf('[::1]:3000')).toBe('::1');
    expect(hostnameOf('example.com:80')).toBe('example.com');
    expect(hostnameOf('example.com')).toBe('example.com');
  });
});
