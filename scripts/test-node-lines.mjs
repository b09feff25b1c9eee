#!/usr/bin/env node
// `npm test`'s parts for the Node.js lines Baton supports (package.json `engines`): the full Vitest
// suite on Node 24 (the newest LTS line; the browser tests and the client suites run on the
// machine's Node 20), and the smoke of node-line-smoke.mjs (start, a keyed and a session lock,
// the console page, /metrics, SIGTERM and exit 0) on every line: 20, 22 and 24. Node 22 and 24
// come from the npm registry through ensure-node-line.mjs; the line this script runs on uses this
// very binary. Each line's binary is first on PATH for its run, so whatever the tests spawn
// (`baton serve` through process.execPath, tsx, a `node` by name) runs on that line too.
// The Vitest report goes where vitest.config.ts puts it (baton-test-report.json); the smokes'
// counts to node_modules/.cache/baton-node-lines-report.json, both for .ci/test-summary.cjs.
// Exits non-zero when anything failed.
//   node scripts/test-node-lines.mjs --unit        the Vitest suite on Node 24 (npm test's unit step)
//   node scripts/test-node-lines.mjs --smoke-only  only the smokes (about 10 s a line; npm test's last step)
//   node scripts/test-node-lines.mjs               both
//   node scripts/test-node-lines.mjs --unit -- <filters>  Vitest on Node 24 with only the files the filters name
// The smokes build the console first when there is no up-to-date build (ensure-console-build.mjs),
// so they do not depend on their place in `npm test`.
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
// Where vitest.config.ts writes its JSON report: the suite runs once, on Node 24.
const vitestReport = join(cache, 'baton-test-report.json');
const report = join(cache, 'baton-node-lines-report.json');
const smokeOnly = process.argv.includes('--smoke-only');
const unitOnly = process.argv.includes('--unit');
const dashes = process.argv.indexOf('--');
const filters = dashes < 0 ? [] : process.argv.slice(dashes + 1);

mkdirSync(cache, { recursive: true });
if (!unitOnly) rmSync(report, { force: true });
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

const build = unitOnly ? null : spawnSync(process.execPath, [join(root, 'scripts', 'ensure-console-build.mjs')], { cwd: root, stdio: 'inherit' });
if (build !== null && build.status !== 0) problems.push(`the console build failed (${build.status ?? build.signal}): the smokes load the console page`);

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

if (build !== null && build.status === 0) {
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
} else if (build !== null) {
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
if (!unitOnly) {
  process.stdout.write('\nNode.js lines: smoke of baton serve\n');
  for (const row of rows) process.stdout.write(`${row.map((c, i) => c.padEnd(widths[i])).join('  ')}\n`);
}
for (const r of counts.lines) for (const w of r.warnings) process.stdout.write(`  Node ${r.line} warned: ${w}\n`);
if (counts.vitest !== null) {
  const v = counts.vitest;
  process.stdout.write(`Vitest on Node ${v.line}: ${v.status === 0 ? 'PASS' : 'FAIL'} in ${v.seconds} s (report: ${vitestReport})\n`);
}
for (const p of problems) process.stderr.write(`FAILED: ${p}\n`);

// The unit step writes no smoke counts: Vitest's own report counts its tests.
if (!unitOnly) writeFileSync(report, JSON.stringify(counts, null, 2));
process.exit(problems.length === 0 ? 0 : 1);
