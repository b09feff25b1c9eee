import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkMargins, DEFAULT_MARGINS, GrantPermission, nextKeepAliveAt, type PermissionMargins, permittedUntil } from './grant-permission.ts';

const TTL = 3_000;

describe('the grant permission of an etcd lease', () => {
  it('counts the TTL from before the keep-alive was sent, less the drift margin', () => {
    const p = new GrantPermission({ driftRate: 0.01, fixedMs: 50 });
    p.renewed(1_000, TTL);
    expect(p.permittedUntil).toBe(1_000 + 2_970 - 50);
    expect(p.mayGrant(3_919)).toBe(true);
    expect(p.mayGrant(3_920)).toBe(false);
  });

  it('grants nothing before any keep-alive was answered', () => {
    expect(new GrantPermission().mayGrant(0)).toBe(false);
  });

  it('keeps the largest bound when replies come out of order', () => {
    const p = new GrantPermission();
    p.renewed(2_000, TTL);
    p.renewed(1_000, TTL);
    expect(p.permittedUntil).toBe(permittedUntil(2_000, TTL));
  });

  it('ends for good when a reply says the lease is gone, and a late reply does not bring it back', () => {
    const p = new GrantPermission();
    p.renewed(1_000, TTL);
    p.renewed(2_000, 0);
    expect(p.mayGrant(1_001)).toBe(false);
    p.renewed(1_500, TTL);
    expect(p.mayGrant(1_501)).toBe(false);
    expect(p.revoked).toBe(true);
  });

  it('ends at once on revoke (a node that resigns stops granting before the lease is revoked at etcd)', () => {
    const p = new GrantPermission();
    p.renewed(1_000, TTL);
    p.revoke();
    expect(p.mayGrant(1_001)).toBe(false);
  });

  it('sends keep-alives a third of the TTL apart, well inside the permission', () => {
    expect(nextKeepAliveAt(1_000, TTL)).toBe(2_000);
    expect(checkMargins(TTL)).toBeNull();
    expect(checkMargins(60)).toMatch(/leaves no permission/);
    expect(checkMargins(TTL, { driftRate: 1, fixedMs: 0 })).toMatch(/drift rate/);
  });
});

/** One keep-alive round of the model: when it was sent, and what the network and etcd did with it. */
interface Round {
  gap: number;
  /** Reached etcd's leader this long after it was sent (null: lost on the way). */
  toServer: number | null;
  /** The reply came back this long after etcd read it (null: lost on the way back). */
  back: number | null;
}

const round = fc.record({
  gap: fc.integer({ min: 0, max: 2 * TTL }),
  toServer: fc.option(fc.integer({ min: 0, max: 2 * TTL })),
  back: fc.option(fc.integer({ min: 0, max: 2 * TTL })),
});

type Rule = (sentAt: number, ttl: number, arrivedAt: number) => number;

/**
 * Plays rounds against a model etcd whose clock runs at `rate` of ours: a lease read at R lives
 * until R + TTL·rate of our time unless another keep-alive is read before then; once it has ended,
 * every later reply says 0 (it never comes back). The lease was granted at 0. Returns when it first
 * ended (our time) and the replies in the order they arrived.
 */
function play(rounds: Round[], rate: number) {
  let sentAt = 0;
  const reads: { sentAt: number; readAt: number; back: number | null }[] = [];
  for (const r of rounds) {
    sentAt += r.gap;
    if (r.toServer !== null) reads.push({ sentAt, readAt: sentAt + r.toServer, back: r.back });
  }
  reads.sort((a, b) => a.readAt - b.readAt);
  let end = TTL * rate;
  let dead = false;
  const replies: { sentAt: number; arrivedAt: number; ttl: number }[] = [];
  for (const read of reads) {
    if (read.readAt >= end) dead = true;
    if (!dead) end = read.readAt + TTL * rate;
    if (read.back !== null) replies.push({ sentAt: read.sentAt, arrivedAt: read.readAt + read.back, ttl: dead ? 0 : TTL });
  }
  replies.sort((a, b) => a.arrivedAt - b.arrivedAt);
  return { end, replies };
}

/**
 * Whether the bound `rule` gives (the largest of every answered keep-alive, gone for good after a
 * reply of 0) stays at or before the lease's true end after every reply. With `checkClass`, the
 * GrantPermission fed the same replies must give the same bound.
 */
function neverPastTheEnd(rounds: Round[], rate: number, rule: Rule, checkClass?: PermissionMargins): boolean {
  const { end, replies } = play(rounds, rate);
  const p = checkClass === undefined ? undefined : new GrantPermission(checkClass);
  p?.renewed(0, TTL);
  let until = rule(0, TTL, 0);
  for (const reply of replies) {
    if (reply.ttl <= 0) until = Number.NEGATIVE_INFINITY;
    else if (until !== Number.NEGATIVE_INFINITY) until = Math.max(until, rule(reply.sentAt, reply.ttl, reply.arrivedAt));
    p?.renewed(reply.sentAt, reply.ttl);
    if (p !== undefined && p.permittedUntil !== until) return false;
    if (until > end) return false;
  }
  return true;
}

describe('the permission never outlasts the lease (property)', () => {
  const rates = fc.double({ min: 1 - DEFAULT_MARGINS.driftRate, max: 1 + DEFAULT_MARGINS.driftRate, noNaN: true });

  it('whatever the delays, losses, reply order and clock drift within the margin', () => {
    fc.assert(
      fc.property(fc.array(round, { maxLength: 30, size: 'large' }), rates, (rounds, rate) => {
        return neverPastTheEnd(rounds, rate, (sentAt, ttl) => permittedUntil(sentAt, ttl), DEFAULT_MARGINS);
      }),
      { numRuns: 2_000 },
    );
  });

  it('is wrong when measured from the reply (the check can fail)', () => {
    const fromReply = fc.check(
      fc.property(fc.array(round, { maxLength: 30, size: 'large' }), rates, (rounds, rate) =>
        neverPastTheEnd(rounds, rate, (_sentAt, ttl, arrivedAt) => permittedUntil(arrivedAt, ttl)),
      ),
      { numRuns: 2_000 },
    );
    expect(fromReply.failed).toBe(true);
  });

  it('is wrong without the drift margin when etcd’s clock runs fast (the check can fail)', () => {
    const noMargin = fc.check(
      fc.property(fc.array(round, { minLength: 1, maxLength: 30, size: 'large' }), fc.double({ min: 0.9, max: 0.99, noNaN: true }), (rounds, rate) =>
        neverPastTheEnd(rounds, rate, (sentAt, ttl) => permittedUntil(sentAt, ttl, { driftRate: 0, fixedMs: 0 })),
      ),
      { numRuns: 2_000 },
    );
    expect(noMargin.failed).toBe(true);
  });
});
