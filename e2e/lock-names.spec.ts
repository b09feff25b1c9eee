// Lock names that would render invisible or as look-alikes are marked on screen: U+3164 and
// U+2800 as \u{…} badges, a Latin name with a Cyrillic letter as "mixed: Latin+Cyrillic", an
// all-Cyrillic "аре" as looking Latin, so no two locks in the table look the same.
import { ADMIN_TOKEN, expect, test } from './fixtures/baton-server.ts';
import { connectClient, type LineClient } from './fixtures/wire-client.ts';

const clients: LineClient[] = [];
test.afterEach(() => {
  for (const c of clients.splice(0)) c.close();
});

const HANGUL_FILLER = '\u3164';
const BRAILLE_BLANK = '\u2800';
const LATIN = 'e2e-paypal';
const WITH_CYRILLIC_A = 'e2e-p\u0430ypal';
const ALL_CYRILLIC = '\u0430\u0440\u0435'; // "аре", drawn like "ape"
const LATIN_APE = 'ape';

test('invisible and look-alike lock names are marked in the table, the detail and the feed', async ({ page, baton, request }) => {
  await page.goto('/');
  await expect(page.getByTestId('live-status')).toHaveText('live');
  const keyed = await connectClient(baton.lockPort);
  clients.push(keyed);
  const all = [HANGUL_FILLER, BRAILLE_BLANK, LATIN, WITH_CYRILLIC_A, ALL_CYRILLIC, LATIN_APE];
  for (const name of all) {
    keyed.send(`A ${name} 60 0`);
    await keyed.waitFor(new RegExp(`^A ${name} \\d+$`));
  }
  const row = (name: string) => page.locator(`[data-testid="lock-row"][data-lock="${name}"]`);
  await expect(row(HANGUL_FILLER).getByTestId('name-escape')).toHaveText('\\u{3164}');
  await expect(row(BRAILLE_BLANK).getByTestId('name-escape')).toHaveText('\\u{2800}');
  await expect(row(WITH_CYRILLIC_A).getByTestId('name-mixed-scripts')).toHaveText('mixed: Latin+Cyrillic');
  await expect(row(LATIN).getByTestId('name-mixed-scripts')).toHaveCount(0);
  await expect(row(ALL_CYRILLIC).getByTestId('name-looks-latin')).toHaveText('Cyrillic, looks Latin');
  await expect(row(LATIN_APE).locator('[data-marked]')).toHaveCount(0);
  // What an operator reads in the name cell differs for each of them, and none is blank.
  const shown = await Promise.all(all.map((n) => row(n).getByRole('button').first().innerText()));
  expect(new Set(shown).size).toBe(all.length);
  for (const text of shown) expect(text.trim()).not.toBe('');

  await row(HANGUL_FILLER).getByRole('button').first().click();
  await expect(page.getByTestId('lock-detail').getByTestId('name-escape')).toHaveText('\\u{3164}');
  await expect(
    page.locator('[data-testid="feed-item"][data-kind="grant"] [data-testid="feed-lock"]').getByTestId('name-escape').filter({ hasText: '\\u{2800}' }).first(),
  ).toBeVisible();
  await page.screenshot({ path: test.info().outputPath('marked-lock-names.png') });

  // An admin action on such a lock: its feed line shows the marked name too.
  const released = await request.post(`/api/v1/locks/${encodeURIComponent(HANGUL_FILLER)}/force-release`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    data: {},
  });
  expect(released.status()).toBe(200);
  await expect(page.locator('[data-testid="feed-item"][data-kind="admin"] [data-testid="feed-lock"]').getByTestId('name-escape').first()).toHaveText(
    '\\u{3164}',
  );
});
