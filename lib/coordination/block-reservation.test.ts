import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_TOKEN } from '../tokens/token-contract.ts';
import {
  ABSENT,
  type Block,
  type CeilingRead,
  encodeCeiling,
  judgeReply,
  parseCeiling,
  type ReservationReply,
  type ReservationRequest,
  reservationRequest,
  TokensExhausted,
} from './block-reservation.ts';

describe('a token block reserved by compare-and-swap', () => {
  it('takes the block above the ceiling read, expecting the revision it read', () => {
    const req = reservationRequest({ ceiling: 200n, modRevision: 7n }, 100n);
    expect(req).toEqual({ expectModRevision: 7n, newCeiling: 300n, block: { first: 201n, last: 300n }, roleGuard: undefined });
    expect(judgeReply(req, { succeeded: true })).toEqual({ kind: 'reserved', block: { first: 201n, last: 300n } });
  });

  it('starts at 1 on a key that does not exist yet (revision 0)', () => {
    expect(reservationRequest(ABSENT, 100n).block).toEqual({ first: 1n, last: 100n });
  });

  it('starts above the node’s own floor when that is higher (a lost or reset ceiling key)', () => {
    expect(reservationRequest({ ceiling: 100n, modRevision: 3n }, 100n, 5_000n).block).toEqual({ first: 5_001n, last: 5_100n });
  });

  it('retries above what the failed swap read back', () => {
    const req = reservationRequest({ ceiling: 200n, modRevision: 7n }, 100n);
    const read: CeilingRead = { ceiling: 300n, modRevision: 9n };
    expect(judgeReply(req, { succeeded: false, current: read, roleLease: null })).toEqual({ kind: 'retry', read });
  });

  it('with a role guard, a failed swap whose role key has another lease is not the holder’s', () => {
    const req = reservationRequest({ ceiling: 200n, modRevision: 7n }, 100n, 0n, { lease: 42n });
    const read: CeilingRead = { ceiling: 200n, modRevision: 7n };
    expect(judgeReply(req, { succeeded: false, current: read, roleLease: 43n })).toEqual({ kind: 'not-holder' });
    expect(judgeReply(req, { succeeded: false, current: read, roleLease: null })).toEqual({ kind: 'not-holder' });
    expect(judgeReply(req, { succeeded: false, current: { ceiling: 300n, modRevision: 8n }, roleLease: 42n }).kind).toBe('retry');
  });

  it('refuses a block past 2^64-1 and a size that is not positive', () => {
    expect(() => reservationRequest({ ceiling: MAX_TOKEN - 50n, modRevision: 1n }, 100n)).toThrow(TokensExhausted);
    expect(reservationRequest({ ceiling: MAX_TOKEN - 100n, modRevision: 1n }, 100n).block.last).toBe(MAX_TOKEN);
    expect(() => reservationRequest(ABSENT, 0n)).toThrow(/positive/);
  });

  it('reads and writes the ceiling as a decimal u64 only', () => {
    expect(parseCeiling(encodeCeiling(18_446_744_073_709_551_615n))).toBe(MAX_TOKEN);
    expect(parseCeiling('0')).toBe(0n);
    for (const bad of ['', '-1', '01', '1e3', ' 1', '18446744073709551616', 'x']) expect(() => parseCeiling(bad)).toThrow(/ceiling/);
  });
});

/**
 * A model etcd (one key, linearizable: each transaction applied at once, in some order) and
 * reservers that read, send swaps, and get or lose the answers, interleaved as fast-check likes.
 * A reserver is any active ever elected: several may run at once (a cut-off one that has not
 * noticed, a new one), or one after another.
 */
interface Reserver {
  read: CeilingRead | null;
  floor: bigint;
  won: Block[];
}

type Judge = (req: ReservationRequest, reply: ReservationReply) => ReturnType<typeof judgeReply>;

function run(actions: { who: number; what: number }[], reservers: number, size: bigint, judge: Judge) {
  let store: CeilingRead = ABSENT;
  let revision = 0n;
  const rs: Reserver[] = Array.from({ length: reservers }, () => ({ read: null, floor: 0n, won: [] }));
  const inFlight: { who: number; req: ReservationRequest }[] = [];
  /** Blocks in the order etcd applied their swaps (what the judge was told or not). */
  const applied: Block[] = [];
  for (const { who, what } of actions) {
    const r = rs[who % reservers] as Reserver;
    const kind = what % 4;
    if (kind === 0) {
      // A plain read (the start, or after an answer was lost).
      r.read = store;
    } else if (kind === 1 && r.read !== null) {
      inFlight.push({ who: who % reservers, req: reservationRequest(r.read, size, r.floor) });
      r.read = null;
    } else if (inFlight.length > 0) {
      // etcd applies one pending swap; its answer comes back (kind 2) or is lost (kind 3).
      const [pending] = inFlight.splice(what % inFlight.length, 1);
      if (pending === undefined) continue;
      const owner = rs[pending.who] as Reserver;
      let reply: ReservationReply;
      if (store.modRevision === pending.req.expectModRevision) {
        revision++;
        store = { ceiling: pending.req.newCeiling, modRevision: revision };
        applied.push(pending.req.block);
        reply = { succeeded: true };
      } else reply = { succeeded: false, current: store, roleLease: null };
      if (kind === 3) continue;
      const j = judge(pending.req, reply);
      if (j.kind === 'reserved') {
        owner.won.push(j.block);
        if (j.block.last > owner.floor) owner.floor = j.block.last;
      } else if (j.kind === 'retry') owner.read = j.read;
    }
  }
  return { won: rs.flatMap((r) => r.won), perReserver: rs.map((r) => r.won), applied };
}

const actions = fc.array(fc.record({ who: fc.nat(7), what: fc.nat(1_000) }), { maxLength: 200, size: 'large' });

/** No token in two blocks won, every reserver's blocks rising, and the applied ones rising in etcd's order. */
function safe(result: ReturnType<typeof run>): boolean {
  const sorted = [...result.won].sort((a, b) => (a.first < b.first ? -1 : a.first > b.first ? 1 : 0));
  for (let i = 1; i < sorted.length; i++) if ((sorted[i] as Block).first <= (sorted[i - 1] as Block).last) return false;
  for (const blocks of result.perReserver)
    for (let i = 1; i < blocks.length; i++) if ((blocks[i] as Block).first <= (blocks[i - 1] as Block).last) return false;
  for (let i = 1; i < result.applied.length; i++) if ((result.applied[i] as Block).first <= (result.applied[i - 1] as Block).last) return false;
  return true;
}

describe('blocks never overlap across any sequence of actives (property)', () => {
  it('whatever the interleaving of reads, swaps, and answers delivered or lost', () => {
    fc.assert(
      fc.property(actions, fc.integer({ min: 1, max: 8 }), fc.bigInt({ min: 1n, max: 1_000n }), (acts, n, size) => safe(run(acts, n, size, judgeReply))),
      { numRuns: 2_000 },
    );
  });

  it('and every reserver that keeps trying gets a block (a lost swap re-reads and retries)', () => {
    // One reserver alone: each read, swap and answer round wins, whatever came before.
    const result = run(
      [0, 1, 2, 0, 1, 2].map((what) => ({ who: 0, what })),
      1,
      100n,
      judgeReply,
    );
    expect(result.won).toEqual([
      { first: 1n, last: 100n },
      { first: 101n, last: 200n },
    ]);
  });

  it('would overlap if a failed swap were taken as won (the check can fail)', () => {
    const careless: Judge = (req) => ({ kind: 'reserved', block: req.block });
    const out = fc.check(
      fc.property(actions, fc.integer({ min: 2, max: 8 }), (acts, n) => safe(run(acts, n, 100n, careless))),
      { numRuns: 2_000 },
    );
    expect(out.failed).toBe(true);
  });
});
