#!/usr/bin/env node
// Builds the operator console (next build) when there is no build yet or a source file is
// newer than it, so `npm start` on a fresh clone just works and a warm start skips the ~20 s.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const stamp = join(root, '.next', 'BUILD_ID');
const sources = ['app', 'components', 'lib', 'server', 'public', 'next.config.mjs', 'postcss.config.mjs', 'tsconfig.app.json', 'package-lock.json'];

function newest(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  let max = st.mtimeMs;
  for (const entry of readdirSync(path)) max = Math.max(max, newest(join(path, entry)));
  return max;
}

const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
const changed = Math.max(...sources.map((s) => newest(join(root, s))));
if (built > 0 && changed <= built) {
  // stderr: stdout belongs to `baton serve` (its first line says where it serves).
  process.stderr.write('console build is up to date\n');
} else {
  process.stderr.write(built === 0 ? 'building the operator console (first start)...\n' : 'sources changed: rebuilding the operator console...\n');
  execFileSync(process.execPath, [join(root, 'node_modules', 'next', 'dist', 'bin', 'next'), 'build'], {
    cwd: root,
    stdio: ['ignore', 2, 2],
    env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
  });
}
