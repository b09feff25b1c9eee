// The lock table's first rows come with the snapshot's header (docs/console.md, "The event
// stream"): at 10,000 locks the page draws the table's first locks by name before the rest of the
// table has arrived, says that the rest is loading, and never shows a row out of its place.
import type { Page } from '@playwright/test';
import { expect, test } from './fixtures/baton-server.ts';
import { connectClient, holdKeyed, type LineClient, releaseKeyed } from './fixtures/wire-client.ts';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

interface AtFirstData {
  rows: string[];
  count: string | null;
  loading: string | null;
}

/**
 * Records, in the page, what the table showed in the commit that stamped data-first-data-at (a
 * MutationObserver's callback runs right after that commit, before any later message is handled).
 */
async function recordFirstData(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const observer = new MutationObserver(() => {
      if (document.querySelector('[data-testid="live-status"][data-first-data-at]') === null) return;
      observer.disconnect();
      (window as unknown as { atFirstData: AtFirstData }).atFirstData = {
        rows: Array.from(document.querySelectorAll('[data-testid="lock-row"]'), (e) => e.getAttribute('data-lock') ?? ''),
        count: document.querySelector('[data-testid="lock-count"]')?.textContent ?? null,
        loading: document.querySelector('[data-testid="lock-table-loading"]')?.getAttribute('data-kind') ?? null,
      };
    });
    observer.observe(document, { subtree: true, attributes: true, attributeFilter: ['data-first-data-at'] });
  });
}

async function atFirstData(page: Page): Promise<AtFirstData> {
  await expect(page.getByTestId('live-status')).toHaveText('live');
  await expect.poll(() => page.evaluate(() => (window as unknown as { atFirstData?: AtFirstData }).atFirstData !== undefined)).toBe(true);
  return page.evaluate(() => (window as unknown as { atFirstData: AtFirstData }).atFirstData);
}

const shownRows = (page: Page) => page.getByTestId('lock-row').evaluateAll((els) => els.map((e) => e.getAttribute('data-lock') ?? ''));

test("the table's first rows by name are on screen with the first data, before the rest of 10,000 locks", async ({ page, baton }) => {
  const keyed = await connectClient(baton.lockPort);
  clients.push(keyed);
  // Taken in reverse name order: the daemon's table, and the walk that pages it out, start with the last names.
  const names = Array.from({ length: 10_000 }, (_, i) => `rows/${String(9_999 - i).padStart(5, '0')}`);
  await holdKeyed(keyed, names);
  let released = 0;
  try {
    await checkFirstRows(page);
  } finally {
    // The test's own failure, if any, is the one reported.
    released = await releaseKeyed(keyed, names.length);
  }
  expect(released).toBe(names.length);
});

async function checkFirstRows(page: Page): Promise<void> {
  await recordFirstData(page);
  await page.goto('/');
  const first = await atFirstData(page);
  // The first rows were the table's first locks by name (the API pages in name order), with the
  // rest of the table still to come and the page saying so.
  expect(first.rows.length).toBeGreaterThanOrEqual(10);
  const api = (await (await page.request.get(`/api/v1/locks?limit=${first.rows.length}`)).json()) as { locks: { name: string }[] };
  expect(first.rows).toEqual(api.locks.map((l) => l.name));
  expect(first.loading).toBe('first-by-name');
  expect(first.count).toMatch(/^Loading… \d[\d,]* of 10,\d{3} locks$/);
  // Then the whole table, and the note goes.
  await expect(page.getByTestId('lock-count')).toHaveText(/^10,\d{3} locks$/, { timeout: 15_000 });
  await expect(page.getByTestId('lock-table-loading')).toHaveCount(0);
  const complete = await shownRows(page);
  expect(complete.slice(0, first.rows.length)).toEqual(first.rows);

  // A deep-linked search: what shows with the first data is the first matches or nothing yet, never a wrong row.
  const filtered = await page.context().newPage();
  await recordFirstData(filtered);
  await filtered.goto('/?q=rows%2F0999');
  const firstFiltered = await atFirstData(filtered);
  expect(firstFiltered.loading).not.toBeNull();
  await expect(filtered.getByTestId('lock-count')).toHaveText(/^10 of 10,\d{3} locks$/, { timeout: 15_000 });
  const matches = await shownRows(filtered);
  expect(matches).toEqual(Array.from({ length: 10 }, (_, i) => `rows/0999${i}`));
  expect(matches.slice(0, firstFiltered.rows.length)).toEqual(firstFiltered.rows);
  await filtered.close();
}
