import { describe, expect, it } from 'vitest';
import { corsOriginFor, peerConsoleOrigins } from './console-origins.ts';

const nodes = [
  { self: false, httpAddress: '127.0.0.1:3001' },
  { self: true, httpAddress: '127.0.0.1:3002' },
  { self: false, httpAddress: '[::1]:3003' },
];

describe('peerConsoleOrigins', () => {
  it('lists the other nodes’ consoles over http and https, and not this node’s', () => {
    expect(peerConsoleOrigins(nodes)).toEqual(['http://127.0.0.1:3001', 'https://127.0.0.1:3001', 'http://[::1]:3003', 'https://[::1]:3003']);
  });

  it('skips an unknown address and one that could smuggle more into a CSP header', () => {
    expect(peerConsoleOrigins([{ self: false, httpAddress: '' }])).toEqual([]);
    expect(peerConsoleOrigins([{ self: false, httpAddress: "evil:1; script-src 'unsafe-inline'" }])).toEqual([]);
    expect(peerConsoleOrigins([{ self: false, httpAddress: 'a b:1' }])).toEqual([]);
  });
});

describe('corsOriginFor', () => {
  const allowed = peerConsoleOrigins(nodes);
  it('echoes a peer console’s origin', () => {
    expect(corsOriginFor('http://127.0.0.1:3001', allowed)).toBe('http://127.0.0.1:3001');
    expect(corsOriginFor('http://[::1]:3003', allowed)).toBe('http://[::1]:3003');
  });

  it('answers nothing for any other origin, this node’s own, a missing one, or "null"', () => {
    expect(corsOriginFor('http://127.0.0.1:3002', allowed)).toBeNull();
    expect(corsOriginFor('http://127.0.0.1:30011', allowed)).toBeNull();
    expect(corsOriginFor('https://evil.example', allowed)).toBeNull();
    expect(corsOriginFor('null', allowed)).toBeNull();
    expect(corsOriginFor(null, allowed)).toBeNull();
  });
});
