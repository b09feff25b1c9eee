// The keyed protocol's requests and replies, as pure functions: the server's half (requests
// in, replies out), and the client's request lines (encodeKeyedAcquireRequest, encodeReleaseRequest)
// beside the parser that reads them; the client reads replies with keyed-reply-parser.ts.
// See docs/protocol.md.
//   A <key> <lease> <wait>   ->  A <key> <token> | T <key> | E A <key> <code> <text>
//   R <key> <token>          ->  R <key> OK | R <key> STALE | E R <key> <code> <text>
//   I <identity>             ->  I OK | E I ? bad-identity <text>   (optional; names the client)
//   (standby)                    M <host:port>, on connect and to every request
import { ERRORS, type ErrorName } from '../errors.ts';
import { parseClientName } from './client-name.ts';
import { nextSpace, parseDecimalSecondsMs, parseKey, parseU64 } from './wire-fields.ts';

export type KeyedRequest =
  | { kind: 'acquire'; key: string; leaseMs: number; waitMs: number }
  | { kind: 'release'; key: string; token: bigint }
  /** `I <identity>`: the client's name for the requests that follow on this connection. */
  | { kind: 'identity'; name: string }
  | { kind: 'error'; op: string; key: string; error: ErrorName };

const A = 65;
const R = 82;
const I = 73;
const SP = 32;

function fail(op: string, key: string, error: ErrorName): KeyedRequest {
  return { kind: 'error', op, key, error };
}

/** Parses one request line (bytes [start, end) of buf, without its line ending). */
export function parseKeyedRequest(buf: Buffer, start: number, end: number, text?: string): KeyedRequest {
  // `I` is checked first and only as a whole op word, so every other line parses exactly as
  // it did before the extension (parseSeedRequest; keyed-codec.test.ts checks it).
  if (buf[start] === I && (end === start + 1 || buf[start + 1] === SP)) return parseIdentity(buf, start + 2, end);
  return parseSeedRequest(buf, start, end, text);
}

/** The rest of the line is the identity (spaces allowed inside); a bad one keeps the connection. */
function parseIdentity(buf: Buffer, start: number, end: number): KeyedRequest {
  const name = start < end ? parseClientName(buf, start, end) : null;
  return name === null ? fail('I', '?', 'bad-identity') : { kind: 'identity', name };
}

/**
 * The requests of the seed protocol (`A`, `R`) and the errors for anything else. `text`: `buf`
 * decoded as latin1, when the caller has it (see parseKey).
 */
export function parseSeedRequest(buf: Buffer, start: number, end: number, text?: string): KeyedRequest {
  const opEnd = nextSpace(buf, start, end);
  const op0 = buf[start];
  if (opEnd - start !== 1 || (op0 !== A && op0 !== R)) {
    // `?` stands for a field that was not sent; `- -` is kept for errors about the connection.
    const op = opEnd === start ? '?' : printable(buf, start, Math.min(opEnd, start + 16));
    const keyStart = opEnd + 1;
    const key = keyStart < end ? printable(buf, keyStart, nextSpace(buf, keyStart, end)) : '?';
    return fail(op, key || '?', opEnd === start && end === start ? 'protocol-error' : 'unknown-op');
  }
  const op = op0 === A ? 'A' : 'R';
  const keyStart = opEnd + 1;
  const keyEnd = nextSpace(buf, keyStart, end);
  const key = keyStart < end ? parseKey(buf, keyStart, keyEnd, text) : null;
  if (key === null) return fail(op, keyStart < keyEnd ? printable(buf, keyStart, Math.min(keyEnd, keyStart + 64)) : '?', 'bad-key');
  if (op0 === R) {
    const tokenStart = keyEnd + 1;
    if (tokenStart > end || buf[keyEnd] !== SP) return fail(op, key, 'bad-token');
    const token = parseU64(buf, tokenStart, end);
    return token === null ? fail(op, key, 'bad-token') : { kind: 'release', key, token };
  }
  const leaseStart = keyEnd + 1;
  const leaseEnd = nextSpace(buf, leaseStart, end);
  const leaseMs = leaseStart < end ? parseDecimalSecondsMs(buf, leaseStart, leaseEnd) : Number.NaN;
  if (!(leaseMs > 0)) return fail(op, key, 'bad-lease');
  const waitStart = leaseEnd + 1;
  const waitMs = waitStart < end ? parseDecimalSecondsMs(buf, waitStart, end) : Number.NaN;
  if (!(waitMs >= 0)) return fail(op, key, 'bad-wait');
  return { kind: 'acquire', key, leaseMs, waitMs };
}

/** Bytes shown back in an error line: printable ASCII only, so a reply is always one clean line. */
function printable(buf: Buffer, start: number, end: number): string {
  let s = '';
  for (let i = start; i < end; i++) {
    const b = buf[i] as number;
    s += b > 0x20 && b < 0x7f ? String.fromCharCode(b) : '?';
  }
  return s;
}

export function encodeGranted(key: string, token: bigint): string {
  return `A ${key} ${token}\n`;
}

/** The answer to `I <identity>`. */
export const IDENTITY_OK = 'I OK\n';

export function encodeTimeout(key: string): string {
  return `T ${key}\n`;
}

export function encodeReleased(key: string, ok: boolean): string {
  return ok ? `R ${key} OK\n` : `R ${key} STALE\n`;
}

/** `E <op> <key> <code> <text>`; op and key are `-` for errors about the connection itself (then it closes). */
export function encodeKeyedError(op: string, key: string, error: ErrorName): string {
  return `E ${op} ${key} ${error} ${ERRORS[error].message}\n`;
}

/** `M <host:port>`: a standby names the active; the client re-sends its unanswered requests there. */
export function encodeKeyedRedirect(hostPort: string): string {
  return `M ${hostPort}\n`;
}

// --- The client's half: request lines, without the line ending (the client's transport adds it) ---

/** `A <key> <lease> <wait>`, lease and wait already in the wire's decimal seconds (duration-text.ts). */
export function encodeKeyedAcquireRequest(key: string, leaseWire: string, waitWire: string): string {
  return `A ${key} ${leaseWire} ${waitWire}`;
}

/** `I <identity>`; the identity must pass isValidClientName (client-name.ts). */
export function encodeIdentityRequest(name: string): string {
  return `I ${name}`;
}

/** `R <key> <token>`. */
export function encodeReleaseRequest(key: string, token: bigint): string {
  return `R ${key} ${token}`;
}
