import fc from 'fast-check';
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
  it("quotes and defuses a formula after a semicolon, comma, tab or line break (the probe's x;=1+1)", () => {
    expect(toCsv(['x'], [['x;=1+1'], ['a\t@b'], ['a, -1'], ['a;"=1']])).toBe('x\r\n"x;\'=1+1"\r\n"a\t\'@b"\r\n"a, \'-1"\r\n"a;""\'=1"\r\n');
  });
  it('leaves no formula for a spreadsheet, however it splits the line, and keeps the text', () => {
    const text = fc.string({ unit: fc.constantFrom('a', '1', ' ', ',', ';', '\t', '\r', '\n', '"', "'", '=', '+', '-', '@'), maxLength: 12 });
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 3 }), (cells) => {
        const csv = toCsv(['h'], [cells]).slice('h\r\n'.length);
        // A spreadsheet that ignores quotes, splitting on any separator it may use.
        for (const part of csv.split(/[,;\t\r\n]/)) expect(part.replace(/^[ "]*/, ''), JSON.stringify(csv)).not.toMatch(/^[=+\-@]/);
        // Spreadsheets that read quotes, in a comma, semicolon or tab locale.
        for (const separator of [',', ';', '\t']) {
          for (const field of readCsv(csv, separator).flat()) expect(field, JSON.stringify(csv)).not.toMatch(/^ *[=+\-@]|^[\t\r]/);
        }
        // Read as written (commas): the same cells, give or take the defusing apostrophes.
        const read = readCsv(csv, ',')[0] ?? [];
        expect(read.map((field) => field.replaceAll("'", ''))).toEqual(cells.map((cell) => cell.replaceAll("'", '')));
      }),
      { numRuns: 3000 },
    );
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

/** A reference RFC 4180 reader with a chosen separator: rows of fields, quotes honoured. */
function readCsv(csv: string, separator: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < csv.length; i++) {
    const c = csv[i] as string;
    if (quoted && c === '"' && csv[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') {
      quoted = !quoted;
    } else if (quoted) {
      field += c;
    } else if (c === separator) {
      row.push(field);
      field = '';
    } else if (c === '\r' && csv[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i++;
    } else {
      field += c;
    }
  }
  return rows;
}
