// A node that has issued the last u64 token refuses grants and says why on its dashboard, in the
// words clients get (lib/errors.ts), while the console and releases keep working.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { startBaton } from './fixtures/baton-server.ts';
import { connectClient } from './fixtures/wire-client.ts';

const MAX_TOKEN = 18_446_744_073_709_551_615n;

test('after the last token the Totals card says grants are refused and why, and the console keeps serving', async ({ page }) => {
  // The ceiling file says every token but the last was already reserved.
  const { server, stop } = await startBaton([], (dir) => writeFile(join(dir, 'token-ceiling'), `${MAX_TOKEN - 1n}\n`));
  const keyed = await connectClient(server.lockPort);
  try {
    await page.goto(server.baseURL);
    await expect(page.getByTestId('live-status')).toHaveText('live');
    await expect(page.getByTestId('grants-refused')).toHaveCount(0);
    keyed.send('A e2e-last 30 0');
    expect(await keyed.next()).toBe(`A e2e-last ${MAX_TOKEN}`);
    keyed.send('A e2e-more 30 0');
    expect(await keyed.next()).toBe('E A e2e-more tokens-exhausted fencing tokens exhausted: this node can grant no more locks');
    const alert = page.getByTestId('grants-refused');
    await expect(alert).toContainText('Grants refused (tokens-exhausted): fencing tokens exhausted: this node can grant no more locks.');
    await expect(alert).toContainText('Releases, probes and this console still work.');
    // The last grant is still shown, and its release still works and reaches the page.
    const row = page.locator('[data-testid="lock-row"][data-lock="e2e-last"]');
    await expect(row.getByTestId('holder-token')).toHaveText(MAX_TOKEN.toString());
    keyed.send(`R e2e-last ${MAX_TOKEN}`);
    expect(await keyed.next()).toBe('R e2e-last OK');
    await expect(row).toHaveCount(0);
    await expect(alert).toBeVisible();
  } finally {
    keyed.close();
    // The exhaustion itself is logged as an error, once: the operator must act on it.
    await stop([/"msg":"fencing tokens exhausted: this node grants nothing more"/]);
  }
});
