// Turns what the server said (an error name or a session code, plus its human text) and what
// the client saw (a dropped connection) into BatonErrors, so both clients fail the same way.
import { BatonError, ERRORS, errorNameForSessionCode, errorWithText } from '../errors.ts';
import type { ErrorName } from '../errors.ts';

function isErrorName(name: string): name is ErrorName {
  return Object.hasOwn(ERRORS, name);
}

// lib/protocol (the wire durations) throws these too, so the helper lives with BatonError.
export { errorWithText } from '../errors.ts';

/** An `E <op> <key> <name> <text>` from the keyed protocol. */
export function errorFromWireName(name: string, text: string): BatonError {
  if (isErrorName(name)) return errorWithText(name, text);
  // A server newer than this client may send a name we do not know; keep its words.
  return errorWithText('protocol-error', `${name} ${text}`.trim());
}

/** An `ERROR <code> <text>` from the session protocol. */
export function errorFromSessionCode(code: number, text: string): BatonError {
  const name = errorNameForSessionCode(code);
  if (name) return errorWithText(name, text);
  return errorWithText('protocol-error', `unknown error code ${code}: ${text}`);
}

/** Whether the server, not the client, is at fault: the client then tries again elsewhere. */
export function isServerSide(error: Error): boolean {
  return error instanceof BatonError && ERRORS[error.code].side === 'server';
}

/**
 * The connection went away without an error from the server. Like 'server-going-away' it is
 * the server's side of things, so callers retry the same way.
 */
export function connectionLost(detail: string): BatonError {
  return new BatonError('connection-lost', detail);
}

/** Calls after close(), and requests still pending when close() was called. */
export function clientClosed(): BatonError {
  return new BatonError('client-closed');
}
