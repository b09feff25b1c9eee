// The session protocol's requests and replies, as pure functions: the server's half (requests
// in, replies out), and the client's request lines at the end, beside the parser that reads
// them; the client reads replies with session-reply-parser.ts. One TCP connection is
// one claim on one lock; see the session section of docs/protocol.md.
//   ACQUIRE <name> <lease_ms>   ->  ACQUIRED <token> | WAITING <position>
//   ACQUIRE <name> <lease_ms> <claim_key>   (opt-in: the claim may outlive its connection)
//   RESUME <name> <claim_key>   ->  ACQUIRED <token> | WAITING <position> | ERROR 0x09
//   HEARTBEAT                   ->  ACQUIRED <token> | WAITING <position>
//   CLIENT <identity>           ->  (no answer) optional, before ACQUIRE/RESUME: names the client
//   (pushed)                        ACQUIRED <token> when the lock is handed over
//   (last line)                     ERROR <0xNN> <text>, REDIRECT or MOVED, then the server closes
import { ERRORS, type SessionErrorName, hexCode, sessionCode } from '../errors.ts';
import { MAX_CLIENT_NAME_BYTES, parseClientName } from './client-name.ts';
import { hexDigitValue } from './hex-text.ts';
import { nextSpace, parseKey, parseUnsignedInt } from './wire-fields.ts';

export type SessionRequest =
  /** `claimKey`: lower-case hex, when the client opted in to resuming; else null. */
  | { readonly kind: 'acquire'; readonly name: string; readonly leaseMs: number; readonly claimKey: string | null }
  | { readonly kind: 'resume'; readonly name: string; readonly claimKey: string }
  | { readonly kind: 'heartbeat' }
  /** `CLIENT <identity>`: who the client is, before its ACQUIRE or RESUME. */
  | { readonly kind: 'client'; readonly name: string }
  /** Not a request of this protocol; what was expected depends on the session's state. */
  | { readonly kind: 'unknown' }
  /** An ACQUIRE or HEARTBEAT line with bad fields; `detail` follows `protocol error: `. */
  | { readonly kind: 'error'; readonly detail: string };

/** The errors that end a session, read off the one table in lib/errors.ts (those with a session code). */
export type { SessionErrorName } from '../errors.ts';

export const EXPECTED_ACQUIRE = 'expected ACQUIRE <name> <lease_ms>';
export const EXPECTED_HEARTBEAT = 'expected HEARTBEAT';
export const ACQUIRE_TWICE = 'ACQUIRE already sent: one connection is one claim';
export const BAD_NAME = 'bad name: 1 to 250 bytes of UTF-8 without whitespace or control characters';
export const BAD_LEASE = 'bad lease_ms: an integer number of milliseconds > 0, at most 15 digits';
export const HEARTBEAT_FIELDS = 'HEARTBEAT takes no fields';
export const EXPECTED_RESUME = 'expected RESUME <name> <claim_key>, the key 32 to 64 hex characters';
export const BAD_IDENTITY = `bad identity: 1 to ${MAX_CLIENT_NAME_BYTES} bytes of UTF-8, no control or format characters, no space at either end`;
export const CLIENT_TOO_LATE = 'CLIENT comes once, before ACQUIRE or RESUME';
/** A claim key: 32 to 64 hex characters (128 to 256 bits), chosen at random by the client. */
export const MIN_CLAIM_KEY = 32;
export const MAX_CLAIM_KEY = 64;

// Requests without data are shared constants: a heartbeat allocates nothing.
const HEARTBEAT_REQUEST: SessionRequest = Object.freeze({ kind: 'heartbeat' });
const UNKNOWN_REQUEST: SessionRequest = Object.freeze({ kind: 'unknown' });
const ERROR_EXPECTED_ACQUIRE: SessionRequest = Object.freeze({ kind: 'error', detail: EXPECTED_ACQUIRE });
const ERROR_BAD_NAME: SessionRequest = Object.freeze({ kind: 'error', detail: BAD_NAME });
const ERROR_BAD_LEASE: SessionRequest = Object.freeze({ kind: 'error', detail: BAD_LEASE });
const ERROR_HEARTBEAT_FIELDS: SessionRequest = Object.freeze({ kind: 'error', detail: HEARTBEAT_FIELDS });
const ERROR_EXPECTED_RESUME: SessionRequest = Object.freeze({ kind: 'error', detail: EXPECTED_RESUME });
const ERROR_BAD_IDENTITY: SessionRequest = Object.freeze({ kind: 'error', detail: BAD_IDENTITY });

const ACQUIRE = Buffer.from('ACQUIRE', 'latin1');
const HEARTBEAT = Buffer.from('HEARTBEAT', 'latin1');
const RESUME = Buffer.from('RESUME', 'latin1');
const CLIENT = Buffer.from('CLIENT', 'latin1');

/**
 * Parses one client line (bytes [start, end) of buf, without its line ending). Never throws.
 * `text`: `buf` decoded as latin1, when the caller has it (see parseKey).
 */
export function parseSessionRequest(buf: Buffer, start: number, end: number, text?: string): SessionRequest {
  const opEnd = nextSpace(buf, start, end);
  if (isWord(buf, start, opEnd, HEARTBEAT)) return opEnd === end ? HEARTBEAT_REQUEST : ERROR_HEARTBEAT_FIELDS;
  if (isWord(buf, start, opEnd, RESUME)) return parseResume(buf, opEnd + 1, end, text);
  if (isWord(buf, start, opEnd, CLIENT)) return parseClient(buf, opEnd + 1, end);
  if (!isWord(buf, start, opEnd, ACQUIRE)) return UNKNOWN_REQUEST;
  const nameStart = opEnd + 1;
  const nameEnd = nextSpace(buf, nameStart, end);
  // Both fields must be there, one space apart: "ACQUIRE" and "ACQUIRE name" are the wrong shape.
  if (nameStart >= end || nameEnd >= end) return ERROR_EXPECTED_ACQUIRE;
  const name = parseKey(buf, nameStart, nameEnd, text);
  if (name === null) return ERROR_BAD_NAME;
  // A third field is the opt-in claim key. Anything else after the lease (a bad key, a fourth
  // field, a trailing space) is a bad lease as it always was: a client that does not opt in
  // sees exactly the lines it saw before the extension.
  const leaseEnd = nextSpace(buf, nameEnd + 1, end);
  let claimKey: string | null = null;
  if (leaseEnd < end) {
    claimKey = parseClaimKey(buf, leaseEnd + 1, end);
    if (claimKey === null) return ERROR_BAD_LEASE;
  }
  const leaseMs = parseUnsignedInt(buf, nameEnd + 1, leaseEnd);
  if (!(leaseMs > 0)) return ERROR_BAD_LEASE;
  return { kind: 'acquire', name, leaseMs, claimKey };
}

function parseResume(buf: Buffer, nameStart: number, end: number, text: string | undefined): SessionRequest {
  const nameEnd = nextSpace(buf, nameStart, end);
  if (nameStart >= end || nameEnd >= end) return ERROR_EXPECTED_RESUME;
  const name = parseKey(buf, nameStart, nameEnd, text);
  if (name === null) return ERROR_BAD_NAME;
  const claimKey = parseClaimKey(buf, nameEnd + 1, end);
  return claimKey === null ? ERROR_EXPECTED_RESUME : { kind: 'resume', name, claimKey };
}

/** The rest of the line is the identity: spaces are allowed inside it. */
function parseClient(buf: Buffer, start: number, end: number): SessionRequest {
  const name = start < end ? parseClientName(buf, start, end) : null;
  return name === null ? ERROR_BAD_IDENTITY : { kind: 'client', name };
}

/** 32 to 64 hex digits in bytes [start, end), lower-cased (the key is case-insensitive); else null. */
export function parseClaimKey(buf: Buffer, start: number, end: number): string | null {
  const len = end - start;
  if (len < MIN_CLAIM_KEY || len > MAX_CLAIM_KEY) return null;
  for (let i = start; i < end; i++) if (hexDigitValue(buf[i] as number) < 0) return null;
  return buf.toString('latin1', start, end).toLowerCase();
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
  const message = ERRORS[error].message;
  const code = hexCode(sessionCode(error));
  return detail ? `ERROR ${code} ${message}: ${detail}\n` : `ERROR ${code} ${message}\n`;
}

/** A standby's answer to a session (or an active's that steps down): reconnect to `hostPort`, then the server closes. */
export function encodeSessionRedirect(hostPort: string): string {
  return `REDIRECT ${hostPort}\n`;
}

/**
 * Sent by an active handing its role to `hostPort` (the successor's session address) to a
 * session that opted in: the claim was not ended, it moved there; RESUME it there. Then the
 * server closes.
 */
export function encodeMoved(hostPort: string): string {
  return `MOVED ${hostPort}\n`;
}

/** The goodbye every session gets at graceful shutdown (`listener.closeAll`). */
export const SESSION_GOODBYE = encodeSessionError('server-going-away');
/** The line a connection over `--max-connections` gets before it is closed. */
export const SESSION_REFUSAL = encodeSessionError('too-many-connections');

// --- The client's half: request lines, without the line ending (the client's transport adds it) ---

/** `ACQUIRE <name> <lease_ms> [<claim_key>]`: a claim key makes the claim resumable. */
export function encodeSessionAcquireRequest(name: string, leaseMs: number, claimKey?: string): string {
  return claimKey === undefined ? `ACQUIRE ${name} ${leaseMs}` : `ACQUIRE ${name} ${leaseMs} ${claimKey}`;
}

/** `CLIENT <identity>`, sent in the same write as the ACQUIRE or RESUME that follows it. */
export function encodeClientRequest(name: string): string {
  return `CLIENT ${name}`;
}

/** `RESUME <name> <claim_key>`: takes a kept claim up on a new connection. */
export function encodeResumeRequest(name: string, claimKey: string): string {
  return `RESUME ${name} ${claimKey}`;
}

/** The sign of life; it takes no fields. */
export const HEARTBEAT_LINE = 'HEARTBEAT';
