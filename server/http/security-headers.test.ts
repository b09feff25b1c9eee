import { describe, expect, it } from 'vitest';
import { consoleCsp } from './security-headers.ts';

const connectSrc = (policy: string) => policy.split('; ').find((d) => d.startsWith('connect-src'));

describe('consoleCsp connect-src', () => {
  it('is this origin alone for a single node', () => {
    expect(connectSrc(consoleCsp('n'))).toBe("connect-src 'self'");
  });

  it('adds exactly the cluster peers’ console origins, never a wildcard', () => {
    const policy = consoleCsp('n', false, ['http://127.0.0.1:3001', 'https://127.0.0.1:3001']);
    expect(connectSrc(policy)).toBe("connect-src 'self' http://127.0.0.1:3001 https://127.0.0.1:3001");
    expect(policy).not.toContain('*');
  });
});
