// Issue 30 §7: the lock detail panel at 1440 px and on a phone, with what makes it hard: 20-digit
// tokens, long `baton run` identities, a queue and a grant history. Nothing in the panel may be
// cut off (an element whose content is wider or taller than its box, outside the boxes that
// scroll on purpose), and a token or identity is never broken mid-word.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, type Page, test } from '@playwright/test';
import { startBaton } from './fixtures/baton-server.ts';
import { connectClient, type LineClient } from './fixtures/wire-client.ts';

/** Tokens above 18,446,744,073,709,000,000: every one 20 digits, the widest a token gets. */
const CEILING = 18_446_744_073_709_000_000n;
const LOCK = 'jobs/reports/nightly-orders-export';
const IDENTITIES = [
  "baton run sh -c 'pg_dump --table=orders > /backups/orders.sql' @build-host-07.example.internal pid 412345",
  'reporting-worker-12@analytics-batch-host-03.eu-west-1.compute.internal pid 99812',
  'deploy@ci-runner-5 pid 4121',
];

const clients: LineClient[] = [];

/** A session claim under `identity` on `LOCK`; resolves once it has its first reply (ACQUIRED or WAITING). */
async function claim(port: number, identity: string): Promise<LineClient> {
  const c = await connectClient(port);
  clients.push(c);
  c.send(`CLIENT ${identity}`);
  c.send(`ACQUIRE ${LOCK} 600000`);
  await c.waitFor(/^(ACQUIRED \d+|WAITING \d+)$/);
  return c;
}

/**
 * Every element of the panel whose content is cut off: wider (or taller) than its box while its
 * overflow hides it, or spilling out of the panel. A scroll region that says so (role=region,
 * focusable, so a keyboard reaches what is off screen) may scroll; nothing else may clip.
 */
function clipped(page: Page): Promise<string[]> {
  return page.getByTestId('lock-detail').evaluate((panel) => {
    const out: string[] = [];
    const panelBox = panel.getBoundingClientRect();
    const nameOf = (el: Element) =>
      `${el.tagName.toLowerCase()}${el.getAttribute('data-testid') ? `[${el.getAttribute('data-testid')}]` : ''} "${(el.textContent ?? '').slice(0, 40)}"`;
    if (panel.scrollWidth > panel.clientWidth + 1) out.push(`panel scrollWidth ${panel.scrollWidth} > ${panel.clientWidth}`);
    for (const el of panel.querySelectorAll('*')) {
      const style = getComputedStyle(el);
      if (style.display === 'none' || el.closest('.sr-only') !== null) continue;
      const scrollRegion = el.getAttribute('role') === 'region' && el.getAttribute('tabindex') === '0';
      const hides = (v: string) => v === 'hidden' || v === 'clip';
      const { scrollWidth, clientWidth, scrollHeight, clientHeight } = el as HTMLElement;
      if (!scrollRegion && hides(style.overflowX) && scrollWidth > clientWidth + 1 && style.textOverflow !== 'ellipsis') {
        out.push(`${nameOf(el)} clips ${scrollWidth - clientWidth} px sideways`);
      }
      if (!scrollRegion && hides(style.overflowY) && scrollHeight > clientHeight + 1) out.push(`${nameOf(el)} clips ${scrollHeight - clientHeight} px down`);
      if (!scrollRegion && (style.overflowX === 'auto' || style.overflowX === 'scroll') && scrollWidth > clientWidth + 1) {
        out.push(`${nameOf(el)} scrolls sideways without being a focusable region`);
      }
      // Cut short on purpose: it must say so (an ellipsis) and carry the whole value in a title.
      if (style.textOverflow === 'ellipsis' && scrollWidth > clientWidth + 1) {
        const title = el.closest('[title]')?.getAttribute('title') ?? '';
        if (!title.includes((el.textContent ?? '').trim())) out.push(`${nameOf(el)} is cut short without its whole value in a title`);
      }
      const box = el.getBoundingClientRect();
      const inScroller = el.parentElement?.closest('[role="region"][tabindex="0"]') !== null;
      let inEllipsis = false;
      for (let p = el.parentElement; p !== null && p !== panel; p = p.parentElement) {
        if (getComputedStyle(p).textOverflow === 'ellipsis') inEllipsis = true;
      }
      if (!inScroller && !inEllipsis && box.width > 0 && (box.right > panelBox.right + 1 || box.left < panelBox.left - 1)) {
        out.push(`${nameOf(el)} spills out of the panel`);
      }
    }
    return out;
  });
}

/**
 * Each token or address drawn over more than one line, and each identity word that is (an
 * identity may wrap between its words, never inside one).
 */
function brokenValues(page: Page): Promise<string[]> {
  return page.getByTestId('lock-detail').evaluate((panel) => {
    const lines = (el: Element) => {
      const range = document.createRange();
      range.selectNodeContents(el);
      return new Set([...range.getClientRects()].filter((r) => r.width > 0).map((r) => Math.round(r.top))).size;
    };
    const out: string[] = [];
    for (const el of panel.querySelectorAll('[data-testid="detail-holder-token"], [data-testid="history-token"], [data-testid="client-address"]')) {
      if (lines(el) > 1) out.push(`${el.getAttribute('data-testid')} "${el.textContent}" on ${lines(el)} lines`);
    }
    for (const word of panel.querySelectorAll('[data-testid="client-name"] > span')) {
      if (lines(word) > 1) out.push(`identity word "${word.textContent}" on ${lines(word)} lines`);
    }
    return out;
  });
}

test.describe('the lock detail panel', () => {
  test.afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  for (const viewport of [
    { width: 1440, height: 900 },
    { width: 390, height: 844 },
  ]) {
    test(`at ${viewport.width}x${viewport.height} clips nothing and keeps each token and identity on one line`, async ({ page }, testInfo) => {
      const { server, stop } = await startBaton([], (dir) => writeFile(join(dir, 'token-ceiling'), `${CEILING}\n`));
      try {
        // Three ended grants for the history, then a holder and two waiters.
        // (A session releases by closing; the next claim is granted once that close is seen.)
        for (const identity of IDENTITIES) {
          const c = await claim(server.sessionPort, identity);
          await c.waitFor(/^ACQUIRED \d+$/);
          c.close();
        }
        const holder = await claim(server.sessionPort, IDENTITIES[0] as string);
        expect(holder.lines[0]).toMatch(/^ACQUIRED \d{20}$/);
        await claim(server.sessionPort, IDENTITIES[1] as string);
        await claim(server.sessionPort, IDENTITIES[2] as string);

        await page.setViewportSize(viewport);
        await page.goto(`${server.baseURL}/?lock=${encodeURIComponent(LOCK)}`);
        const panel = page.getByTestId('lock-detail');
        await expect(panel.getByTestId('waiter-row')).toHaveCount(2);
        await expect(panel.getByTestId('history-row')).toHaveCount(3);
        await expect(panel.getByTestId('detail-holder-token')).toHaveText(/^\d{20}$/);
        // Every full value is on the page (in the text or a title), not only its cut-off start.
        for (const identity of IDENTITIES) {
          await expect(panel.locator(`[data-client-name="${identity}"]`).first()).toBeAttached();
        }
        await testInfo.attach(`panel-${viewport.width}`, { body: await panel.screenshot(), contentType: 'image/png' });
        expect(await clipped(page)).toEqual([]);
        expect(await brokenValues(page)).toEqual([]);
        // The page itself does not scroll sideways either.
        expect(await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)).toBeLessThanOrEqual(0);
      } finally {
        await stop();
      }
    });
  }
});
