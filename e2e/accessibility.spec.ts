// Automated accessibility checks (axe-core) of the dashboard with live data: the page, a lock's
// detail with its queue, the sign-in form an admin button opens, the force-release dialog, in
// light and dark mode and at phone width.
import AxeBuilder from '@axe-core/playwright';
import type { Page } from '@playwright/test';
import { ADMIN_TOKEN, expect, test } from './fixtures/baton-server.ts';
import { type LineClient, sessionClaim } from './fixtures/wire-client.ts';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

async function violations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page }).withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']).analyze();
  return result.violations.map(
    (v) =>
      `${v.id} (${v.impact}): ${v.nodes
        .map((n) => n.target.join(' '))
        .slice(0, 3)
        .join(', ')}`,
  );
}

for (const scheme of ['light', 'dark'] as const) {
  test(`the dashboard has no WCAG 2.1 AA violations axe can find (${scheme})`, async ({ page, baton }) => {
    const holder = await sessionClaim(baton.sessionPort, `a11y-${scheme}`);
    clients.push(holder);
    await holder.waitFor(/^ACQUIRED/);
    const waiter = await sessionClaim(baton.sessionPort, `a11y-${scheme}`);
    clients.push(waiter);
    await waiter.waitFor(/^WAITING 1$/);
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto('/');
    await expect(page.getByTestId('live-status')).toHaveText('live');
    await page
      .locator(`[data-testid="lock-row"][data-lock="a11y-${scheme}"]`)
      .getByRole('button', { name: `Details for a11y-${scheme}` })
      .click();
    await expect(page.getByTestId('waiter-row')).toHaveCount(1);
    expect(await violations(page)).toEqual([]);
    // Signed out, Force release leads to the sign-in form (with a line saying why); the sign-in, to the dialog.
    await page.getByTestId('lock-detail').getByRole('button', { name: 'Force release' }).click();
    await expect(page.getByTestId('sign-in-reason')).toBeVisible();
    expect(await violations(page)).toEqual([]);
    await page.getByLabel('Admin token').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
    // The sign-in resumes the force release that asked for it: its dialog opens by itself.
    await expect(page.getByTestId('force-release-dialog')).toBeVisible();
    expect(await violations(page)).toEqual([]);
    await page.getByRole('button', { name: 'Cancel' }).click();
    await page.setViewportSize({ width: 390, height: 844 });
    expect(await violations(page)).toEqual([]);
  });
}
