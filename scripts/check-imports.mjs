#!/usr/bin/env node
// The import rules of docs/architecture.md that Biome cannot say. Biome's noImportCycles sees
// module cycles, and noRestrictedImports matches specifiers as text; neither sees folders, nor
// tells `import type` from a value import. This script fails (naming the file, the import and the
// rule) on:
//   - an import from one part to another that the part's `may` list below does not name (the
//     parts and their directions are the table and the picture of docs/architecture.md);
//   - a folder-level import cycle anywhere in lib/, server/, app/ and components/ (two folders
//     that import each other, however far round): a folder must be readable without those above it;
//   - lib/engine importing lib/tokens other than with `import type` / `export type`;
//   - a source folder that is in no part (a new folder gets a row here and in the docs);
//   - a pending exemption (below) that nothing needs any more.
// Tests and testing/ helpers are exempt (they start real daemons). Pure Node, no dependencies:
// the specifiers are found with a regex and resolved relative to the importing file.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const LIB = ['lib', 'lib/protocol', 'lib/engine', 'lib/tokens', 'lib/ops-api', 'lib/cluster', 'lib/coordination', 'lib/client', 'lib/dashboard'];
/** The server folders behind the ops API, bottom first. */
const CONSOLE = [
  'server/lock-views',
  'server/console-auth',
  'server/audit',
  'server/chart-history',
  'server/live-feed',
  'server/admin-ops',
  'server/ops-facade',
];
const lib = (...folders) => folders.map((f) => (f === '' ? 'lib' : `lib/${f}`));

/**
 * Each part: the folder it is, and the parts outside itself it may import. `nested`: its
 * subfolders are the same part (app's routes, the dashboard's components); otherwise each source
 * folder must be a part of its own. `typesOnly`: parts it may import only with `import type`.
 * `valueFiles`: single files of such a part it may import values from.
 */
export const PARTS = [
  // lib/: pure, shared. The engine at the bottom, the ops contract at the bottom of the console side.
  { part: 'lib', may: [] },
  { part: 'lib/protocol', may: lib('') },
  // The engine takes the token contract's values (the u64 top, TokensUnavailable) and the rest of lib/tokens as types.
  { part: 'lib/engine', may: [], typesOnly: lib('tokens'), valueFiles: ['lib/tokens/token-contract.ts'] },
  { part: 'lib/tokens', may: lib('', 'protocol') },
  { part: 'lib/ops-api', may: lib('', 'protocol'), typesOnly: lib('engine') },
  { part: 'lib/cluster', may: lib('', 'protocol', 'tokens', 'ops-api') },
  // The partition-safe mode's pure rules (issue 32): the grant permission and token-block compare-and-swap.
  { part: 'lib/coordination', may: lib('', 'tokens') },
  { part: 'lib/client', may: lib('', 'protocol') },
  { part: 'lib/dashboard', may: lib('', 'ops-api') },
  // server/: engine <- protocol <- lines <- daemon; the console's folders below the facade's assembly.
  { part: 'server/lines', may: lib('', 'protocol', 'engine', 'tokens') },
  { part: 'server/lock-views', may: lib('', 'engine', 'ops-api') },
  { part: 'server/console-auth', may: lib('', 'ops-api') },
  { part: 'server/audit', may: lib('', 'ops-api', 'cluster') },
  { part: 'server/chart-history', may: [...lib('', 'engine', 'ops-api'), 'server/lock-views'] },
  { part: 'server/live-feed', may: [...lib('', 'engine', 'ops-api'), 'server/lock-views', 'server/chart-history', 'server/console-auth'] },
  { part: 'server/admin-ops', may: [...lib('', 'engine', 'ops-api'), 'server/lock-views'] },
  { part: 'server/ops-facade', may: [...lib('', 'engine', 'ops-api'), ...CONSOLE.filter((f) => f !== 'server/ops-facade')] },
  // The ops API's handlers reach the daemon only through the contract (lib/ops-api).
  { part: 'server/api-handlers', may: lib('', 'ops-api') },
  {
    part: 'server/http',
    may: [...LIB.filter((f) => f !== 'lib/client' && f !== 'lib/dashboard'), 'server/api-handlers', 'server/console-auth', 'server/lines'],
  },
  // The etcd mode's side of etcd over the etcd3 client: the role lease, token blocks, the node's
  // coordination (its options from lib/cluster, its view in lib/ops-api's shape).
  { part: 'server/coordination', may: lib('', 'coordination', 'cluster', 'ops-api') },
  {
    part: 'server/cluster',
    may: [...LIB.filter((f) => f !== 'lib/client' && f !== 'lib/dashboard'), 'server/lines', 'server/admin-ops', 'server/coordination'],
  },
  {
    part: 'server/daemon',
    may: [
      ...LIB.filter((f) => f !== 'lib/client' && f !== 'lib/dashboard'),
      'server/lines',
      'server/http',
      'server/cluster',
      'server/coordination',
      ...CONSOLE,
    ],
  },
  // The conformance kit's server plays scripted bytes: it needs only the shared vocabulary.
  { part: 'server/conformance', may: lib('') },
  { part: 'server/cli', may: [...LIB.filter((f) => f !== 'lib/dashboard'), 'server/daemon', 'server/conformance'] },
  // The Next app: route files reach server/ only through the handlers (biome.jsonc lists which).
  { part: 'app', nested: true, may: ['server/api-handlers', 'components', 'lib/ops-api', 'lib/dashboard'] },
  { part: 'components', nested: true, may: lib('', 'ops-api', 'dashboard') },
];

/**
 * Imports that break the rules today and that another change of issue 27 removes; each names
 * who. Listed here so the rest is checked now; one that nothing needs any more fails the check,
 * so the exemption goes when its import does.
 */
export const PENDING = [];

const SOURCE_ROOTS = ['lib', 'server', 'app', 'components'];

function isTestCode(path) {
  return /\.(test|spec)\.(tsx?|mjs)$/.test(path) || path.split('/').includes('testing');
}

function sourceFiles(root, dir) {
  const out = [];
  let entries;
  try {
    entries = readdirSync(join(root, dir), { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(root, path));
    else if (/\.(ts|tsx|mts|cts|js|mjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts') && !isTestCode(path)) out.push(path);
  }
  return out;
}

/** Lines of `//` comments and of block comments (` * …`) cannot hold an import; blank them, keeping line numbers. */
function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/^\s*\/\/.*$/gm, '');
}

/** Every module specifier in `text`, with its line and whether the compiler erases it (`import type`, `export type`). */
export function importsOf(text) {
  const found = [];
  const lineOf = (index) => text.slice(0, index).split('\n').length;
  // import x from '…', import { a, type b } from '…', import type { T } from '…', export { a } from '…', export * from '…'
  const fromClause = /(?:^|[;}\n])\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*(['"])([^'"\n]+)\4/g;
  for (const m of text.matchAll(fromClause)) {
    // `import type from 'x'` is a default import named "type"; `import type X from 'x'` is type-only.
    const typeOnly = m[2] !== undefined && (m[3] ?? '').trim() !== '';
    found.push({ specifier: m[5], line: lineOf(m.index + m[0].indexOf(m[1])), typeOnly });
  }
  // import '…' (side effects only)
  for (const m of text.matchAll(/(?:^|[;}\n])\s*import\s*(['"])([^'"\n]+)\1/g)) {
    found.push({ specifier: m[2], line: lineOf(m.index + m[0].indexOf('import')), typeOnly: false });
  }
  // import('…') and require('…'): loaded at run time
  for (const m of text.matchAll(/\b(import|require)\s*\(\s*(['"])([^'"\n]+)\2\s*\)/g)) {
    found.push({ specifier: m[3], line: lineOf(m.index), typeOnly: false });
  }
  return found;
}

/** Where a specifier points, relative to the root ("lib/tokens/token-source.ts"); null for a package ("zod", "node:fs"). */
function target(root, file, specifier) {
  if (specifier.startsWith('@/')) return specifier.slice(2);
  if (!specifier.startsWith('.')) return null;
  return relative(root, resolve(root, dirname(file), specifier))
    .split(sep)
    .join('/');
}

/** The part a folder belongs to, or null when it is in none. */
function partOf(folder) {
  let best = null;
  for (const p of PARTS) {
    const inside = folder === p.part || (p.nested === true && folder.startsWith(`${p.part}/`));
    if (inside && (best === null || p.part.length > best.part.length)) best = p;
  }
  return best;
}

const pendingKey = (from, to) => `${from} -> ${to}`;

/** Folder cycles (strongly connected sets of two or more folders), each as a sorted list. */
function cyclesOf(edges) {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const out = [];
  let next = 0;
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) !== index.get(v)) return;
    const set = [];
    for (let w = stack.pop(); ; w = stack.pop()) {
      onStack.delete(w);
      set.push(w);
      if (w === v) break;
    }
    if (set.length > 1) out.push(set.sort());
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  return out;
}

/**
 * Checks the tree under `root` (the repository, or a fixture of it in a test). `pending`: the
 * exemptions to apply (the list above by default). Returns the files checked and the failures.
 */
export function checkImports(root, pending = PENDING) {
  const failures = [];
  const files = SOURCE_ROOTS.flatMap((dir) => sourceFiles(root, dir));
  const pendingUsed = new Set();
  const isPending = (from, to) => pending.some((p) => p.from === from && p.to === to);
  const edges = new Map();
  const unplaced = new Set();
  for (const file of files) {
    const from = posix.dirname(file);
    const fromPart = partOf(from);
    if (fromPart === null) unplaced.add(from);
    for (const { specifier, line, typeOnly } of importsOf(withoutComments(readFileSync(join(root, file), 'utf8')))) {
      const to = target(root, file, specifier);
      if (to === null || !SOURCE_ROOTS.some((r) => to === r || to.startsWith(`${r}/`))) continue;
      const toFolder = posix.dirname(to);
      if (toFolder === from) continue;
      if (isPending(from, toFolder)) {
        pendingUsed.add(pendingKey(from, toFolder));
        continue;
      }
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from).add(toFolder);
      const toPart = partOf(toFolder);
      if (fromPart === null || toPart === null || toPart === fromPart) continue;
      if (fromPart.may.includes(toPart.part)) continue;
      if (fromPart.valueFiles?.includes(to)) continue;
      const how = typeOnly ? 'type import' : 'value import';
      if (typeOnly && fromPart.typesOnly?.includes(toPart.part)) continue;
      const allowed = [...fromPart.may, ...(fromPart.typesOnly ?? []).map((t) => `${t} (types only)`)];
      failures.push(`${file}:${line}: ${how} '${specifier}' (${to}): ${fromPart.part} may import only ${allowed.join(', ') || 'itself'}`);
    }
  }
  for (const folder of [...unplaced].sort()) {
    failures.push(`${folder}: a source folder in no part of the import rules (add it to PARTS in scripts/check-imports.mjs and to docs/architecture.md)`);
  }
  for (const cycle of cyclesOf(edges)) failures.push(`folder import cycle: ${cycle.join(' <-> ')} (each of these folders imports, through the others, itself)`);
  for (const p of pending) {
    if (!pendingUsed.has(pendingKey(p.from, p.to)))
      failures.push(`pending exemption ${p.from} -> ${p.to} is no longer needed: remove it from PENDING (${p.why})`);
  }
  return { checked: files.length, failures };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  const { checked, failures } = checkImports(root);
  if (failures.length > 0) {
    for (const f of failures) console.error(`check-imports: ${f}`);
    console.error(`check-imports: ${failures.length} broken import rule(s) in ${checked} files`);
    process.exit(1);
  }
  console.log(`check-imports: ${checked} files follow the import rules, no folder cycles`);
}
