import { describe, expect, it } from 'vitest';
import { applySnapshot } from './dashboard-state.ts';
import { holder, lock, snapshot } from './dashboard-fixtures.ts';
import { locksToCsv, locksToJson } from './lock-export.ts';

const rows = () => [
  ...applySnapshot(
    snapshot({
      locks: [
        lock('=cmd', holder('42', { client: '10.0.0.1:5', clientName: 'worker, "7"', heldForMs: 1_000, leaseRemainingMs: 5_000 }), 2),
        lock('idle', null, 1),
      ],
    }),
    100,
  ).locks.values(),
];

describe('exporting the lock table', () => {
  it('writes CSV with times as of the export and hostile text defused', () => {
    const lines = locksToCsv(rows(), 600).split('\r\n');
    expect(lines[0]).toBe('name,protocol,client,clientName,token,heldForMs,leaseLeftMs,sliding,reconnecting,queueLength');
    expect(lines[1]).toBe(`'=cmd,keyed,10.0.0.1:5,"worker, ""7""",42,1500,4500,false,false,2`);
    expect(lines[2]).toBe('idle,,,,,,,,false,1');
    expect(lines).toHaveLength(4);
  });

  it('writes JSON that names the view it came from and parses back', () => {
    const parsed = JSON.parse(locksToJson(rows(), 600, 1_700_000_000_000, '?waiters=1')) as {
      view: string;
      count: number;
      locks: { name: string; leaseLeftMs: number | null }[];
    };
    expect(parsed.view).toBe('?waiters=1');
    expect(parsed.count).toBe(2);
    expect(parsed.locks.map((l) => [l.name, l.leaseLeftMs])).toEqual([
      ['=cmd', 4_500],
      ['idle', null],
    ]);
  });
});
