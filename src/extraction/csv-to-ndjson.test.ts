// COPY's CSV rewritten as JSON lines: every kind of field, and the same bytes whatever the chunk boundaries.
// (test/extraction-ndjson.test.ts checks the export against the JSON pages over PostgreSQL.)
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CsvToNdjson } from './csv-to-ndjson.ts';
import type { CatalogueColumn } from './definition.ts';

const columns = [
  { name: 'Id', type: 'guid' },
  { name: 'Text', type: 'string' },
  { name: 'Amount', type: 'decimal' },
  { name: 'Flag', type: 'boolean' },
  { name: 'Data', type: 'object' },
  { name: 'Odd "name"', type: 'integer' },
] as CatalogueColumn[];

// As COPY (FORMAT csv) writes them: NULL is an empty unquoted field, "" an empty string, quotes doubled.
const CSV = [
  'a1,plain,1.5,true,"{""k"": ""v,\\n""}",7\n',
  'a2,"with ""quotes"", commas\nand LF\r",NaN,false,"""just a string""",-3\n',
  'a3,"",,,,\n',
  'a4,back\\slash\ttab\u0001ctl é ☃,-Infinity,true,[1],0\n',
].join('');

const expected = [
  { Id: 'a1', Text: 'plain', Amount: 1.5, Flag: true, Data: { k: 'v,\n' }, 'Odd "name"': 7 },
  { Id: 'a2', Text: 'with "quotes", commas\nand LF\r', Amount: null, Flag: false, Data: '"just a string"', 'Odd "name"': -3 },
  { Id: 'a3', Text: '', Amount: null, Flag: null, Data: null, 'Odd "name"': null },
  { Id: 'a4', Text: 'back\\slash\ttab\u0001ctl é ☃', Amount: null, Flag: true, Data: [1], 'Odd "name"': 0 },
];

function convert(chunks: Buffer[]): string {
  const t = new CsvToNdjson(columns);
  const out: Buffer[] = [];
  t.on('data', (b: Buffer) => out.push(b));
  for (const c of chunks) t.write(c);
  t.end();
  return Buffer.concat(out).toString('utf8');
}

test('each CSV row becomes the JSON object JSON.stringify prints', () => {
  const text = convert([Buffer.from(CSV)]);
  const lines = text.split('\n');
  assert.equal(lines.pop(), '');
  assert.deepEqual(
    lines.map((l) => JSON.parse(l)),
    expected,
  );
  // Byte for byte (key order, escapes), except that embedded JSON keeps PostgreSQL's spacing.
  assert.equal(lines[1], JSON.stringify(expected[1]));
  assert.equal(lines[2], JSON.stringify(expected[2]));
  assert.equal(lines[3], JSON.stringify(expected[3]));
});

test('the same output wherever the chunks are cut', () => {
  const bytes = Buffer.from(CSV);
  const whole = convert([bytes]);
  for (let cut = 1; cut < bytes.length; cut++) {
    assert.equal(convert([bytes.subarray(0, cut), bytes.subarray(cut)]), whole, `cut at ${cut}`);
  }
  assert.equal(convert([...bytes].map((b) => Buffer.from([b]))), whole, 'one byte at a time');
});

test('a COPY that ends inside a row is an error, not a short line', async () => {
  const t = new CsvToNdjson(columns);
  t.on('data', () => {});
  const failed = new Promise((resolve) => t.on('error', resolve));
  t.end(Buffer.from('a1,"unterminated'));
  assert.match(String(await failed), /inside a row/);
});
