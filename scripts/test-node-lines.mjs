#!/usr/bin/env node
// `npm test`'s part for the Node.js lines Baton supports (package.json `engines`): the full Vitest
// suite again on Node 24, then the smoke of node-line-smoke.mjs (start, a keyed and a session
// lock, the console page, /metrics, SIGTERM and exit 0) on every line: 20, 22 and 24. Node 22
// and 24 come from the npm registry through ensure-node-line.mjs; the line this script runs on
// uses this very binary. Each line's binary is first on PATH for its run, so whatever the tests
// spawn (`baton serve` through process.execPath, tsx, a `node` by name) runs on that line too.
// Prints a table per line and writes the counts to node_modules/.cache/baton-node-lines-report.json
// (the Node 24 Vitest report beside it: baton-test-report-node24.json) for .ci/test-summary.cjs.
// Exits non-zero when anything failed.
//   node scripts/test-node-lines.mjs               the whole step, as `npm test` runs it
//   node scripts/test-node-lines.mjs --smoke-only  only the smokes (about 10 s a line)
//   node scripts/test-node-lines.mjs -- <filters>  Vitest on Node 24 with only the files the filters name
// It builds the console first when there is no up-to-date build (ensure-console-build.mjs), so
// it does not depend on its place in `npm test`.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNodeLine, NODE_LINES } from './ensure-node-line.mjs';
import { smokeNodeLine } from './node-line-smoke.mjs';

/** The line the whole Vitest suite runs on again (the newest LTS line). */
const FULL_SUITE_LINE = 24;
const root = fileURLToPath(new URL('..', import.meta.url));
const cache = join(root, 'node_modules', '.cache');
const vitestReport = join(cache, 'baton-test-report-node24.json');
const report = join(cache, 'baton-node-lines-report.json');
const smokeOnly = process.argv.includes('--smoke-only');
const dashes = process.argv.indexOf('--');
const filters = dashes < 0 ? [] : process.argv.slice(dashes + 1);

mkdirSync(cache, { recursive: true });
rmSync(report, { force: true });
if (!smokeOnly) rmSync(vitestReport, { force: true });

const counts = { passed: 0, failed: 0, skipped: 0, vitest: null, lines: [] };
const problems = [];

/** The line's `node`: this process's own binary when it is on that line, else the pinned one. */
function nodeOf(line) {
  if (Number(process.versions.node.split('.')[0]) === line) return process.execPath;
  return ensureNodeLine(line);
}

function onLine(node) {
  return { ...process.env, PATH: `${dirname(node)}:${process.env.PATH ?? ''}` };
}

const build = spawnSync(process.execPath, [join(root, 'scripts', 'ensure-console-build.mjs')], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) problems.push(`the console build failed (${build.status ?? build.signal}): the smokes load the console page`);

if (!smokeOnly) {
  let node;
  try {
    node = nodeOf(FULL_SUITE_LINE);
  } catch (err) {
    problems.push(`Node ${FULL_SUITE_LINE}: ${err.message}`);
  }
  if (node !== undefined) {
    process.stdout.write(`\n--- the full Vitest suite on Node ${FULL_SUITE_LINE} (${node})\n`);
    const started = performance.now();
    const vitest = spawnSync(node, [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', `--outputFile.json=${vitestReport}`, ...filters], {
      cwd: root,
      stdio: 'inherit',
      env: onLine(node),
    });
    counts.vitest = { line: FULL_SUITE_LINE, status: vitest.status, seconds: Math.round((performance.now() - started) / 1000) };
    if (vitest.status !== 0) problems.push(`the Vitest suite on Node ${FULL_SUITE_LINE} exited ${vitest.status ?? vitest.signal}`);
  }
}

if (build.status === 0) {
  for (const line of Object.keys(NODE_LINES).map(Number)) {
    let result;
    try {
      result = await smokeNodeLine(nodeOf(line));
    } catch (err) {
      result = { version: null, ok: false, error: `getting Node ${line}: ${err.message}`, warnings: [] };
    }
    if (result.ok && result.version?.split('.')[0] !== String(line)) {
      result.ok = false;
      result.error = `the Node ${line} binary reports ${result.version}`;
    }
    counts.lines.push({ line, ...result });
    if (result.ok) counts.passed++;
    else {
      counts.failed++;
      problems.push(`Node ${line} smoke failed at ${result.error}`);
    }
  }
} else {
  counts.failed += Object.keys(NODE_LINES).length;
}

const cell = (v, unit = '') => (v === null || v === undefined ? '-' : `${v}${unit}`);
const rows = [['line', 'version', 'start', 'keyed+session lock, console, metrics', 'RSS', 'SIGTERM to exit 0', 'runtime warnings', 'result']];
for (const r of counts.lines) {
  rows.push([
    String(r.line),
    cell(r.version),
    cell(r.startMs, ' ms'),
    r.ok ? 'ok' : '-',
    cell(r.rssMiB, ' MiB'),
    cell(r.stopMs, ' ms'),
    String(r.warnings.length),
    r.ok ? 'PASS' : 'FAIL',
  ]);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
process.stdout.write('\nNode.js lines: smoke of baton serve\n');
for (const row of rows) process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i])).join('  ')}\n`);
for (const r of counts.lines) for (const w of r.warnings) process.stdout.write(`  Node ${r.line} warned: ${w}\n`);
if (counts.vitest !== null) {
  const v = counts.vitest;
  process.stdout.write(`Vitest on Node ${v.line}: ${v.status === 0 ? 'PASS' : 'FAIL'} in ${v.seconds} s (report: ${vitestReport})\n`);
}
for (const p of problems) process.stderr.write(`FAILED: ${p}\n`);

writeFileSync(report, JSON.stringify(counts, null, 2));
process.exit(problems.length === 0 ? 0 : 1);
