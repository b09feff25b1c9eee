// The one rule for keys and lock names, for anything that builds a request: a name is valid
// exactly when the server's parseKey accepts its UTF-8 bytes and reads back the same string.
// Deciding with the server's own parser keeps client and server from drifting apart: a name
// the server refuses is answered with a mangled key that no client can match to its request.
import { MAX_KEY_BYTES, parseKey } from './wire-fields.ts';

/**
 * True when the server takes `name` as a key and holds it under that same name: 1-250 bytes
 * of UTF-8 without whitespace or control characters, from well-formed UTF-16 (a lone surrogate
 * would travel as U+FFFD and be granted as a different key).
 */
export function isValidKey(name: string): boolean {
  // Every UTF-16 unit takes at least one UTF-8 byte, so a longer string is too long in bytes.
  if (name.length === 0 || name.length > MAX_KEY_BYTES) return false;
  if (isVisibleAscii(name)) return true;
  const bytes = Buffer.from(name, 'utf8');
  return parseKey(bytes, 0, bytes.length) === name;
}

/** The common case, decided without encoding: ASCII from '!' to '~' only. */
function isVisibleAscii(name: string): boolean {
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c <= 0x20 || c >= 0x7f) return false;
  }
  return true;
}
