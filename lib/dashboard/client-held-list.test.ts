import { describe, expect, it } from 'vitest';
import type { ClientHeldLock, ClientHeldView } from '../ops-api/client-release-types.ts';
import { listClientHeld } from './client-held-list.ts';
import type { ClientMatchView } from './client-match.ts';

const W: ClientMatchView = { by: 'identity', value: 'w' };

const lock = (name: string): ClientHeldLock => ({
  name,
  token: '1',
  protocol: 'keyed',
  client: '127.0.0.1:1',
  clientName: 'w',
  heldForMs: 0,
  leaseRemainingMs: 1,
});

/** A server of `names` (sorted) that looks at `scan` names per page, as client-held-page.ts does. */
function server(names: string[], mine: (name: string) => boolean, scan: number) {
  const asked: { after: string | null; limit: number }[] = [];
  const fetchPage = async (after: string | null, limit: number): Promise<ClientHeldView> => {
    asked.push({ after, limit });
    const start = after === null ? 0 : names.findIndex((n) => n > after);
    const held: ClientHeldLock[] = [];
    let i = start < 0 ? names.length : start;
    let looked = 0;
    for (; i < names.length && held.length < limit && looked < scan; i++, looked++) if (mine(names[i] as string)) held.push(lock(names[i] as string));
    const nextCursor = i < names.length ? (names[i - 1] as string) : null;
    return { asOf: 0, by: 'identity', client: 'w', held, nextCursor, truncated: nextCursor !== null };
  };
  return { fetchPage, asked };
}

const names = Array.from({ length: 5_000 }, (_, i) => `l/${String(i).padStart(5, '0')}`);

describe('listing what one client holds, page by page', () => {
  it('follows the cursor through short and empty pages to the end of the table', async () => {
    const s = server(names, (n) => n.endsWith('999'), 700);
    const seen: number[] = [];
    const list = await listClientHeld(W, s.fetchPage, (n) => seen.push(n));
    expect(list.held.map((h) => h.name)).toEqual(['l/00999', 'l/01999', 'l/02999', 'l/03999', 'l/04999']);
    expect(list.truncated).toBe(false);
    expect([list.by, list.client]).toEqual(['identity', 'w']);
    expect(s.asked).toHaveLength(Math.ceil(5_000 / 700));
    expect(seen.at(-1)).toBe(5);
  });

  it('stops at the most one release takes, asking only for what fits', async () => {
    const s = server(names, () => true, 10_000);
    const list = await listClientHeld(W, s.fetchPage, undefined, 2_500);
    expect([list.held.length, list.truncated]).toEqual([2_500, true]);
    expect(s.asked.map((a) => a.limit)).toEqual([1_000, 1_000, 500]);
  });

  it('refuses a cursor that does not move on', async () => {
    const stuck = async (): Promise<ClientHeldView> => ({ asOf: 0, by: 'identity', client: 'w', held: [], nextCursor: 'x', truncated: true });
    await expect(listClientHeld(W, stuck)).rejects.toThrow(/same cursor twice/);
  });
});
