// What `baton serve` checks in its data dir before it says it is ready: that the token ceiling
// can be written there, and that a dir which has been used before still has a readable ceiling
// (or the operator named the floor). Each refusal ends the start with its own exit code.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CorruptCeilingError, type FileCeilingStore } from '../../lib/tokens/file-ceiling-store.ts';
import { EXIT_DATA_DIR_UNWRITABLE, EXIT_TOKEN_FLOOR_NEEDED } from '../../lib/errors.ts';
import { AUDIT_FILE } from '../audit/audit-log.ts';

/** A start refused for a reason the operator must fix; `baton serve` prints it and exits with `exitCode`. */
export class StartRefused extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
    this.name = 'StartRefused';
  }
}

const WRITE_ERRORS = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'EIO', 'ENOTDIR', 'EEXIST']);

/** A failure to write in the data dir as a StartRefused (exit 73); any other error as it is. */
export function unwritable(dir: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === undefined || !WRITE_ERRORS.has(code)) return err;
  const why = err instanceof Error ? err.message : String(err);
  return new StartRefused(
    `data dir ${dir} cannot be written the way the token ceiling is stored (temp file, fsync, rename, directory fsync): ${why}. Fix its permissions, mount or free space, or choose another --data-dir`,
    EXIT_DATA_DIR_UNWRITABLE,
  );
}

/**
 * Files a baton run leaves in its data dir, other than the ceiling files: the audit log (made at
 * every start), its rotation, a pid file left by a run that did not stop cleanly, temp files of
 * a ceiling save. Read before this process takes the dir (and writes its own pid file).
 */
export function traces(dir: string): string[] {
  return [AUDIT_FILE, `${AUDIT_FILE}.1`, 'baton.pid', 'token-ceiling.tmp', 'token-ceiling.ahead.tmp'].filter((f) => existsSync(join(dir, f)));
}

/** A ceiling file that does not hold a number as a StartRefused (exit 65, as a lost one); any other error as it is. */
function corrupt(err: unknown): unknown {
  if (!(err instanceof CorruptCeilingError)) return err;
  return new StartRefused(
    `${err.message}: the highest token this data dir issued is unknown, and starting could issue tokens again. Restore the file from a backup, or move it aside and start once with --token-floor N, N at least the highest token ever issued (see docs/cluster.md, "Recovering a lost token ceiling")`,
    EXIT_TOKEN_FLOOR_NEEDED,
  );
}

/**
 * Makes the token ceiling safe to start from. `floor`: the operator's --token-floor (null when
 * not given). Throws StartRefused when the dir cannot be written, when a ceiling file does not
 * hold a number, or when both ceiling files are gone from a dir that was used before and no
 * floor was named (tokens would silently start at 1 again, below tokens already issued).
 * Returns a line for the log, or null.
 */
export function prepareCeiling(store: FileCeilingStore, dir: string, earlier: string[], floor: bigint | null): string | null {
  try {
    store.checkWritable();
  } catch (err) {
    throw unwritable(dir, err);
  }
  try {
    return prepareStoredCeiling(store, dir, earlier, floor);
  } catch (err) {
    throw corrupt(err);
  }
}

function prepareStoredCeiling(store: FileCeilingStore, dir: string, earlier: string[], floor: bigint | null): string | null {
  if (!store.hasCeiling()) {
    if (earlier.length > 0 && floor === null) {
      throw new StartRefused(
        `data dir ${dir} has been used before (${earlier.join(', ')}) but both token ceiling files (token-ceiling, token-ceiling.ahead) are gone: starting would issue tokens from 1 again, below tokens already issued. Restore the files from a backup, or start once with --token-floor N, N at least the highest token ever issued (see docs/cluster.md, "Recovering a lost token ceiling")`,
        EXIT_TOKEN_FLOOR_NEEDED,
      );
    }
    // A new dir: store the floor (0 when none) so that from now on a missing file means a loss.
    store.save(floor ?? 0n);
    return floor === null ? null : `token floor ${floor} stored in a data dir that had no ceiling`;
  }
  // Read here, before anything binds, also without a floor: a corrupt file is refused now.
  const stored = store.load();
  if (floor !== null && floor > stored) {
    store.save(floor);
    return `token floor raised to ${floor} (--token-floor)`;
  }
  return null;
}
