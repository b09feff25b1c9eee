// The console's Content Security Policy in real Chromium: a fresh nonce per page load on every
// script Next writes, the dashboard working under it with nothing refused (the page fixture
// fails any test with a CSP violation), and an injected inline handler refused.
import { guardCsp } from './fixtures/csp-guard.ts';
import { expect, test } from './fixtures/baton-server.ts';
import { connectClient } from './fixtures/wire-client.ts';

function nonceOf(csp: string | undefined): string {
  const m = /script-src 'nonce-([A-Za-z0-9+/=]+)' 'strict-dynamic'/.exec(csp ?? '');
  expect(m, `script-src with a nonce in ${csp}`).not.toBeNull();
  return (m as RegExpExecArray)[1] as string;
}

test("the page policy allows only scripts with this answer's nonce, and every script Next writes has it", async ({ request }) => {
  const first = await request.get('/');
  const second = await request.get('/');
  const csp = first.headers()['content-security-policy'] ?? '';
  for (const directive of ["object-src 'none'", "base-uri 'none'", "frame-ancestors 'none'", "connect-src 'self'", "default-src 'self'"])
    expect(csp).toContain(directive);
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).not.toContain('unsafe-eval');
  const nonce = nonceOf(csp);
  expect(nonceOf(second.headers()['content-security-policy'])).not.toBe(nonce);
  const html = await first.text();
  const scripts = html.match(/<script\b[^>]*>/g) ?? [];
  expect(scripts.length).toBeGreaterThan(0);
  for (const tag of scripts) expect(tag).toContain(`nonce="${nonce}"`);
});

test('a client-chosen CSP request header does not choose the nonce', async ({ baton }) => {
  const res = await fetch(`${baton.baseURL}/`, { headers: { 'content-security-policy': "script-src 'nonce-attackerchosen'" } });
  const html = await res.text();
  expect(html).not.toContain('attackerchosen');
  expect(nonceOf(res.headers.get('content-security-policy') ?? '')).not.toBe('attackerchosen');
});

test('the dashboard works under the policy with nothing refused: live stream, a lock, its detail', async ({ page, baton }) => {
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  const keyed = await connectClient(baton.lockPort);
  try {
    keyed.send('A e2e-csp 30 0');
    await keyed.waitFor(/^A e2e-csp \d+$/);
    const row = page.locator('[data-testid="lock-row"][data-lock="e2e-csp"]');
    await expect(row).toBeVisible();
    await row.getByRole('button', { name: 'Details for e2e-csp' }).click();
    await expect(page.getByTestId('lock-detail')).toContainText('e2e-csp');
  } finally {
    keyed.close();
  }
  // (The page fixture checks that nothing was refused.)
});

test('an injected inline event handler is refused and does not run', async ({ browser, baton }) => {
  const page = await browser.newPage();
  try {
    const guard = await guardCsp(page);
    await page.goto(`${baton.baseURL}/`);
    await expect(page.getByTestId('live-status')).toHaveText('live');
    await page.evaluate(() => {
      const div = document.createElement('div');
      div.innerHTML = '<img src="data:," onerror="window.__pwned = true">';
      document.body.append(div);
    });
    await expect.poll(() => guard.violations().length).toBeGreaterThan(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: boolean }).__pwned)).toBeUndefined();
    expect(guard.violations().join('\n')).toMatch(/script-src/);
  } finally {
    await page.close();
  }
});
