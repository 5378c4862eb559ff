// The body walk without a server: which schemas rename, drop or keep, through unions, records, open
// objects and arrays; and the host-pattern and base-URL rules of tenant addressing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Type } from 'typebox';
import { HttpProblem } from '../errors.ts';
import { hostSlugMatcher, tenantBaseUrl } from './tenant-address.ts';
import { jsonPath, tolerateBody } from './tolerant-body.ts';

describe('tolerateBody', () => {
  test('a union of objects knows the names of every branch; null and scalars pass through', () => {
    const schema = Type.Union([
      Type.Object({ Create: Type.Object({ Name: Type.String() }) }),
      Type.Object({ Duplicate: Type.Object({ Id: Type.String() }) }),
      Type.Null(),
    ]);
    const { body, ignored } = tolerateBody({ create: { name: 'a', x: 1 }, DUPLICATE: { id: 'b' }, y: 2 }, schema);
    assert.deepEqual(body, { Create: { Name: 'a' }, Duplicate: { Id: 'b' } });
    assert.deepEqual(ignored, ['$.create.x', '$.y']);
    assert.deepEqual(tolerateBody(null, schema), { body: null, ignored: [] });
    assert.deepEqual(tolerateBody('text', schema), { body: 'text', ignored: [] });
  });

  test('records, open objects and unknown values keep every property; their known ones are still renamed', () => {
    const schema = Type.Object({
      parameters: Type.Record(Type.String(), Type.Number()),
      detail: Type.Object({ Known: Type.Optional(Type.String()) }, { additionalProperties: true }),
      value: Type.Unknown(),
    });
    const sent = { Parameters: { Anything: 1 }, DETAIL: { known: 'k', other: 2 }, value: { deep: { x: 1 } } };
    const { body, ignored } = tolerateBody(sent, schema);
    assert.deepEqual(body, { parameters: { Anything: 1 }, detail: { Known: 'k', other: 2 }, value: { deep: { x: 1 } } });
    assert.deepEqual(ignored, []);
  });

  test('arrays are walked item by item; a wrong type is left for the schema to refuse', () => {
    const schema = Type.Object({ Rows: Type.Array(Type.Object({ Key: Type.String() })) });
    const { body, ignored } = tolerateBody({ rows: [{ key: 'a', n: 1 }, 'not an object', { KEY: 'b' }] }, schema);
    assert.deepEqual(body, { Rows: [{ Key: 'a' }, 'not an object', { Key: 'b' }] });
    assert.deepEqual(ignored, ['$.rows[0].n']);
    assert.deepEqual(tolerateBody({ rows: 'x' }, schema).body, { Rows: 'x' });
  });

  test('names that differ only in case in the schema match exactly only; one property sent twice is a 400 naming it', () => {
    const schema = Type.Object({ value: Type.Number(), Value: Type.Number() });
    assert.deepEqual(tolerateBody({ value: 1, VALUE: 2 }, schema), { body: { value: 1 }, ignored: ['$.VALUE'] });
    assert.throws(
      () => tolerateBody({ a: { Take: 1, take: 2 } }, Type.Object({ a: Type.Object({ take: Type.Integer() }) })),
      (err: unknown) => err instanceof HttpProblem && err.status === 400 && err.errors?.[0]?.path === '/body/a/take',
    );
  });

  test('JSON paths stay printable ASCII without commas', () => {
    assert.equal(jsonPath(['a', 0, 'b_c']), '$.a[0].b_c');
    assert.equal(jsonPath(["it's, é"]), "$['it\\u0027s\\u002c \\u00e9']");
  });
});

describe('tenant addressing', () => {
  test('the host pattern names a slug, with or without a port; other hosts name none', () => {
    const slug = hostSlugMatcher('apiv2-{tenant}.atrium.example.com');
    assert.equal(slug('apiv2-demo-prod-we.atrium.example.com'), 'demo-prod-we');
    assert.equal(slug('APIV2-Demo.Atrium.Example.com:8443'), 'demo');
    assert.equal(slug('apiv2-demo.atrium.example.com.evil.test'), null);
    assert.equal(slug('apiv2-demoXatrium.example.com'), null);
    assert.equal(slug(undefined), null);
    assert.equal(hostSlugMatcher(undefined)('apiv2-demo.atrium.example.com'), null);
  });

  test("a tenant's base URL is its host when a pattern is set, else the public URL and /t/{slug}", () => {
    assert.equal(tenantBaseUrl({ publicUrl: 'http://127.0.0.1:8080' }, 'demo'), 'http://127.0.0.1:8080/t/demo');
    assert.equal(
      tenantBaseUrl({ publicUrl: 'https://atrium.example.com', tenantHostPattern: 'apiv2-{tenant}.example.com' }, 'demo'),
      'https://apiv2-demo.example.com',
    );
    assert.equal(tenantBaseUrl({ publicUrl: 'http://localhost:8080', tenantHostPattern: '{tenant}.localtest.me' }, 'acme'), 'http://acme.localtest.me:8080');
  });
});
