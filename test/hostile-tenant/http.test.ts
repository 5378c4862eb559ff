// Hostile tenant, through HTTP (issue 26, items 1, 2, 11 and 13): a server started as `npm start` starts it
// (128 MB old space, default settings, loopback only) meets inputs that used to exhaust its heap or pass its
// roles. For each: the answer is a 4xx, /health/live answered within 1 s all along (probed concurrently),
// the process is alive afterwards, its RSS stayed under RSS_BOUND_MB, and no secret appears in any answer
// or log line.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { ADMIN_TOKEN, createTestDatabase } from '../helpers.ts';

/** The heap flags of `npm start`: a hostile input must be refused within them, not by a larger heap. */
const NODE_FLAGS = ['--max-semi-space-size=8', '--max-old-space-size=128'];
/** The server's resident memory stays under this through every test (measured: about 200 MB at the worst). */
const RSS_BOUND_MB = 400;
const LIVE_WITHIN_MS = 1000;

interface App {
  appId: string;
  appSecret: string;
  headers: Record<string, string>;
  token: string;
}

interface Answer {
  status: number;
  text: string;
  body: any;
}

let child: ChildProcess;
let baseUrl = '';
let dataDir: string;
let dropDatabase: () => Promise<void>;
const logLines: string[] = [];
let tenantId: string;
let admin: App;
let nobody: App;
let tabler: App;
const secrets: string[] = [];
/** Answers to hostile requests (the setup's own answers hand out credentials by design). */
const answers: string[] = [];
let recording = false;
let peakRssMb = 0;

/** The server's resident set, read from /proc at the probe's moment. */
function rssMb(): number {
  try {
    const kb = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : 0;
  } catch {
    return 0;
  }
}

async function call(method: string, url: string, headers: Record<string, string>, body?: unknown): Promise<Answer> {
  const init: RequestInit & { duplex?: 'half' } = { method, headers: { ...headers }, signal: AbortSignal.timeout(60_000) };
  if (body !== undefined) {
    if (typeof body === 'string' || Buffer.isBuffer(body) || body instanceof ReadableStream) {
      init.body = body as BodyInit;
      if (body instanceof ReadableStream) init.duplex = 'half';
    } else init.body = JSON.stringify(body);
    (init.headers as Record<string, string>)['content-type'] ??= 'application/json';
  }
  const res = await fetch(`${baseUrl}${url}`, init);
  const text = await res.text();
  if (recording) answers.push(text.slice(0, 1_000_000));
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { status: res.status, text, body: parsed };
}

/**
 * The prober runs in a worker thread, so what it measures is the server, not this test's own event loop
 * (which builds and sends the hostile bodies): /health/live every 100 ms, each with a 1 s limit.
 */
const PROBER = `
const { parentPort, workerData } = require('node:worker_threads');
let done = false;
const probes = [];
parentPort.on('message', () => { done = true; });
(async () => {
  for (let i = 0; i < 6000 && !done; i++) {
    const t0 = performance.now();
    let ok = false;
    try {
      const res = await fetch(workerData.url, { signal: AbortSignal.timeout(workerData.limitMs) });
      ok = res.status === 200 && (await res.json()).status === 'ok';
    } catch {}
    probes.push({ ms: performance.now() - t0, ok });
    parentPort.postMessage({ tick: true });
    await new Promise((r) => setTimeout(r, 100));
  }
  parentPort.postMessage({ probes });
})();
`;

/**
 * Runs `work` while the prober asks /health/live and the server's RSS is sampled; then checks every probe
 * answered in time, the process is alive and RSS stayed under the bound. Answers given meanwhile are kept
 * for the secret check.
 */
async function hostile<T>(what: string, work: () => Promise<T>): Promise<T> {
  const prober = new Worker(PROBER, { eval: true, workerData: { url: `${baseUrl}/health/live`, limitMs: LIVE_WITHIN_MS } });
  const finished = new Promise<{ ms: number; ok: boolean }[]>((resolve, reject) => {
    prober.on('message', (m: { tick?: boolean; probes?: { ms: number; ok: boolean }[] }) => {
      if (m.tick) peakRssMb = Math.max(peakRssMb, rssMb());
      if (m.probes) resolve(m.probes);
    });
    prober.once('error', reject);
  });
  // At least one probe before the work starts, so a request that blocks at once is measured too.
  await new Promise<void>((resolve) => prober.once('message', () => resolve()));
  recording = true;
  let result: T;
  try {
    result = await work();
  } finally {
    recording = false;
    prober.postMessage('stop');
  }
  const probes = await finished;
  await prober.terminate();
  assert.ok(probes.length > 0, `${what}: /health/live was probed`);
  const late = probes.filter((p) => !p.ok || p.ms > LIVE_WITHIN_MS);
  assert.equal(
    late.length,
    0,
    `${what}: /health/live missed ${late.length} of ${probes.length} probes (slowest ${Math.max(...probes.map((p) => p.ms)).toFixed(0)} ms)`,
  );
  assert.equal(child.exitCode, null, `${what}: the server process exited`);
  const live = await fetch(`${baseUrl}/health/live`, { signal: AbortSignal.timeout(LIVE_WITHIN_MS) });
  assert.equal(live.status, 200, `${what}: alive afterwards`);
  assert.ok(peakRssMb < RSS_BOUND_MB, `${what}: RSS reached ${peakRssMb.toFixed(0)} MB (bound ${RSS_BOUND_MB} MB)`);
  return result;
}

function assertNoSecret(text: string, where: string): void {
  for (const secret of secrets) assert.ok(!text.includes(secret), `${where} holds a secret`);
}

async function newApp(name: string, roles: string[]): Promise<App> {
  const res = await call('POST', `/admin/tenants/${tenantId}/apps`, { authorization: `Bearer ${ADMIN_TOKEN}` }, { name, roles });
  assert.equal(res.status, 201, res.text);
  return withToken(res.body.appId, res.body.appSecret);
}

async function withToken(appId: string, appSecret: string): Promise<App> {
  const headers = { 'x-apptenant': tenantId, 'x-appid': appId, 'x-appsecret': appSecret };
  const token = await call('POST', '/api/auth/token', headers);
  assert.equal(token.status, 200, token.text);
  secrets.push(appSecret, token.body.accessToken, token.body.refreshToken);
  return { appId, appSecret, headers, token: token.body.accessToken };
}

const bearer = (app: App) => ({ 'x-accesstoken': app.token });

before(async () => {
  const database = await createTestDatabase();
  dropDatabase = database.drop;
  dataDir = await mkdtemp(path.join(os.tmpdir(), 'atrium-hostile-http-'));
  child = spawn(process.execPath, [...NODE_FLAGS, path.resolve(import.meta.dirname, '../../src/main.ts'), 'serve'], {
    env: {
      ...process.env,
      DATABASE_URL: database.connectionString,
      ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
      ATRIUM_SECRET_KEY: randomBytes(32).toString('hex'),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'text',
      PORT: '0',
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.setEncoding('utf8').on('data', (d: string) => logLines.push(...d.split('\n').filter(Boolean)));
  baseUrl = await new Promise<string>((resolve, reject) => {
    let stderr = '';
    child.stderr?.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      const listening = /Atrium listening on (http:\/\/\S+)/.exec(stderr);
      if (listening) resolve(listening[1]);
    });
    child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${stderr}`)));
  });
  const tenant = await call('POST', '/admin/tenants', { authorization: `Bearer ${ADMIN_TOKEN}` }, { name: 'Hostile Agency', demoData: false });
  assert.equal(tenant.status, 201, tenant.text);
  tenantId = tenant.body.tenantId;
  secrets.push(ADMIN_TOKEN);
  admin = await withToken(tenant.body.appId, tenant.body.appSecret);
  nobody = await newApp('No roles', []);
  tabler = await newApp('Tables', ['CustomTablesRead', 'CustomTablesSave']);
  const table = await call('POST', '/api/v3/custom-tables/Hostile', bearer(admin), {
    KeyColumnName: 'K',
    KeyDataTypeId: 3,
    Columns: [{ ColumnName: 'V', ColumnDataTypeId: 5 }],
  });
  assert.equal(table.status, 201, table.text);
  const key = await call('PUT', '/api/configuration-keys/SFTP-HRFEED', admin.headers, {
    ftpHostIp: 'sftp.agency.invalid',
    ftpUsername: 'feed',
    ftpPassword: 'feed-password-8c1f2',
    ftpPath: '/Data',
  });
  assert.equal(key.status, 201, key.text);
  secrets.push('feed-password-8c1f2');
});

after(async () => {
  if (child && child.exitCode === null) {
    child.kill('SIGTERM');
    await Promise.race([new Promise((r) => child.once('exit', r)), sleep(10_000)]);
    if (child.exitCode === null) child.kill('SIGKILL');
  }
  await dropDatabase?.();
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
});

describe('item 1: error lists are bounded', () => {
  const empties = JSON.stringify({ OperationType: 2, UpsertManyModel: Array.from({ length: 100_000 }, () => ({})) });

  test('100,000 empty rows from an app with no roles: 403 before the body is validated', async () => {
    const res = await hostile('rows without a role', () => call('PUT', '/api/v3/custom-tables/Hostile/rows', bearer(nobody), empties));
    assert.equal(res.status, 403, res.text.slice(0, 500));
    assert.equal(res.body.requiredRole, 'CustomTablesSave');
  });

  test('100,000 empty rows from an app that may write: 400 with at most 50 errors', async () => {
    const res = await hostile('rows with the role', () => call('PUT', '/api/v3/custom-tables/Hostile/rows', bearer(tabler), empties));
    assert.equal(res.status, 400, res.text.slice(0, 500));
    assert.ok(res.body.errors.length >= 1 && res.body.errors.length <= 50, `${res.body.errors.length} errors`);
    assert.match(res.body.errors[0].path, /^\/body\/UpsertManyModel\/0/);
    assert.ok(res.text.length < 64 * 1024, `answer of ${res.text.length} characters`);
  });

  test('a small body still lists every error, up to 50, and counts the rest', async () => {
    const rows = Array.from({ length: 120 }, () => ({}));
    const res = await hostile('120 rows', () => call('PUT', '/api/v3/custom-tables/Hostile/rows', bearer(tabler), { OperationType: 2, UpsertManyModel: rows }));
    assert.equal(res.status, 400);
    assert.equal(res.body.errors.length, 50);
    assert.equal(res.body.errorCount, 120);
    assert.match(res.body.detail, /70 more errors not listed/);
  });

  test('a filter of 100,000 bad joiners: 400 with 50 errors and their count', async () => {
    const filters = Array.from({ length: 100_000 }, (_, i) => (i % 2 ? 'xor' : ['Name', '=', 'a']));
    const res = await hostile('filter', () =>
      call('POST', '/api/v3/analytics/named-query/DE-Projects/dynamic-execute', admin.headers, { queryBuilder: { filters } }),
    );
    assert.equal(res.status, 400, res.text.slice(0, 500));
    assert.equal(res.body.errors.length, 50);
    assert.ok(res.body.errorCount >= 50_000, `errorCount ${res.body.errorCount}`);
    assert.ok(res.text.length < 64 * 1024, `answer of ${res.text.length} characters`);
  });
});

describe('item 2: custom-table import and row sizes are bounded before allocating', () => {
  const MB50 = 50 * 1024 * 1024;
  const head = '{"KeyColumnName":"K","KeyDataTypeId":3,"Columns":[{"ColumnName":"V","ColumnDataTypeId":5}],"Rows":[{"K":1,"V":"';
  const tail = '"}]}';

  test('a streamed import whose row holds a 50 MB value: 400 once the row passes its limit, nothing imported', async () => {
    // Streamed without a Content-Length: the row grows past ATRIUM_CUSTOM_TABLE_IMPORT_ROW_LIMIT_BYTES (16 MiB) and is refused there.
    const chunk = Buffer.alloc(64 * 1024, 'a');
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(Buffer.from(head));
        if (sent >= MB50) {
          controller.enqueue(Buffer.from(tail));
          controller.close();
          return;
        }
        controller.enqueue(chunk);
        sent += chunk.length;
      },
    });
    const res = await hostile('streamed 50 MB row', () => call('PUT', '/api/v3/custom-tables/Hostile/import', bearer(tabler), stream));
    assert.equal(res.status, 400, res.text.slice(0, 500));
    assert.match(res.body.detail, /longer than 16777216 characters/);
    assert.ok(sent < MB50, `the server stopped reading after ${sent} bytes`);
    const rows = await call('GET', '/api/v3/custom-tables/Hostile/rows/values', bearer(tabler));
    assert.deepEqual(rows.body, [], 'nothing was imported');
  });

  test('an import file larger than ATRIUM_CUSTOM_TABLE_IMPORT_LIMIT_BYTES with its Content-Length: 413 before reading it', async () => {
    // 600 MB is declared (over the 512 MiB default); the body sent is 1 MB, as a client that lies or is cut off would send.
    const body = Buffer.alloc(1024 * 1024, ' ');
    const res = await hostile('declared 600 MB import', async () => {
      return new Promise<Answer>((resolve, reject) => {
        const req = httpRequest(`${baseUrl}/api/v3/custom-tables/Hostile/import`, {
          method: 'PUT',
          headers: { ...bearer(tabler), 'content-type': 'application/json', 'content-length': String(600 * 1024 * 1024) },
        });
        req.on('response', (r) => {
          let text = '';
          r.setEncoding('utf8').on('data', (d: string) => {
            text += d;
          });
          r.on('end', () => {
            if (recording) answers.push(text);
            req.destroy();
            resolve({ status: r.statusCode ?? 0, text, body: JSON.parse(text) });
          });
        });
        req.on('error', reject);
        req.write(body);
      });
    });
    assert.equal(res.status, 413, res.text);
    assert.match(res.body.detail, /ATRIUM_CUSTOM_TABLE_IMPORT_LIMIT_BYTES/);
  });

  test('a row holding a 50 MB value in PUT rows: 413 (ATRIUM_BODY_LIMIT_BYTES)', async () => {
    const body = Buffer.concat([
      Buffer.from('{"OperationType":2,"UpsertManyModel":[{"KeyValue":1,"Columns":[{"ColumnName":"V","Value":"'),
      Buffer.alloc(MB50, 'b'),
      Buffer.from('"}]}]}'),
    ]);
    const res = await hostile('50 MB row', async () => {
      try {
        return await call('PUT', '/api/v3/custom-tables/Hostile/rows', bearer(tabler), body);
      } catch (err) {
        // The server may answer 413 and close before the client has sent all 50 MB.
        return { status: 0, text: String((err as Error).cause ?? err), body: null };
      }
    });
    assert.ok(res.status === 413 || res.status === 0, `${res.status} ${res.text.slice(0, 300)}`);
  });
});

describe('item 11: every route has a role', () => {
  /** Operations any caller may reach without a role; docs/platform.md lists them ("Routes without a role"). */
  const PUBLIC = new Set([
    'GET /health/live',
    'GET /health/ready',
    'POST /api/auth/token',
    'POST /api/auth/token/refresh',
    'GET /api/v3/whoami',
    'POST /api/integration-workflows/{id}/execute',
    'GET /api/integration-workflows/{id}/execute',
    'POST /api/tenants/{tenantId}/integration-workflows/{id}/execute',
    'GET /api/tenants/{tenantId}/integration-workflows/{id}/execute',
    'GET /health',
    // The MCP authorization server (OAuth 2.1): discovery metadata and the protocol's own endpoints.
    'GET /.well-known/oauth-protected-resource',
    'GET /.well-known/oauth-protected-resource/mcp',
    'GET /.well-known/oauth-protected-resource/t/{slug}/mcp',
    'GET /.well-known/oauth-authorization-server',
    'POST /oauth/register',
    'POST /oauth/token',
    'POST /oauth/revoke',
    'GET /oauth/authorize',
    // The consent page: any signed-in user may allow a client; the tokens then carry that user's roles.
    'GET /api/v3/mcp/oauth/authorization',
    'POST /api/v3/mcp/oauth/authorization',
  ]);
  /** Routes that authenticate with their own credentials, never an app's: 401 to any app (docs/platform.md, same section). */
  const OWN_AUTH = ['/admin', '/scim/v2/', '/mcp'];

  test('PUT /api/configuration-keys/{key} by an app with no roles is a 403 and changes nothing', async () => {
    const res = await hostile('configuration key', () =>
      call('PUT', '/api/configuration-keys/SFTP-HRFEED', nobody.headers, { ftpHostIp: 'elsewhere.invalid', ftpUsername: 'feed', ftpPassword: '********' }),
    );
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.requiredRole, 'ConfigurationKeyWrite');
    const kept = await call('GET', '/api/configuration-keys/SFTP-HRFEED', admin.headers);
    assert.equal(kept.body.value.ftpHostIp, 'sftp.agency.invalid');
  });

  test('every operation of /openapi.json answers 403 to an app with no roles, unless it is public', async () => {
    const doc = (await call('GET', '/openapi.json', {})).body;
    const values: Record<string, string> = {
      tenantId,
      tableName: 'Hostile',
      NamedQuery: 'DE-Projects',
      entitySet: 'Projects',
      key: 'SFTP-HRFEED',
      name: 'Results.csv',
    };
    const basic = `Basic ${Buffer.from(`${tenantId}:${nobody.appId}:${nobody.appSecret}`).toString('base64')}`;
    const seen: string[] = [];
    const wrong: string[] = [];
    await hostile('the role walk', async () => {
      for (const [route, methods] of Object.entries(doc.paths) as [string, Record<string, unknown>][]) {
        for (const method of Object.keys(methods).filter((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))) {
          const op = `${method.toUpperCase()} ${route}`;
          seen.push(op);
          const url = route.replace(/\{(\w+)\}/g, (_, name: string) => values[name] ?? '00000000-0000-4000-8000-000000000001');
          const headers: Record<string, string> = route.startsWith('/odata') ? { authorization: basic } : { ...nobody.headers, ...bearer(nobody) };
          const res = await call(method.toUpperCase(), url, headers, method === 'get' || method === 'delete' ? undefined : {});
          const expected = PUBLIC.has(op) ? 'public' : OWN_AUTH.some((prefix) => route.startsWith(prefix)) ? 401 : 403;
          if (expected === 'public' ? res.status === 403 || res.status >= 500 : res.status !== expected)
            wrong.push(`${op}: ${res.status} ${res.text.slice(0, 200)}`);
        }
      }
    });
    assert.ok(seen.length > 100, `${seen.length} operations walked`);
    assert.deepEqual(wrong, []);
    for (const op of PUBLIC) assert.ok(seen.includes(op), `${op} is still an operation`);
  });
});

describe('item 13: the outbound guard', () => {
  test('IPv4-translated and local-use NAT64 literals are refused at save, naming the field', async () => {
    for (const host of ['[::ffff:0:a9fe:a9fe]', '[64:ff9b:1::a9fe:a9fe]']) {
      const key = await hostile(`key ${host}`, () =>
        call('PUT', '/api/configuration-keys/SFTP-HRFEED', admin.headers, { ftpHostIp: host, ftpUsername: 'feed', ftpPassword: '********' }),
      );
      assert.equal(key.status, 400, key.text);
      assert.equal(key.body.errors[0].path, '/body/ftpHostIp');
      const automation = await hostile(`automation ${host}`, () =>
        call('POST', '/api/v3/automations', admin.headers, {
          name: 'Metadata',
          actions: [
            { name: 'Start', type: 'Start', next: 'Call' },
            { name: 'Call', type: 'Rest', method: 'GET', url: `http://${host}/latest/meta-data/`, next: 'Done' },
            { name: 'Done', type: 'Result', httpResponse: { statusCode: 200, body: null } },
          ],
        }),
      );
      assert.equal(automation.status, 400, automation.text);
      assert.equal(automation.body.errors[0].path, '/body/actions/1/url');
      assert.match(automation.body.errors[0].message, /cloud metadata|local-use NAT64/);
    }
    const kept = await call('GET', '/api/configuration-keys/SFTP-HRFEED', admin.headers);
    assert.equal(kept.body.value.ftpHostIp, 'sftp.agency.invalid');
    // Only an action's own settings are addresses: the same text as data in a Result's body is saved.
    const data = await call('POST', '/api/v3/automations', admin.headers, {
      name: 'Data only',
      actions: [
        { name: 'Start', type: 'Start', next: 'Done' },
        { name: 'Done', type: 'Result', httpResponse: { statusCode: 200, body: { callbackUrl: 'http://[::ffff:0:a9fe:a9fe]/' } } },
      ],
    });
    assert.equal(data.status, 201, data.text);
  });
});

describe('afterwards', () => {
  test('no answer and no log line holds a secret; the process is alive', async (t) => {
    t.diagnostic(
      `peak RSS of the server: ${peakRssMb.toFixed(0)} MB (bound ${RSS_BOUND_MB} MB); ${answers.length} hostile answers, ${logLines.length} log lines checked`,
    );
    assert.ok(secrets.length >= 8);
    for (const [i, a] of answers.entries()) assertNoSecret(a, `answer ${i}`);
    assert.ok(logLines.length > 10, 'the server logged its requests');
    for (const [i, l] of logLines.entries()) assertNoSecret(l, `log line ${i}`);
    assert.equal(child.exitCode, null);
    assert.ok(peakRssMb > 0 && peakRssMb < RSS_BOUND_MB, `peak RSS ${peakRssMb.toFixed(0)} MB`);
  });
});
