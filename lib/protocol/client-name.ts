// The one rule for a client identity ("worker-7@host-3 pid 4121"): the name a client gives
// itself on either protocol (keyed `I <identity>`, session `CLIENT <identity>`) so operators
// see who holds a lock, not only an ephemeral port. Shared by the server's parsers and the
// client library, so a name the library sends is never refused by the server.
//
// 1 to 128 bytes of UTF-8; spaces (U+0020) inside but not at either end; no control, format,
// line or paragraph separator, and no whitespace but the plain space: the name is shown in
// one line of the dashboard, the feed and the audit log, and must look like what was sent.
import { isUtf8 } from 'node:buffer';

export const MAX_CLIENT_NAME_BYTES = 128;
const SP = 0x20;

// Everything a name may not contain beyond ASCII controls: other whitespace (NBSP, U+3000...),
// controls (C1), format characters (bidi overrides, zero-width joiners), separators.
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|[^\S ]/u;

/** The identity in bytes [start, end), or null when it breaks the rule. */
export function parseClientName(buf: Buffer, start: number, end: number): string | null {
  const len = end - start;
  if (len < 1 || len > MAX_CLIENT_NAME_BYTES) return null;
  if (buf[start] === SP || buf[end - 1] === SP) return null;
  let ascii = true;
  for (let i = start; i < end; i++) {
    const b = buf[i] as number;
    if (b < SP || b === 0x7f) return null;
    if (b >= 0x80) ascii = false;
  }
  if (ascii) return buf.toString('latin1', start, end);
  const view = buf.subarray(start, end);
  if (!isUtf8(view)) return null;
  const name = view.toString('utf8');
  return FORBIDDEN.test(name) ? null : name;
}

/** True when the server takes `name` as an identity and shows that same string. */
export function isValidClientName(name: string): boolean {
  if (name.length === 0 || name.length > MAX_CLIENT_NAME_BYTES) return false;
  const bytes = Buffer.from(name, 'utf8');
  // A lone surrogate travels as U+FFFD: it would be shown as a different name.
  return parseClientName(bytes, 0, bytes.length) === name;
}

/**
 * Makes a valid identity of any text (a host name, a command line): forbidden characters
 * become `?`, the ends are trimmed, and the result is cut to 128 bytes on a character
 * boundary. Null when nothing is left.
 */
export function toClientName(text: string): string | null {
  let out = '';
  let bytes = 0;
  for (const ch of text.trim()) {
    const safe = FORBIDDEN.test(ch) || (ch.length === 1 && (ch.charCodeAt(0) & 0xf800) === 0xd800) ? '?' : ch;
    const size = Buffer.byteLength(safe, 'utf8');
    if (bytes + size > MAX_CLIENT_NAME_BYTES) break;
    out += safe;
    bytes += size;
  }
  out = out.trim();
  return out.length === 0 ? null : out;
}
