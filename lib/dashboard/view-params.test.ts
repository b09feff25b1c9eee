import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { EMPTY_VIEW, formatViewParams, MAX_EXPIRING_S, MAX_HELD_S, parseViewParams, sameView, type ViewParams } from './view-params.ts';

// Lock names as the protocols take them: printable, no whitespace or control characters.
const lockName = fc.stringMatching(/^[!-~\u00a1-\u024f\u4e00-\u4e10]{1,60}$/);

const view: fc.Arbitrary<ViewParams> = fc.record({
  lock: fc.option(lockName, { nil: null }),
  q: fc.string({ maxLength: 40 }).filter((s) => !/\p{Cs}/u.test(s)),
  proto: fc.constantFrom(null, 'keyed' as const, 'session' as const),
  waiters: fc.boolean(),
  expiringWithinS: fc.option(fc.integer({ min: 1, max: MAX_EXPIRING_S }), { nil: null }),
  heldLongerThanS: fc.option(fc.integer({ min: 0, max: MAX_HELD_S }), { nil: null }),
  sort: fc.record({
    key: fc.constantFrom('name' as const, 'heldFor' as const, 'token' as const, 'leaseLeft' as const, 'queue' as const),
    direction: fc.constantFrom('asc' as const, 'desc' as const),
  }),
  client: fc.option(
    fc.record({
      by: fc.constantFrom('identity' as const, 'address' as const),
      value: fc.string({ minLength: 1, maxLength: 60 }).filter((s) => !/[\p{Cc}\p{Cs}]/u.test(s)),
    }),
    { nil: null },
  ),
});

describe('the view in the URL', () => {
  it('reads back every view it writes', () => {
    fc.assert(
      fc.property(view, (v) => {
        expect(parseViewParams(formatViewParams(v))).toEqual(v);
      }),
    );
  });

  it('keeps parameters it does not own, and drops its own when they are off', () => {
    expect(formatViewParams(EMPTY_VIEW, '?theme=dark&lock=old&q=x')).toBe('?theme=dark');
    expect(formatViewParams({ ...EMPTY_VIEW, lock: 'jobs/nightly', waiters: true }, '?theme=dark')).toBe('?theme=dark&lock=jobs%2Fnightly&waiters=1');
    expect(formatViewParams(EMPTY_VIEW)).toBe('');
  });

  it('reads the documented parameters', () => {
    expect(parseViewParams('?lock=jobs%2Fnightly&q=billing&proto=session&waiters=1&expiring=10&held=300')).toEqual({
      lock: 'jobs/nightly',
      q: 'billing',
      proto: 'session',
      waiters: true,
      expiringWithinS: 10,
      heldLongerThanS: 300,
      sort: { key: 'name', direction: 'asc' },
      client: null,
    });
    expect(parseViewParams('?sort=queue.desc&client=deploy-bot%40ci%20pid%207').sort).toEqual({ key: 'queue', direction: 'desc' });
    expect(parseViewParams('?client=deploy-bot%40ci%20pid%207').client).toEqual({ by: 'identity', value: 'deploy-bot@ci pid 7' });
    expect(parseViewParams('?client=127.0.0.1%3A5000&clientBy=address').client).toEqual({ by: 'address', value: '127.0.0.1:5000' });
  });

  it('writes the sort only when it is not the default order', () => {
    expect(formatViewParams({ ...EMPTY_VIEW, sort: { key: 'queue', direction: 'desc' } })).toBe('?sort=queue.desc');
    expect(formatViewParams({ ...EMPTY_VIEW, sort: { key: 'name', direction: 'asc' } }, '?sort=queue.desc')).toBe('');
  });

  it('ignores values it cannot read instead of failing', () => {
    const bad = parseViewParams('?lock=a%20b&proto=udp&waiters=yes&expiring=-1&held=1e3');
    expect(bad).toEqual(EMPTY_VIEW);
    expect(parseViewParams('?lock=&held=010&expiring=86401').lock).toBeNull();
    expect(parseViewParams('?held=010').heldLongerThanS).toBeNull();
    expect(parseViewParams('?expiring=86401').expiringWithinS).toBeNull();
    expect(parseViewParams(`?lock=${'x'.repeat(251)}`).lock).toBeNull();
    expect(parseViewParams(`?q=${'x'.repeat(201)}`).q).toBe('');
    expect(parseViewParams('?lock=a%0Ab').lock).toBeNull();
    expect(parseViewParams('?sort=queue').sort).toEqual(EMPTY_VIEW.sort);
    expect(parseViewParams('?sort=queue.down').sort).toEqual(EMPTY_VIEW.sort);
    expect(parseViewParams('?sort=holder.asc').sort).toEqual(EMPTY_VIEW.sort);
    expect(parseViewParams('?client=a%0Ab').client).toBeNull();
    expect(parseViewParams('?client=').client).toBeNull();
  });

  it('never throws, whatever the query', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (s) => {
        const v = parseViewParams(s);
        expect(v.lock === null || v.lock.length > 0).toBe(true);
      }),
    );
  });

  it('compares views field by field', () => {
    expect(sameView(EMPTY_VIEW, { ...EMPTY_VIEW })).toBe(true);
    expect(sameView(EMPTY_VIEW, { ...EMPTY_VIEW, heldLongerThanS: 0 })).toBe(false);
    expect(sameView(EMPTY_VIEW, { ...EMPTY_VIEW, sort: { key: 'name', direction: 'desc' } })).toBe(false);
    expect(sameView(EMPTY_VIEW, { ...EMPTY_VIEW, client: { by: 'identity', value: 'x' } })).toBe(false);
    expect(sameView({ ...EMPTY_VIEW, client: { by: 'identity', value: 'x' } }, { ...EMPTY_VIEW, client: { by: 'address', value: 'x' } })).toBe(false);
  });
});
