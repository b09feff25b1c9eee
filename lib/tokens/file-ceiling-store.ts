// Keeps the token ceiling in `<data-dir>/token-ceiling`: written to a temporary file, fsynced,
// renamed over the old one, and the directory fsynced, so a crash leaves either the old or
// the new ceiling, never a torn one. Synchronous on purpose: it runs once per token block
// (100,000 grants by default), and no token of the block may be issued before it is durable.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { type CeilingStore, MAX_TOKEN } from './token-source.ts';

const FILE = 'token-ceiling';

export class FileCeilingStore implements CeilingStore {
  private readonly path: string;

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, FILE);
  }

  load(): bigint {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8').trim();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0n;
      throw err;
    }
    // 20 digits reach past u64: a larger value is as corrupt as text.
    if (!/^[0-9]{1,20}$/.test(text) || BigInt(text) > MAX_TOKEN) throw new Error(`corrupt token ceiling in ${this.path}: ${JSON.stringify(text)}`);
    return BigInt(text);
  }

  save(ceiling: bigint): void {
    const tmp = `${this.path}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, `${ceiling}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, this.path);
    const dirFd = openSync(this.dir, 'r');
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
  }
}
