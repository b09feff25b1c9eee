import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ClaimOwner } from '../../lib/engine/claim.ts';
import { engineFixture } from '../../lib/engine/testing/engine-fixture.ts';
import { MAX_FILE_BYTES } from './history-file.ts';
import { HistoryRecorder } from './history-recorder.ts';
import { HISTORY_FILE, type HistoryLog, HistoryStore } from './history-store.ts';

const live: ClaimOwner = { onGranted: () => true, onEnded: () => {} };
const EPOCH = 1_700_000_000_000;
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(dirs.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

async function dataDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'baton-chart-history-'));
  dirs.push(dir);
  return dir;
}

function node() {
  const f = engineFixture({ blockSize: 1_000n });
  const r = new HistoryRecorder(f.engine, { wall: (ms) => EPOCH + ms }, () => EPOCH + f.clock.now());
  const lines: Array<{ level: string; fields: object; msg: string }> = [];
  const log: HistoryLog = {
    info: (fields, msg) => lines.push({ level: 'info', fields, msg }),
    warn: (fields, msg) => lines.push({ level: 'warn', fields, msg }),
  };
  return { ...f, r, log, lines };
}

describe('HistoryStore', () => {
  it('writes the history at close and a restarted recorder reads back the same 1 h and 24 h', async () => {
    const dir = await dataDir();
    const a = node();
    const store = await HistoryStore.open(dir, a.r, a.log);
    const first = a.fixed('x', live);
    a.fixed('x', live);
    a.tick(1_500);
    a.engine.release('x', first.token);
    await store.close();
    await store.close();
    const b = node();
    b.clock.advance(a.clock.now() - b.clock.now());
    const again = await HistoryStore.open(dir, b.r, b.log);
    expect(b.r.range('1h')).toEqual(a.r.range('1h'));
    expect(b.r.range('24h')).toEqual(a.r.range('24h'));
    expect(b.r.range('1h').summary.queueWait.waited).toBe(1);
    expect(b.lines).toEqual([expect.objectContaining({ level: 'info', msg: 'chart history restored' })]);
    await again.close();
  });

  it('writes nothing while nothing was recorded, then writes on its interval', async () => {
    const dir = await dataDir();
    const a = node();
    const store = await HistoryStore.open(dir, a.r, a.log, 20);
    await store.save();
    expect(existsSync(join(dir, HISTORY_FILE))).toBe(false);
    a.fixed('x', live);
    await expect.poll(() => existsSync(join(dir, HISTORY_FILE))).toBe(true);
    await store.close();
  });

  it.each([
    ['a corrupt file', async (path: string) => writeFile(path, '{"format":"baton-chart-history","version":1,"bins'), /not JSON/],
    ['another program’s file', async (path: string) => writeFile(path, JSON.stringify({ hello: 'world' })), /not a baton-chart-history/],
    ['a file above the ceiling', async (path: string) => writeFile(path, '').then(() => truncate(path, MAX_FILE_BYTES + 1)), /ceiling/],
    ['a directory in its place', async (path: string) => mkdir(path), /regular file/],
  ])('starts empty from %s, with one log line, and sets it aside', async (_what, make, reason) => {
    const dir = await dataDir();
    const path = join(dir, HISTORY_FILE);
    await make(path);
    const a = node();
    const store = await HistoryStore.open(dir, a.r, a.log);
    expect(a.lines).toHaveLength(1);
    expect(a.lines[0]).toMatchObject({
      level: 'warn',
      msg: 'chart history file refused; the charts start empty',
      fields: { reason: expect.stringMatching(reason) },
    });
    expect(a.r.range('24h').summary.grants).toBe(0);
    expect(existsSync(`${path}.refused`)).toBe(true);
    // The next save writes a good file where the refused one was.
    a.fixed('x', live);
    await store.close();
    expect(JSON.parse(await readFile(path, 'utf8'))).toMatchObject({ format: 'baton-chart-history' });
  });

  it('logs a failed save once and keeps the history in memory', async () => {
    const dir = await dataDir();
    const a = node();
    const store = await HistoryStore.open(dir, a.r, a.log);
    await rm(dir, { recursive: true });
    a.fixed('x', live);
    await store.save();
    a.fixed('y', live);
    await store.save();
    expect(a.lines.filter((l) => l.level === 'warn')).toHaveLength(1);
    expect(a.r.range('1h').summary.grants).toBe(2);
    await store.close();
  });
});
