import type { Clock } from '../../lib/engine/clock.ts';

/** The daemon's monotonic clock: performance.now(), never wall time. */
export const performanceClock: Clock = { now: () => performance.now() };
