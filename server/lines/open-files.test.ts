// The connection budget under an open-file limit: what `baton serve` takes of --max-connections.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connectionBudget, MAX_REFUSING, openFileLimit } from './open-files.ts';

describe('the connection budget', () => {
  it('keeps the requested maximum when the limit has room for both protocols and their refusals', () => {
    expect(connectionBudget(16_384, 1_048_576)).toEqual({ maxConnections: 16_384, maxTotal: 32_768, maxRefusing: MAX_REFUSING, lowered: false });
    expect(connectionBudget(16_384, null)).toEqual({ maxConnections: 16_384, maxTotal: 32_768, maxRefusing: MAX_REFUSING, lowered: false });
    expect(connectionBudget(100, 1_024)).toEqual({ maxConnections: 100, maxTotal: 200, maxRefusing: 112, lowered: false });
  });

  it('caps both protocols together at what the limit holds beyond the reserve and the goodbyes in flight', () => {
    // 20,000 - 128 reserved - 2 x 256 refusing: one protocol may still take its 16,384.
    expect(connectionBudget(16_384, 20_000)).toEqual({ maxConnections: 16_384, maxTotal: 19_360, maxRefusing: 256, lowered: true });
    // 1,024 - 128 = 896; a refusal share of 896 / 8 = 112 per listener.
    expect(connectionBudget(16_384, 1_024)).toEqual({ maxConnections: 672, maxTotal: 672, maxRefusing: 112, lowered: true });
    expect(connectionBudget(16_384, 256)).toEqual({ maxConnections: 96, maxTotal: 96, maxRefusing: 16, lowered: true });
    expect(connectionBudget(16_384, 10).maxTotal).toBeGreaterThanOrEqual(2);
  });

  it('reads the soft limit from /proc/self/limits, and nothing from a file it cannot read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'baton-limits-'));
    try {
      const file = join(dir, 'limits');
      await writeFile(
        file,
        'Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 524288               files\n',
      );
      expect(openFileLimit(file)).toBe(1_024);
      await writeFile(file, 'Max open files            unlimited            unlimited            files\n');
      expect(openFileLimit(file)).toBeNull();
      expect(openFileLimit(join(dir, 'missing'))).toBeNull();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
