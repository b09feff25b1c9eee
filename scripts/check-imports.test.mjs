// The import check run over small fixture trees: each rule fails when its import is added, and
// the repository itself passes.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { checkImports } from './check-imports.mjs';

const roots = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

/** A tree of `files` (path -> source) in a temp dir. */
function tree(files) {
  const root = mkdtempSync(join(tmpdir(), 'check-imports-'));
  roots.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** A small tree that follows the rules: the contract, a view, the hub, a handler, the engine. */
const base = {
  'lib/errors.ts': 'export const ERRORS = {};\n',
  'lib/tokens/token-source.ts': 'export const MAX = 1n;\n',
  'lib/engine/lock-engine.ts': "import type { MAX } from '../tokens/token-source.ts';\nexport class LockEngine {}\n",
  'lib/ops-api/daemon-facade.ts': "import { ERRORS } from '../errors.ts';\nexport interface DaemonFacade {}\n",
  'server/lock-views/lock-views.ts': "import type { LockEngine } from '../../lib/engine/lock-engine.ts';\nexport const view = 1;\n",
  'server/live-feed/event-hub.ts': "import { view } from '../lock-views/lock-views.ts';\nexport const hub = view;\n",
  'server/api-handlers/overview.ts': "import type { DaemonFacade } from '../../lib/ops-api/daemon-facade.ts';\nexport const overview = 1;\n",
};

describe('check-imports', () => {
  it('passes a tree that follows the rules', () => {
    expect(checkImports(tree(base), [])).toEqual({ checked: 7, failures: [] });
  });

  it('fails on a folder cycle, type imports included, naming its folders', () => {
    const root = tree({ ...base, 'server/lock-views/feed-hook.ts': "import type { hub } from '../live-feed/event-hub.ts';\nexport type H = typeof hub;\n" });
    const { failures } = checkImports(root, []);
    expect(failures).toContain('folder import cycle: server/live-feed <-> server/lock-views (each of these folders imports, through the others, itself)');
  });

  it('fails on an import against the direction of the parts, naming the file, the line and what the part may import', () => {
    const root = tree({ ...base, 'server/api-handlers/events-route.ts': "import { z } from 'zod';\nimport { hub } from '../live-feed/event-hub.ts';\n" });
    const { failures } = checkImports(root, []);
    expect(failures).toEqual([
      "server/api-handlers/events-route.ts:2: value import '../live-feed/event-hub.ts' (server/live-feed/event-hub.ts): server/api-handlers may import only lib, lib/ops-api",
    ]);
  });

  it('fails when the contract imports the server', () => {
    const root = tree({ ...base, 'lib/ops-api/feed-limits.ts': "export { hub } from '../../server/live-feed/event-hub.ts';\n" });
    expect(checkImports(root, []).failures).toHaveLength(1);
    expect(checkImports(root, []).failures[0]).toMatch(/^lib\/ops-api\/feed-limits\.ts:1: value import .*lib\/ops-api may import only/);
  });

  it('lets the engine import lib/tokens for types only', () => {
    const root = tree({ ...base, 'lib/engine/grant-gate.ts': "import { MAX } from '../tokens/token-source.ts';\n" });
    expect(checkImports(root, []).failures).toEqual([
      "lib/engine/grant-gate.ts:1: value import '../tokens/token-source.ts' (lib/tokens/token-source.ts): lib/engine may import only lib/tokens (types only)",
    ]);
  });

  it('lets the engine take values from the token contract only, and lib/tokens nothing of the engine', () => {
    const ok = tree({
      ...base,
      'lib/tokens/token-contract.ts': 'export const MAX_TOKEN = 1n;\n',
      'lib/engine/grant-gate.ts': "import { MAX_TOKEN } from '../tokens/token-contract.ts';\n",
    });
    expect(checkImports(ok, []).failures).toEqual([]);
    const up = tree({ ...base, 'lib/tokens/token-slots.ts': "import { LockEngine } from '../engine/lock-engine.ts';\n" });
    expect(checkImports(up, []).failures.some((f) => f.startsWith("lib/tokens/token-slots.ts:1: value import '../engine/lock-engine.ts'"))).toBe(true);
  });

  it('fails on a source folder that is in no part, and ignores tests and testing/ helpers', () => {
    const root = tree({
      ...base,
      'server/grant-retry/retry.ts': 'export const retry = 1;\n',
      'server/lock-views/lock-views.test.ts': "import { hub } from '../live-feed/event-hub.ts';\n",
      'server/lock-views/testing/fixture.ts': "import { hub } from '../../live-feed/event-hub.ts';\n",
    });
    expect(checkImports(root, []).failures).toEqual([
      'server/grant-retry: a source folder in no part of the import rules (add it to PARTS in scripts/check-imports.mjs and to docs/architecture.md)',
    ]);
  });

  it('applies a pending exemption while its import exists, and fails once nothing needs it', () => {
    const pending = [{ from: 'lib/tokens', to: 'lib/engine', why: 'tokens own their limits' }];
    const root = tree({ ...base, 'lib/tokens/token-slots.ts': "import { LockEngine } from '../engine/lock-engine.ts';\n" });
    expect(checkImports(root, pending).failures).toEqual([]);
    expect(checkImports(tree(base), pending).failures).toEqual([
      'pending exemption lib/tokens -> lib/engine is no longer needed: remove it from PENDING (tokens own their limits)',
    ]);
  });

  it('passes the repository itself', () => {
    const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
    expect(checkImports(repo).failures).toEqual([]);
  });
});
