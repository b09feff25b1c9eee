// How the dashboard writes numbers and times for people. Pure and clock-free: callers pass
// the durations they computed (see dashboard-state.ts for the local countdown arithmetic).

const DASH = '—';

/**
 * A lease or wait countdown. It reads like any other duration ("59 m 49 s", "4.2 s"), not as
 * seconds with a decimal ("3589.3 s"): an operator compares it with the lease they set.
 */
export function formatCountdown(ms: number): string {
  return formatDuration(ms);
}

/** A lease countdown with its unit of meaning: "59 m 49 s left", "850 ms left". */
export function formatLeaseLeft(ms: number): string {
  return `${formatDuration(ms)} left`;
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

/**
 * A span of time at the precision that matters for it: "850 ms", "4.2 s", "4 m 5 s",
 * "2 h 3 m", "3 d 4 h". Always rounded down, so a countdown never shows more than is left.
 */
export function formatDuration(ms: number): string {
  const v = Number.isFinite(ms) ? Math.max(0, ms) : 0;
  // Rounded down like the longer spans: 999.6 ms is not yet "1000 ms".
  if (v < 1_000) return `${Math.floor(v)} ms`;
  if (v < 60_000) return `${(Math.floor(v / 100) / 10).toFixed(1)} s`;
  const seconds = Math.floor(v / 1_000);
  if (seconds < 3_600) return `${Math.floor(seconds / 60)} m ${seconds % 60} s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 1_440) return `${Math.floor(minutes / 60)} h ${minutes % 60} m`;
  const hours = Math.floor(minutes / 60);
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}

/** A latency in ms with sensible precision; null (no samples) prints a dash. */
export function formatLatency(ms: number | null): string {
  if (ms === null) return DASH;
  // The history reports latencies under 1 µs as 0 (a release hands over in the same step).
  if (ms === 0) return '< 1 µs';
  if (ms < 0.01) return `${(ms * 1000).toFixed(1)} µs`;
  // Thresholds on the rounded value, so 0.9996 ms reads "1.0 ms" and not "1000 µs".
  if (Math.round(ms * 1000) < 1000) return `${Math.round(ms * 1000)} µs`;
  if (Math.round(ms * 10) < 1000) return `${ms.toFixed(1)} ms`;
  return `${formatCount(Math.round(ms))} ms`;
}

/** "just now", "12 s ago", "3 m ago", "2 h ago". */
export function formatAgo(ms: number): string {
  const v = Math.max(0, ms);
  if (v < 1_000) return 'just now';
  if (v < 60_000) return `${Math.floor(v / 1_000)} s ago`;
  if (v < 3_600_000) return `${Math.floor(v / 60_000)} m ago`;
  if (v < 86_400_000) return `${Math.floor(v / 3_600_000)} h ago`;
  return `${Math.floor(v / 86_400_000)} d ago`;
}

// One formatter, made once: Number#toLocaleString builds its formatter on every call (about
// 0.1 ms each in a profile of the dashboard, a few dozen times per redraw).
const COUNT_FORMAT = new Intl.NumberFormat('en-US');
const ONE_DECIMAL_FORMAT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 1 });

/** Integers with thousands separators: 10,000. */
export function formatCount(n: number): string {
  return COUNT_FORMAT.format(n);
}

/** A rate or count with at most one decimal and thousands separators: 1,234.5. */
export function formatOneDecimal(n: number): string {
  return ONE_DECIMAL_FORMAT.format(n);
}

/** A decimal token string grouped for reading ("18,446,744,073,709,551,615"); the raw string is shown where it is copied. */
export function groupDigits(decimal: string): string {
  return decimal.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** Local wall-clock time of day, 24-hour: "14:03:07". */
export function formatClockTime(epochMs: number): string {
  const d = new Date(epochMs);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}:${pad2(d.getSeconds())}`;
}

/** Local wall-clock hours and minutes: "14:03" (chart ticks). */
export function formatClockMinutes(epochMs: number): string {
  const d = new Date(epochMs);
  return `${pad2(d.getHours())}:${pad2(d.getMinutes())}`;
}

/**
 * What a failover did with the resumable session claims, for the timeline: "12 session claims
 * carried over: 11 resumed, 1 expired"; the claims neither resumed nor expired yet are "still
 * reconnecting" (while their lease runs). Null for an entry without them (a split brain).
 */
export function carriedClaimsText(f: { claimsCarried?: number; claimsResumed?: number; claimsExpired?: number; claimsEnded?: number }): string | null {
  if (f.claimsCarried === undefined) return null;
  if (f.claimsCarried === 0) return 'no session claims carried over';
  const noun = f.claimsCarried === 1 ? 'claim' : 'claims';
  const resumed = f.claimsResumed ?? 0;
  const expired = f.claimsExpired ?? 0;
  const ended = f.claimsEnded ?? 0;
  const waiting = f.claimsCarried - resumed - expired - ended;
  const byAdmin = ended > 0 ? `, ${ended} ended by an admin` : '';
  const rest = waiting > 0 ? `, ${waiting} still reconnecting` : '';
  return `${f.claimsCarried} session ${noun} carried over: ${resumed} resumed, ${expired} expired${byAdmin}${rest}`;
}

/** A span that may be µs or hours (a hold time, a wait): latency precision below a second, then "12.3 s", "2 m 05 s". */
export function formatSpan(ms: number | null): string {
  if (ms === null || ms < 1_000) return formatLatency(ms);
  return formatDuration(ms);
}
