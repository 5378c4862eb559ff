// The zero GUID and the empty string as the platform's JSON reader takes them, on every Client API and
// Integration API create and PATCH body — the cases generated from the served OpenAPI document, not listed
// by hand. For each body property of type Guid, number, boolean or date (through envelopes, arrays and
// value wrappers):
//  - "" sent over HTTP is never refused for its value when the property is optional or nullable (it is null,
//    or absent: a field the service requires then answers "is required", naming it), and still is when the
//    property is required and takes no null; a control value ("x") shows the property is named when
//    refused, so a case that passes is one that could fail;
//  - the zero GUID in an optional Guid property is taken out of the body before validation (the route's
//    own preValidation reading, run on the document's schema), and kept in a required one.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { tolerateBody } from '../src/platform/http/tolerant-body.ts';
import { appHeaders, inlineRefs, startTestServer, type TestServer } from './helpers.ts';

const ZERO = '00000000-0000-0000-0000-000000000000';
const SOME_ID = '3f2b8c1e-6a4d-4e8f-9b2a-7c1d5e9f0a3b';
type Schema = Record<string, any>;
type Segment = string | number;

interface Case {
  method: string;
  path: string;
  schema: Schema;
  at: Segment[];
  kind: 'guid' | 'number' | 'boolean' | 'date';
  optional: boolean;
  nullable: boolean;
  /** The property's own schema. */
  prop: Schema;
}

let server: TestServer;
let h: Record<string, string>;
const cases: Case[] = [];

function kindOf(s: Schema): Case['kind'] | null {
  const types = Array.isArray(s.type) ? s.type : [s.type];
  if (types.includes('number') || types.includes('integer')) return 'number';
  if (types.includes('boolean')) return 'boolean';
  if (!types.includes('string')) return null;
  if (s.format === 'uuid') return 'guid';
  if (s.format === 'date' || s.format === 'date-time' || String(s.pattern ?? '').startsWith('^\\d{4}-')) return 'date';
  return null;
}

/** Scalar alternatives of a property schema (anyOf members or itself), and whether null is one. */
function scalar(s: Schema): { kind: Case['kind'] | null; nullable: boolean } {
  const parts: Schema[] = s.anyOf ?? s.oneOf ?? [s];
  const nullable = parts.some((p) => p.type === 'null' || (Array.isArray(p.type) && p.type.includes('null')));
  const kinds = parts.map(kindOf).filter((k): k is Case['kind'] => k !== null);
  return { kind: kinds[0] ?? null, nullable };
}

/** Every scalar body property under `schema`, at the JSON path it is sent at (the first item of an array). */
function collect(op: Omit<Case, 'at' | 'kind' | 'optional' | 'nullable' | 'prop'>, s: Schema, at: Segment[], out: Case[], depth = 0): void {
  if (!s || typeof s !== 'object' || depth > 6) return;
  for (const alt of [...(s.anyOf ?? []), ...(s.oneOf ?? []), ...(s.allOf ?? [])]) collect(op, alt, at, out, depth + 1);
  if (s.items && typeof s.items === 'object') collect(op, s.items, [...at, 0], out, depth + 1);
  const required = new Set<string>(s.required ?? []);
  for (const [name, sub] of Object.entries<Schema>(s.properties ?? {})) {
    const { kind, nullable } = scalar(sub);
    if (kind) out.push({ ...op, at: [...at, name], kind, optional: !required.has(name), nullable, prop: sub });
    else collect(op, sub, [...at, name], out, depth + 1);
  }
}

/** A body holding only `value` at `at` (objects and arrays made on the way). */
function bodyWith(at: Segment[], value: unknown): unknown {
  let v: unknown = value;
  for (let i = at.length - 1; i >= 0; i--) v = typeof at[i] === 'number' ? [v] : { [at[i]]: v };
  return v;
}

const pointer = (at: Segment[]) => `/body/${at.join('/')}`;
const errorsOn = (res: { body: any }, at: Segment[]): { path?: string; message?: string }[] =>
  Array.isArray(res.body?.errors) ? res.body.errors.filter((e: { path?: string }) => e.path === pointer(at) || e.path?.startsWith(`${pointer(at)}/`)) : [];
const names = (res: { body: any }, at: Segment[]) => errorsOn(res, at).length > 0;
/** Refused for its value (type, format, pattern), not for being needed: a field the service requires may say "is required" of "" read as null. */
const refusesValue = (res: { body: any }, at: Segment[]) => errorsOn(res, at).some((e) => !/is required/.test(e.message ?? ''));

before(async () => {
  server = await startTestServer();
  const tenant = await server.createTenant('Tolerance Agency');
  h = appHeaders(tenant);
  const doc = inlineRefs((await server.request('GET', '/openapi.json')).body);
  for (const [path, ops] of Object.entries<Record<string, Schema>>(doc.paths)) {
    for (const [method, op] of Object.entries(ops)) {
      if (!['post', 'patch', 'put'].includes(method)) continue;
      if (!op.tags?.some((t: string) => t === 'Client API' || t === 'Integration API')) continue;
      const schema = op.requestBody?.content?.['application/json']?.schema;
      if (!schema) continue;
      collect({ method: method.toUpperCase(), path: path.replace(/\{[^}]+\}/g, SOME_ID), schema }, schema, [], cases);
    }
  }
});
after(() => server?.close());

test('the document has Client API and Integration API bodies with Guid, number, boolean and date properties', () => {
  const ops = new Set(cases.map((c) => `${c.method} ${c.path}`));
  assert.ok(ops.size >= 40, `${ops.size} operations`);
  for (const kind of ['guid', 'number', 'boolean', 'date'] as const)
    assert.ok(
      cases.some((c) => c.kind === kind),
      kind,
    );
  assert.ok(cases.filter((c) => c.kind === 'guid' && c.optional).length >= 100);
});

test('"" in an optional or nullable property is never refused naming it; in a required non-nullable one it still is', async (t) => {
  let checked = 0;
  let unchecked = 0;
  const failures: string[] = [];
  for (const c of cases) {
    const control = await server.request(c.method, c.path, { headers: h, json: bodyWith(c.at, 'x') });
    if (c.kind === 'boolean' || c.kind === 'number' || c.kind === 'guid' || c.kind === 'date') {
      if (!names(control, c.at)) {
        unchecked++;
        continue;
      }
    }
    const res = await server.request(c.method, c.path, { headers: h, json: bodyWith(c.at, '') });
    assert.ok(res.status < 500, `${c.method} ${c.path} ${pointer(c.at)}: ${res.status} ${res.text}`);
    const tolerated = c.optional || c.nullable;
    if (tolerated === refusesValue(res, c.at))
      failures.push(`${c.method} ${c.path} ${pointer(c.at)} (${tolerated ? 'tolerated' : 'required'}): ${res.text.slice(0, 300)}`);
    checked++;
  }
  t.diagnostic(`${checked} properties checked over HTTP; ${unchecked} whose "x" is not refused by name (an anyOf branch names its parent)`);
  assert.deepEqual(failures, []);
  assert.ok(checked >= cases.length * 0.8, `${checked} of ${cases.length} checked`);
});

test('the zero GUID in an optional Guid property is absent, in a required one it stays (as every route reads its body)', () => {
  const failures: string[] = [];
  let optional = 0;
  for (const c of cases.filter((x) => x.kind === 'guid')) {
    const { body } = tolerateBody(bodyWith(c.at, ZERO), c.schema);
    let v: any = body;
    for (const s of c.at.slice(0, -1)) v = v?.[s];
    const last = c.at[c.at.length - 1];
    const present = v !== undefined && v !== null && Object.hasOwn(v, last);
    if (c.optional) {
      optional++;
      if (present) failures.push(`${c.method} ${c.path} ${pointer(c.at)} kept the zero GUID`);
    } else if (c.nullable) {
      if (!present || v[last] !== null) failures.push(`${c.method} ${c.path} ${pointer(c.at)} (required, nullable) is not null`);
    } else if (!present || v[last] !== ZERO) failures.push(`${c.method} ${c.path} ${pointer(c.at)} (required) lost its value`);
  }
  assert.deepEqual(failures, []);
  assert.ok(optional >= 100, `${optional} optional Guid properties`);
});

test('over HTTP on real records: the zero GUID in every optional reference of the user create and PATCH is accepted, a GUID that matches nothing is a 4xx naming it', async () => {
  // Generated from the document: the Guid properties of POST /api/v3/users' CreateModel and of PATCH /api/users/{id}.
  const creates = cases.filter((c) => c.path === '/api/v3/users' && c.kind === 'guid' && c.at[0] === 'CreateModel' && c.at.length === 2 && c.optional);
  const patches = cases.filter(
    (c) => c.method === 'PATCH' && c.path === `/api/users/${SOME_ID}` && c.kind === 'guid' && c.at.length === 2 && c.at[1] === 'value',
  );
  assert.ok(creates.length >= 4, `${creates.length} create references`);
  assert.ok(patches.length >= 4, `${patches.length} PATCH references`);
  let n = 0;
  for (const c of creates) {
    const name = String(c.at[1]);
    const ok = await server.request('POST', '/api/v3/users', {
      headers: h,
      json: { OperationType: 0, CreateModel: { UserName: `zero-${++n}`, [name]: ZERO } },
    });
    assert.equal(ok.status, 201, `${name}: ${ok.text}`);
    // A property the document says is not stored is not checked either.
    if (/not stored/i.test(JSON.stringify(c.prop))) continue;
    const bad = await server.request('POST', '/api/v3/users', {
      headers: h,
      json: { OperationType: 0, CreateModel: { UserName: `bad-${n}`, [name]: SOME_ID } },
    });
    assert.ok(bad.status >= 400 && bad.status < 500 && JSON.stringify(bad.body).includes(name), `${name}: ${bad.status} ${bad.text}`);
  }
  const user = (await server.request('POST', '/api/v3/users', { headers: h, json: { OperationType: 0, CreateModel: { UserName: 'patched' } } })).body;
  for (const c of patches) {
    const name = String(c.at[0]);
    const ok = await server.request('PATCH', `/api/users/${user.Id}`, { headers: h, json: { [name]: { value: ZERO } } });
    assert.equal(ok.status, 200, `${name}: ${ok.text}`);
    if (name in ok.body) assert.equal(ok.body[name], null, `${name} is cleared`);
    const bad = await server.request('PATCH', `/api/users/${user.Id}`, { headers: h, json: { [name]: { value: SOME_ID } } });
    assert.ok(bad.status >= 400 && bad.status < 500 && JSON.stringify(bad.body).includes(name), `${name}: ${bad.status} ${bad.text}`);
  }
});
