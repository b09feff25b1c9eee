// Keeps the token ceiling in the data dir: written to a temporary file, fsynced, renamed over
// the old one, and the directory fsynced, so a crash leaves either the old or the new ceiling,
// never a torn one. Two files, one per writer: `token-ceiling` for blocking saves (the
// fallback) and `token-ceiling.ahead` for background saves. Each is only ever raised by its
// own writer, one save at a time, so neither can overwrite the other with a lower value, and
// load() takes the larger of the two.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { parseU64Text } from '../protocol/u64-text.ts';
import type { CeilingStore } from './token-source.ts';

const FILE = 'token-ceiling';
const AHEAD_FILE = 'token-ceiling.ahead';
const CHECK_FILE = 'write-check';

export class FileCeilingStore implements CeilingStore {
  private readonly path: string;
  private readonly aheadPath: string;

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
    this.path = join(dir, FILE);
    this.aheadPath = join(dir, AHEAD_FILE);
  }

  load(): bigint {
    const blocking = readCeiling(this.path);
    const ahead = readCeiling(this.aheadPath);
    return blocking > ahead ? blocking : ahead;
  }

  async saveAhead(ceiling: bigint): Promise<void> {
    const tmp = `${this.aheadPath}.tmp`;
    const file = await open(tmp, 'w', 0o600);
    try {
      await file.writeFile(`${ceiling}\n`);
      await file.sync();
    } finally {
      await file.close();
    }
    await rename(tmp, this.aheadPath);
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
  }

  save(ceiling: bigint): void {
    writeDurably(this.dir, this.path, `${ceiling}\n`);
  }

  /** Whether either ceiling file exists (a data dir that never stored one has neither). */
  hasCeiling(): boolean {
    return existsSync(this.path) || existsSync(this.aheadPath);
  }

  /**
   * Throws unless a file can be made durable here exactly as save() does it (temp file, write,
   * fsync, rename, directory fsync): run at start, before the node says it is ready, so a data
   * dir that cannot be written (read-only, immutable, no space) is refused then and not at the
   * first grant. The check file is removed afterwards.
   */
  checkWritable(): void {
    const path = join(this.dir, CHECK_FILE);
    writeDurably(this.dir, path, 'baton write check\n');
    unlinkSync(path);
  }
}

function writeDurably(dir: string, path: string, text: string): void {
  const tmp = `${path}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  const dirFd = openSync(dir, 'r');
  try {
    fsyncSync(dirFd);
  } finally {
    closeSync(dirFd);
  }
}

function readCeiling(path: string): bigint {
  let text: string;
  try {
    text = readFileSync(path, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0n;
    throw err;
  }
  // 20 digits reach past u64: a larger value is as corrupt as text.
  const ceiling = parseU64Text(text);
  if (ceiling === null) throw new CorruptCeilingError(path, text);
  return ceiling;
}

/** A ceiling file that holds no decimal u64: the highest token issued from this dir is unknown. */
export class CorruptCeilingError extends Error {
  constructor(
    readonly path: string,
    text: string,
  ) {
    // At most 40 characters of what it holds: a corrupt file can be of any size.
    super(`corrupt token ceiling in ${path}: ${JSON.stringify(text.slice(0, 40))}${text.length > 40 ? '...' : ''}`);
    this.name = 'CorruptCeilingError';
  }
}
