import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ExpressionError, evaluateTemplate, evaluateValue, parseTemplate, type Scope } from './expressions.ts';
import { stringValues } from './pipes.ts';

const outputs: Record<string, unknown> = {
  '#HttpRequest': { Method: 'POST', Body: { name: 'ada', tags: ['a', 'b'], n: '3' } },
  Get: {
    StatusCode: 200,
    Content: {
      Name: 'Widget',
      Items: [
        { Sku: 'A', Price: 5, Tags: ['x'] },
        { Sku: 'B', Price: 15, Tags: [] },
        { Sku: 'C', Price: 25, Active: true },
      ],
      When: '2024-01-31T10:00:00.000Z',
      Unix: 1700000000,
    },
  },
};
const scope: Scope = (name) => (Object.hasOwn(outputs, name) ? { found: true, value: outputs[name] } : { found: false, value: undefined });
const ev = (s: string) => evaluateTemplate(parseTemplate(s), scope);

test('a whole-string expression keeps its type; mixed text interpolates', () => {
  assert.deepEqual(ev("{{['Get']$.Content.Items[0]}}"), { Sku: 'A', Price: 5, Tags: ['x'] });
  assert.equal(ev("{{['Get']$.StatusCode}}"), 200);
  assert.equal(ev("Hello {{['#HttpRequest']$.Body.name | ToUpperCase}}!"), 'Hello ADA!');
  assert.equal(ev('no expression'), 'no expression');
  assert.deepEqual(evaluateValue({ a: ["{{['Get']$.Content.Name}}"] }, scope), { a: ['Widget'] });
});

test('JSONPath: wildcards, slices, unions, recursive descent and filters', () => {
  assert.deepEqual(ev("{{['Get']$.Content.Items[*].Sku}}"), ['A', 'B', 'C']);
  assert.deepEqual(ev("{{['Get']$.Content.Items[?(@.Price > 10)].Sku}}"), ['B', 'C']);
  assert.deepEqual(ev("{{['Get']$.Content.Items[?(@.Price >= 5 && @.Sku != 'C')].Sku}}"), ['A', 'B']);
  assert.deepEqual(ev("{{['Get']$.Content.Items[?(@.Active || @.Sku == 'A')].Sku}}"), ['A', 'C']);
  assert.deepEqual(ev("{{['Get']$.Content.Items[?(!@.Active)].Sku}}"), ['A', 'B']);
  assert.deepEqual(ev("{{['Get']$.Content.Items[-1:].Sku}}"), ['C']);
  assert.deepEqual(ev("{{['Get']$.Content.Items[0,2].Sku}}"), ['A', 'C']);
  assert.deepEqual(ev("{{['Get']$..Sku}}"), ['A', 'B', 'C']);
  assert.deepEqual(ev("{{['Get']$.Content.Items[::-1].Sku}}"), ['C', 'B', 'A']);
  assert.equal(ev("{{['Get']$.Content['Name']}}"), 'Widget');
  assert.equal(ev("{{['Get']$.Content.Items.length}}"), 3);
  assert.equal(ev("{{['Get']$.Content.Missing}}"), undefined);
});

test('every pipe', () => {
  assert.equal(ev("{{['Get']$.Content.Name | ToBase64}}"), 'V2lkZ2V0');
  assert.equal(ev("{{['Get']$.Content.Name | ToBase64 | FromBase64}}"), 'Widget');
  assert.equal(ev("{{'a b&c' | UrlEncode}}"), 'a%20b%26c');
  assert.equal(ev("{{['#HttpRequest']$.Body.tags | ToJsonString}}"), '["a","b"]');
  assert.deepEqual(ev('{{\'{"x":1}\' | ToJson}}'), { x: 1 });
  assert.equal(ev("{{'2024-02-01 10:00Z' | ToDateUtc}}"), '2024-02-01T10:00:00.000Z');
  assert.equal(ev("{{['Get']$.Content.Unix | FromUnixTimeSeconds}}"), '2023-11-14T22:13:20.000Z');
  assert.equal(ev('{{1700000000000 | FromUnixTimeMilliSeconds}}'), '2023-11-14T22:13:20.000Z');
  assert.equal(ev("{{['Get']$.Content.Missing | IsNullOrEmpty}}"), true);
  assert.equal(ev("{{['Get']$.Content.Name | IsNullOrEmpty}}"), false);
  assert.equal(ev("{{['Get']$.Content.Name | Contains('idg')}}"), true);
  assert.equal(ev("{{['#HttpRequest']$.Body.tags | Contains('z')}}"), false);
  assert.equal(ev("{{['#HttpRequest']$.Body.tags | Join(';')}}"), 'a;b');
  assert.deepEqual(ev("{{'a,b,c' | Split(',')}}"), ['a', 'b', 'c']);
  assert.equal(ev("{{['#HttpRequest']$.Body.n | AddDecimal(0.5)}}"), 3.5);
  assert.equal(ev("{{['Get']$.Content.Items | Sum('Price')}}"), 45);
  assert.equal(ev("{{['Get']$.Content.Items[*].Price | Min}}"), 5);
  assert.equal(ev("{{['Get']$.Content.Items[*].Price | Max}}"), 25);
  assert.equal(ev("{{['Get']$.Content.Items | Avg('Price')}}"), 15);
  assert.equal(ev("{{['Get']$.Content.When | AddMonths(1)}}"), '2024-02-29T10:00:00.000Z');
  assert.equal(ev("{{['Get']$.Content.When | AddDays(-1)}}"), '2024-01-30T10:00:00.000Z');
  assert.equal(ev("{{['Get']$.Content.When | AddHours(2)}}"), '2024-01-31T12:00:00.000Z');
  assert.equal(ev("{{['Get']$.Content.When | AddMinutes(30)}}"), '2024-01-31T10:30:00.000Z');
  assert.equal(ev("{{'000123' | RemoveLeading('000')}}"), '123');
  assert.equal(ev("{{'file.csv' | RemoveTrailing('.csv')}}"), 'file');
  assert.equal(ev("{{'  x  ' | Trim}}"), 'x');
  assert.equal(ev("{{'AbC' | ToLowerCase}}"), 'abc');
  assert.equal(ev("{{'AbC' | ToUpperCase | ToLowerCase | ToUpperCase}}"), 'ABC');
});

test('functions', () => {
  assert.match(String(ev('{{NewGuid}}')), /^[0-9a-f-]{36}$/);
  assert.notEqual(ev('{{NewGuid}}'), ev('{{NewGuid}}'));
  const today = new Date();
  assert.equal(ev('{{NewDateUtc(Today)}}'), new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate())).toISOString());
  assert.equal(ev('{{NewDateUtc(FirstDayOfYear)}}'), `${today.getUTCFullYear()}-01-01T00:00:00.000Z`);
  assert.equal(ev('{{NewDateUtc(LastDayOfYear)}}'), `${today.getUTCFullYear()}-12-31T00:00:00.000Z`);
  assert.ok(Math.abs(Date.parse(String(ev('{{NewDateUtc(Now)}}'))) - Date.now()) < 5000);
});

test('hostile expressions neither parse into code nor reach the process', () => {
  for (const bad of [
    '{{process.env.PATH}}',
    "{{require('fs')}}",
    "{{['A']$.x | constructor}}",
    "{{['A']$.x | Join(process)}}",
    "{{['A']$[?(@.x == process.env)]}}",
    "{{['A']$[?(eval('1'))]}}",
    '{{ this }}',
    '{{ globalThis }}',
  ]) {
    assert.throws(() => parseTemplate(bad), ExpressionError, bad);
  }
  // Inherited properties do not exist for JSONPath: no way from data to functions or prototypes.
  for (const path of ['constructor', '__proto__', 'constructor.constructor', 'toString', 'hasOwnProperty']) {
    assert.equal(ev(`{{['Get']$.Content.${path}}}`), undefined, path);
  }
  assert.deepEqual(ev("{{['Get']$.Content.Items[?(@.constructor)].Sku}}"), []);
  assert.deepEqual(ev("{{['Get']$..constructor}}"), []);
  assert.throws(() => ev("{{['Nope']$.x}}"), ExpressionError);
});

test('parse errors give a position', () => {
  try {
    parseTemplate("x {{['A']$.a | Nope}}");
    assert.fail('should throw');
  } catch (err) {
    assert.ok(err instanceof ExpressionError);
    assert.match(err.message, /unknown pipe "Nope"/);
    assert.equal(err.position, 15);
  }
  assert.throws(() => parseTemplate("{{['A']$.a"), /not closed/);
  assert.throws(() => parseTemplate("{{['A']$[?(@.a == )]}}"), ExpressionError);
});

test('#eval substitutes its value as text into the expression: in a lookup name, a path member, a filter; nested', () => {
  const values: Record<string, unknown> = {
    MapCustomDatabaseForm: { Name: 'Records', Id: 'k2', Day: '2024-01-02' },
    Records: { Content: { k1: 'one', k2: 'two' } },
    RecordsList: { Content: { a: { k2: 'deep' } } },
    Clients: {
      client: [
        { Code: '2024-01-01', Name: 'Old' },
        { Code: '2024-01-02', Name: 'New' },
      ],
    },
  };
  const scope: Scope = (n) => (Object.hasOwn(values, n) ? { found: true, value: values[n] } : { found: false, value: undefined });
  const ev = (s: string) => evaluateTemplate(parseTemplate(s), scope);
  assert.deepEqual(ev("{{['#eval(['MapCustomDatabaseForm'].Name)'].Content}}"), { k1: 'one', k2: 'two' });
  assert.deepEqual(ev("{{['RecordsList'].Content..#eval(['MapCustomDatabaseForm'].Id)}}"), ['deep']);
  assert.deepEqual(ev("{{['Clients']$..client[?(@.Code=='#eval(['MapCustomDatabaseForm'].Day)')].Name}}"), ['New']);
  // The platform's nested form: the inner value (a date) is no expression, so the outer #eval keeps it as text.
  assert.deepEqual(ev("{{['Clients']$..client[?(@.Code=='#eval(#eval(['MapCustomDatabaseForm'].Day))')].Name}}"), ['New']);
  assert.throws(() => ev("{{['#eval(['Nobody'].Name)'].Content}}"), /has no value/);
  assert.throws(() => parseTemplate("{{['#eval(['X'].Name'].Content}}"), ExpressionError);
});

test('request Query and Headers values are lists that read as their text joined with ","', () => {
  const values: Record<string, unknown> = { '#HttpRequest': { Query: { mode: stringValues(['short']), tag: stringValues(['a', 'b']) } } };
  const scope: Scope = (n) => (Object.hasOwn(values, n) ? { found: true, value: values[n] } : { found: false, value: undefined });
  const ev = (s: string) => evaluateTemplate(parseTemplate(s), scope);
  assert.deepEqual(ev("{{['#HttpRequest'].Query.mode}}"), ['short']);
  assert.equal(ev("{{['#HttpRequest'].Query.mode[0]}}"), 'short');
  assert.equal(ev("mode={{['#HttpRequest'].Query.mode}} tags={{['#HttpRequest'].Query.tag}}"), 'mode=short tags=a,b');
  assert.equal(ev("{{['#HttpRequest'].Query.mode | ToUpperCase}}"), 'SHORT');
});
