// An admin action recorded while the page had no event stream (offline, reconnecting) is in the
// audit log once the stream is back: the page reads the audit again with the fresh snapshot
// instead of waiting for a delta it never got.
import { ADMIN_TOKEN, expect, test } from './fixtures/baton-server.ts';

/** Keeps a handle on the page's event streams, so the test can drop them as a network would. */
const TRACK_STREAMS = `{
  const Native = window.EventSource;
  window.__streams = [];
  window.EventSource = class extends Native {
    constructor(url, init) { super(url, init); window.__streams.push(this); }
  };
}`;

test('an admin action taken while the page was offline shows in its audit when the stream comes back', async ({ page, baton, context }) => {
  await page.addInitScript(TRACK_STREAMS);
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await expect(page.getByRole('heading', { name: 'Audit log' })).toBeVisible();

  // Offline, then the open stream dropped: the page's reconnects fail until it is back online.
  await context.setOffline(true);
  await page.evaluate(() => {
    const w = window as unknown as { __streams: EventSource[] };
    for (const s of w.__streams) {
      s.close();
      s.dispatchEvent(new Event('error'));
    }
  });
  await expect(page.getByTestId('live-status')).not.toHaveText('live', { timeout: 5_000 });
  // Recorded by the node while the page cannot hear of it (this request is not the page's).
  const res = await fetch(`${baton.baseURL}/api/v1/locks/e2e-audit-while-away/force-release`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: '{}',
  });
  expect(res.status).toBe(404);

  await context.setOffline(false);
  await expect(page.getByTestId('live-status')).toHaveText('live', { timeout: 15_000 });
  const entry = page.getByTestId('audit-entry').filter({ hasText: 'e2e-audit-while-away' });
  await expect(entry).toBeVisible({ timeout: 5_000 });
  await expect(entry).toContainText('not-found');
});
