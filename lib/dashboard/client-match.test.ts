import { describe, expect, it } from 'vitest';
import { clientHeldQuery, clientMatchText, holderMatch } from './client-match.ts';

describe('the client a bulk release names, on the dashboard', () => {
  it('is the holder identity when it gave one, and says so, even when the identity reads as an address', () => {
    const match = holderMatch({ client: '127.0.0.1:6002', clientName: '127.0.0.1:6001' });
    expect(match).toEqual({ by: 'identity', value: '127.0.0.1:6001' });
    expect(clientMatchText(match)).toBe('identity 127.0.0.1:6001');
    expect(clientHeldQuery(match)).toBe('identity=127.0.0.1%3A6001');
  });

  it('is the holder address when it gave no identity, and says so', () => {
    const match = holderMatch({ client: '127.0.0.1:6001', clientName: null });
    expect(clientMatchText(match)).toBe('address 127.0.0.1:6001');
    expect(clientHeldQuery(match)).toBe('address=127.0.0.1%3A6001');
  });
});
