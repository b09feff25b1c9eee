// promtool for tests: `check metrics` on a /metrics text (server/http/*), `check rules` and
// `test rules` on the alert rules (ops/prometheus/). promtool comes from PATH or from
// node_modules/.cache/promtool (scripts/ensure-promtool.sh puts it there); without it the tests
// fail rather than skip, so a regression cannot pass unnoticed.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const CACHED = fileURLToPath(new URL('../../node_modules/.cache/promtool/promtool', import.meta.url));

export function findPromtool(): string {
  if (spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0) return 'promtool';
  if (existsSync(CACHED)) return CACHED;
  throw new Error(
    "promtool is missing: run scripts/ensure-promtool.sh (it unpacks promtool from Debian's prometheus package into node_modules/.cache/promtool/)",
  );
}

export interface PromtoolResult {
  code: number | null;
  /** stdout and stderr together, in the order they came. */
  output: string;
}

/** Runs promtool with `args`, `stdin` written to it (if given), in `cwd` (if given). */
export function runPromtool(args: string[], options: { stdin?: string; cwd?: string } = {}): Promise<PromtoolResult> {
  const child = spawn(findPromtool(), args, { stdio: ['pipe', 'pipe', 'pipe'], cwd: options.cwd });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  child.stdin.end(options.stdin ?? '');
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** `promtool check metrics` on a text exposition: code 0 and no output when it is clean. */
export function promtoolCheckMetrics(text: string): Promise<PromtoolResult> {
  return runPromtool(['check', 'metrics'], { stdin: text });
}
