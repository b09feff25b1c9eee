#!/usr/bin/env node
// `npm test`'s part for the Python and Go clients (clients/python, clients/go): installs what is
// missing from Debian the way ensure-chromium.sh does (golang-go; python3-pytest when no python3
// on PATH has pytest), runs pytest and `go test` (vet first), prints their output, and writes
// their counts to node_modules/.cache/baton-clients-report.json for .ci/test-summary.cjs.
// Exits non-zero when a suite failed, ran no test, or could not run.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const cache = join(root, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const junit = join(cache, 'baton-pytest.xml');
const goJson = join(cache, 'baton-go-test.json');
const report = join(cache, 'baton-clients-report.json');
rmSync(report, { force: true });

const ok = (cmd, args) => spawnSync(cmd, args, { stdio: 'ignore' }).status === 0;

function aptInstall(packages) {
  if (process.getuid?.() !== 0) {
    console.error(`missing ${packages.join(' ')}: run 'apt-get install -y ${packages.join(' ')}' as root`);
    process.exit(1);
  }
  console.error(`installing Debian's ${packages.join(' ')} for the client tests...`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [
    ['update', '-qq'],
    ['install', '-y', '-qq', ...packages],
  ]) {
    const r = spawnSync('apt-get', args, { stdio: ['ignore', 'ignore', 'inherit'], env });
    if (r.status !== 0) {
      console.error(`apt-get ${args.join(' ')} failed (${r.status})`);
      process.exit(1);
    }
  }
}

// Python: any python3 with pytest will do (the client needs only the standard library);
// otherwise Debian's python3 with python3-pytest.
let python = ['python3', '/usr/bin/python3'].find((p) => ok(p, ['-m', 'pytest', '--version']));
if (python === undefined) {
  aptInstall(['python3-pytest']);
  python = '/usr/bin/python3';
}
if (!ok('go', ['version'])) aptInstall(['golang-go']);

const counts = { passed: 0, failed: 0, skipped: 0, suites: {} };
let status = 0;

// --- Python ---------------------------------------------------------------------------------
rmSync(junit, { force: true });
const py = spawnSync(python, ['-m', 'pytest', 'clients/python', '-q', '-p', 'no:cacheprovider', `--junitxml=${junit}`], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
});
let pyCounts = { passed: 0, failed: 1, skipped: 0 };
try {
  const xml = readFileSync(junit, 'utf8');
  const suite = /<testsuite\b[^>]*>/.exec(xml)?.[0] ?? '';
  const attr = (name) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(suite)?.[1] ?? 0);
  const failed = attr('failures') + attr('errors');
  pyCounts = { passed: attr('tests') - failed - attr('skipped'), failed, skipped: attr('skipped') };
} catch {
  console.error('pytest wrote no report: counted as one failure');
}
// pytest exits 5 when it collected nothing: a suite that ran no test is a failure here too.
if (py.status !== 0 || pyCounts.passed === 0) status = 1;
counts.suites.python = pyCounts;

// --- Go -------------------------------------------------------------------------------------
const goEnv = { ...process.env, GOPROXY: 'off', GOFLAGS: '-mod=mod', GOTELEMETRY: 'off' };
const goDir = join(root, 'clients', 'go');
const vet = spawnSync('go', ['vet', './...'], { cwd: goDir, stdio: 'inherit', env: goEnv });
const gofmt = spawnSync('gofmt', ['-l', '.'], { cwd: goDir, encoding: 'utf8', env: goEnv });
if (vet.status !== 0) status = 1;
const vetFailures = (vet.status === 0 ? 0 : 1) + (gofmt.stdout.trim() === '' ? 0 : 1);
if (gofmt.stdout.trim() !== '') {
  console.error(`gofmt: not formatted:\n${gofmt.stdout}`);
  status = 1;
}
const go = spawnSync('go', ['test', '-count=1', '-json', './...'], { cwd: goDir, encoding: 'utf8', env: goEnv, maxBuffer: 256 * 1024 * 1024 });
writeFileSync(goJson, go.stdout ?? '');
if (go.stderr) process.stderr.write(go.stderr);
const goCounts = { passed: 0, failed: vetFailures, skipped: 0 };
const output = new Map();
const packagesWithFailedTests = new Set();
for (const line of (go.stdout ?? '').split('\n')) {
  if (!line.startsWith('{')) continue;
  const event = JSON.parse(line);
  const id = `${event.Package} ${event.Test ?? ''}`;
  if (event.Action === 'output') output.set(id, (output.get(id) ?? '') + event.Output);
  if (event.Test === undefined) {
    // A package that failed to build or whose test binary died has no failed test of its own.
    if (event.Action === 'fail' && !packagesWithFailedTests.has(event.Package)) {
      goCounts.failed++;
      process.stderr.write(`--- FAIL package ${event.Package}\n${output.get(id) ?? ''}\n`);
    }
    continue;
  }
  if (event.Action === 'pass') goCounts.passed++;
  if (event.Action === 'skip') goCounts.skipped++;
  if (event.Action === 'fail') {
    goCounts.failed++;
    packagesWithFailedTests.add(event.Package);
    process.stderr.write(`--- FAIL ${id}\n${output.get(id) ?? ''}\n`);
  }
}
process.stdout.write(`go test: ${goCounts.passed} passed, ${goCounts.failed} failed, ${goCounts.skipped} skipped\n`);
if (go.status !== 0 || goCounts.passed === 0) status = 1;
if (go.status !== 0 && goCounts.failed === vetFailures) {
  process.stderr.write(`${go.stdout}\n`);
  goCounts.failed += 1;
}
counts.suites.go = goCounts;

for (const [name, suite] of Object.entries(counts.suites)) {
  if (suite.passed === 0 && suite.failed === 0) {
    console.error(`${name}: ran no test, counted as one failure`);
    suite.failed = 1;
  }
}
for (const suite of [pyCounts, goCounts]) {
  counts.passed += suite.passed;
  counts.failed += suite.failed;
  counts.skipped += suite.skipped;
}
writeFileSync(report, JSON.stringify(counts));
process.exit(status);
