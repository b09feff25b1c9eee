// promtool for tests: `check metrics` on a /metrics text (server/http/*), `check rules` and
// `test rules` on the alert rules (ops/prometheus/). scripts/ensure-promtool.sh finds it on PATH
// or unpacks it from Debian's prometheus package into node_modules/.cache/promtool/ (as `npm test`
// does before Vitest) and prints its path; when it cannot, the tests fail rather than skip, so a
// regression cannot pass unnoticed.
import { execFileSync, spawn } from 'node:child_process';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
let found: string | null = null;

export function findPromtool(): string {
  if (found !== null) return found;
  let out: string;
  try {
    out = execFileSync('sh', ['scripts/ensure-promtool.sh'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    throw new Error(`promtool is missing and scripts/ensure-promtool.sh could not unpack it: ${String(error)}`);
  }
  const path = out.trim().split('\n').pop() ?? '';
  // A bare name (found on PATH) stays as it is; the cached copy is relative to the repository.
  found = path.includes('/') && !isAbsolute(path) ? resolve(ROOT, path) : path;
  return found;
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
