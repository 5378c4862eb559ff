// Matching rules of webhook subscriptions, each rule on its own.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DetailFilter, filtersPass, type MatchableSubscription, matches, parsePath, preferenceReferences, resolveValue } from './match.ts';

const USER = 'Skill.Module.BusinessObjects.User';
const prefs = (map: Record<string, string>) => (name: string, key: string) => map[`${name}/${key}`];
const none = prefs({});
const sub = (over: Partial<MatchableSubscription> = {}): MatchableSubscription => ({
  active: true,
  actionType: 'Updated',
  documentType: USER,
  businessObjectTypeName: null,
  detailFilters: [],
  ...over,
});
const event = (detail: unknown = {}, over: Record<string, unknown> = {}) => ({
  actionType: 'Updated',
  documentType: USER,
  businessObjectTypeName: null as string | null,
  detail,
  ...over,
});
const f = (groupCondition: 'And' | 'Or', jsonPathExpression: string, condition: DetailFilter['condition'], value: string): DetailFilter => ({
  groupCondition,
  jsonPathExpression,
  condition,
  value,
});

describe('subscription matching', () => {
  test('fires on action type and document type, only when active', () => {
    assert.equal(matches(sub(), event(), none), true);
    assert.equal(matches(sub({ active: false }), event(), none), false);
    assert.equal(matches(sub({ actionType: 'Created' }), event(), none), false);
    assert.equal(matches(sub({ documentType: 'Skill.Module.BusinessObjects.Client' }), event(), none), false);
  });

  test('custom action types match by name, case-insensitively', () => {
    assert.equal(matches(sub({ actionType: 'InvoiceApproved' }), event({}, { actionType: 'invoiceapproved' }), none), true);
  });

  test('BusinessObjectTypeName limits when set', () => {
    const limited = sub({ businessObjectTypeName: 'Retainer' });
    assert.equal(matches(limited, event({}, { businessObjectTypeName: 'Retainer' }), none), true);
    assert.equal(matches(limited, event({}, { businessObjectTypeName: 'retainer' }), none), true);
    assert.equal(matches(limited, event({}, { businessObjectTypeName: 'Project' }), none), false);
    assert.equal(matches(limited, event(), none), false);
    assert.equal(matches(sub(), event({}, { businessObjectTypeName: 'Project' }), none), true);
  });
});

describe('detail filters', () => {
  const detail = { ColumnName: 'Channel', Value: 'Web Shop', Count: 3, Flag: true, Nested: { Deep: { Name: 'Ada' } }, Items: [{ Name: 'x' }] };

  test('conditions compare case-insensitively on the text', () => {
    assert.equal(filtersPass([f('And', 'ColumnName', 'Equal', 'channel')], detail, none), true);
    assert.equal(filtersPass([f('And', 'ColumnName', 'Equal', 'Chan')], detail, none), false);
    assert.equal(filtersPass([f('And', 'ColumnName', 'NotEqual', 'CHANNEL')], detail, none), false);
    assert.equal(filtersPass([f('And', 'ColumnName', 'NotEqual', 'Other')], detail, none), true);
    assert.equal(filtersPass([f('And', 'Value', 'Contains', 'SHOP')], detail, none), true);
    assert.equal(filtersPass([f('And', 'Value', 'Contains', 'store')], detail, none), false);
    assert.equal(filtersPass([f('And', 'Value', 'NotContains', 'store')], detail, none), true);
    assert.equal(filtersPass([f('And', 'Value', 'NotContains', 'web')], detail, none), false);
  });

  test('numbers and booleans compare as their text', () => {
    assert.equal(filtersPass([f('And', 'Count', 'Equal', '3')], detail, none), true);
    assert.equal(filtersPass([f('And', 'Flag', 'Equal', 'TRUE')], detail, none), true);
  });

  test('a missing property fails Equal and Contains, passes NotEqual and NotContains', () => {
    assert.equal(filtersPass([f('And', 'Missing', 'Equal', '')], detail, none), false);
    assert.equal(filtersPass([f('And', 'Missing', 'Contains', '')], detail, none), false);
    assert.equal(filtersPass([f('And', 'Missing', 'NotEqual', 'x')], detail, none), true);
    assert.equal(filtersPass([f('And', 'Missing', 'NotContains', 'x')], detail, none), true);
  });

  test('dotted paths and $.paths reach nested properties; names fall back to case-insensitive', () => {
    assert.equal(filtersPass([f('And', 'Nested.Deep.Name', 'Equal', 'ada')], detail, none), true);
    assert.equal(filtersPass([f('And', '$.Nested.Deep.Name', 'Equal', 'ada')], detail, none), true);
    assert.equal(filtersPass([f('And', "$['Nested'].Deep.Name", 'Equal', 'ada')], detail, none), true);
    assert.equal(filtersPass([f('And', 'Items[0].Name', 'Equal', 'X')], detail, none), true);
    assert.equal(filtersPass([f('And', 'nested.deep.name', 'Equal', 'ada')], detail, none), true);
  });

  test('every And filter must pass', () => {
    const filters = [f('And', 'ColumnName', 'Equal', 'Channel'), f('And', 'Value', 'Equal', 'Web Shop')];
    assert.equal(filtersPass(filters, detail, none), true);
    assert.equal(filtersPass(filters, { ...detail, Value: 'Print' }, none), false);
  });

  test('with Or filters at least one must pass, on top of the And filters', () => {
    const filters = [f('And', 'ColumnName', 'Equal', 'Channel'), f('Or', 'Value', 'Equal', 'Print'), f('Or', 'Value', 'Equal', 'Web Shop')];
    assert.equal(filtersPass(filters, detail, none), true);
    assert.equal(filtersPass(filters, { ...detail, Value: 'Radio' }, none), false);
    assert.equal(filtersPass(filters, { ...detail, ColumnName: 'Name' }, none), false);
    assert.equal(filtersPass([f('Or', 'Value', 'Equal', 'Print')], detail, none), false);
  });

  test('{{SystemPreferenceName/KeyName}} resolves from the preference; a missing one never matches', () => {
    const p = prefs({ 'Webhooks/WatchedField': 'Channel' });
    assert.equal(filtersPass([f('And', 'ColumnName', 'Equal', '{{Webhooks/WatchedField}}')], detail, p), true);
    assert.equal(filtersPass([f('And', 'ColumnName', 'Equal', '{{ Webhooks / WatchedField }}')], detail, p), true);
    assert.equal(filtersPass([f('And', 'ColumnName', 'Equal', '{{Webhooks/Other}}')], detail, p), false);
    assert.equal(filtersPass([f('And', 'ColumnName', 'NotEqual', '{{Webhooks/Other}}')], detail, p), false);
    assert.equal(resolveValue('x-{{A/B}}-y', prefs({ 'A/B': '1' })), 'x-1-y');
    assert.deepEqual(preferenceReferences([f('And', 'a', 'Equal', '{{A/B}} {{C/D}}')]), [
      { name: 'A', key: 'B' },
      { name: 'C', key: 'D' },
    ]);
  });
});

describe('parsePath', () => {
  test('accepts the documented forms and rejects malformed ones', () => {
    assert.deepEqual(parsePath('Name'), ['Name']);
    assert.deepEqual(parsePath('$.a.b'), ['a', 'b']);
    assert.deepEqual(parsePath('a[2].b'), ['a', '2', 'b']);
    assert.deepEqual(parsePath('$["a b"]'), ['a b']);
    for (const bad of ['', '$', 'a..b', '.a', 'a.', 'a[', '$.']) assert.equal(parsePath(bad), null, bad);
  });
});
