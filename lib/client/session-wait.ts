// How long a session client waits for its lock. The session wire has no wait field: the client
// keeps the wait itself, with a timer (the wire durations are lib/protocol/duration-text.ts).
import { errorWithText } from './client-errors.ts';

/** The longest delay setTimeout takes; it fires at once (with a warning) for anything longer. */
const MAX_TIMER_MS = 0x7fffffff;

/**
 * Session wait, kept on the client by a timer: ms > 0, or Infinity for forever. 0 and undefined
 * also mean forever, as for the keyed wait and `baton run --wait 0`; so does a wait longer than
 * a timer can hold (~24.8 days), which would otherwise expire at once.
 */
export function checkWaitMs(waitMs: number | undefined): number {
  if (waitMs === undefined || waitMs === 0) return Infinity;
  if (!(waitMs >= 0)) throw errorWithText('bad-wait', `bad wait: ${waitMs} ms; a number of ms >= 0`);
  return waitMs > MAX_TIMER_MS ? Infinity : waitMs;
}
