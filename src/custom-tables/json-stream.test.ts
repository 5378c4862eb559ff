// The incremental reader gives the same members and rows however the text is cut into chunks.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonStreamError, type RowsDocumentEvent, RowsDocumentParser } from './json-stream.ts';

function parse(text: string, chunkSize: number): RowsDocumentEvent[] {
  const p = new RowsDocumentParser();
  const out: RowsDocumentEvent[] = [];
  for (let i = 0; i < text.length; i += chunkSize) p.feed(text.slice(i, i + chunkSize), out);
  p.end();
  return out;
}

const doc = {
  TableName: 'T',
  Columns: [{ ColumnName: 'A]"}', ColumnDataTypeId: 5 }],
  Rows: [{ K: 1, A: 'x"y\\z]}[{,' }, { K: 2, A: null, Nested: [[1], { a: [] }] }, 3, 'str', []],
  After: { Rows: [9] },
};

test('members and rows survive any chunking, including strings with brackets and escapes', () => {
  const text = JSON.stringify(doc, null, 1);
  for (const size of [1, 2, 3, 7, 64, text.length]) {
    const events = parse(text, size);
    const members = Object.fromEntries(events.filter((e) => e.kind === 'member').map((e) => [e.key, e.value]));
    const rows = events.filter((e) => e.kind === 'row').map((e) => e.value);
    assert.deepEqual(members, { TableName: 'T', Columns: doc.Columns, After: doc.After }, `chunk ${size}`);
    assert.deepEqual(rows, doc.Rows, `chunk ${size}`);
  }
});

test('empty Rows and an empty object', () => {
  assert.deepEqual(parse('{"Rows":[]}', 1), []);
  assert.deepEqual(parse(' { } ', 2), []);
});

test('malformed documents throw JsonStreamError', () => {
  for (const bad of ['[1]', '{"Rows":[1,]}', '{"Rows":[1 2]}', '{"a":1,,"b":2}', '{"a":1', '{"a":1}}', '{"Rows":[{]}', '{"a":tru}', '{"Rows":[1]}x', '{,}']) {
    assert.throws(() => parse(bad, 3), JsonStreamError, bad);
  }
});
