// `--help` on the scripts `npm run bench*` runs prints the script's usage and exits 0 before it
// starts anything (it used to be ignored, and the whole benchmark ran: Redis, etcd, daemons).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

describe('bench scripts answer --help', () => {
  for (const [script, usage] of [
    ['bench/run.ts', 'Usage: npm run bench'],
    ['bench/etcd-mode.ts', 'npm run bench:etcd-mode'],
    ['bench/etcd-turns.ts', 'npm run bench:etcd-turns'],
    ['bench/join-trace.ts', '--no-churn'],
    ['bench/cluster-cost.ts', 'npm run bench:cluster'],
  ] as const) {
    it(`${script} prints its usage and exits 0 without starting a benchmark`, { timeout: 30_000 }, () => {
      const run = spawnSync(process.execPath, ['--import', 'tsx', script, '--help'], { cwd: root, encoding: 'utf8', timeout: 25_000 });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toContain(usage);
      expect(run.stdout.startsWith('//'), 'the comment markers are stripped').toBe(false);
      expect(run.stderr, 'nothing was started').not.toMatch(/bench: |starting|warm-up/);
    });
  }
});
