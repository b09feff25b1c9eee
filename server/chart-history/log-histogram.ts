// A fixed-size log-scaled histogram of durations (the DDSketch idea), for the charts' history of
// queue wait, hold time and blocked time. A histogram is a plain Uint32Array of BINS counts:
// bin 0 holds values below MIN_MS (0 included: an uncontended grant waits 0), bin i ≥ 1 holds
// [MIN_MS·γ^(i-1), MIN_MS·γ^i) and reports 2·MIN_MS·γ^i/(γ+1), which is within RELATIVE_ERROR
// of every value in the bin. Values above MAX_MS land in the top bin. Recording is one Math.log
// and an increment, so it may run on the engine's event stream; nothing here allocates but
// `newHistogram`.

/** What a reported percentile promises: within 5% of the exact nearest-rank one, from MIN_MS to MAX_MS. */
export const RELATIVE_ERROR = 0.05;
/** 1 µs: below it a value reports as 0. */
export const MIN_MS = 0.001;
/** 25 hours: a hold time can be as long as a lease, and the history keeps 24 hours. */
export const MAX_MS = 25 * 3_600_000;

// A little under RELATIVE_ERROR, leaving room for the 4-significant-digit rounding below.
const ALPHA = 0.049;
const GAMMA = (1 + ALPHA) / (1 - ALPHA);
const LOG_GAMMA = Math.log(GAMMA);
const TOP = Math.ceil(Math.log(MAX_MS / MIN_MS) / LOG_GAMMA);
/** Counts per histogram (about 260: 1 KiB as a Uint32Array). */
export const BINS = TOP + 1;
const REPORTED = new Float64Array(BINS);
for (let i = 1; i < BINS; i++) REPORTED[i] = Number(((MIN_MS * 2 * GAMMA ** i) / (GAMMA + 1)).toPrecision(4));

export function newHistogram(): Uint32Array {
  return new Uint32Array(BINS);
}

/** The bin a duration falls in; NaN and negatives go to bin 0 (a bad sample must not break a chart). */
export function binOf(ms: number): number {
  if (!(ms >= MIN_MS)) return 0;
  const i = 1 + Math.floor(Math.log(ms / MIN_MS) / LOG_GAMMA);
  return i > TOP ? TOP : i;
}

/** The value bin `bin` reports (0 for bin 0). */
export function reportedValue(bin: number): number {
  return REPORTED[bin] ?? 0;
}

/**
 * Nearest-rank percentile (the ⌈q·n⌉-th smallest sample) of the samples in bins `from`..TOP,
 * null when there are none. `from` = 1 leaves out the zeros (e.g. grants that did not queue).
 */
export function percentile(counts: ArrayLike<number>, q: number, from = 0): number | null {
  let total = 0;
  for (let i = from; i < BINS; i++) total += counts[i] ?? 0;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (let i = from; i < BINS; i++) {
    seen += counts[i] ?? 0;
    if (seen >= rank) return reportedValue(i);
  }
  return reportedValue(TOP);
}

/** Adds `from` into `into` (both BINS long). */
export function addInto(into: Uint32Array | Float64Array, from: Uint32Array): void {
  for (let i = 0; i < BINS; i++) into[i] = (into[i] ?? 0) + (from[i] ?? 0);
}
