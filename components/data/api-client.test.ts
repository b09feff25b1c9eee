// The dashboard asks the ops API for pages, never for a whole queue or a whole client's list.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { opsApi, QUEUE_PAGE_SHOWN } from './api-client.ts';

function stubFetch(body: unknown): string[] {
  const urls: string[] = [];
  vi.stubGlobal('fetch', async (url: string) => {
    urls.push(url);
    return new Response(JSON.stringify(body), { status: 200 });
  });
  return urls;
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('the dashboard reads in pages', () => {
  it('asks for the first 500 waiters of a lock', async () => {
    const urls = stubFetch({ name: 'jobs/a', queue: [], queueLength: 50_000, nextCursor: '7' });
    await opsApi.lockDetail('jobs/a');
    expect(QUEUE_PAGE_SHOWN).toBe(500);
    expect(urls).toEqual(['/api/v1/locks/jobs%2Fa?limit=500']);
  });

  it("asks for one page of a client's held locks, after the cursor it is given", async () => {
    const urls = stubFetch({ asOf: 0, by: 'identity', client: 'w 1', held: [], nextCursor: null, truncated: false });
    await opsApi.clientHeld({ by: 'identity', value: 'w 1' }, null, 1000);
    await opsApi.clientHeld({ by: 'address', value: '127.0.0.1:5' }, 'held/0099', 1000);
    expect(urls).toEqual(['/api/v1/clients/held?identity=w%201&limit=1000&after=', '/api/v1/clients/held?address=127.0.0.1%3A5&limit=1000&after=held%2F0099']);
  });
});
