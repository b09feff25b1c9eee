// The list flags of the bench scripts: `--period-ms 10,0` of bench:etcd-turns takes 0 (the closed
// loop), which the other list flags refuse; an empty item is an error, not a 0.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** intListFlag('--list', [7], 100, min) in a child whose argv carries `args`: its stdout and exit code. */
function listFlag(args: string[], min?: number) {
  const call = `intListFlag('--list', [7], 100${min === undefined ? '' : `, ${min}`})`;
  const code = `import('./bench/flags.ts').then((f) => console.log(JSON.stringify(f.${call})))`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '-e', code, '--', ...args], { cwd: root, encoding: 'utf8', timeout: 20_000 });
  return { status: run.status, stdout: run.stdout.trim(), stderr: run.stderr };
}

describe('intListFlag', () => {
  it('takes 0 when its minimum is 0, and returns the values ascending, each once', { timeout: 30_000 }, () => {
    expect(listFlag(['--list', '10,0,10'], 0)).toMatchObject({ status: 0, stdout: '[0,10]' });
  });

  it('refuses 0 and below its minimum with exit 2 and the range in the message', { timeout: 30_000 }, () => {
    const zero = listFlag(['--list', '0']);
    expect(zero.status).toBe(2);
    expect(zero.stderr).toContain('--list takes a comma-separated list of whole numbers from 1 to 100');
    const negative = listFlag(['--list', '-1'], 0);
    expect(negative.status).toBe(2);
    expect(negative.stderr).toContain('from 0 to 100');
  });

  it('refuses an empty item instead of reading it as 0', { timeout: 30_000 }, () => {
    expect(listFlag(['--list', '10,,0'], 0).status).toBe(2);
    expect(listFlag(['--list', ''], 0).status).toBe(2);
  });

  it('gives the fallback when the flag is absent', { timeout: 30_000 }, () => {
    expect(listFlag([], 0)).toMatchObject({ status: 0, stdout: '[7]' });
  });
});

describe('bench:etcd-turns flags', () => {
  it('a bad --period-ms exits 2 with a message before anything is started', { timeout: 30_000 }, () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'bench/etcd-turns.ts', '--period-ms', '10,x'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 25_000,
    });
    expect(run.status).toBe(2);
    expect(run.stderr).toContain('bench: --period-ms takes a comma-separated list of whole numbers from 0 to 10000');
  });
});
