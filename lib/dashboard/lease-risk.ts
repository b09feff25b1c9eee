// Which held locks the "lease ends within N s" filter lists: the claims really at risk of
// losing their lock, not every lease whose countdown is short.
//
// A session's lease slides: each heartbeat starts it over (the client sends one every lease/4,
// lib/client/heartbeat-schedule.ts), so a healthy 5 s session always shows under 5 s left and
// a plain "remaining <= N s" listed every heartbeating session (issue 30). A fixed lease (keyed,
// or a session claim without a sliding lease) ends when its countdown does unless the holder
// releases first; a sliding one ends only if the heartbeats stop. The page learns of a
// heartbeat late (the renewal scan reports a lease that moved by 500 ms or more, every 300 ms,
// server/live-feed/renewal-scan.ts), so a sliding lease counts as at risk only once the page
// has heard of no heartbeat for longer than two heartbeat gaps and that reporting slack.
import { leaseRemainingAt, type LockRow } from './dashboard-state.ts';

/** How late the page may hear of a heartbeat (renewal scan, flush, stream) without it being late. */
export const RENEWAL_SLACK_MS = 1_000;

/** The silence after which a sliding lease's heartbeats count as late: two gaps, or one gap and the slack. */
export function lateSilenceMs(leaseMs: number): number {
  return Math.max(leaseMs / 2, leaseMs / 4 + RENEWAL_SLACK_MS);
}

/**
 * Whether the lock's holder may lose it within `withinMs` at local time `now`: its lease ends
 * by then and nothing the page knows of will renew it: a fixed lease, a session claim waiting
 * to be resumed (its connection is gone), or a sliding lease whose heartbeats are late.
 */
export function leaseAtRisk(row: LockRow, now: number, withinMs: number): boolean {
  const holder = row.summary.holder;
  const left = leaseRemainingAt(row, now);
  if (holder === null || left === null || left > withinMs) return false;
  if (!holder.sliding || holder.reconnecting === true) return true;
  return holder.leaseMs - left > lateSilenceMs(holder.leaseMs);
}
