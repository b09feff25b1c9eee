// The frozen clock's rule, apart from React so that a unit test can hold it.
import type { StreamStatus } from './query-keys.ts';

/**
 * The time a countdown reads: `tick` while live, the last data's arrival while lost. Not the
 * smaller of the two: the shared tick can be up to a beat older than the last message, and a
 * countdown drawn from that older tick when the banner appears would then move once more, to
 * the last data's time, on the next beat.
 */
export function dataNow(tick: number, status: Pick<StreamStatus, 'phase' | 'lastData'>): number {
  return status.phase === 'disconnected' && status.lastData !== undefined ? status.lastData.mono : tick;
}
