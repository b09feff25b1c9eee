import { describe, expect, it } from 'vitest';
import type { LockHistory } from '../ops-api/api-types.ts';
import { lockHistoryCsv, lockHistoryJson } from './lock-history-export.ts';

const history: LockHistory = {
  name: 'jobs/nightly',
  asOf: Date.UTC(2026, 11, 3, 12, 0, 0),
  grants: [
    {
      claimId: '7',
      protocol: 'session',
      client: '127.0.0.1:5001',
      clientName: '=evil()',
      token: '42',
      grantedAt: Date.UTC(2026, 11, 3, 11, 59, 0),
      queueWaitMs: 12.5,
      heldMs: 3_000,
      endedAt: Date.UTC(2026, 11, 3, 11, 59, 3),
      end: 'expiry',
    },
    {
      claimId: '8',
      protocol: 'keyed',
      client: '127.0.0.1:5002',
      clientName: null,
      token: null,
      grantedAt: null,
      queueWaitMs: 40,
      heldMs: null,
      endedAt: Date.UTC(2026, 11, 3, 11, 59, 4),
      end: 'kick',
    },
  ],
  queueWait: { p50: 12.5, p99: 12.5 },
  hold: { p50: 3_000, p99: 3_000 },
};

describe('lock history export', () => {
  it('writes one CSV row per grant with ISO times, empty cells for a kicked waiter and a defused formula', () => {
    expect(lockHistoryCsv(history).split('\r\n')).toEqual([
      'claimId,protocol,client,clientName,token,grantedAt,queueWaitMs,heldMs,endedAt,end',
      "7,session,127.0.0.1:5001,'=evil(),42,2026-12-03T11:59:00.000Z,12.5,3000,2026-12-03T11:59:03.000Z,expiry",
      '8,keyed,127.0.0.1:5002,,,,40,,2026-12-03T11:59:04.000Z,kick',
      '',
    ]);
  });

  it('writes the JSON as the route answered it', () => {
    expect(JSON.parse(lockHistoryJson(history))).toEqual(history);
  });
});
