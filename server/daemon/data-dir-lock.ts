// One daemon per data dir: two daemons sharing a token ceiling file could issue the same
// fencing token twice. The lock is held by the kernel, not by a file: the daemon binds an
// abstract Unix socket (Linux) whose name is derived from the data dir's real path. Binding is
// atomic, only one process can hold the name, and the kernel frees it the moment the process
// dies, so there is no stale lock to take over and no race in taking one over. A `baton.pid`
// file beside it only tells operators who holds the dir.
import { createHash } from 'node:crypto';
import { mkdirSync, realpathSync, unlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';

export interface DataDirLock {
  release(): Promise<void>;
}

function lockName(dir: string): string {
  const digest = createHash('sha256').update(realpathSync(dir)).digest('hex').slice(0, 40);
  return `\0baton-data-dir-${digest}`;
}

export async function lockDataDir(dir: string): Promise<DataDirLock> {
  mkdirSync(dir, { recursive: true });
  const server: Server = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      reject(err.code === 'EADDRINUSE' ? new Error(`data dir ${dir} is in use by another baton (see ${join(dir, 'baton.pid')})`) : err);
    });
    server.listen(lockName(dir), () => resolve());
  });
  server.unref(); // the lock must not keep the process alive by itself
  const pidFile = join(dir, 'baton.pid');
  try {
    writeFileSync(pidFile, `${process.pid}\n`, { mode: 0o600 });
  } catch (err) {
    // A dir we cannot write to: give the lock back, or the dir would stay locked in-process.
    server.close();
    throw err;
  }
  let released: Promise<void> | null = null;
  return {
    release: () =>
      (released ??= new Promise<void>((resolve) => {
        try {
          unlinkSync(pidFile);
        } catch {
          // Already gone.
        }
        server.close(() => resolve());
      })),
  };
}
