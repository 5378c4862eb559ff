// HTTP niceties through real HTTP: gzip and br when Accept-Encoding asks (and never otherwise), CORS
// off by default and on for listed origins, ETag / If-None-Match on the documents clients poll, and
// the CSV export's spreadsheet options (UTF-8 BOM, excelSafe). Raw requests (undici's request) so the
// bytes on the wire are what is checked, not what fetch makes of them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { request } from 'undici';
import { type Api, apiFor, appToken } from './custom-tables-helpers.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let cors: TestServer;
let headers: Record<string, string>;
let corsHeaders: Record<string, string>;
let api: Api;
const ORIGIN = 'https://bi.example.com';

const CELLS: [string, string | null, number][] = [
  ['a', '=1+2', -5],
  ['b', '+cmd', 3],
  ['c', '-2+3', 0],
  ['d', '@SUM(A1)', 1],
  ['e', 'Zoë, "ok"', 2],
  ['f', '\tTab', 4],
  ['g', null, -1],
];

before(async () => {
  [server, cors] = await Promise.all([startTestServer(), startTestServer({ ATRIUM_CORS_ORIGINS: `${ORIGIN}, http://localhost:5173` })]);
  const tenant = await server.createTenant('Niceties', { demoData: true, scale: 0.05 });
  headers = appHeaders(tenant);
  corsHeaders = appHeaders(await cors.createTenant('Cors'));
  api = apiFor(server, await appToken(server, tenant));
  const created = await api('POST', '/custom-tables/Cells', {
    KeyColumnName: 'Code',
    KeyDataTypeId: 5,
    Columns: [
      { ColumnName: 'Text', ColumnDataTypeId: 7 },
      { ColumnName: 'Qty', ColumnDataTypeId: 3 },
    ],
  });
  assert.equal(created.status, 201, created.text);
  const upserted = await api('PUT', '/custom-tables/Cells/rows', {
    OperationType: 'UpsertMany',
    UpsertManyModel: CELLS.map(([key, text, qty]) => ({
      KeyValue: key,
      Columns: [
        { ColumnName: 'Text', Value: text },
        { ColumnName: 'Qty', Value: qty },
      ],
    })),
  });
  assert.equal(upserted.status, 200, upserted.text);
});
after(async () => {
  await server?.close();
  await cors?.close();
});

interface Raw {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  bytes: Buffer;
}

async function raw(s: TestServer, method: 'GET' | 'POST' | 'OPTIONS', path: string, h: Record<string, string> = {}, json?: unknown): Promise<Raw> {
  const res = await request(`${s.baseUrl}${path}`, {
    method,
    headers: { ...h, ...(json === undefined ? {} : { 'content-type': 'application/json' }) },
    body: json === undefined ? undefined : JSON.stringify(json),
  });
  return { status: res.statusCode, headers: res.headers, bytes: Buffer.from(await res.body.arrayBuffer()) };
}

const PLAIN_CSV = 'Code,Text,Qty\r\na,=1+2,-5\r\nb,+cmd,3\r\nc,-2+3,0\r\nd,@SUM(A1),1\r\ne,"Zoë, ""ok""",2\r\nf,\tTab,4\r\ng,,-1\r\n';
const SAFE_CSV_WITH_BOM = '\uFEFFCode,Text,Qty\r\na,\'=1+2,-5\r\nb,\'+cmd,3\r\nc,\'-2+3,0\r\nd,\'@SUM(A1),1\r\ne,"Zoë, ""ok""",2\r\nf,\'\tTab,4\r\ng,,-1\r\n';
const BY_CODE = { queryBuilder: { orderBy: [{ field: 'Code' }] } };
const execute = (name: string, accept: string, extra: Record<string, string> = {}, query = '', body: unknown = {}) =>
  raw(server, 'POST', `/api/v3/analytics/named-query/${name}/dynamic-execute${query}`, { ...headers, accept, ...extra }, body);

function decoded(r: Raw): Buffer {
  const encoding = r.headers['content-encoding'];
  if (encoding === 'gzip') return gunzipSync(r.bytes);
  if (encoding === 'br') return brotliDecompressSync(r.bytes);
  assert.equal(encoding, undefined);
  return r.bytes;
}

describe('compression', () => {
  test('the CSV and NDJSON exports stream gzip or br when asked, the same bytes once decoded', async () => {
    for (const accept of ['text/csv', 'application/x-ndjson']) {
      const plain = await execute('DE-TimeSheets', accept);
      assert.equal(plain.status, 200);
      assert.equal(plain.headers['content-encoding'], undefined);
      assert.ok(plain.bytes.length > 100_000, `a large export: ${plain.bytes.length} bytes`);
      for (const encoding of ['gzip', 'br']) {
        const packed = await execute('DE-TimeSheets', accept, { 'accept-encoding': encoding });
        assert.equal(packed.status, 200);
        assert.equal(packed.headers['content-encoding'], encoding);
        assert.match(String(packed.headers.vary), /accept-encoding/i);
        // Streamed: chunked, no length known up front.
        assert.equal(packed.headers['content-length'], undefined);
        assert.equal(packed.headers['transfer-encoding'], 'chunked');
        assert.ok(packed.bytes.length < plain.bytes.length / 3, `${encoding} ${accept}: ${packed.bytes.length} of ${plain.bytes.length}`);
        assert.ok(decoded(packed).equals(plain.bytes), `${encoding} ${accept} decodes to the uncompressed export`);
      }
    }
  });

  test('br is preferred when both are accepted; identity or no Accept-Encoding leaves the answer as it was', async () => {
    const both = await execute('DE-TimeSheets', 'text/csv', { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(both.headers['content-encoding'], 'br');
    const gzipOnly = await execute('DE-TimeSheets', 'text/csv', { 'accept-encoding': 'gzip;q=1, br;q=0' });
    assert.equal(gzipOnly.headers['content-encoding'], 'gzip');
    for (const extra of [{}, { 'accept-encoding': 'identity' }, { 'accept-encoding': 'deflate' }] as Record<string, string>[]) {
      const res = await execute('DE-TimeSheets', 'application/json', extra, '', { queryBuilder: { take: 500 } });
      assert.equal(res.status, 200);
      assert.equal(res.headers['content-encoding'], undefined, JSON.stringify(extra));
      assert.equal(res.headers.vary, undefined);
    }
  });

  test('JSON pages, OData and the OpenAPI document are compressed when asked', async () => {
    const page = await execute('DE-TimeSheets', 'application/json', { 'accept-encoding': 'gzip' }, '', { queryBuilder: { take: 200 } });
    assert.equal(page.headers['content-encoding'], 'gzip');
    assert.equal(JSON.parse(decoded(page).toString()).data.length, 200);
    const basic = `Basic ${Buffer.from(`${headers['x-apptenant']}:${headers['x-appid']}:${headers['x-appsecret']}`).toString('base64')}`;
    for (const path of ['/odata/v4/DE_TimeSheets', '/odata/v4/$metadata']) {
      const res = await raw(server, 'GET', path, { authorization: basic, 'accept-encoding': 'br' });
      assert.equal(res.status, 200, path);
      assert.equal(res.headers['content-encoding'], 'br', path);
      assert.ok(decoded(res).length > 1024);
    }
    const spec = await raw(server, 'GET', '/openapi.json', { 'accept-encoding': 'gzip' });
    assert.equal(spec.headers['content-encoding'], 'gzip');
    assert.equal(JSON.parse(decoded(spec).toString()).openapi, '3.1.0');
  });

  test('the JSON page keeps {data, totalCount} and nothing else', async () => {
    const res = await execute('DE-TimeSheets', 'application/json', { 'accept-encoding': 'br' }, '?bom=true&excelSafe=true', { queryBuilder: { take: 1 } });
    assert.deepEqual(Object.keys(JSON.parse(decoded(res).toString())), ['data', 'totalCount']);
  });
});

describe('CSV for spreadsheets', () => {
  const text = (r: Raw) => decoded(r).toString('utf8');

  test('a UTF-8 BOM by Accept parameter or query option, nothing else changed; none by default', async () => {
    const plain = await execute('CT-Cells', 'text/csv');
    assert.equal(plain.bytes[0], 'C'.charCodeAt(0));
    assert.ok(plain.bytes.toString().startsWith('Code,Text,Qty\r\n'));
    const bom = Buffer.from([0xef, 0xbb, 0xbf]);
    for (const [accept, query] of [
      ['text/csv; bom=present', ''],
      ['application/json;q=0.1, text/csv;charset=utf-8;bom=present', ''],
      ['text/csv', '?bom=true'],
    ]) {
      const res = await execute('CT-Cells', accept, { 'accept-encoding': 'gzip' }, query);
      const body = decoded(res);
      assert.ok(body.subarray(0, 3).equals(bom), `${accept} ${query}`);
      assert.ok(body.subarray(3).equals(plain.bytes));
    }
    const notCsv = await execute('CT-Cells', 'text/csv', {}, '?bom=false');
    assert.ok(notCsv.bytes.equals(plain.bytes));
    const invalid = await execute('CT-Cells', 'text/csv', {}, '?bom=yes');
    assert.equal(invalid.status, 400);
  });

  test('excelSafe quotes text cells that would start a formula, leaves numbers and other text alone', async () => {
    const plain = text(await execute('CT-Cells', 'text/csv', {}, '', BY_CODE));
    assert.equal(plain, PLAIN_CSV, 'the default is unchanged');
    const safe = text(await execute('CT-Cells', 'text/csv; bom=present', { 'accept-encoding': 'br' }, '?excelSafe=true', BY_CODE));
    assert.equal(safe, SAFE_CSV_WITH_BOM);
    // NDJSON is data, not a spreadsheet: the option does not touch it.
    const ndjson = text(await execute('CT-Cells', 'application/x-ndjson', {}, '?excelSafe=true', BY_CODE));
    assert.equal(JSON.parse(ndjson.split('\n')[0]).Text, '=1+2');
  });
});

describe('schedules', () => {
  test('a schedule with Bom and ExcelSafe writes its CSV file so; one without writes it as before', async () => {
    const files: Record<string, string> = {};
    for (const [name, options] of [
      ['plain', {}],
      ['spreadsheet', { Bom: true, ExcelSafe: true }],
    ] as const) {
      const created = await api('POST', '/analytics/schedules', {
        Name: name,
        Query: 'CT-Cells',
        Format: 'csv',
        CronExpression: '0 0 1 1 *',
        Active: false,
        queryBuilder: BY_CODE.queryBuilder,
        ...options,
      });
      assert.equal(created.status, 201, created.text);
      const spreadsheet = name === 'spreadsheet';
      assert.equal(created.body.bom, spreadsheet);
      assert.equal(created.body.excelSafe, spreadsheet);
      const run = await api('POST', `/analytics/schedules/${created.body.id}/run?wait=25`);
      assert.equal(run.status, 200, run.text);
      assert.equal(run.body.status, 'Succeeded', run.text);
      const file = await raw(server, 'GET', `/api/v3/analytics/schedules/${created.body.id}/runs/${run.body.id}/file`, headers);
      assert.equal(file.status, 200);
      files[name] = file.bytes.toString('utf8');
      assert.equal((await api('DELETE', `/analytics/schedules/${created.body.id}`)).status, 200);
    }
    assert.equal(files.plain, PLAIN_CSV);
    assert.equal(files.spreadsheet, SAFE_CSV_WITH_BOM);
  });
});

describe('ETag and If-None-Match', () => {
  test('$metadata, /openapi.json and named-query metadata answer 304 to the tag they sent', async () => {
    const basic = `Basic ${Buffer.from(`${headers['x-apptenant']}:${headers['x-appid']}:${headers['x-appsecret']}`).toString('base64')}`;
    const targets: [string, Record<string, string>][] = [
      ['/odata/v4/$metadata', { authorization: basic }],
      ['/openapi.json', {}],
      ['/api/v3/analytics/named-query/DE-TimeSheets/metadata', headers],
      ['/api/v3/analytics/named-query/CT-Cells/metadata', headers],
    ];
    const tags = new Set<string>();
    for (const [path, h] of targets) {
      const first = await raw(server, 'GET', path, h);
      assert.equal(first.status, 200, path);
      const etag = String(first.headers.etag);
      assert.match(etag, /^W\/"[\w-]+"$/, path);
      tags.add(etag);
      const again = await raw(server, 'GET', path, h);
      assert.equal(again.headers.etag, etag, `${path}: the same document, the same tag`);
      for (const inm of [etag, `"other", ${etag}`, etag.slice(2), '*']) {
        const cached = await raw(server, 'GET', path, { ...h, 'if-none-match': inm });
        assert.equal(cached.status, 304, `${path} If-None-Match: ${inm}`);
        assert.equal(cached.bytes.length, 0);
        assert.equal(cached.headers.etag, etag);
      }
      const stale = await raw(server, 'GET', path, { ...h, 'if-none-match': 'W/"stale"' });
      assert.equal(stale.status, 200);
      assert.ok(stale.bytes.equals(first.bytes));
    }
    assert.equal(tags.size, targets.length);
    // A changed document gets a new tag: a custom table column changes its metadata.
    const before = await raw(server, 'GET', '/api/v3/analytics/named-query/CT-Cells/metadata', headers);
    const added = await api('POST', '/custom-tables/Cells', {
      KeyColumnName: 'Code',
      KeyDataTypeId: 5,
      Columns: [{ ColumnName: 'Extra', ColumnDataTypeId: 3 }],
    });
    assert.ok(added.status < 300, added.text);
    const afterChange = await raw(server, 'GET', '/api/v3/analytics/named-query/CT-Cells/metadata', {
      ...headers,
      'if-none-match': String(before.headers.etag),
    });
    assert.equal(afterChange.status, 200);
    assert.notEqual(afterChange.headers.etag, before.headers.etag);
    const unauth = await raw(server, 'GET', '/api/v3/analytics/named-query/DE-TimeSheets/metadata', { 'if-none-match': '*' });
    assert.equal(unauth.status, 401, 'a conditional request is still authenticated');
  });
});

describe('CORS', () => {
  const preflight = (s: TestServer, origin: string) =>
    raw(s, 'OPTIONS', '/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute', {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'content-type, x-accesstoken',
    });

  test('off by default: no CORS header on a preflight or a request', async () => {
    const pre = await preflight(server, ORIGIN);
    assert.equal(pre.headers['access-control-allow-origin'], undefined);
    const res = await raw(server, 'GET', '/api/v3/analytics/named-queries', { ...headers, origin: ORIGIN });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], undefined);
  });

  test('ATRIUM_CORS_ORIGINS: listed origins get the preflight answered and the headers exposed; others nothing', async () => {
    const pre = await preflight(cors, ORIGIN);
    assert.equal(pre.status, 204);
    assert.equal(pre.headers['access-control-allow-origin'], ORIGIN);
    assert.match(String(pre.headers['access-control-allow-methods']), /POST/);
    assert.match(String(pre.headers['access-control-allow-headers']), /x-accesstoken/);
    assert.match(String(pre.headers.vary), /origin/i);
    const other = await preflight(cors, 'https://evil.example.com');
    assert.equal(other.headers['access-control-allow-origin'], undefined);

    const res = await raw(cors, 'GET', '/api/v3/analytics/named-queries', { ...corsHeaders, origin: 'http://localhost:5173' });
    assert.equal(res.status, 200);
    assert.equal(res.headers['access-control-allow-origin'], 'http://localhost:5173');
    const exposed = String(res.headers['access-control-expose-headers']).toLowerCase().split(/,\s*/);
    for (const h of ['x-ignored-properties', 'x-continuation-token', 'link', 'location', 'x-request-id']) assert.ok(exposed.includes(h), h);
    // A refused request is still readable by the page that made it.
    const refused = await raw(cors, 'GET', '/api/v3/analytics/named-queries', { origin: ORIGIN });
    assert.equal(refused.status, 401);
    assert.equal(refused.headers['access-control-allow-origin'], ORIGIN);
    const unlisted = await raw(cors, 'GET', '/api/v3/analytics/named-queries', { ...corsHeaders, origin: 'https://evil.example.com' });
    assert.equal(unlisted.status, 200);
    assert.equal(unlisted.headers['access-control-allow-origin'], undefined);
  });
});
