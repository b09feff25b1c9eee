// The client's half of the session protocol: one server line (without its line ending) into a
// tagged value. The server's half (requests in, replies out) is session-codec.ts.
import { type Address, parseAddress } from './address-text.ts';
import { parseDigits } from './decimal-text.ts';
import { hexDigitValue } from './hex-text.ts';
import { parseU64Text } from './u64-text.ts';

export type SessionReply =
  | { readonly kind: 'acquired'; readonly token: bigint }
  | { readonly kind: 'waiting'; readonly position: number }
  | { readonly kind: 'error'; readonly code: number; readonly text: string }
  | { readonly kind: 'redirect'; readonly address: Address }
  /** A resumable session's claim moved to the node at `address` (a handoff): RESUME it there. */
  | { readonly kind: 'moved'; readonly address: Address }
  | { readonly kind: 'malformed'; readonly line: string; readonly why: string };

function malformed(line: string, why: string): { kind: 'malformed'; line: string; why: string } {
  return { kind: 'malformed', line, why };
}

/** Tokens stay bigint: a JS number loses digits past 2^53. */
export function parseSessionReply(line: string): SessionReply {
  const space = line.indexOf(' ');
  const word = space < 0 ? line : line.slice(0, space);
  const rest = space < 0 ? '' : line.slice(space + 1);
  switch (word) {
    case 'ACQUIRED': {
      const token = parseU64Text(rest);
      return token === null ? malformed(line, 'ACQUIRED with a bad token') : { kind: 'acquired', token };
    }
    case 'WAITING': {
      const position = parsePositive(rest);
      return position === undefined ? malformed(line, 'WAITING with a bad position') : { kind: 'waiting', position };
    }
    case 'ERROR': {
      const codeEnd = rest.indexOf(' ');
      const code = parseHexCode(codeEnd < 0 ? rest : rest.slice(0, codeEnd));
      if (code === undefined) return malformed(line, 'ERROR with a bad code');
      return { kind: 'error', code, text: codeEnd < 0 ? '' : rest.slice(codeEnd + 1) };
    }
    case 'REDIRECT': {
      const address = parseAddress(rest);
      return address ? { kind: 'redirect', address } : malformed(line, 'REDIRECT to an unreadable address');
    }
    case 'MOVED': {
      const address = parseAddress(rest);
      return address ? { kind: 'moved', address } : malformed(line, 'MOVED to an unreadable address');
    }
    default:
      return malformed(line, 'unknown reply');
  }
}

function parsePositive(text: string): number | undefined {
  const value = parseDigits(text, 15);
  return value !== undefined && value > 0 ? value : undefined;
}

/** `0x01` style codes, as errors.ts `hexCode` writes them. */
function parseHexCode(text: string): number | undefined {
  if (text.length < 3 || text.length > 6 || text.charCodeAt(0) !== 48 || (text.charCodeAt(1) | 32) !== 120) {
    return undefined;
  }
  let value = 0;
  for (let i = 2; i < text.length; i++) {
    const digit = hexDigitValue(text.charCodeAt(i));
    if (digit < 0) return undefined;
    value = value * 16 + digit;
  }
  return value;
}
