// One daemon per data dir: two daemons sharing a token ceiling file could issue the same
// fencing token twice. The lock is a pid file that appears atomically with its content (written
// to a private temporary file, then hard-linked into place, which fails if the name exists), so
// a second daemon never sees it half-written. A file left by a process that no longer exists is
// taken over; one that cannot be read as a pid is treated as in use.
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface DataDirLock {
  release(): void;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Already gone.
  }
}

export function lockDataDir(dir: string): DataDirLock {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'baton.pid');
  const tmp = join(dir, `baton.pid.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(tmp, `${process.pid}\n`, { mode: 0o600 });
  try {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        linkSync(tmp, path);
        let released = false;
        return {
          release() {
            if (released) return;
            released = true;
            unlinkQuietly(path);
          },
        };
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const text = readFileSync(path, 'utf8').trim();
      const pid = /^\d{1,10}$/.test(text) ? Number(text) : Number.NaN;
      if (!Number.isInteger(pid) || pid <= 0) {
        throw new Error(`data dir ${dir} is locked by ${path}, which holds no pid (${JSON.stringify(text)}); remove it if no baton runs there`);
      }
      if (alive(pid)) {
        throw new Error(`data dir ${dir} is in use by another baton (pid ${pid}${pid === process.pid ? ', this process' : ''})`);
      }
      unlinkQuietly(path); // left by a process that is gone
    }
    throw new Error(`could not lock data dir ${dir}`);
  } finally {
    unlinkQuietly(tmp);
  }
}
