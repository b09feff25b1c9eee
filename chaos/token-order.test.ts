import { describe, expect, it } from 'vitest';
import { checkHistory } from './history-checker.ts';
import type { ClientEvent } from './history.ts';
import { failover, fault, history, hold, LEASE, T0 } from './history-fixtures.ts';

const orderViolations = (events: ClientEvent[], over: Parameters<typeof history>[0] = {}) =>
  checkHistory(history({ clientEvents: events, ...over }))
    .violations.filter((v) => v.property === 'token-order')
    .map((v) => v.message);

describe('per-lock token order (chaos checker property 6)', () => {
  it('fails when a grant asked for after an earlier grant of the lock arrived has a lower or equal token, with no failover at all', () => {
    expect(orderViolations([...hold('k1', 'L', 500, 0, 100), ...hold('k2', 'L', 400, 2_000, 2_100)])).toEqual([
      expect.stringMatching(/^L: k2 asked .* got token 400 .* not above token 500 that k1 had received/),
    ]);
    expect(orderViolations([...hold('k1', 'L', 500, 0, 100), ...hold('s2', 'L', 500, 200, 300, 'session')])).toHaveLength(1);
    // Rising tokens, and other locks, are fine; so is a lower token on another lock.
    expect(orderViolations([...hold('k1', 'L', 500, 0, 100), ...hold('k2', 'L', 501, 200, 300), ...hold('k3', 'M', 10, 400, 500)])).toEqual([]);
  });

  it('checks across pauses and failovers: neither excuses a token going back', () => {
    const events = [...hold('k1', 'L', 500, 0, 100), ...hold('k2', 'L', 400, 2_000, 2_100)];
    expect(orderViolations(events, { faults: [fault('pause', 500, 3_500)], failovers: [failover(1_500, 'crash')] })).toHaveLength(1);
    expect(orderViolations(events, { faults: [fault('kill9', 500, 1_000)], failovers: [failover(1_500, 'split-brain')] })).toHaveLength(1);
  });

  it('leaves out grants asked for or received in a partition window, to heal + peer timeout + a lease (two actives draw tokens independently)', () => {
    const events = [...hold('k1', 'L', 500, 0, 100), ...hold('k2', 'L', 400, 2_000, 2_100)];
    expect(orderViolations(events, { faults: [fault('partition', 1_000, 1_500)] })).toEqual([]);
    // Past the window (heal + 1000 ms peer timeout + a lease), the order counts again.
    const past = 1_500 + 1_000 + LEASE;
    expect(orderViolations([...events, ...hold('k3', 'L', 450, past + 10, past + 50)], { faults: [fault('partition', 1_000, 1_500)] })).toHaveLength(1);
    expect(orderViolations([...events, ...hold('k3', 'L', 450, past - 10, past + 50)], { faults: [fault('partition', 1_000, 1_500)] })).toEqual([]);
  });

  it('orders by request, so a client that read its grant late is not out of order', () => {
    // k1 asked at -5 and read token 400 only at 2000; k2 asked at 95 (before k1's grant arrived) and got 401 at 100.
    const late: ClientEvent[] = [
      { kind: 'acquire', t: T0 - 5, client: 'k1', lock: 'L', protocol: 'keyed' },
      { kind: 'grant', t: T0 + 2_000, client: 'k1', lock: 'L', protocol: 'keyed', token: '400', leaseMs: LEASE },
      { kind: 'release', t: T0 + 2_010, client: 'k1', lock: 'L', token: '400' },
    ];
    expect(orderViolations([...late, ...hold('k2', 'L', 401, 100, 150)])).toEqual([]);
    // Asked for after k1's late grant arrived, a lower token is out of order.
    expect(orderViolations([...late, ...hold('k2', 'L', 399, 2_100, 2_150)])).toHaveLength(1);
  });

  it('counts the grants it compared', () => {
    const verdict = checkHistory(history({ clientEvents: [...hold('k1', 'L', 1, 0, 10), ...hold('k2', 'L', 2, 20, 30), ...hold('k3', 'L', 3, 40, 50)] }));
    expect(verdict.counts.tokenOrderChecked).toBe(2);
  });
});
