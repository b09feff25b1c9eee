import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ClientWaitingEntry, ClientWaitingView } from '../ops-api/lock-views-types.ts';
import { listClientWaiting } from './client-waiting-list.ts';

const entry = (name: string): ClientWaitingEntry => ({
  name,
  id: '1',
  position: 1,
  protocol: 'keyed',
  client: '127.0.0.1:1',
  clientName: 'w',
  waitingForMs: 0,
  holderClient: null,
  holderClientName: null,
});

/** A server of `names` that answers pages of at most `scan` names looked at (so pages may be empty). */
function server(names: string[], scan: number) {
  return async (after: string | null, limit: number): Promise<ClientWaitingView> => {
    const start = after === null ? 0 : names.indexOf(after) + 1;
    const slice = names.slice(start, start + Math.min(scan, limit));
    const end = start + slice.length;
    return { asOf: 0, by: 'identity', client: 'w', waiting: slice.map(entry), nextCursor: end >= names.length ? null : (names[end - 1] ?? null) };
  };
}

describe('the client view reads what a client waits for', () => {
  it('follows the cursor to the end, each entry once, or stops at its bound and says so', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 60 }), fc.integer({ min: 1, max: 7 }), fc.integer({ min: 1, max: 80 }), async (n, scan, max) => {
        const names = Array.from({ length: n }, (_, i) => `l/${String(i).padStart(3, '0')}`);
        const list = await listClientWaiting(server(names, scan), max);
        expect(list.waiting.map((w) => w.name)).toEqual(names.slice(0, max));
        expect(list.truncated).toBe(n > max);
      }),
    );
  });

  it('refuses a cursor that does not move on', async () => {
    const stuck = async (): Promise<ClientWaitingView> => ({ asOf: 0, by: 'identity', client: 'w', waiting: [], nextCursor: 'x' });
    await expect(listClientWaiting(stuck)).rejects.toThrow(/same cursor/);
  });
});
