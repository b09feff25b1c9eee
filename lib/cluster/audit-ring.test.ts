import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../ops-api/api-types.ts';
import { AuditRing } from './audit-ring.ts';

const entry = (at: number, id?: string, node = 'a'): AuditEntry => ({
  at,
  who: 'bearer:admin',
  action: 'force-release',
  target: `lock-${at}`,
  result: 'ok',
  detail: null,
  node,
  ...(id === undefined ? {} : { id }),
});

describe('AuditRing', () => {
  it('keeps entries from several nodes in time order, whatever order they arrive in', () => {
    const ring = new AuditRing(10);
    ring.merge([entry(10, 'a/1/1'), entry(30, 'a/1/2')]);
    ring.merge([entry(20, 'b/1/1', 'b'), entry(40, 'b/1/2', 'b')]);
    expect(ring.recent(10).map((e) => e.at)).toEqual([10, 20, 30, 40]);
  });

  it('keeps an entry once however often it is replicated (by its id), and says which were new', () => {
    const ring = new AuditRing(10);
    expect(ring.merge([entry(10, 'a/1/1')])).toHaveLength(1);
    const again = ring.merge([entry(10, 'a/1/1'), entry(11, 'a/1/2')]);
    expect(again.map((e) => e.id)).toEqual(['a/1/2']);
    expect(ring.size).toBe(2);
  });

  it('never takes an entry without an id (an old log line) for a duplicate', () => {
    const ring = new AuditRing(10, [entry(10), entry(10)]);
    expect(ring.size).toBe(2);
  });

  it('is bounded: the oldest go, and a replicated entry older than all it keeps is not added', () => {
    const ring = new AuditRing(3);
    ring.merge([entry(1, 'x1'), entry(2, 'x2'), entry(3, 'x3'), entry(4, 'x4')]);
    expect(ring.recent(10).map((e) => e.id)).toEqual(['x2', 'x3', 'x4']);
    expect(ring.has('x1')).toBe(false);
    expect(ring.merge([entry(0, 'old')])).toEqual([]);
    expect(ring.size).toBe(3);
  });

  it('returns the newest entries, newest last', () => {
    const ring = new AuditRing(10, [entry(1, 'a'), entry(2, 'b'), entry(3, 'c')]);
    expect(ring.recent(2).map((e) => e.id)).toEqual(['b', 'c']);
    expect(ring.recent(0)).toEqual([]);
  });
});
