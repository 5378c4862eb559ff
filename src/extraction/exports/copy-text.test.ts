import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CsvRows } from './copy-text.ts';

// COPY's text format as PostgreSQL writes it; the CSV as its csv format writes the same values (with CR LF).
const text = (v: string | null) =>
  v === null ? '\\N' : v.replace(/[\\\b\f\n\r\t\v]/g, (c) => `\\${{ '\\': '\\', '\b': 'b', '\f': 'f', '\n': 'n', '\r': 'r', '\t': 't', '\v': 'v' }[c]}`);
const csv = (v: string | null) => (v === null ? '' : v === '' || /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

function convert(rows: (string | null)[][], columns: number, cut: number): string {
  const input = Buffer.from(rows.map((r) => `${r.map(text).join('\t')}\n`).join(''));
  const c = new CsvRows(columns);
  const out = [c.convert(input.subarray(0, cut)), c.convert(input.subarray(cut))].filter((b) => b !== null);
  c.finish();
  return Buffer.concat(out).toString();
}

test('RFC 4180 rows from COPY text, at every cut: nulls empty, empty strings quoted, escapes undone', () => {
  const rows: (string | null)[][] = [
    ['plain', '1.5', null],
    ['', 'a,b', 'say "hi"'],
    ['line\nbreak\r\n', 'tab\there \\ back\\slash \\N', 'bs\b ff\f vt\v é😀'],
    ['\\.', 'x', ''],
  ];
  const expected = rows.map((r) => `${r.map(csv).join(',')}\r\n`).join('');
  const length = Buffer.byteLength(rows.map((r) => `${r.map(text).join('\t')}\n`).join(''));
  for (let cut = 0; cut <= length; cut++) assert.equal(convert(rows, 3, cut), expected, `cut at ${cut}`);
});

test('a lone \\. in a one-column row is quoted, as COPY quotes it', () => {
  assert.equal(convert([['\\.'], ['a']], 1, 0), '"\\."\r\na\r\n');
});
