import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { lockDataDir } from './data-dir-lock.ts';

let dir = '';
afterEach(() => rmSync(dir, { recursive: true, force: true }));
const fresh = () => (dir = mkdtempSync(join(tmpdir(), 'baton-lock-')));

describe('data dir lock', () => {
  it('lets one holder have the dir at a time, by its real path, and tells operators who it is', async () => {
    const lock = await lockDataDir(fresh());
    expect(readFileSync(join(dir, 'baton.pid'), 'utf8')).toBe(`${process.pid}\n`);
    await expect(lockDataDir(dir)).rejects.toThrow(/in use by another baton/);
    const alias = `${dir}-alias`;
    symlinkSync(dir, alias);
    try {
      await expect(lockDataDir(alias)).rejects.toThrow(/in use/);
    } finally {
      rmSync(alias);
    }
    await lock.release();
    const again = await lockDataDir(dir);
    await again.release();
  });

  it('is free again the moment its holder dies, whatever pid file it left behind', async () => {
    fresh();
    const bin = new URL('./data-dir-lock.ts', import.meta.url).pathname;
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '-e',
        `
      const { lockDataDir } = await import(${JSON.stringify(bin)});
      await lockDataDir(${JSON.stringify(dir)});
      console.log('locked');
      setInterval(() => {}, 1000);
    `,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((resolve, reject) => {
        child.stdout?.on('data', (d: Buffer) => d.toString().includes('locked') && resolve());
        child.once('exit', (code) => reject(new Error(`child exited ${code}`)));
      });
      await expect(lockDataDir(dir)).rejects.toThrow(/in use/);
    } finally {
      child.kill('SIGKILL');
      await new Promise((r) => child.once('exit', r));
    }
    writeFileSync(join(dir, 'baton.pid'), `${process.pid}\n`); // even a pid file naming us
    const lock = await lockDataDir(dir);
    await lock.release();
  });
});
