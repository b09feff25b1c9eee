// The session protocol's requests and replies, as pure functions. One TCP connection is one
// claim on one lock; see the session section of docs/protocol.md.
//   ACQUIRE <name> <lease_ms>   ->  ACQUIRED <token> | WAITING <position>
//   HEARTBEAT                   ->  ACQUIRED <token> | WAITING <position>
//   (pushed)                        ACQUIRED <token> when the lock is handed over
//   (last line)                     ERROR <0xNN> <text>, then the server closes
import { ERRORS, hexCode } from '../errors.ts';
import { nextSpace, parseKey, parseUnsignedInt } from './wire-fields.ts';

export type SessionRequest =
  | { readonly kind: 'acquire'; readonly name: string; readonly leaseMs: number }
  | { readonly kind: 'heartbeat' }
  /** Not a request of this protocol; what was expected depends on the session's state. */
  | { readonly kind: 'unknown' }
  /** An ACQUIRE or HEARTBEAT line with bad fields; `detail` follows `protocol error: `. */
  | { readonly kind: 'error'; readonly detail: string };

/** The errors that end a session, each with its `ERROR 0x0N` code in lib/errors.ts. */
export type SessionErrorName =
  | 'server-going-away'
  | 'protocol-error'
  | 'lease-expired'
  | 'force-released'
  | 'kicked'
  | 'too-many-connections'
  | 'io-timeout'
  | 'tokens-exhausted'
  | 'storage-unavailable';

export const EXPECTED_ACQUIRE = 'expected ACQUIRE <name> <lease_ms>';
export const EXPECTED_HEARTBEAT = 'expected HEARTBEAT';
export const ACQUIRE_TWICE = 'ACQUIRE already sent: one connection is one claim';
export const BAD_NAME = 'bad name: 1 to 250 bytes of UTF-8 without whitespace or control characters';
export const BAD_LEASE = 'bad lease_ms: an integer number of milliseconds > 0, at most 15 digits';
export const HEARTBEAT_FIELDS = 'HEARTBEAT takes no fields';

// Requests without data are shared constants: a heartbeat allocates nothing.
const HEARTBEAT_REQUEST: SessionRequest = Object.freeze({ kind: 'heartbeat' });
const UNKNOWN_REQUEST: SessionRequest = Object.freeze({ kind: 'unknown' });
const ERROR_EXPECTED_ACQUIRE: SessionRequest = Object.freeze({ kind: 'error', detail: EXPECTED_ACQUIRE });
const ERROR_BAD_NAME: SessionRequest = Object.freeze({ kind: 'error', detail: BAD_NAME });
const ERROR_BAD_LEASE: SessionRequest = Object.freeze({ kind: 'error', detail: BAD_LEASE });
const ERROR_HEARTBEAT_FIELDS: SessionRequest = Object.freeze({ kind: 'error', detail: HEARTBEAT_FIELDS });

const ACQUIRE = Buffer.from('ACQUIRE', 'latin1');
const HEARTBEAT = Buffer.from('HEARTBEAT', 'latin1');

/** Parses one client line (bytes [start, end) of buf, without its line ending). Never throws. */
export function parseSessionRequest(buf: Buffer, start: number, end: number): SessionRequest {
  const opEnd = nextSpace(buf, start, end);
  if (isWord(buf, start, opEnd, HEARTBEAT)) return opEnd === end ? HEARTBEAT_REQUEST : ERROR_HEARTBEAT_FIELDS;
  if (!isWord(buf, start, opEnd, ACQUIRE)) return UNKNOWN_REQUEST;
  const nameStart = opEnd + 1;
  const nameEnd = nextSpace(buf, nameStart, end);
  // Both fields must be there, one space apart: "ACQUIRE" and "ACQUIRE name" are the wrong shape.
  if (nameStart >= end || nameEnd >= end) return ERROR_EXPECTED_ACQUIRE;
  const name = parseKey(buf, nameStart, nameEnd);
  if (name === null) return ERROR_BAD_NAME;
  // A further space makes the lease field non-numeric, so trailing fields fail here too.
  const leaseMs = parseUnsignedInt(buf, nameEnd + 1, end);
  if (!(leaseMs > 0)) return ERROR_BAD_LEASE;
  return { kind: 'acquire', name, leaseMs };
}

function isWord(buf: Buffer, start: number, end: number, word: Buffer): boolean {
  if (end - start !== word.length) return false;
  for (let i = 0; i < word.length; i++) if (buf[start + i] !== word[i]) return false;
  return true;
}

export function encodeAcquired(token: bigint): string {
  return `ACQUIRED ${token}\n`;
}

/** `WAITING <position>`; 1 = next in line. */
export function encodeWaiting(position: number): string {
  return `WAITING ${position}\n`;
}

/** `ERROR 0x0N <text>[: detail]`, the last line of a session. `detail` must be one line of printable text. */
export function encodeSessionError(error: SessionErrorName, detail?: string): string {
  const spec = ERRORS[error];
  // Every SessionErrorName has a session code in lib/errors.ts; 0x02 only guards a table edit.
  const code = hexCode(spec.sessionCode ?? 0x02);
  return detail ? `ERROR ${code} ${spec.message}: ${detail}\n` : `ERROR ${code} ${spec.message}\n`;
}

/** A standby's answer to a session (or an active's that steps down): reconnect to `hostPort`, then the server closes. */
export function encodeRedirect(hostPort: string): string {
  return `REDIRECT ${hostPort}\n`;
}

/** The goodbye every session gets at graceful shutdown (`listener.closeAll`). */
export const SESSION_GOODBYE = encodeSessionError('server-going-away');
/** The line a connection over `--max-connections` gets before it is closed. */
export const SESSION_REFUSAL = encodeSessionError('too-many-connections');
