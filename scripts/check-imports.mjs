#!/usr/bin/env node
// The import rule that Biome's noRestrictedImports cannot say (it matches specifiers as text and
// cannot tell `import type` from a value import): the lock engine imports only itself, the token
// contract (lib/tokens/token-contract.ts: the u64 top and TokensUnavailable) and the rest of
// lib/tokens for types; lib/tokens, below it, imports nothing of the engine. The other import rules (cycles, lib/, components/, app/) are in biome.jsonc.
// Pure Node, no dependencies: finds the specifiers with a regex, resolves relative ones and
// fails naming the file, the import and the rule. Tests and testing/ helpers are exempt.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const RULES = [
  {
    name: 'lib/engine/** imports only lib/engine/**, lib/tokens/token-contract.ts, and the rest of lib/tokens/** with `import type` / `export type`',
    files: 'lib/engine',
    allows: (target, typeOnly) =>
      target.startsWith('lib/engine/') || target === 'lib/tokens/token-contract.ts' || (typeOnly && target.startsWith('lib/tokens/')),
  },
  {
    name: 'lib/tokens/** imports nothing of lib/engine/** (the engine sits above the tokens)',
    files: 'lib/tokens',
    allows: (target) => !target.startsWith('lib/engine/'),
  },
];

function isTestCode(path) {
  return /\.(test|spec)\.tsx?$/.test(path) || path.split('/').includes('testing');
}

function sourceFiles(dir) {
  const out = [];
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = posix.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|tsx|mts|cts|js|mjs)$/.test(entry.name) && !isTestCode(path)) out.push(path);
  }
  return out;
}

/** Lines of `//` comments and of block comments (` * …`) cannot hold an import; blank them, keeping line numbers. */
function withoutComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, (c) => c.replace(/[^\n]/g, ' ')).replace(/^\s*\/\/.*$/gm, '');
}

/** Every module specifier in `text`, with its line and whether the compiler erases it (`import type`, `export type`). */
function importsOf(text) {
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

/** Where a specifier points, relative to the repository root ("lib/tokens/token-source.ts"); bare ones stay as written. */
function target(file, specifier) {
  if (specifier.startsWith('@/')) return specifier.slice(2);
  if (!specifier.startsWith('.')) return specifier;
  return relative(ROOT, resolve(ROOT, dirname(file), specifier))
    .split(sep)
    .join('/');
}

let checked = 0;
const failures = [];
for (const rule of RULES) {
  const files = sourceFiles(rule.files);
  if (files.length === 0) failures.push(`${rule.files}: no source files found; the rule "${rule.name}" checks nothing (moved?)`);
  for (const file of files) {
    checked++;
    for (const { specifier, line, typeOnly } of importsOf(withoutComments(readFileSync(join(ROOT, file), 'utf8')))) {
      const to = target(file, specifier);
      if (rule.allows(to, typeOnly)) continue;
      const how = typeOnly ? 'type import' : 'value import';
      failures.push(`${file}:${line}: ${how} '${specifier}' (${to}) breaks the rule: ${rule.name}`);
    }
  }
}

if (failures.length > 0) {
  for (const f of failures) console.error(`check-imports: ${f}`);
  console.error(`check-imports: ${failures.length} forbidden import(s) in ${checked} files`);
  process.exit(1);
}
console.log(`check-imports: ${checked} files follow the import rules`);
