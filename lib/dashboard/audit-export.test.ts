import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../ops-api/api-types.ts';
import { auditCsv, auditJson } from './audit-export.ts';

const entries: AuditEntry[] = [
  {
    at: Date.UTC(2026, 11, 3, 12, 0, 0),
    who: 'bearer:admin',
    action: 'force-release',
    target: 'jobs/a,b',
    result: 'ok',
    detail: 'token 7',
    node: 'a',
    id: 'a/i/1',
  },
  {
    at: Date.UTC(2026, 11, 3, 12, 0, 1),
    who: 'session:3fa2 via b',
    action: 'kick',
    target: '=cmd()',
    result: 'not-found',
    detail: null,
    node: 'b',
    id: 'b/i/4',
  },
  { at: Date.UTC(2026, 11, 3, 12, 0, 2), who: 'bearer:admin', action: 'sign-in', target: '', result: 'ok', detail: null },
];

describe('auditCsv', () => {
  it('writes one line per entry with its node, quoting commas and defusing formulas', () => {
    expect(auditCsv(entries).split('\r\n')).toEqual([
      'at,node,who,action,target,result,detail,id',
      '2026-12-03T12:00:00.000Z,a,bearer:admin,force-release,"jobs/a,b",ok,token 7,a/i/1',
      "2026-12-03T12:00:01.000Z,b,session:3fa2 via b,kick,'=cmd(),not-found,,b/i/4",
      '2026-12-03T12:00:02.000Z,,bearer:admin,sign-in,,ok,,',
      '',
    ]);
  });
});

describe('auditJson', () => {
  it('has the shape of GET /api/v1/audit', () => {
    expect(JSON.parse(auditJson(entries))).toEqual({ entries });
  });
});
