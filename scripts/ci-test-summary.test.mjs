// .ci/test-summary.cjs over fixture reports: the Vitest report (the suite runs on Node 24), the
// browser tests, the clients and the Node.js line smokes count in its closing line, and a failure
// or a missing report in any of them fails CI.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const SUMMARY = fileURLToPath(new URL('../.ci/test-summary.cjs', import.meta.url));
const dirs = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const vitest = (passed, failed) => ({
  numPassedTests: passed,
  numFailedTests: failed,
  numPendingTests: 0,
  numTodoTests: 0,
  success: failed === 0,
  testResults: [],
});
const good = {
  vitest: vitest(10, 0),
  e2e: { stats: { expected: 3, flaky: 0, unexpected: 0, skipped: 0 }, errors: [] },
  clients: { passed: 4, failed: 0, skipped: 0 },
  lines: { passed: 3, failed: 0, skipped: 0 },
};

/** Runs the summary over `reports` (a missing key: a report that was not written). */
function summary(reports, status = 0) {
  const dir = mkdtempSync(join(tmpdir(), 'ci-summary-'));
  dirs.push(dir);
  const paths = ['vitest', 'e2e', 'clients', 'lines'].map((name) => {
    const path = join(dir, `${name}.json`);
    if (reports[name] !== undefined) writeFileSync(path, JSON.stringify(reports[name]));
    return path;
  });
  const r = spawnSync(process.execPath, [SUMMARY, ...paths, String(status)], { encoding: 'utf8' });
  return { line: r.stdout.trim(), status: r.status };
}

describe('.ci/test-summary.cjs', () => {
  it('adds the Vitest suite, the browser tests, the clients and the line smokes in the closing line', () => {
    expect(summary(good)).toEqual({ line: '20 passed, 0 failed, 0 skipped', status: 0 });
  });

  it('fails on a failed smoke or a failed Vitest test, even when npm test exited 0', () => {
    expect(summary({ ...good, lines: { passed: 2, failed: 1, skipped: 0 } })).toEqual({ line: '19 passed, 1 failed, 0 skipped', status: 1 });
    expect(summary({ ...good, vitest: vitest(9, 1) })).toEqual({ line: '19 passed, 1 failed, 0 skipped', status: 1 });
  });

  it('names a part that did not run and fails', () => {
    const { lines, vitest: _vitest, ...rest } = good;
    expect(summary(rest, 1)).toEqual({
      line: '7 passed, 0 failed, 0 skipped (did not run: unit tests (Vitest on Node 24), Node.js line smokes; npm test exited 1: FAILED)',
      status: 1,
    });
  });
});
