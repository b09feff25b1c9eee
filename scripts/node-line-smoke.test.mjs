// The Node.js line smoke must catch a daemon that does not do what a user expects of it: here a
// `node` that starts `baton serve` with the console off (it grants, but GET / is no dashboard).
// The passing case is `npm test`'s own run of the smoke on every line (scripts/test-node-lines.mjs).
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { smokeNodeLine } from './node-line-smoke.mjs';

const dirs = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('node-line smoke', () => {
  it('fails at the console page, after both locks were granted, when the daemon serves no console; the daemon is gone after', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'node-line-smoke-'));
    dirs.push(dir);
    const node = join(dir, 'node');
    writeFileSync(node, `#!/bin/sh\n[ "$1" = --version ] && exec '${process.execPath}' --version\nexec '${process.execPath}' "$@" --no-console --drain 0ms\n`);
    chmodSync(node, 0o755);
    const result = await smokeNodeLine(node);
    expect(result.ok).toBe(false);
    expect(result.version).toBe(process.versions.node);
    expect(result.startMs).toBeGreaterThan(0);
    expect(result.error).toMatch(/^console page: GET \/ answered 404 application\/json/);
    // Killed (with its process group) and reaped before the smoke returned.
    expect(result.pid).toBeGreaterThan(0);
    expect(() => process.kill(result.pid, 0)).toThrow(expect.objectContaining({ code: 'ESRCH' }));
  }, 60_000);
});
