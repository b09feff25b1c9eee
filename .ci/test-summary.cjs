// Prints the plain closing line "N passed, N failed, N skipped" from Vitest's JSON reports and
// Playwright's JSON report, counting as failures also what is not a failed test: a test file
// that did not load, an unhandled error, a spec or fixture that broke before its tests. Usage:
//   node .ci/test-summary.cjs <vitest.json> <playwright.json> <clients.json> <node-lines.json> <exit status of npm test>
// (vitest.json: the Vitest suite, which npm test runs on Node 24 through scripts/test-node-lines.mjs;
// clients.json: the Python and Go clients' counts, written by scripts/test-clients.mjs;
// node-lines.json: the smoke of each Node.js line, written by scripts/test-node-lines.mjs; each
// smoke counts as one test).
const { existsSync } = require('node:fs');
const { resolve } = require('node:path');
let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
const [vitestPath, e2ePath, clientsPath, nodeLinesPath] = process.argv.slice(2, -1);

function countVitest(path, name) {
  const file = path && resolve(path);
  if (!file || !existsSync(file)) {
    missing.push(name);
    return;
  }
  const r = require(file);
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
  // Files that failed without a failed test in them (an import error, a crash in a hook).
  const brokenFiles = (r.testResults ?? []).filter((f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed')).length;
  failed += brokenFiles;
  if (r.success === false && r.numFailedTests === 0 && brokenFiles === 0) failed += 1; // an unhandled error
}

/** A report of plain counts ({passed, failed, skipped}). */
function countPlain(path, name) {
  const file = path && resolve(path);
  if (!file || !existsSync(file)) {
    missing.push(name);
    return;
  }
  const r = require(file);
  passed += r.passed;
  failed += r.failed;
  skipped += r.skipped;
}

countVitest(vitestPath, 'unit tests (Vitest on Node 24)');
const e2e = e2ePath && resolve(e2ePath);
if (e2e && existsSync(e2e)) {
  const r = require(e2e);
  passed += r.stats.expected + r.stats.flaky;
  failed += r.stats.unexpected + (r.errors ?? []).length + (r.stats.interrupted ?? 0);
  skipped += r.stats.skipped;
} else {
  missing.push('browser tests');
}
countPlain(clientsPath, 'client tests (Python, Go)');
countPlain(nodeLinesPath, 'Node.js line smokes');
const status = process.argv.length > 2 ? Number(process.argv.at(-1)) : 0;
const notes = [];
if (missing.length > 0) notes.push(`did not run: ${missing.join(', ')}`);
if (status !== 0) notes.push(`npm test exited ${status}: FAILED`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`);
// A skipped test hides what it would have found: CI treats one as a failure. So does a failed one,
// and a part that did not run, even when npm test's exit status somehow said otherwise.
if (skipped > 0 || failed > 0 || missing.length > 0) process.exitCode = 1;
