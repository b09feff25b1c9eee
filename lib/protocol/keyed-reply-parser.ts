// The client's half of the keyed protocol: one server line (without its line ending) into a
// tagged value. The server's half (requests in, replies out) is keyed-codec.ts. This runs once
// per reply on the client's hot path, so it scans with indexOf/charCodeAt and keeps allocations
// to the slices it returns.
import { type Address, parseAddress } from './address-text.ts';
import { parseU64Text } from './u64-text.ts';

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
  /** `I OK`: the server took the connection's identity. */
  | { readonly kind: 'identity-ok' }
  | { readonly kind: 'malformed'; readonly line: string; readonly why: string };

const SPACE = 32;
const IDENTITY_OK: KeyedReply = Object.freeze({ kind: 'identity-ok' });

function malformed(line: string, why: string): { kind: 'malformed'; line: string; why: string } {
  return { kind: 'malformed', line, why };
}

/** Tokens stay bigint: a JS number loses digits past 2^53. */
export function parseKeyedReply(line: string): KeyedReply {
  if (line.length < 3 || line.charCodeAt(1) !== SPACE) return malformed(line, 'no op');
  switch (line.charCodeAt(0)) {
    case 65 /* A */:
      {
        const space = line.indexOf(' ', 2);
        if (space <= 2) return malformed(line, 'grant without key or token');
        const token = parseU64Text(line.slice(space + 1));
        if (token === null) return malformed(line, 'grant with a bad token');
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
    case 73 /* I */:
      return line === 'I OK' ? IDENTITY_OK : malformed(line, 'identity reply other than I OK');
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
