// Paging the audit while entries keep arriving (fast-check): the pages of a filtered range, read
// back in time with `before` cursors, hold exactly the entries that matched when the walk began,
// each once, whatever arrives meanwhile (newer entries, and a peer's catch-up of older ones);
// and `since` brings every entry that arrived after a position, so a page that reads both
// misses nothing. The ring stays within both of its bounds all along.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS, type AuditEntry } from '../ops-api/api-types.ts';
import { type AuditFilter, type AuditRow, matchesAudit } from '../ops-api/audit-filter.ts';
import { auditQuerySchema } from '../ops-api/audit-query.ts';
import { AuditRing } from './audit-ring.ts';

let ids = 0;
const entryArb = fc.record({
  at: fc.integer({ min: 0, max: 50 }),
  who: fc.constantFrom('bearer:admin', 'session:abc', 'bearer:read'),
  action: fc.constantFrom(...AUDIT_ACTIONS),
  target: fc.constantFrom('lock-a', 'lock-b', 'w@h pid 1', 'b', '*'),
  result: fc.constantFrom('ok', 'not-found'),
  detail: fc.constantFrom(null, 'token 1 held by w@h pid 1', 'waiter 3'),
  node: fc.constantFrom('a', 'b', 'c'),
});
const withId = (e: Omit<AuditEntry, 'id'>): AuditEntry => ({ ...e, id: `${e.node}/i/${++ids}` });

const filterArb: fc.Arbitrary<AuditFilter> = fc.record(
  {
    actions: fc.subarray([...AUDIT_ACTIONS], { minLength: 1 }),
    who: fc.constantFrom('admin', 'session'),
    lock: fc.constantFrom('lock', 'lock-a'),
    client: fc.constantFrom('w@h', 'pid 1'),
    node: fc.constantFrom('a', 'b'),
    from: fc.integer({ min: 0, max: 30 }),
    to: fc.integer({ min: 20, max: 60 }),
  },
  { requiredKeys: [] },
);

/** One step of the walk: read the next page, or let entries arrive (newer, or older ones from a catch-up). */
const stepArb = fc.oneof(
  fc.record({ kind: fc.constant('page' as const), limit: fc.integer({ min: 1, max: 7 }) }),
  fc.record({ kind: fc.constant('arrive' as const), entries: fc.array(entryArb, { maxLength: 5 }), late: fc.boolean() }),
);

describe('AuditRing paging (property)', () => {
  it('pages of a filtered range concatenate to exactly the entries that matched when the walk began, while entries arrive; since() brings the rest', () => {
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 60 }), filterArb, fc.array(stepArb, { maxLength: 40 }), (initial, filter, steps) => {
        const ring = new AuditRing(10_000, initial.map(withId));
        const atStart = ring.page(filter, null, 10_000).entries;
        const startSeq = ring.latest;
        const walked: AuditRow[] = [];
        let cursor: { at: number; seq: number } | null = null;
        let done = false;
        const pageOnce = (limit: number) => {
          const got = ring.page(filter, cursor, limit);
          expect(got.entries.length).toBeLessThanOrEqual(limit);
          // Newest last within a page, and every page older than the one before it.
          walked.unshift(...got.entries);
          if (got.older === null) done = true;
          else {
            const [at, seq] = got.older.split('_').map(Number) as [number, number];
            cursor = { at, seq };
          }
        };
        for (const step of steps) {
          if (done) break;
          if (step.kind === 'page') pageOnce(step.limit);
          else ring.merge(step.entries.map((e) => withId(step.late ? e : { ...e, at: e.at + 100 })));
        }
        while (!done) pageOnce(3);
        const seqs = walked.map((r) => r.seq);
        expect(new Set(seqs).size).toBe(seqs.length);
        // The walk holds every entry that matched at its start, each once, in time order.
        const walkedStart = walked.filter((r) => r.seq <= startSeq);
        expect(walkedStart.map((r) => r.id)).toEqual(atStart.map((r) => r.id));
        for (const r of walked) expect(matchesAudit(r, filter)).toBe(true);
        // What the walk did not see of the later arrivals, since() has; together: the whole filtered set.
        const later = ring.since(filter, startSeq, 10_000).entries;
        const union = new Set([...walked.map((r) => r.seq), ...later.map((r) => r.seq)]);
        const all = ring.page(filter, null, 10_000).entries.map((r) => r.seq);
        expect([...union].sort((x, y) => x - y)).toEqual([...all].sort((x, y) => x - y));
      }),
      { numRuns: 300 },
    );
  });

  it('since() in pages of `limit` brings each arrival once, in arrival order of its pages', () => {
    fc.assert(
      fc.property(fc.array(entryArb, { maxLength: 80 }), fc.integer({ min: 1, max: 9 }), (entries, limit) => {
        const ring = new AuditRing(10_000);
        ring.merge(entries.slice(0, 10).map(withId));
        const from = ring.latest;
        ring.merge(entries.slice(10).map(withId));
        const got: number[] = [];
        let after = from;
        for (;;) {
          const page = ring.since({}, after, limit);
          got.push(...page.entries.map((r) => r.seq));
          after = page.latest;
          if (!page.more) break;
        }
        expect(got.sort((x, y) => x - y)).toEqual(Array.from({ length: ring.latest - from }, (_, i) => from + i + 1));
      }),
    );
  });

  it('never holds more than its entry count or its bytes, and always the newest', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(entryArb, fc.integer({ min: 0, max: 3_000 })), { maxLength: 200 }), fc.integer({ min: 1, max: 50 }), (list, capacity) => {
        const budget = 40_000;
        const ring = new AuditRing(capacity, [], budget);
        let at = 0;
        for (const [e, len] of list) {
          ring.merge([withId({ ...e, at: at++, detail: 'x'.repeat(len) })]);
          expect(ring.size).toBeLessThanOrEqual(capacity);
          expect(ring.byteSize).toBeLessThanOrEqual(budget);
        }
        const kept = ring.recent(capacity).map((e) => e.at);
        if (list.length > 0) expect(kept.at(-1)).toBe(list.length - 1);
        expect(kept).toEqual([...kept].sort((x, y) => x - y));
      }),
    );
  });
});

describe('the audit query', () => {
  it('reads filters, a cursor and a page size', () => {
    const q = auditQuerySchema.parse({ limit: '50', action: 'kick,handoff', who: 'admin', before: '1764912000000_42', from: '1', to: '2' });
    expect(q).toMatchObject({ limit: 50, action: ['kick', 'handoff'], who: 'admin', before: { at: 1764912000000, seq: 42 }, from: 1, to: 2 });
  });

  it.each([
    [{ limit: '0' }, 'limit'],
    [{ limit: '1001' }, 'limit'],
    [{ action: 'reboot' }, 'action'],
    [{ before: 'yesterday' }, 'before'],
    [{ before: '1_2', after: '3' }, 'after'],
    [{ from: '5', to: '4' }, 'from'],
    [{ nodes: 'a' }, 'nodes'],
  ])('refuses %j (naming %s)', (input, field) => {
    const r = auditQuerySchema.safeParse(input);
    expect(r.success).toBe(false);
    expect(JSON.stringify(r.error?.issues)).toContain(field);
  });
});

describe('the retention of typical entries', () => {
  it('keeps 10,000 force-releases with a detail whole, in about 6 MB counted at their most', () => {
    const ring = new AuditRing(10_000, [], 16 * 1024 * 1024);
    for (let i = 0; i < 10_000; i++) {
      ring.merge([
        {
          at: 1_764_900_000_000 + i,
          who: 'session:3fa2c1d0',
          action: 'force-release',
          target: `jobs/nightly-${i}`,
          result: 'ok',
          detail: `token ${i} held by worker-${i % 50}@host-3 pid 4121`,
          node: 'a',
          id: `a/1bbe8882-9522-414f-b702-9a4c5c34e7a9/${i}`,
        },
      ]);
    }
    expect(ring.size).toBe(10_000);
    expect(ring.byteSize).toBeGreaterThan(5_500_000);
    expect(ring.byteSize).toBeLessThan(6_500_000);
  });
});
