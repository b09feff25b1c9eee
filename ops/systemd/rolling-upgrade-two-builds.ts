// The rolling upgrade of rolling-upgrade.test.ts between two builds, run by hand:
//
//   node --import tsx ops/systemd/rolling-upgrade-two-builds.ts [old-commit]   (default main~30)
//
// The old build is `git archive <old-commit>` unpacked into a temp dir with a node_modules symlink
// to this checkout's (bin/baton runs from source through tsx, so that is a whole build). The
// cluster starts on the old build; each node in turn (standbys first, the active after a
// handoff) is stopped and started on this checkout's bin/baton, while clients hold claims and
// churn. Not in `npm test`: CI's checkout need not carry the git history to archive from. Prints
// the steps and the figures, and exits 1 when a claim was lost, a token did not increase or the run
// could not complete. Results so far: docs/operations.md, "Upgrading one node at a time".
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startCluster, waitSettled } from '../../server/testing/cluster-harness.ts';
import { BATON_BIN } from '../../server/testing/serve-args.ts';
import { churn, claimsMissing, holdClaims, notIncreasing, rollingUpgrade } from './rolling-upgrade.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const from = process.argv[2] ?? 'main~30';

function git(...args: string[]): string {
  return execFileSync('git', ['-C', ROOT, ...args], { encoding: 'utf8' }).trim();
}

const commit = git('rev-parse', '--verify', `${from}^{commit}`);
const oldDir = mkdtempSync(join(tmpdir(), 'baton-old-build-'));
execFileSync('sh', ['-c', `git -C "${ROOT}" archive "${commit}" | tar -x -C "${oldDir}"`]);
symlinkSync(join(ROOT, 'node_modules'), join(oldDir, 'node_modules'));
const oldBin = join(oldDir, 'bin/baton');
const deps = (dir: string) => JSON.stringify(JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).dependencies);
console.log(`old build: ${git('log', '-1', '--format=%h %ad %s', '--date=iso', commit).slice(0, 120)}`);
console.log(`new build: ${git('log', '-1', '--format=%h %ad %s', '--date=iso', 'HEAD').slice(0, 120)} (+ this work tree)`);
if (deps(oldDir) !== deps(ROOT)) console.log('note: the old build names other dependencies; it runs on this checkout’s node_modules');

// No --return-hold-down (older builds lack it): the role returns to a after the default 10 s.
const cluster = await startCluster({ start: [] });
let verdict = 'OK: no claim lost, tokens only increased';
try {
  for (const node of cluster.nodes) node.switchBuild(oldBin);
  const [first, ...rest] = cluster.nodes;
  await first?.start();
  await Promise.all(rest.map((n) => n.start()));
  await waitSettled(cluster, 'a', 10_000);
  const held = await holdClaims(cluster);
  const load = churn(cluster);
  const startedAt = performance.now();
  const steps = await rollingUpgrade(cluster, held, ['c', 'b', 'a'], (node) => node.switchBuild(BATON_BIN));
  await new Promise((resolve) => setTimeout(resolve, 500));
  await load.stop();
  for (const s of steps)
    console.log(`  ${s.node}${s.wasActive ? ' (active)' : ''}: ${s.log}; claims missing: ${s.missing.length === 0 ? 'none' : s.missing.join(', ')}`);
  const missing = await claimsMissing(cluster.node('a'), held);
  const aborted = held.sessions.filter((s) => s.signal.aborted).length;
  const badKeyed = notIncreasing(load.keyedTokens);
  const badSession = notIncreasing(load.sessionTokens);
  const all = [...held.keyed.map((g) => g.token), ...held.sessions.map((s) => s.token), ...load.keyedTokens, ...load.sessionTokens];
  const duplicates = all.length - new Set(all).size;
  console.log(`upgrade took ${Math.round(performance.now() - startedAt)} ms; held ${held.keyed.length} keyed + ${held.sessions.length} session claims`);
  console.log(`churn: ${load.keyedTokens.length} keyed and ${load.sessionTokens.length} session grants, ${load.errors.length} failed attempts (retried)`);
  for (const e of [...new Set(load.errors)].slice(0, 5)) console.log(`  failed attempt: ${e}`);
  console.log(
    `end: claims missing on a ${missing.length}, sessions aborted ${aborted}, tokens not increasing ${badKeyed.length + badSession.length}, duplicates ${duplicates}`,
  );
  if (steps.some((s) => s.missing.length > 0) || missing.length > 0 || aborted > 0 || badKeyed.length + badSession.length > 0 || duplicates > 0) {
    verdict = 'FAILED: a claim was lost or a token did not increase';
  }
} catch (error) {
  verdict = `FAILED: the upgrade did not complete (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`;
  console.error(error);
  console.error(cluster.dumpLogs(30));
} finally {
  await cluster.close();
  rmSync(oldDir, { recursive: true, force: true });
}
console.log(verdict);
process.exit(verdict.startsWith('OK') ? 0 : 1);
