import { describe, expect, it } from 'vitest';
import { exportFileName, toCsv, toJson } from './table-export.ts';

describe('toCsv', () => {
  it('quotes fields with commas, quotes and line breaks, and ends lines in CRLF', () => {
    const csv = toCsv(
      ['name', 'holder'],
      [
        ['a,b', 'say "hi"'],
        ['line\nbreak', null],
      ],
    );
    expect(csv).toBe('name,holder\r\n"a,b","say ""hi"""\r\n"line\nbreak",\r\n');
  });
  it('defuses spreadsheet formulas in text fields but not numbers', () => {
    expect(toCsv(['x', 'n'], [['=HYPERLINK("x")', -5]])).toBe('x,n\r\n"\'=HYPERLINK(""x"")",-5\r\n');
    expect(toCsv(['x'], [['@cmd'], ['+1'], ['-1']])).toBe("x\r\n'@cmd\r\n'+1\r\n'-1\r\n");
  });
  it('writes empty cells for null and undefined and keeps booleans', () => {
    expect(toCsv(['a', 'b', 'c'], [[undefined, true, 0]])).toBe('a,b,c\r\n,true,0\r\n');
  });
});

describe('toJson and exportFileName', () => {
  it('pretty-prints with a trailing newline', () => {
    expect(toJson({ a: 1 })).toBe('{\n  "a": 1\n}\n');
  });
  it('names files without colons or path characters', () => {
    expect(exportFileName('history/jobs nightly', Date.UTC(2026, 11, 3, 11, 52, 7, 123), 'csv')).toBe('baton-history_jobs_nightly-2026-12-03T11-52-07Z.csv');
  });
});
