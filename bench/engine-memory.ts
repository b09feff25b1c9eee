// The engine alone, no sockets: heap bytes per held keyed lock, per waiter and per resumable
// session claim, at a size given on the command line (issue 29: Redis holds a keyed lock in about
// 153 B, name and table entry included). Each figure is the growth of the heap and of the memory
// outside it (typed arrays' backing stores) after full collections, divided by the count; the strings a client sends (lock names, claim-key hashes) are made
// before the first reading and reported on their own line, since the daemon has them anyway
// (parsed from the socket) and the engine keeps them by reference.
//
// Before measuring, a scratch engine runs every kind of claim once (waiters, releases, sliding
// and resumable session claims, named clients), so V8's object shapes are in the state a running
// daemon has them (a field that once held a fraction stays boxed for every later object).
//
// Usage: node --expose-gc --import tsx bench/engine-memory.ts [count=1000000] [--breakdown] [--root DIR]
//   --breakdown  per-constructor split of the held-locks figure from two heap snapshots (at most
//                200,000 locks: a snapshot of a bigger heap takes minutes)
//   --root DIR   measure the engine of another checkout (e.g. /work/main) for a before/after
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import type { ClaimOwner } from '../lib/engine/claim.ts';
import type { LockEngine } from '../lib/engine/lock-engine.ts';
import type { BlockTokenSource, MemoryCeilingStore } from '../lib/tokens/token-source.ts';

type EngineModule = { LockEngine: typeof LockEngine };
type TokenModule = { BlockTokenSource: typeof BlockTokenSource; MemoryCeilingStore: typeof MemoryCeilingStore };

const args = process.argv.slice(2);
const count = Number(args.find((a) => /^\d+$/.test(a)) ?? 1_000_000);
const breakdown = args.includes('--breakdown');
const rootAt = args.indexOf('--root');
const root = rootAt >= 0 ? path.resolve(args[rootAt + 1] ?? '.') : path.resolve(import.meta.dirname, '..');
const gcFn = (globalThis as { gc?: () => void }).gc;
if (gcFn === undefined) throw new Error('run with node --expose-gc');
const gc: () => void = gcFn;

const { LockEngine: Engine } = (await import(path.join(root, 'lib/engine/lock-engine.ts'))) as EngineModule;
const tokensModule = (await import(path.join(root, 'lib/tokens/token-source.ts'))) as TokenModule;

const owner: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
let fakeNow = 1_000.25;
// A clock with fractions, as performance.now() has them, moving a little at every read.
const clock = { now: () => (fakeNow += 0.001) };
const newEngine = (): LockEngine => new Engine(clock, new tokensModule.BlockTokenSource(new tokensModule.MemoryCeilingStore()));

/** The JS heap and the memory outside it that typed arrays hold (their backing stores are not in heapUsed). */
function heapUsed(): number {
  for (let i = 0; i < 3; i++) gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/** Every kind of claim once, so that object shapes have generalized as in a running daemon. */
function warmShapes(): void {
  const e = newEngine();
  e.subscribe(() => {});
  const keyed = { owner, protocol: 'keyed' as const, client: 'c', leaseMs: 1_000.5, waitMs: 500, sliding: false };
  const session = { owner, protocol: 'session' as const, client: 's', leaseMs: 1_000, waitMs: 0, sliding: true, keyHash: 'ab'.repeat(32) };
  for (let i = 0; i < 200; i++) {
    const name = `warm-${i % 7}`;
    const a = e.acquire({ ...keyed, name, clientName: i % 2 === 0 ? 'w' : null });
    const b = e.acquire({ ...keyed, name, tag: i });
    const c = e.acquire({ ...session, name });
    const d = e.acquire({ ...session, name: `warm-s-${i}` });
    e.touch(c);
    e.touch(d);
    e.end(b);
    e.release(name, a.token);
    e.end(c);
    e.end(d);
    fakeNow += 700.125;
    e.advance();
  }
}

interface Figure {
  bytesPer: number;
  count: number;
}

function perClaim(setup: (e: LockEngine) => void, work: (e: LockEngine) => void, check: (e: LockEngine) => void): Figure {
  const e = newEngine();
  setup(e);
  const before = heapUsed();
  work(e);
  const after = heapUsed();
  check(e);
  return { bytesPer: Math.round(((after - before) / count) * 10) / 10, count };
}

warmShapes();

// The strings the daemon would have parsed from its sockets: counted apart.
const beforeNames = heapUsed();
const names = Array.from({ length: count }, (_, i) => `lock-${i}`);
const afterNames = heapUsed();
const nameBytes = (afterNames - beforeNames) / count - 8; // minus the array's slot
const hashes = Array.from({ length: count }, (_, i) => createHash('sha256').update(`key-${i}`).digest('hex'));
const hashBytes = (heapUsed() - afterNames) / count - 8;

// As the daemon asks: its connections give no tag (AcquireRequest.tag).
const keyedRequest = { name: '', owner, protocol: 'keyed' as const, client: '127.0.0.1:5000', leaseMs: 600_000, waitMs: 0, sliding: false };

const held = perClaim(
  () => {},
  (e) => {
    for (let i = 0; i < count; i++) {
      keyedRequest.name = names[i] as string;
      e.acquire(keyedRequest);
    }
  },
  (e) => {
    if (e.heldCount !== count) throw new Error(`held ${e.heldCount}, not ${count}`);
  },
);

// Waiters behind holders (one holder per 8 waiters): only the waiters are in the figure. A lock
// takes the object form at its first waiter (compact-holders.ts); that is done before the
// reading (one waiter that comes and goes), so the figure is what each waiter adds.
const lockCount = Math.max(1, Math.ceil(count / 8));
const waiters = perClaim(
  (e) => {
    for (let i = 0; i < lockCount; i++) {
      e.acquire({ ...keyedRequest, name: names[i] as string });
      e.end(e.acquire({ ...keyedRequest, name: names[i] as string }));
    }
  },
  (e) => {
    const req = { ...keyedRequest, waitMs: 60_000 };
    for (let i = 0; i < count; i++) {
      req.name = names[i % lockCount] as string;

      e.acquire(req);
    }
  },
  (e) => {
    if (e.waiterCount !== count) throw new Error(`waiting ${e.waiterCount}, not ${count}`);
  },
);

const sessionRequest = { name: '', owner, protocol: 'session' as const, client: '127.0.0.1:5001', leaseMs: 10_000, waitMs: 0, sliding: true, keyHash: '' };
const resumable = perClaim(
  () => {},
  (e) => {
    for (let i = 0; i < count; i++) {
      sessionRequest.name = names[i] as string;
      sessionRequest.keyHash = hashes[i] as string;
      e.acquire(sessionRequest);
    }
  },
  (e) => {
    if (e.resumableCount !== count) throw new Error(`resumable ${e.resumableCount}, not ${count}`);
  },
);

console.log(`engine at ${root}, ${count} claims of each kind, node ${process.version}`);
console.log(`held keyed lock     ${held.bytesPer} B (engine; the name adds ${nameBytes.toFixed(1)} B: ${(held.bytesPer + nameBytes).toFixed(1)} B in all)`);
console.log(`waiting request     ${waiters.bytesPer} B (behind a holder; same name as the holder)`);
console.log(
  `resumable claim     ${resumable.bytesPer} B (held session claim; its name adds ${nameBytes.toFixed(1)} B, its key hash ${hashBytes.toFixed(1)} B)`,
);

if (breakdown) {
  const n = Math.min(count, 200_000);
  const e = newEngine();
  const first = snapshotSizes();
  for (let i = 0; i < n; i++) {
    keyedRequest.name = names[i] as string;
    e.acquire(keyedRequest);
  }
  const second = snapshotSizes();
  console.log(`\nwhat ${n} held keyed locks added to the heap, by constructor (bytes per lock):`);
  const rows = [...second].map(([k, v]) => [k, v.size - (first.get(k)?.size ?? 0), v.count - (first.get(k)?.count ?? 0)] as const);
  rows.sort((a, b) => b[1] - a[1]);
  for (const [k, size, c] of rows.slice(0, 12)) {
    if (size / n < 0.5) break;
    console.log(`  ${k.padEnd(40)} ${(size / n).toFixed(1).padStart(7)} B  (${c} objects)`);
  }
  if (e.heldCount !== n) throw new Error('locks lost');
}

/** Bytes and counts by constructor (objects) or by type (strings, numbers, arrays) in a heap snapshot. */
function snapshotSizes(): Map<string, { size: number; count: number }> {
  gc();
  const file = v8.writeHeapSnapshot(path.join(os.tmpdir(), `engine-memory-${process.pid}.heapsnapshot`));
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    snapshot: { meta: { node_fields: string[]; node_types: [string[]] } };
    nodes: number[];
    strings: string[];
  };
  fs.unlinkSync(file);
  const fields = snap.snapshot.meta.node_fields.length;
  const types = snap.snapshot.meta.node_types[0];
  const out = new Map<string, { size: number; count: number }>();
  for (let i = 0; i < snap.nodes.length; i += fields) {
    const type = types[snap.nodes[i] as number] as string;
    const name = snap.strings[snap.nodes[i + 1] as number] as string;
    const key = type === 'object' ? name : type.includes('string') ? 'strings' : type === 'hidden' || type === 'code' ? type : `${type}:${name.slice(0, 24)}`;
    const row = out.get(key) ?? { size: 0, count: 0 };
    row.size += snap.nodes[i + 3] as number;
    row.count++;
    out.set(key, row);
  }
  return out;
}
