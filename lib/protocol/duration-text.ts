// The clients' half of the duration fields. The API speaks milliseconds; the keyed wire speaks
// decimal seconds (read back by wire-fields.ts parseDecimalSecondsMs) and the session wire whole
// milliseconds. Converting here (exactly, without float noise like 0.30000000000000004) keeps
// that difference out of the clients, and refuses bad values before they reach a socket.
import { errorWithText } from '../errors.ts';

/** The smallest positive amount the wire text below can carry, in seconds. */
const SMALLEST = '0.000001';

/** Keyed lease: ms > 0 → decimal seconds, e.g. 250 → "0.25". */
export function leaseToWireSeconds(leaseMs: number): string {
  if (!(leaseMs > 0) || !Number.isFinite(leaseMs)) {
    throw errorWithText('bad-lease', `bad lease: ${leaseMs} ms; a finite number of ms > 0`);
  }
  return msToSeconds(leaseMs);
}

/**
 * Keyed wait: ms >= 0 → decimal seconds. As on the wire, 0 means wait forever; so do
 * undefined and Infinity, which read better in calling code.
 */
export function waitToWireSeconds(waitMs: number | undefined): string {
  if (waitMs === undefined || waitMs === Infinity) return '0';
  if (!(waitMs >= 0) || !Number.isFinite(waitMs)) {
    throw errorWithText('bad-wait', `bad wait: ${waitMs} ms; a number of ms >= 0`);
  }
  return msToSeconds(waitMs);
}

/** Session lease: whole ms > 0, sent as is. */
export function sessionLeaseMs(leaseMs: number): number {
  if (!Number.isSafeInteger(leaseMs) || leaseMs <= 0) {
    throw errorWithText('bad-lease', `bad lease: ${leaseMs} ms; a whole number of ms > 0`);
  }
  return leaseMs;
}

function msToSeconds(ms: number): string {
  if (ms === 0) return '0';
  if (Number.isSafeInteger(ms)) {
    const whole = Math.floor(ms / 1000);
    const fraction = ms - whole * 1000;
    if (fraction === 0) return String(whole);
    return trimZeros(`${whole}.${String(fraction).padStart(3, '0')}`);
  }
  const text = trimZeros((ms / 1000).toFixed(6));
  // A positive amount must never round to "0", which would mean "forever" for a wait.
  return text === '0' ? SMALLEST : text;
}

function trimZeros(decimal: string): string {
  let end = decimal.length;
  while (decimal.charCodeAt(end - 1) === 48 /* 0 */) end--;
  if (decimal.charCodeAt(end - 1) === 46 /* . */) end--;
  return decimal.slice(0, end);
}
