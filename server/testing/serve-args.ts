// How tests and benchmarks start a real daemon: the one bin/baton, and `serve` on free ports
// (port 0 everywhere) with a data dir of the caller's, so a new start-up flag or a changed
// default is written once, not in every file that spawns a daemon.
import { fileURLToPath } from 'node:url';

/** The repository's bin/baton (what an operator runs). */
export const BATON_BIN = fileURLToPath(new URL('../../bin/baton', import.meta.url));

/** `serve` with every port on 0 and `dataDir`, then the caller's own flags. */
export function serveArgs(dataDir: string, ...extra: string[]): string[] {
  return ['serve', '--lock-port', '0', '--session-port', '0', '--http-port', '0', '--data-dir', dataDir, ...extra];
}
