// Prints the plain closing line "N passed, N failed, N skipped" from Vitest's JSON report and
// Playwright's JSON report (whichever exist: a red unit run stops before the browser tests).
const { existsSync } = require('node:fs');
const { resolve } = require('node:path');
let passed = 0;
let failed = 0;
let skipped = 0;
const vitest = resolve(process.argv[2]);
if (existsSync(vitest)) {
  const r = require(vitest);
  passed += r.numPassedTests;
  failed += r.numFailedTests;
  skipped += r.numPendingTests + r.numTodoTests;
}
const missing = [];
if (!existsSync(vitest)) missing.push('unit tests');
const e2e = process.argv[3] && resolve(process.argv[3]);
if (e2e && existsSync(e2e)) {
  const s = require(e2e).stats;
  passed += s.expected + s.flaky;
  failed += s.unexpected;
  skipped += s.skipped;
} else if (e2e) {
  missing.push('browser tests');
}
const note = missing.length > 0 ? ` (did not run: ${missing.join(', ')})` : '';
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped${note}`);
