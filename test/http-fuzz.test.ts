// Property-based fuzzing of every route in /openapi.json against a real server on 127.0.0.1: whatever the
// path parameters, query, headers and body, the answer is below 500 (or the OData feed's 501 for an unsupported option), arrives, and is problem+json when it
// is an error. Bounded by run count and time; ATRIUM_FUZZ_SEED=<n> replays a run (the seed is logged).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import fc from 'fast-check';
import { ADMIN_TOKEN, appHeaders, inlineRefs, startTestServer, type TestServer } from './helpers.ts';

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  required?: string[];
  items?: Schema;
  anyOf?: Schema[];
  oneOf?: Schema[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
}

interface Operation {
  method: string;
  path: string;
  pathParams: string[];
  query: { name: string; schema: Schema }[];
  body: Schema | null;
}

interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

const NUM_RUNS = Number(process.env.ATRIUM_FUZZ_RUNS ?? 2500);
const TIME_LIMIT_MS = 30_000;
const seed = Number(process.env.ATRIUM_FUZZ_SEED ?? Date.now() % 2 ** 31);

let server: TestServer;
let operations: Operation[];
let good: { app: Record<string, string>; token: string; tenantId: string };

before(async () => {
  // API role only: no workers, so no webhook delivery, export or e-mail can leave the machine.
  server = await startTestServer({ ATRIUM_ROLE: 'api' });
  const tenant = await server.createTenant('Fuzz Agency');
  const token = await server.request('POST', '/api/auth/token', { headers: appHeaders(tenant) });
  assert.equal(token.status, 200, token.text);
  good = { app: appHeaders(tenant), token: token.body.accessToken, tenantId: tenant.tenantId };
  const spec = inlineRefs((await server.request('GET', '/openapi.json')).body) as {
    paths: Record<
      string,
      Record<string, { parameters?: { in: string; name: string; schema: Schema }[]; requestBody?: { content?: Record<string, { schema: Schema }> } }>
    >;
  };
  operations = Object.entries(spec.paths).flatMap(([path, methods]) =>
    Object.entries(methods)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, op]) => ({
        method: method.toUpperCase(),
        path,
        pathParams: [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]),
        query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => ({ name: p.name, schema: p.schema })),
        body: op.requestBody?.content?.['application/json']?.schema ?? null,
      })),
  );
  assert.ok(operations.length > 40, `routes found in /openapi.json: ${operations.length}`);
});
after(() => server.close());

const hostileStrings = [
  '\u0000',
  'a\u0000b',
  '\ud800x',
  'x\udc00',
  '%00',
  '%ff%fe',
  '%',
  '%zz',
  '',
  ' ',
  'x'.repeat(10_000),
  "' or 1=1 --",
  '../../etc/passwd',
  '\u202e\u200b',
  '\u{1F600}',
  '2026-02-30T25:61:00Z',
  '1e400',
  'null',
  '{}',
  '\\',
  '$filter=1 eq 1',
];

const text = (maxLength = 60): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: fc.string({ maxLength }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 20 }) },
    { weight: 3, arbitrary: fc.constantFrom(...hostileStrings) },
    { weight: 1, arbitrary: fc.uuid() },
  );

const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  text(),
  fc.constantFrom(-1, 0, 2 ** 31, 2 ** 53 + 1, -(2 ** 63), 1e308, 0.1, true, null, [], {}),
);

function fromSchema(schema: Schema | undefined, depth: number): fc.Arbitrary<unknown> {
  if (!schema || depth > 4) return anyJson;
  const variants: fc.Arbitrary<unknown>[] = [];
  if (schema.enum?.length) variants.push(fc.constantFrom(...schema.enum));
  if (schema.const !== undefined) variants.push(fc.constant(schema.const));
  for (const sub of schema.anyOf ?? schema.oneOf ?? []) variants.push(fromSchema(sub, depth + 1));
  const types = Array.isArray(schema.type) ? schema.type : schema.type ? [schema.type] : [];
  for (const type of types) {
    if (type === 'string') {
      const formatted =
        schema.format === 'uuid'
          ? fc.uuid()
          : schema.format === 'date-time'
            ? fc.date({ noInvalidDate: true }).map((d) => d.toISOString())
            : text(schema.maxLength ?? 60);
      variants.push(fc.oneof({ weight: 3, arbitrary: formatted }, { weight: 1, arbitrary: text() }));
    } else if (type === 'integer') {
      variants.push(fc.oneof(fc.integer({ min: schema.minimum ?? -1000, max: schema.maximum ?? 1000 }), fc.constantFrom(-1, 2 ** 31, 2 ** 53 + 1)));
    } else if (type === 'number') variants.push(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(0, -1, 1e308)));
    else if (type === 'boolean') variants.push(fc.boolean());
    else if (type === 'null') variants.push(fc.constant(null));
    else if (type === 'array') variants.push(fc.array(fromSchema(schema.items, depth + 1), { maxLength: 4 }));
    else if (type === 'object') {
      const props = Object.fromEntries(Object.entries(schema.properties ?? {}).map(([k, s]) => [k, fromSchema(s, depth + 1)]));
      const required = (schema.required ?? []).filter((k) => k in props);
      variants.push(
        fc
          .tuple(fc.record(props, { requiredKeys: required }), fc.dictionary(text(12), anyJson, { maxKeys: 2 }), fc.nat(9))
          .map(([known, extra, roll]) => (roll === 0 ? { ...extra, ...known } : known)),
      );
    }
  }
  if (variants.length === 0) return anyJson;
  return fc.oneof({ weight: 9, arbitrary: fc.oneof(...variants) }, { weight: 1, arbitrary: anyJson });
}

/** Percent-encodes the UTF-8 bytes of a string (lone surrogates become U+FFFD, as any client would send). */
const encode = (value: string): string =>
  [...Buffer.from(value, 'utf8')]
    .map((b) => (/[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).padStart(2, '0')}`))
    .join('');

/** Header values must be ByteStrings without control characters, or fetch itself refuses them. */
const headerSafe = (value: string): string => [...value].filter((c) => c.charCodeAt(0) >= 0x20 && c.charCodeAt(0) <= 0xff && c !== '\u007f').join('');

const pathSegment = (known: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: text().map(encode) },
    { weight: 2, arbitrary: fc.constantFrom('%00', '%ff%fe', '%', '%zz', '%2F', '..', 'a'.repeat(500), '%ed%a0%80') },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constant(encode(known)) },
  );

const garbageHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    'x-apptenant': fc.oneof(fc.constant('not-a-guid'), fc.uuid(), text().map(headerSafe)),
    'x-appid': text().map(headerSafe),
    'x-appsecret': text().map(headerSafe),
    'x-appuser': fc.oneof(fc.uuid(), text().map(headerSafe)),
    authorization: fc.oneof(
      fc.constant('Bearer garbage'),
      text().map((t) => `Bearer ${headerSafe(t)}`),
      fc.constant(`Bearer ${ADMIN_TOKEN}x`),
    ),
    'x-accesstoken': fc.oneof(fc.constant('t'.repeat(9000)), text().map(headerSafe)),
  },
  { requiredKeys: [] },
);

function requestFor(op: Operation): fc.Arbitrary<FuzzRequest> {
  const params = fc.tuple(...op.pathParams.map((name) => pathSegment(name === 'tenantId' ? good.tenantId : 'Notifications')));
  const query = fc.array(
    fc.oneof(
      ...(op.query.length
        ? [fc.constantFrom(...op.query).chain((q) => fromSchema(q.schema, 0).map((v) => [q.name, typeof v === 'string' ? v : JSON.stringify(v)] as const))]
        : []),
      fc.tuple(text(12), text()),
    ),
    { maxLength: 3 },
  );
  const auth = fc.oneof(
    { weight: op.path.startsWith('/admin') ? 1 : 6, arbitrary: fc.constant(good.app) },
    { weight: 2, arbitrary: fc.constant({ authorization: `Bearer ${good.token}` }) },
    { weight: op.path.startsWith('/admin') ? 6 : 1, arbitrary: fc.constant({ authorization: `Bearer ${ADMIN_TOKEN}` }) },
    { weight: 2, arbitrary: garbageHeaders },
    { weight: 1, arbitrary: fc.constant({}) },
  );
  const hasBody = op.method !== 'GET' && op.method !== 'DELETE';
  const body = hasBody
    ? fc.oneof(
        { weight: 6, arbitrary: fromSchema(op.body ?? undefined, 0).map((v) => ({ type: 'application/json', text: JSON.stringify(v) ?? 'null' })) },
        { weight: 1, arbitrary: anyJson.map((v) => ({ type: 'application/json', text: JSON.stringify(v) ?? 'null' })) },
        { weight: 1, arbitrary: text().map((t) => ({ type: 'application/json', text: t })) },
        { weight: 1, arbitrary: fc.nat({ max: 5000 }).map((n) => ({ type: 'application/json', text: `${'['.repeat(n)}${']'.repeat(n)}` })) },
        { weight: 1, arbitrary: text().map((t) => ({ type: 'text/plain', text: t })) },
      )
    : fc.constant(null);
  return fc.tuple(params, query, auth, body).map(([values, pairs, headers, payload]) => {
    let url = op.path;
    op.pathParams.forEach((name, i) => {
      url = url.replace(`{${name}}`, values[i]);
    });
    const search = pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
    if (search) url += `?${search}`;
    // Demo data for a generated scale takes minutes; the body is still fuzzed in every other field.
    const text = payload && op.path === '/admin/tenants' ? payload.text.replace(/"demoData":true/g, '"demoData":false') : payload?.text;
    return {
      method: op.method,
      url,
      headers: { ...headers, ...(payload ? { 'content-type': payload.type } : {}) },
      ...(text !== undefined ? { body: text } : {}),
    };
  });
}

test('every route answers below 500 (OData: or a deliberate 501), and problem+json on error, whatever the input', async (t) => {
  t.diagnostic(`fast-check seed ${seed} (replay with ATRIUM_FUZZ_SEED=${seed})`);
  const statuses = new Map<number, number>();
  const arbitrary = fc.constantFrom(...operations).chain(requestFor);
  await fc.assert(
    fc.asyncProperty(arbitrary, async (req) => {
      const label = `${req.method} ${req.url.slice(0, 300)} headers=${JSON.stringify(req.headers).slice(0, 300)} body=${JSON.stringify(req.body?.slice(0, 300))}`;
      const res = await fetch(`${server.baseUrl}${req.url}`, { method: req.method, headers: req.headers, body: req.body, signal: AbortSignal.timeout(15_000) });
      const answer = await res.text();
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      // 501 is the OData feed's deliberate answer to an option it does not support (it names what it does).
      const deliberate = res.status === 501 && new URL(req.url, server.baseUrl).pathname.startsWith('/odata/');
      assert.ok(res.status < 500 || deliberate, `${res.status} for ${label}: ${answer.slice(0, 500)}`);
      // SCIM answers errors in its own schema (RFC 7644 §3.12), the status as a string; what the HTTP layer refuses
      // before any route (431, a malformed URL) stays problem+json there too.
      const scim =
        new URL(req.url, server.baseUrl).pathname.startsWith('/scim/v2') && (res.headers.get('content-type') ?? '').startsWith('application/scim+json');
      // The OAuth endpoints of the MCP authorization server answer errors as RFC 6749 §5.2 / RFC 7591 §3.2.2 require:
      // application/json with an `error` code, not problem+json.
      const pathname = new URL(req.url, server.baseUrl).pathname;
      const oauth = ['/oauth/token', '/oauth/register', '/oauth/revoke'].includes(pathname) && /^application\/json/.test(res.headers.get('content-type') ?? '');
      if (res.status >= 400 && oauth) {
        assert.equal(typeof JSON.parse(answer).error, 'string', `${res.status} without an OAuth error code for ${label}: ${answer.slice(0, 300)}`);
        assert.doesNotMatch(answer, /invalid byte sequence|unsupported Unicode escape/, label);
      } else if (res.status >= 400) {
        assert.match(
          res.headers.get('content-type') ?? '',
          scim ? /^application\/scim\+json/ : /^application\/problem\+json/,
          `${res.status} not problem+json for ${label}: ${answer.slice(0, 300)}`,
        );
        assert.equal(JSON.parse(answer).status, scim ? String(res.status) : res.status, label);
        assert.doesNotMatch(answer, /invalid byte sequence|unsupported Unicode escape/, label);
      }
    }),
    { seed, numRuns: NUM_RUNS, interruptAfterTimeLimit: TIME_LIMIT_MS, endOnFailure: true },
  );
  const total = [...statuses.values()].reduce((a, b) => a + b, 0);
  const count = (from: number, to: number) => [...statuses].filter(([s]) => s >= from && s < to).reduce((a, [, n]) => a + n, 0);
  t.diagnostic(`${total} requests: ${JSON.stringify(Object.fromEntries(statuses))}`);
  // The generator must reach handlers, not only bounce off auth and validation.
  assert.ok(total >= 200, `only ${total} requests within the time limit`);
  assert.ok(count(200, 300) >= 5, 'some requests succeed');
  assert.ok(count(400, 401) >= 5, 'some requests are refused as invalid');
});

/** A body for `schema` in which every array holds `length` copies of a small item (the first level of an object). */
function withLongArrays(schema: Schema | null, length: number): unknown {
  const item = (s: Schema | undefined): unknown => (s?.type === 'string' ? 'x' : s?.type === 'integer' || s?.type === 'number' ? 1 : {});
  if (!schema || schema.type === 'array') return Array.from({ length }, () => item(schema?.items));
  if (schema.type !== 'object' || !schema.properties) return Array.from({ length }, () => ({}));
  const body: Record<string, unknown> = {};
  for (const [name, s] of Object.entries(schema.properties)) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (types.includes('array')) body[name] = Array.from({ length }, () => item(s.items));
    else if (s.enum?.length) body[name] = s.enum[0];
    else if (types.includes('integer') || types.includes('number')) body[name] = 1;
    else if (types.includes('string')) body[name] = 'x';
    else body[name] = Array.from({ length }, () => ({}));
  }
  return body;
}

/** A body for `schema` whose first string (its first string property, or itself) is `text`. */
function withLongString(schema: Schema | null, text: string): unknown {
  if (schema?.type !== 'object' || !schema.properties) return text;
  const body: Record<string, unknown> = {};
  let placed = false;
  for (const [name, s] of Object.entries(schema.properties)) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!placed && types.includes('string') && !s.enum) {
      body[name] = text;
      placed = true;
    } else if (s.enum?.length) body[name] = s.enum[0];
  }
  return placed ? body : { value: text };
}

test('every route with a body survives arrays of 100,000 elements and strings of 10 MB (issue 26), and the process stays alive', async (t) => {
  const tenMb = 'é'.repeat(10) + 'a'.repeat(10_000_000 - 10);
  const statuses = new Map<number, number>();
  const timings: [number, string][] = [];
  let sent = 0;
  for (const op of operations.filter((o) => o.method !== 'GET' && o.method !== 'DELETE')) {
    let url = op.path;
    for (const name of op.pathParams) url = url.replace(`{${name}}`, name === 'tenantId' ? good.tenantId : '00000000-0000-4000-8000-000000000001');
    const headers = {
      ...(op.path.startsWith('/admin') ? { authorization: `Bearer ${ADMIN_TOKEN}` } : good.app),
      'content-type': 'application/json',
    };
    for (const body of [withLongArrays(op.body, 100_000), withLongString(op.body, tenMb)]) {
      const text = JSON.stringify(body).replace(/"demoData":true/g, '"demoData":false');
      const t0 = performance.now();
      const res = await fetch(`${server.baseUrl}${url}`, { method: op.method, headers, body: text, signal: AbortSignal.timeout(60_000) });
      const answer = await res.text();
      timings.push([performance.now() - t0, `${op.method} ${op.path} ${text.length > 5_000_000 ? '10 MB string' : '100,000 elements'} ${res.status}`]);
      sent++;
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      assert.ok(res.status < 500, `${res.status} for ${op.method} ${op.path} with a ${text.length}-character body: ${answer.slice(0, 300)}`);
      // A refusal stays small whatever the request held (a success may echo what was stored: a 10 MB configuration key).
      if (res.status >= 400) {
        assert.ok(answer.length < 64 * 1024, `${op.method} ${op.path}: a ${res.status} of ${answer.length} characters`);
        assert.ok((JSON.parse(answer).errors?.length ?? 0) <= 50, `${op.method} ${op.path}: more than 50 errors listed`);
      }
    }
  }
  t.diagnostic(`${sent} requests: ${JSON.stringify(Object.fromEntries(statuses))}`);
  timings.sort((a, b) => b[0] - a[0]);
  t.diagnostic(
    `slowest: ${timings
      .slice(0, 12)
      .map(([ms, what]) => `${what} ${ms.toFixed(0)} ms`)
      .join('; ')}`,
  );
  assert.ok(sent > 80, `${sent} requests sent`);
  const live = await fetch(`${server.baseUrl}/health/live`, { signal: AbortSignal.timeout(1000) });
  assert.equal(live.status, 200, 'the process is alive and answers');
});
