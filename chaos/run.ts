// `npm run chaos -- [--seed N] [--duration 60s] [--allow-session-loss] [--counts FILE] [--coordination etcd [--etcd-lease-ttl 2]]`:
// one chaos run against a real three-node cluster on loopback (in etcd mode on a three-member etcd
// started for the run, with the etcd faults, and no fault window excused). Prints the seed, the faults, the counts and any violation; exits 0 when
// clean, 1 on a violation (or a run that could not complete), 2 on bad flags.
import { parseDurationFlag } from '../lib/duration-flag.ts';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Cluster } from '../server/testing/cluster-harness.ts';
import { runChaos } from './chaos-run.ts';
import { formatReport } from './report.ts';

function usage(message: string): never {
  console.error(
    `chaos: ${message}\nusage: npm run chaos -- [--seed N] [--duration 60s] [--allow-session-loss] [--counts FILE] [--coordination peers|etcd] [--etcd-lease-ttl S]   (N: a whole number 0..4294967295; duration 10s..1h; S: 1..30 whole seconds)`,
  );
  process.exit(2);
}

interface Args {
  seed: number;
  durationMs: number;
  /** Fail on a session claim lost to a planned handoff (SIGTERM, API handoff, priority return). */
  requireSessionCarryover: boolean;
  /** Where to write the counts as JSON, if anywhere. */
  countsFile: string | undefined;
  coordination: 'peers' | 'etcd';
  etcdLeaseTtlS: number;
}

function parseArgs(argv: string[]): Args {
  let seed: number | undefined;
  let durationMs = 60_000;
  // On by default since resumable sessions landed: a session claim lost to a planned handoff fails the run.
  let requireSessionCarryover = true;
  let countsFile: string | undefined;
  let coordination: 'peers' | 'etcd' = 'peers';
  let etcdLeaseTtlS = 2;
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = argv[i + 1];
    if (flag === '--seed') {
      if (value === undefined || !/^\d+$/.test(value) || Number(value) > 0xffffffff)
        usage(`--seed takes a whole number from 0 to 4294967295, not ${value ?? 'nothing'}`);
      seed = Number(value);
      i++;
    } else if (flag === '--duration') {
      const ms = value === undefined ? null : parseDurationFlag(value);
      if (ms === null || ms < 10_000 || ms > 3_600_000) usage(`--duration takes a duration from 10s to 1h (like 60s or 2m), not ${value ?? 'nothing'}`);
      durationMs = ms;
      i++;
    } else if (flag === '--require-session-carryover') {
      requireSessionCarryover = true;
    } else if (flag === '--allow-session-loss') {
      requireSessionCarryover = false;
    } else if (flag === '--counts') {
      if (value === undefined || value.startsWith('--')) usage('--counts takes a file name');
      countsFile = value;
      i++;
    } else if (flag === '--coordination') {
      if (value !== 'peers' && value !== 'etcd') usage(`--coordination takes peers or etcd, not ${value ?? 'nothing'}`);
      coordination = value;
      i++;
    } else if (flag === '--etcd-lease-ttl') {
      if (value === undefined || !/^\d+$/.test(value) || Number(value) < 1 || Number(value) > 30)
        usage(`--etcd-lease-ttl takes whole seconds from 1 to 30, not ${value ?? 'nothing'}`);
      etcdLeaseTtlS = Number(value);
      i++;
    } else {
      usage(`unknown argument ${flag}`);
    }
  }
  return { seed: seed ?? Math.floor(Math.random() * 0x100000000), durationMs, requireSessionCarryover, countsFile, coordination, etcdLeaseTtlS };
}

const { seed, durationMs, requireSessionCarryover, countsFile, coordination, etcdLeaseTtlS } = parseArgs(process.argv.slice(2));
const etcdMode = coordination === 'etcd';
const modeFlags = etcdMode ? ` --coordination etcd --etcd-lease-ttl ${etcdLeaseTtlS}` : '';
console.log(`chaos: seed ${seed}, duration ${durationMs / 1000}s${etcdMode ? `, etcd mode (lease TTL ${etcdLeaseTtlS} s)` : ''}`);
let cluster: Cluster | undefined;
// The nodes run in their own process groups: Ctrl-C reaches only us, so stop them ourselves.
for (const sig of ['SIGINT', 'SIGTERM'] as const) {
  process.once(sig, () => {
    console.error(`chaos: ${sig}, stopping the cluster and the clients (seed ${seed})`);
    void (cluster?.close() ?? Promise.resolve()).finally(() => process.exit(130));
  });
}
try {
  const result = await runChaos({
    seed,
    durationMs,
    requireSessionCarryover,
    coordination,
    etcdLeaseTtlS,
    log: (line) => console.log(`chaos: ${line}`),
    onCluster: (c) => (cluster = c),
  });
  console.log(
    formatReport(
      result,
      `npm run chaos -- --seed ${seed} --duration ${durationMs / 1000}s${requireSessionCarryover ? '' : ' --allow-session-loss'}${modeFlags}`,
    ),
  );
  if (countsFile !== undefined) {
    const { seed: s, verdict } = result;
    await writeFile(
      countsFile,
      `${JSON.stringify({ seed: s, durationMs, requireSessionCarryover, coordination, ...(etcdMode ? { etcdLeaseTtlS } : {}), applied: result.applied, violations: verdict.violations, counts: verdict.counts }, null, 2)}\n`,
    );
  }
  if (result.verdict.violations.length > 0 || result.unsettled.length > 0) {
    const dir = await mkdtemp(join(tmpdir(), `baton-chaos-${seed}-`));
    await writeFile(join(dir, 'history.json'), JSON.stringify(result.history));
    for (const [id, text] of Object.entries(result.nodeLogs)) await writeFile(join(dir, `node-${id}.log`), text);
    console.log(`node logs and the recorded history: ${dir}`);
  }
  // A run whose cluster did not settle after a fault did not complete its schedule: not a pass.
  process.exit(result.verdict.violations.length === 0 && result.unsettled.length === 0 ? 0 : 1);
} catch (error) {
  console.error(`chaos: the run failed (seed ${seed}): ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  process.exit(1);
}
