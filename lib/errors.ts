// The one error vocabulary of Baton. The wire protocols, the ops API and the CLI all take
// their codes and texts from this table, so an operator sees the same words everywhere.

export type ErrorName =
  | 'server-going-away'
  | 'protocol-error'
  | 'lease-expired'
  | 'force-released'
  | 'kicked'
  | 'too-many-connections'
  | 'io-timeout'
  | 'unknown-op'
  | 'bad-key'
  | 'bad-lease'
  | 'bad-wait'
  | 'bad-token'
  | 'line-too-long'
  | 'backlog-full'
  | 'not-found'
  | 'stale-token'
  | 'session-claim'
  | 'unauthorized'
  | 'forbidden'
  | 'too-many-sign-ins'
  | 'invalid-input'
  | 'conflict'
  | 'bad-usage'
  | 'method-not-allowed'
  | 'bad-request'
  | 'body-too-large'
  | 'headers-too-large'
  | 'too-many-streams'
  | 'lock-timeout'
  | 'connection-lost'
  | 'client-closed'
  | 'tokens-exhausted'
  | 'storage-unavailable'
  | 'claim-unknown'
  | 'bad-identity'
  | 'internal';

export interface ErrorSpec {
  /** Session-protocol code (`ERROR 0x0N`), where the error ends a session. */
  readonly sessionCode?: number;
  /** Whether the condition is the server's (client reconnects at once) or the client's own. */
  readonly side: 'server' | 'client';
  readonly httpStatus: number;
  readonly message: string;
}

// Kept with its literal types (`as const`), so that SessionErrorName below can be read off it.
const TABLE = {
  'server-going-away': { sessionCode: 0x01, side: 'server', httpStatus: 503, message: 'server going away' },
  'protocol-error': { sessionCode: 0x02, side: 'client', httpStatus: 400, message: 'protocol error' },
  'lease-expired': { sessionCode: 0x03, side: 'client', httpStatus: 409, message: 'lease expired' },
  'force-released': { sessionCode: 0x04, side: 'client', httpStatus: 409, message: 'force-released by an admin' },
  kicked: { sessionCode: 0x05, side: 'client', httpStatus: 409, message: 'removed from the queue by an admin' },
  'too-many-connections': { sessionCode: 0x06, side: 'server', httpStatus: 503, message: 'too many connections' },
  // No grant can be made on this node: every u64 fencing token has been issued (for good), or the
  // token ceiling cannot be written to the data dir (disk full, I/O error; grants resume by themselves).
  'tokens-exhausted': { sessionCode: 0x07, side: 'server', httpStatus: 503, message: 'fencing tokens exhausted: this node can grant no more locks' },
  'storage-unavailable': {
    sessionCode: 0x08,
    side: 'server',
    httpStatus: 503,
    message: 'storage unavailable: the token ceiling cannot be written to the data dir',
  },
  // A RESUME that names no claim waiting for its client here: none with that key on that lock
  // (it expired, was released or ended, never existed, or the key is wrong: all look the same).
  'claim-unknown': { sessionCode: 0x09, side: 'client', httpStatus: 404, message: 'claim unknown: no claim with that key is waiting to be resumed here' },
  'io-timeout': { sessionCode: 0x02, side: 'client', httpStatus: 408, message: 'io timeout' },
  'unknown-op': { side: 'client', httpStatus: 400, message: 'unknown op' },
  'bad-key': { side: 'client', httpStatus: 400, message: 'bad key: 1 to 250 bytes of UTF-8 without whitespace or control characters' },
  'bad-lease': { side: 'client', httpStatus: 400, message: 'bad lease: a decimal number of seconds > 0' },
  'bad-wait': { side: 'client', httpStatus: 400, message: 'bad wait: a decimal number of seconds >= 0' },
  'bad-token': { side: 'client', httpStatus: 400, message: 'bad token: a decimal u64' },
  // A client identity (keyed `I`, session `CLIENT`, `--client-name`) breaking lib/protocol/client-name.ts.
  'bad-identity': {
    side: 'client',
    httpStatus: 400,
    message: 'bad identity: 1 to 128 bytes of UTF-8, no control or format characters, no space at either end',
  },
  'line-too-long': { side: 'client', httpStatus: 413, message: 'line too long: over 4096 bytes' },
  'backlog-full': { side: 'client', httpStatus: 429, message: 'backlog full: too many requests waiting on this connection' },
  'not-found': { side: 'client', httpStatus: 404, message: 'not found' },
  'stale-token': { side: 'client', httpStatus: 409, message: 'token no longer holds the lock' },
  // A keyed `R` naming a session's grant: a session's owner is its connection, so only that
  // connection ends it (by closing); a release by token would end it behind its back.
  'session-claim': { side: 'client', httpStatus: 409, message: 'that token is held by a session: only its own connection can release it, by closing' },
  unauthorized: { side: 'client', httpStatus: 401, message: 'missing or bad credentials' },
  forbidden: { side: 'client', httpStatus: 403, message: 'forbidden' },
  // POST /api/v1/auth/session past its limit per client address (server/console-auth/sign-in-limits.ts).
  'too-many-sign-ins': { side: 'client', httpStatus: 429, message: 'too many sign-ins from this address: wait and try again' },
  'invalid-input': { side: 'client', httpStatus: 422, message: 'invalid input' },
  conflict: { side: 'client', httpStatus: 409, message: 'conflict' },
  'method-not-allowed': { side: 'client', httpStatus: 405, message: 'method not allowed' },
  // A body that is not JSON at all (the ops API); well-formed JSON of the wrong shape is invalid-input.
  'bad-request': { side: 'client', httpStatus: 400, message: 'bad request' },
  // An ops API body past its cap (request-input.ts), and request headers past node's 16 KiB.
  'body-too-large': { side: 'client', httpStatus: 413, message: 'body too large' },
  'headers-too-large': { side: 'client', httpStatus: 431, message: 'request headers too large' },
  // GET /api/v1/events past its cap per client address (or in all): each stream costs memory.
  'too-many-streams': { side: 'client', httpStatus: 429, message: 'too many event streams open' },
  'bad-usage': { side: 'client', httpStatus: 400, message: 'bad usage' },
  // Client-side outcomes: no server sends these, but clients and the CLI report them by name.
  'lock-timeout': { side: 'client', httpStatus: 408, message: 'timed out waiting for the lock' },
  'connection-lost': { side: 'server', httpStatus: 503, message: 'connection lost' },
  'client-closed': { side: 'client', httpStatus: 400, message: 'client closed' },
  internal: { side: 'server', httpStatus: 500, message: 'internal error' },
} as const satisfies Readonly<Record<ErrorName, ErrorSpec>>;

export const ERRORS: Readonly<Record<ErrorName, ErrorSpec>> = TABLE;

/** The errors that end a session: exactly those with a session code (`ERROR 0x0N`) in the table. */
export type SessionErrorName = { [K in ErrorName]: (typeof TABLE)[K] extends { readonly sessionCode: number } ? K : never }[ErrorName];

/** The `ERROR 0x0N` code of an error that ends a session. */
export function sessionCode(name: SessionErrorName): number {
  return TABLE[name].sessionCode;
}

/** The JSON error body of every HTTP answer: `{error: {code, message}}`, the message from the table plus what went wrong. */
export function errorBody(name: ErrorName, detail?: string): { error: { code: ErrorName; message: string } } {
  const spec = ERRORS[name];
  return { error: { code: name, message: detail ? `${spec.message}: ${detail}` : spec.message } };
}

/** Exit code of the CLI for bad flags or arguments. */
export const EXIT_USAGE = 2;
/** `baton serve` refused to start: both token ceiling files are gone from a data dir used before and no --token-floor was given, or one does not hold a number (EX_DATAERR). */
export const EXIT_TOKEN_FLOOR_NEEDED = 65;
/** `baton serve` refused to start: the data dir cannot be written the way the token ceiling is stored (EX_CANTCREAT). */
export const EXIT_DATA_DIR_UNWRITABLE = 73;

/** `0x01`, the form codes take on the session wire. */
export function hexCode(code: number): string {
  return `0x${code.toString(16).padStart(2, '0')}`;
}

/** Maps a session error code back to its name (for clients). */
export function errorNameForSessionCode(code: number): ErrorName | undefined {
  for (const name of Object.keys(ERRORS) as ErrorName[]) {
    if (ERRORS[name].sessionCode === code && name !== 'io-timeout') return name;
  }
  return undefined;
}

/** An error carrying a Baton error name; thrown by the client library and the CLI. */
export class BatonError extends Error {
  readonly code: ErrorName;
  constructor(code: ErrorName, detail?: string) {
    super(detail ? `${ERRORS[code].message}: ${detail}` : ERRORS[code].message);
    this.name = 'BatonError';
    this.code = code;
  }
}

/** A BatonError whose message is exactly `text`, so the operator reads the server's own words. */
export function errorWithText(name: ErrorName, text: string): BatonError {
  const error = new BatonError(name);
  if (text !== '') error.message = text;
  return error;
}
