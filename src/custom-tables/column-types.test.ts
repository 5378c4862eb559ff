// The JSON forms of the ColumnDataType enumeration: what is accepted, what is refused, and what goes to PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ddlType, parseKey, parseValue } from './column-types.ts';

const col = (dataTypeId: number, length: number | null = null) => ({ dataTypeId, length });
const value = (id: number, v: unknown, length: number | null = null) => parseValue(col(id, length), v);

test('database-ready values', () => {
  assert.deepEqual(value(1, '2024-02-29T00:00:00.000Z'), { ok: true, value: '2024-02-29' });
  assert.deepEqual(value(4, '0012.30'), { ok: true, value: '12.3000' });
  assert.deepEqual(value(4, '-0.0000'), { ok: true, value: '0.0000' });
  assert.deepEqual(value(4, 1e-4), { ok: true, value: '0.0001' });
  assert.deepEqual(value(4, 1e-7), { ok: false, reason: 'expected a decimal with at most 15 integer digits and 4 decimal places, got 1e-7' });
  assert.deepEqual(value(9, 'ABCDEF00-0000-4000-8000-000000000000'), { ok: true, value: 'abcdef00-0000-4000-8000-000000000000' });
  assert.deepEqual(value(12, 'AP8='), { ok: true, value: '\\x00ff' });
  assert.deepEqual(value(2, -0), { ok: true, value: -0 });
  assert.equal(value(2, Number.NaN).ok, false);
  assert.equal(value(2, Number.POSITIVE_INFINITY).ok, false);
});

test('strings count characters (code points), not UTF-16 units', () => {
  assert.equal(value(5, '😀'.repeat(50)).ok, true);
  assert.equal(value(5, '😀'.repeat(51)).ok, false);
  assert.equal(value(11, 'abc', 3).ok, true);
  assert.equal(value(11, 'abcd', 3).ok, false);
  assert.equal(value(7, '\ud800').ok, false, 'an unpaired surrogate would be stored as U+FFFD');
  assert.equal(value(8, 'x'.repeat(1_000_000)).ok, true);
});

test('keys accept their string forms; dates are calendar dates', () => {
  assert.deepEqual(parseKey(col(3), '-17'), { ok: true, value: -17 });
  assert.deepEqual(parseKey(col(0), 'TRUE'), { ok: true, value: true });
  assert.deepEqual(parseKey(col(2), '1e3'), { ok: true, value: 1000 });
  assert.equal(parseKey(col(3), '1.0').ok, false);
  assert.equal(parseKey(col(3), null).ok, false);
  assert.equal(parseKey(col(7), 'é'.repeat(1001)).ok, false, 'keys stay under the btree entry limit');
  assert.equal(value(1, '1900-02-29').ok, false);
  assert.equal(value(1, '2000-02-29').ok, true);
  assert.equal(value(1, '0000-01-01').ok, false);
});

test('DDL types', () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12].map((id) => ddlType(col(id))),
    ['boolean', 'date', 'double precision', 'integer', 'numeric(19,4)', 'varchar(50)', 'varchar(100)', 'text', 'text', 'uuid', 'varchar(200)', 'bytea'],
  );
  assert.equal(ddlType(col(11, 30)), 'varchar(30)');
});
