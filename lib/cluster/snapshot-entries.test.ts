import { describe, expect, it } from 'vitest';
import { isSnapshotHolder, isSnapshotWaiter } from './snapshot-entries.ts';

const HASH = 'a'.repeat(64);
const holder = ['k', 1, '42', 'keyed', '127.0.0.1:5000', 5_000, false, 4_000, 1_000];
const waiter = ['k', 2, 'session', '127.0.0.1:5001', 5_000, true, 100, null];

describe('snapshot entries with a client identity', () => {
  it('take the identity after the key hash, or after null when there is no hash', () => {
    expect(isSnapshotHolder([...holder, null, 'worker-7@host-3 pid 4121'])).toBe(true);
    expect(isSnapshotHolder([...holder, HASH, 'worker 7'])).toBe(true);
    expect(isSnapshotWaiter([...waiter, null, 'job runner'])).toBe(true);
    expect(isSnapshotWaiter([...waiter, HASH, 'job runner'])).toBe(true);
  });

  it('read the older shapes as before: no tail, or the key hash alone', () => {
    expect(isSnapshotHolder(holder)).toBe(true);
    expect(isSnapshotHolder([...holder, HASH])).toBe(true);
    expect(isSnapshotWaiter(waiter)).toBe(true);
    expect(isSnapshotWaiter([...waiter, HASH])).toBe(true);
  });

  it('refuse an identity that breaks the rule, a null hash without an identity, and extra fields', () => {
    for (const tail of [[null, ' lead'], [null, 'tab\there'], [null, 7], [null, 'x'.repeat(129)], [null], [HASH, 'ok', 'extra'], ['not-a-hash', 'ok']]) {
      expect(isSnapshotHolder([...holder, ...tail])).toBe(false);
      expect(isSnapshotWaiter([...waiter, ...tail])).toBe(false);
    }
  });
});
