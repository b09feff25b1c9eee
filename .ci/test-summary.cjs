// Prints the plain closing line "N passed, N failed, N skipped" from Vitest's JSON report and
// Playwright's JSON report, counting as failures also what is not a failed test: a test file
// that did not load, an unhandled error, a spec or fixture that broke before its tests. Usage:
//   node .ci/test-summary.cjs <vitest.json> <playwright.json> <clients.json> <exit status of npm test>
// (clients.json: the Python and Go clients' counts, written by scripts/test-clients.mjs).
const { existsSync } = require('node:fs');
const { resolve } = require('node:path');
let passed = 0;
let failed = 0;
let skipped = 0;
const missing = [];
const vitest = resolve(process.argv[2]);
if (existsSync(vitest)) {
  const r = require(vitest);
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
  // Files that failed without a failed test in them (an import error, a crash in a hook).
  const brokenFiles = (r.testResults ?? []).filter((f) => f.status === 'failed' && !(f.assertionResults ?? []).some((a) => a.status === 'failed')).length;
  failed += brokenFiles;
  if (r.success === false && r.numFailedTests === 0 && brokenFiles === 0) failed += 1; // an unhandled error
} else {
  missing.push('unit tests');
}
const e2e = process.argv[3] && resolve(process.argv[3]);
if (e2e && existsSync(e2e)) {
  const r = require(e2e);
  passed += r.stats.expected + r.stats.flaky;
  failed += r.stats.unexpected + (r.errors ?? []).length + (r.stats.interrupted ?? 0);
  skipped += r.stats.skipped;
} else if (e2e) {
  missing.push('browser tests');
}
const clients = process.argv[4] && resolve(process.argv[4]);
if (clients && existsSync(clients)) {
  const r = require(clients);
  passed += r.passed;
  failed += r.failed;
  skipped += r.skipped;
} else if (clients) {
  missing.push('client tests (Python, Go)');
}
const status = Number(process.argv[5] ?? 0);
const notes = [];
if (missing.length > 0) notes.push(`did not run: ${missing.join(', ')}`);
if (status !== 0) notes.push(`npm test exited ${status}: FAILED`);
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped${notes.length > 0 ? ` (${notes.join('; ')})` : ''}`);
// A skipped test hides what it would have found: CI treats one as a failure.
if (skipped > 0) process.exitCode = 1;
