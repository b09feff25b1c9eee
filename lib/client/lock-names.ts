// Both protocols put the key (or lock name) between spaces on a line, and the server takes only
// what lib/protocol/key-rules.ts allows. A name it refuses would be answered with a mangled key
// that matches no request (or, for a lone surrogate, granted as another key), so refuse it here,
// before it reaches a socket.
import { BatonError } from '../errors.ts';
import { isValidKey } from '../protocol/key-rules.ts';

/** Throws BatonError `bad-key` for a name the server would refuse. */
export function requireValidLockName(name: string): void {
  if (!isValidKey(name)) throw new BatonError('bad-key', JSON.stringify(name));
}
