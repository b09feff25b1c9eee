// Pure parsing of one server line (without its line ending) into a tagged value. The keyed
// parser runs once per reply on the hot path, so it scans with indexOf/charCodeAt and keeps
// allocations to the slices it returns.
import { parseAddress } from './address.ts';
import { parseU64Text } from '../protocol/u64-text.ts';
import { parseDigits } from './decimal.ts';
import type { Address } from './address.ts';

/** `slot` is `op + ' ' + key`, the key of the client's pending-request table. */
export type KeyedReply =
  | { readonly kind: 'granted'; readonly slot: string; readonly key: string; readonly token: bigint }
  | { readonly kind: 'timed-out'; readonly slot: string; readonly key: string }
  | { readonly kind: 'released'; readonly slot: string; readonly key: string }
  | { readonly kind: 'stale'; readonly slot: string; readonly key: string }
  | {
      readonly kind: 'request-error';
      readonly slot: string;
      readonly op: string;
      readonly key: string;
      readonly name: string;
      readonly text: string;
    }
  | { readonly kind: 'connection-error'; readonly name: string; readonly text: string }
  | { readonly kind: 'redirect'; readonly address: Address }
  | { readonly kind: 'malformed'; readonly line: string; readonly why: string };

export type SessionReply =
  | { readonly kind: 'acquired'; readonly token: bigint }
  | { readonly kind: 'waiting'; readonly position: number }
  | { readonly kind: 'error'; readonly code: number; readonly text: string }
  | { readonly kind: 'redirect'; readonly address: Address }
  /** A resumable session's claim moved to the node at `address` (a handoff): RESUME it there. */
  | { readonly kind: 'moved'; readonly address: Address }
  | { readonly kind: 'malformed'; readonly line: string; readonly why: string };

const SPACE = 32;

function malformed(line: string, why: string): { kind: 'malformed'; line: string; why: string } {
  return { kind: 'malformed', line, why };
}

/** A u64 in decimal, or undefined. Tokens stay bigint: a JS number loses digits past 2^53. */
export function parseU64(text: string): bigint | undefined {
  return parseU64Text(text) ?? undefined;
}

export function parseKeyedReply(line: string): KeyedReply {
  if (line.length < 3 || line.charCodeAt(1) !== SPACE) return malformed(line, 'no op');
  switch (line.charCodeAt(0)) {
    case 65 /* A */:
      {
        const space = line.indexOf(' ', 2);
        if (space <= 2) return malformed(line, 'grant without key or token');
        const token = parseU64(line.slice(space + 1));
        if (token === undefined) return malformed(line, 'grant with a bad token');
        return { kind: 'granted', slot: line.slice(0, space), key: line.slice(2, space), token };
      }
    case 84 /* T */:
      {
        const key = line.slice(2);
        if (key.indexOf(' ') >= 0) return malformed(line, 'timeout with extra fields');
        return { kind: 'timed-out', slot: `A ${key}`, key };
      }
    case 82 /* R */:
      {
        const space = line.lastIndexOf(' ');
        if (space <= 2) return malformed(line, 'release reply without key or outcome');
        const slot = line.slice(0, space);
        const key = line.slice(2, space);
        const outcome = line.slice(space + 1);
        if (outcome === 'OK') return { kind: 'released', slot, key };
        if (outcome === 'STALE') return { kind: 'stale', slot, key };
        return malformed(line, 'release reply neither OK nor STALE');
      }
    case 69 /* E */:
      return parseKeyedError(line);
    case 77 /* M */:
      {
        const address = parseAddress(line.slice(2));
        return address ? { kind: 'redirect', address } : malformed(line, 'redirect to an unreadable address');
      }
    default:
      return malformed(line, 'unknown reply op');
  }
}

/** `E <op> <key> <error-name> <human text>`; op and key `-` mean the whole connection. */
function parseKeyedError(line: string): KeyedReply {
  const opEnd = line.indexOf(' ', 2);
  const keyEnd = opEnd < 0 ? -1 : line.indexOf(' ', opEnd + 1);
  if (opEnd <= 2 || keyEnd <= opEnd + 1) return malformed(line, 'error without op or key');
  const nameEnd = line.indexOf(' ', keyEnd + 1);
  const name = nameEnd < 0 ? line.slice(keyEnd + 1) : line.slice(keyEnd + 1, nameEnd);
  if (name === '') return malformed(line, 'error without a name');
  const text = nameEnd < 0 ? '' : line.slice(nameEnd + 1);
  const op = line.slice(2, opEnd);
  const key = line.slice(opEnd + 1, keyEnd);
  if (op === '-' && key === '-') return { kind: 'connection-error', name, text };
  return { kind: 'request-error', slot: line.slice(2, keyEnd), op, key, name, text };
}

export function parseSessionReply(line: string): SessionReply {
  const space = line.indexOf(' ');
  const word = space < 0 ? line : line.slice(0, space);
  const rest = space < 0 ? '' : line.slice(space + 1);
  switch (word) {
    case 'ACQUIRED': {
      const token = parseU64(rest);
      return token === undefined ? malformed(line, 'ACQUIRED with a bad token') : { kind: 'acquired', token };
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
    const c = text.charCodeAt(i) | 32; // lower-case letters; digits are unchanged by | 32
    const digit = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : -1;
    if (digit < 0) return undefined;
    value = value * 16 + digit;
  }
  return value;
}
