// Sign-ins through the console's custom Next server are limited per socket address (the server
// stamps it; a header the client sends cannot choose it). Its own server: the limit must not
// spill into the other tests' sign-ins.
import { test as plain } from '@playwright/test';
import { expect, startBaton } from './fixtures/baton-server.ts';

plain('the 11th sign-in in a minute from one address gets 429 too-many-sign-ins, whatever address header it sends', async () => {
  const { server, stop } = await startBaton();
  try {
    const statuses: number[] = [];
    let last: Response | null = null;
    for (let i = 0; i < 11; i++) {
      last = await fetch(`${server.baseURL}/api/v1/auth/session`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-baton-client-address': `10.9.9.${i}` },
        body: JSON.stringify({ token: 'wrong' }),
      });
      statuses.push(last.status);
      if (i < 10) await last.arrayBuffer();
    }
    expect(statuses).toEqual([...Array(10).fill(401), 429]);
    expect(last?.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(((await last?.json()) as { error: { code: string } }).error.code).toBe('too-many-sign-ins');
  } finally {
    await stop();
  }
});
