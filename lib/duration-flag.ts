// Durations as people type them on a command line (`baton run --wait 5s`, the chaos runner):
// "250ms", "5s", "2m", "1h", "1.5s". Never timestamps. The protocols' duration fields are
// lib/protocol/duration-text.ts; the session client's own wait is lib/client/session-wait.ts.

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };
const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/;

/** Milliseconds, or null when `text` is not a duration. */
export function parseDurationFlag(text: string): number | null {
  const m = DURATION.exec(text.trim());
  if (m === null) return null;
  const unit = UNITS[m[2] ?? ''];
  if (unit === undefined) return null; // the pattern admits only the units above
  const ms = Number(m[1]) * unit;
  return Number.isFinite(ms) ? ms : null;
}

export function formatDurationFlag(ms: number): string {
  if (ms < 1_000) return `${ms}ms`;
  if (ms < 60_000) return `${ms / 1_000}s`;
  return `${ms / 60_000}m`;
}
