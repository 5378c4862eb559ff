// The explorer's pure helpers (console/src/pages/query-builder.ts): the search box's filters and the
// readable default columns (names before ids).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type FieldMetadata, readableColumns, withSearch } from '../console/src/pages/query-builder.ts';

const f = (name: string, dataType: string): FieldMetadata => ({
  name,
  dataType,
  operations: dataType === 'string' ? ['contains', '='] : ['='],
  defaultOperation: '=',
});
const fields = [f('ClientId', 'guid'), f('Client', 'string'), f('TimesheetId', 'guid'), f('Hours', 'decimal'), f('Job', 'string')];

test('the search is an or of contains over the text fields, joined to the other filters with and', () => {
  assert.equal(withSearch(undefined, '  ', fields), undefined, 'blank: no filter');
  assert.deepEqual(withSearch(undefined, 'acme', [f('Client', 'string')]), ['Client', 'contains', 'acme']);
  assert.deepEqual(withSearch(undefined, ' acme ', fields), [['Client', 'contains', 'acme'], 'or', ['Job', 'contains', 'acme']]);
  assert.deepEqual(withSearch(['Hours', '>', 2], 'acme', fields), [
    ['Hours', '>', 2],
    'and',
    [['Client', 'contains', 'acme'], 'or', ['Job', 'contains', 'acme']],
  ]);
  assert.deepEqual(withSearch(['Hours', '>', 2], 'acme', [f('Hours', 'decimal')]), ['Hours', '>', 2], 'no text field: the filters as they were');
});

test('names before ids: an id beside its name is hidden (shown on hover), other ids last, all on demand', () => {
  const names = fields.map((x) => x.name);
  assert.deepEqual(readableColumns(names, fields, false), { columns: ['Client', 'Hours', 'Job', 'TimesheetId'], idOf: { Client: 'ClientId' } });
  assert.deepEqual(readableColumns(names, fields, true), { columns: names, idOf: { Client: 'ClientId' } });
  assert.deepEqual(readableColumns(['ClientId', 'Hours'], fields, false).columns, ['Hours', 'ClientId'], 'an id without its name stays, last');
});
