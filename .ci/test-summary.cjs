// Prints the plain closing line "N passed, N failed, N skipped" from Vitest's JSON report.
const { resolve } = require('node:path');
const r = require(resolve(process.argv[2]));
console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests + r.numTodoTests} skipped`);
