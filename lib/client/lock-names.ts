// Both protocols put the key (or lock name) between spaces on a line, so a name with a space or
// a control character would break the framing; refuse it before it reaches a socket.
import { BatonError } from '../errors.ts';

const MAX_NAME_BYTES = 250;

export function checkLockName(name: string): void {
  // A UTF-16 unit is at most 3 UTF-8 bytes, so short names skip the byte count.
  let ok = name.length > 0 && (name.length * 3 <= MAX_NAME_BYTES || Buffer.byteLength(name) <= MAX_NAME_BYTES);
  for (let i = 0; ok && i < name.length; i++) {
    const c = name.charCodeAt(i);
    ok = c > 32 && c !== 127 && (c < 0x80 || c > 0x9f);
  }
  if (!ok) throw new BatonError('bad-key', JSON.stringify(name));
}
