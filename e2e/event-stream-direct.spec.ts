// In console mode the event stream is served by the daemon's own HTTP code, not through Next
// (server/api-handlers/api-routes.ts `direct`): Next's handling of each request was paid on the
// lock path's loop, about 100 ms for 100 streams joining at once. Next marks what it answers
// with `vary: rsc, ...`; the stream must come without it, and the dashboard still reads it.
import { expect, test } from './fixtures/baton-server.ts';

test('the event stream is answered without Next, with its own headers, and the page reads it', async ({ page, baton }) => {
  const gone = new AbortController();
  const res = await fetch(`${baton.baseURL}/api/v1/events`, { signal: gone.signal });
  const headers = Object.fromEntries(res.headers);
  gone.abort();
  expect(res.status).toBe(200);
  expect(headers['content-type']).toBe('text/event-stream; charset=utf-8');
  expect(headers['x-frame-options']).toBe('DENY');
  expect(headers.vary).toBeUndefined();
  // Another API route still goes through Next (the table's routes are Next's unless marked direct).
  const stats = await fetch(`${baton.baseURL}/api/v1/stats`);
  expect(stats.headers.get('vary')).toContain('rsc');
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
});
