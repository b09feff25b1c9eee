import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockDataDir } from './data-dir-lock.ts';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const fresh = () => (dir = mkdtempSync(join(tmpdir(), 'baton-lock-')));

describe('data dir lock', () => {
  it('holds the dir with this pid and leaves no temporary file', () => {
    const lock = lockDataDir(fresh());
    expect(readdirSync(dir)).toEqual(['baton.pid']);
    expect(() => lockDataDir(dir)).toThrow(/in use by another baton \(pid \d+, this process\)/);
    lock.release();
    expect(existsSync(join(dir, 'baton.pid'))).toBe(false);
  });

  it('takes over a pid file left by a process that is gone', () => {
    writeFileSync(join(fresh(), 'baton.pid'), '2147483646\n');
    const lock = lockDataDir(dir);
    lock.release();
  });

  it('refuses a pid file it cannot read as a pid, rather than guess', () => {
    writeFileSync(join(fresh(), 'baton.pid'), '');
    expect(() => lockDataDir(dir)).toThrow(/holds no pid/);
  });
});
