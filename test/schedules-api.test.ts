// Scheduled extraction through the HTTP API: validation (cron, query, format, builder), the schedule
// view (next runs, description), events, run-now in every format (xlsx read back with exceljs),
// downloads, retention, and a failed run that e-mails the tenant's mailbox (a real SMTP server).
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import ExcelJS from 'exceljs';
import pg from 'pg';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { apiFor, appToken } from './custom-tables-helpers.ts';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { type Smtp, startSmtp } from './smtp-server.ts';

const BASE = '/api/v3/analytics/schedules';
const RETENTION = 2;

let server: TestServer;
let tenant: TenantCredentials;
let h: Record<string, string>;
let smtp: Smtp;

before(async () => {
  smtp = await startSmtp();
  server = await startTestServer({
    ATRIUM_EXPORT_RETENTION: String(RETENTION),
    ATRIUM_SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    ATRIUM_SMTP_FROM: 'atrium@test.example',
  });
  tenant = await server.createTenant('Schedules Agency', { demoData: true, scale: 0.05 });
  h = appHeaders(tenant);
});

after(async () => {
  await server?.close();
  await smtp?.close();
});

const schedule = (over: Record<string, unknown> = {}) => ({ Name: 'Nightly jobs', Query: 'DE-Jobs', Format: 'csv', CronExpression: '5 0 * * *', ...over });

async function create(over: Record<string, unknown> = {}) {
  const res = await server.request('POST', BASE, { headers: h, json: schedule(over) });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function runNow(id: string, headers = h) {
  const res = await server.request('POST', `${BASE}/${id}/run?wait=25`, { headers });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

async function ownerQuery<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: server.databaseUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

describe('validation', () => {
  test('a cron expression with a wrong field is a 400 that names the field', async () => {
    for (const [cron, field] of [
      ['61 0 * * *', 'minute'],
      ['5 24 * * *', 'hour'],
      ['5 0 32 * *', 'day-of-month'],
      ['5 0 * 13 *', 'month'],
      ['5 0 * * MON-XYZ', 'day-of-week'],
    ]) {
      const res = await server.request('POST', BASE, { headers: h, json: schedule({ CronExpression: cron }) });
      assert.equal(res.status, 400, cron);
      assert.equal(res.body.errors[0].path, '/CronExpression');
      assert.match(res.body.errors[0].message, new RegExp(field), `${cron}: ${res.body.errors[0].message}`);
    }
    const six = await server.request('POST', BASE, { headers: h, json: schedule({ CronExpression: '0 5 0 * * *' }) });
    assert.equal(six.status, 400);
    assert.match(six.body.detail, /five fields/);
  });

  test('an unknown query, an unknown format and a bad builder are 400s with paths', async () => {
    const q = await server.request('POST', BASE, { headers: h, json: schedule({ Query: 'DE-Nope' }) });
    assert.equal(q.status, 400);
    assert.equal(q.body.errors[0].path, '/Query');
    const f = await server.request('POST', BASE, { headers: h, json: schedule({ Format: 'pdf' }) });
    assert.equal(f.status, 400);
    assert.equal(f.body.errors[0].path, '/Format');
    assert.match(f.body.errors[0].message, /csv, json, ndjson, xlsx/);
    // The builder is refused exactly as dynamic-execute refuses it.
    const builder = { fields: ['JobId', 'NoSuchField'] };
    const b = await server.request('POST', BASE, { headers: h, json: schedule({ queryBuilder: builder }) });
    const direct = await server.request('POST', '/api/v3/analytics/named-query/DE-Jobs/dynamic-execute', { headers: h, json: { queryBuilder: builder } });
    assert.equal(b.status, 400);
    assert.equal(direct.status, 400);
    assert.equal(b.body.detail, direct.body.detail);
    assert.deepEqual(b.body.errors, direct.body.errors);
    const op = await server.request('POST', BASE, { headers: h, json: schedule({ queryBuilder: { filters: ['Job', '>', 'x'] } }) });
    assert.equal(op.status, 400);
    const param = await server.request('POST', BASE, { headers: h, json: schedule({ parameters: { NoSuchParameter: 1 } }) });
    assert.equal(param.status, 400);
    const missing = await server.request('POST', BASE, { headers: h, json: { Name: 'x', Query: 'DE-Jobs', Format: 'csv' } });
    assert.equal(missing.status, 400);
    // Several independent problems are all reported.
    const many = await server.request('POST', BASE, { headers: h, json: schedule({ Format: 'pdf', CronExpression: '99 * * * *', Query: 'DE-Nope' }) });
    assert.equal(many.status, 400);
    assert.deepEqual(many.body.errors.map((e: { path: string }) => e.path).sort(), ['/CronExpression', '/Format', '/Query']);
  });

  test('a leading dot and any case are accepted in Format; property names in any case', async () => {
    const s = await create({ Format: '.CSV', Name: 'dot' });
    assert.equal(s.format, 'csv');
    const res = await server.request('POST', BASE, {
      headers: h,
      json: { name: 'lower', query: 'DE-Attendences', format: 'json', cronexpression: '0 6 * * 1-5' },
    });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.query, 'DE-Attendances', 'an alias is stored as the query it names');
  });
});

describe('schedules', () => {
  test('create, read, list, replace and delete; each emits its event', async () => {
    const s = await create();
    assert.equal(s.cronDescription, 'At 00:05, every day (UTC)');
    assert.equal(s.active, true);
    assert.equal(s.nextRunsUtc.length, 5);
    const first = new Date(s.nextRunsUtc[0]);
    assert.equal(first.getUTCHours(), 0);
    assert.equal(first.getUTCMinutes(), 5);
    assert.ok(first.getTime() > Date.now() && first.getTime() <= Date.now() + 86_400_000);
    for (let i = 1; i < 5; i++) assert.equal(new Date(s.nextRunsUtc[i]).getTime() - new Date(s.nextRunsUtc[i - 1]).getTime(), 86_400_000);
    assert.equal(s.runAsAppId, tenant.appId === s.runAsAppId ? tenant.appId : s.runAsAppId);

    const got = await server.request('GET', `${BASE}/${s.id}`, { headers: h });
    assert.equal(got.status, 200);
    assert.deepEqual({ ...got.body, nextRunsUtc: null }, { ...s, nextRunsUtc: null });
    const list = await server.request('GET', BASE, { headers: h });
    assert.ok(list.body.some((x: { id: string }) => x.id === s.id));

    const put = await server.request('PUT', `${BASE}/${s.id}`, { headers: h, json: schedule({ CronExpression: '0 0 29 2 *', Active: false, Format: 'xlsx' }) });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.format, 'xlsx');
    assert.deepEqual(put.body.nextRunsUtc, [], 'an inactive schedule has no next runs');
    const reactivated = await server.request('PUT', `${BASE}/${s.id}`, { headers: h, json: schedule({ CronExpression: '0 0 29 2 *', Format: 'xlsx' }) });
    for (const run of reactivated.body.nextRunsUtc) assert.match(run, /^\d{4}-02-29T00:00:00\.000Z$/, 'leap days only');

    const del = await server.request('DELETE', `${BASE}/${s.id}`, { headers: h });
    assert.equal(del.status, 200);
    assert.equal((await server.request('GET', `${BASE}/${s.id}`, { headers: h })).status, 404);
    assert.equal((await server.request('DELETE', `${BASE}/${s.id}`, { headers: h })).status, 404);

    const events = await ownerQuery<{ action_type: string; detail: Record<string, unknown> }>(
      'select action_type, detail from events where document_id = $1 order by seq',
      [s.id],
    );
    assert.deepEqual(
      events.map((e) => e.action_type),
      ['Created', 'Updated', 'Updated', 'Deleted'],
    );
    assert.deepEqual(events[1].detail, { Format: 'xlsx', CronExpression: '0 0 29 2 *', Active: false });
  });

  test("another tenant's schedule is not found", async () => {
    const s = await create({ Name: 'mine' });
    const other = await server.createTenant('Other Agency');
    const oh = appHeaders(other);
    assert.equal((await server.request('GET', `${BASE}/${s.id}`, { headers: oh })).status, 404);
    assert.equal((await server.request('POST', `${BASE}/${s.id}/run`, { headers: oh })).status, 404);
    assert.equal((await server.request('GET', `${BASE}/${s.id}/runs`, { headers: oh })).status, 404);
    assert.ok(!(await server.request('GET', BASE, { headers: oh })).body.some((x: { id: string }) => x.id === s.id));
  });
});

describe('runs', () => {
  const builder = { fields: ['JobId', 'JobNumber', 'Job', 'IsDelayed', 'EndDate'], orderBy: [{ field: 'JobNumber', direction: 'asc' }] };
  let expected: Record<string, unknown>[];

  before(async () => {
    const page = await server.request('POST', '/api/v3/analytics/named-query/DE-Jobs/dynamic-execute', { headers: h, json: { queryBuilder: builder } });
    assert.equal(page.status, 200, page.text);
    expected = page.body.data;
    assert.ok(expected.length > 5);
  });

  async function download(id: string, run: { id: string }) {
    const res = await fetch(`${server.baseUrl}${BASE}/${id}/runs/${run.id}/file`, { headers: h });
    return { res, body: Buffer.from(await res.arrayBuffer()) };
  }

  test('run-now in each format writes the rows dynamic-execute answers', async () => {
    const types: Record<string, string> = {
      csv: 'text/csv; charset=utf-8',
      json: 'application/json; charset=utf-8',
      ndjson: 'application/x-ndjson; charset=utf-8',
      xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    };
    for (const format of ['csv', 'json', 'ndjson', 'xlsx']) {
      const s = await create({ Name: `run ${format}`, Format: format, queryBuilder: builder });
      const run = await runNow(s.id);
      assert.equal(run.status, 'Succeeded', run.error);
      assert.equal(run.trigger, 'manual');
      assert.equal(run.rows, expected.length);
      assert.match(run.fileName, new RegExp(`^DE-Jobs_\\d{14}\\.${format}$`));
      const stamp = run.startedOnUtc.replace(/\.\d+Z$/, '').replace(/[-T:]/g, '');
      assert.equal(run.fileName, `DE-Jobs_${stamp}.${format}`);

      const { res, body } = await download(s.id, run);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('content-type'), types[format]);
      assert.equal(res.headers.get('content-disposition'), `attachment; filename="${run.fileName}"`);
      assert.equal(body.length, run.bytes);

      let rows: Record<string, unknown>[];
      if (format === 'csv') {
        const lines = body.toString('utf8').trimEnd().split('\r\n');
        assert.equal(lines[0], builder.fields.join(','));
        rows = lines.slice(1).map((l) => {
          const v = l.split(',');
          return { JobId: v[0], JobNumber: v[1], Job: v[2], IsDelayed: v[3] === 'true', EndDate: v[4] || null };
        });
        const simple = expected.filter((r) => !/[",]/.test(String(r.Job)));
        assert.ok(simple.length > 0);
        const byId = new Map(rows.map((r) => [r.JobId, r]));
        for (const r of simple) assert.deepEqual(byId.get(r.JobId), r);
        continue;
      }
      if (format === 'json') {
        const parsed = JSON.parse(body.toString('utf8'));
        assert.equal(parsed.totalCount, expected.length);
        rows = parsed.data;
      } else if (format === 'ndjson') {
        rows = body
          .toString('utf8')
          .trimEnd()
          .split('\n')
          .map((l) => JSON.parse(l));
      } else {
        const wb = new ExcelJS.Workbook();
        await wb.xlsx.load(body as unknown as ArrayBuffer);
        const ws = wb.worksheets[0];
        assert.equal(ws.name, 'DE-Jobs');
        assert.deepEqual((ws.getRow(1).values as unknown[]).slice(1), builder.fields);
        assert.equal(ws.getRow(1).getCell(1).font?.bold, true);
        assert.equal(ws.rowCount, expected.length + 1);
        rows = [];
        for (let r = 2; r <= ws.rowCount; r++) {
          const v = ws.getRow(r).values as unknown[];
          const due = v[5] instanceof Date ? v[5].toISOString() : (v[5] ?? null);
          rows.push({ JobId: v[1], JobNumber: v[2], Job: v[3], IsDelayed: v[4], EndDate: due });
        }
        const norm = (x: Record<string, unknown>) => ({ ...x, EndDate: x.EndDate ? new Date(String(x.EndDate)).toISOString() : null });
        assert.deepEqual(rows.map(norm), expected.map(norm));
        continue;
      }
      assert.deepEqual(rows, expected);
    }
    assert.equal(smtp.mails.length, 0, 'nothing is sent on success');
  });

  test('runs list newest first; a finished run emits Executed with the schedule and the run', async () => {
    const s = await create({ Name: 'listing', Format: 'ndjson', queryBuilder: { fields: ['JobId'], filters: ['JobNumber', '=', 'no such job'] } });
    const a = await runNow(s.id);
    const b = await runNow(s.id);
    assert.equal(a.rows, 0);
    const runs = await server.request('GET', `${BASE}/${s.id}/runs`, { headers: h });
    assert.equal(runs.status, 200);
    assert.deepEqual(
      runs.body.map((r: { id: string }) => r.id),
      [b.id, a.id],
    );
    const one = await server.request('GET', `${BASE}/${s.id}/runs/${a.id}`, { headers: h });
    assert.equal(one.body.status, 'Succeeded');
    assert.equal((await server.request('GET', `${BASE}/${s.id}/runs?take=1`, { headers: h })).body.length, 1);
    const events = await ownerQuery<{ detail: { Schedule: { Id: string; Query: string }; Run: { Id: string; Status: string; Rows: number } } }>(
      "select detail from events where document_id = $1 and action_type = 'Executed' order by seq",
      [s.id],
    );
    assert.equal(events.length, 2);
    assert.equal(events[0].detail.Schedule.Query, 'DE-Jobs');
    assert.equal(events[0].detail.Run.Id, a.id);
    assert.equal(events[0].detail.Run.Status, 'Succeeded');
    assert.equal(events[0].detail.Run.Rows, 0);
  });

  test('retention keeps the newest files; older runs answer 410', async () => {
    const s = await create({ Name: 'retention', queryBuilder: { fields: ['JobId'] } });
    const runs = [];
    for (let i = 0; i < RETENTION + 2; i++) runs.push(await runNow(s.id));
    const dir = path.join(server.runtime.ctx.config.exportsDir, tenant.tenantId, s.id);
    // The run is answered when recorded; its older files are deleted right after.
    for (let i = 0; i < 50 && readdirSync(dir).length > RETENTION; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(readdirSync(dir).length, RETENTION);
    for (const [i, run] of runs.entries()) {
      const { res } = await download(s.id, run);
      assert.equal(res.status, i < 2 ? 410 : 200, `run ${i}`);
    }
    const listed = (await server.request('GET', `${BASE}/${s.id}/runs`, { headers: h })).body;
    assert.equal(listed.filter((r: { fileDeletedOnUtc: string | null }) => r.fileDeletedOnUtc).length, 2);
    // Deleting the schedule deletes its files.
    await server.request('DELETE', `${BASE}/${s.id}`, { headers: h });
    assert.equal(existsSync(dir) ? readdirSync(dir).length : 0, 0);
  });

  test('a failed run records its error, keeps no file, and e-mails the mailbox once', async () => {
    const put = await server.request('PUT', '/api/configuration-keys/Notifications', {
      headers: h,
      json: { Mailbox: 'ops@agency.example, bi@agency.example' },
    });
    assert.ok(put.status === 201 || put.status === 200, put.text);
    // A schedule saved by an app that is revoked afterwards can no longer run.
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const app = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps`, {
      headers: admin,
      json: { name: 'short-lived', roles: ['ScheduleWrite', 'DataExtractionRead'] },
    });
    assert.equal(app.status, 201);
    const ah = appHeaders({ tenantId: tenant.tenantId, appId: app.body.appId, appSecret: app.body.appSecret });
    // ScheduleWrite alone does not extract data: saving a schedule needs DataExtractionRead too.
    const writer = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps`, {
      headers: admin,
      json: { name: 'writer', roles: ['ScheduleWrite'] },
    });
    const wh = appHeaders({ tenantId: tenant.tenantId, appId: writer.body.appId, appSecret: writer.body.appSecret });
    const refused = await server.request('POST', BASE, { headers: wh, json: schedule({ Name: 'no extraction' }) });
    assert.equal(refused.status, 403, refused.text);
    assert.equal(refused.body.requiredRole, 'DataExtractionRead');
    const res = await server.request('POST', BASE, { headers: ah, json: schedule({ Name: 'orphan' }) });
    assert.equal(res.status, 201);
    assert.equal((await server.request('DELETE', `/admin/tenants/${tenant.tenantId}/apps/${app.body.appId}`, { headers: admin })).status, 200);
    const before = smtp.mails.length;
    const run = await runNow(res.body.id);
    assert.equal(run.status, 'Failed');
    assert.match(run.error, /revoked/);
    assert.equal(run.fileName, null);
    const file = await server.request('GET', `${BASE}/${res.body.id}/runs/${run.id}/file`, { headers: h });
    assert.equal(file.status, 409);
    for (let i = 0; i < 50 && smtp.mails.length === before; i++) await new Promise((r) => setTimeout(r, 100));
    assert.equal(smtp.mails.length, before + 1);
    assert.deepEqual(smtp.mails.at(-1)?.to.sort(), ['bi@agency.example', 'ops@agency.example']);
    assert.match(smtp.mails.at(-1)?.body ?? '', /orphan/);
    assert.match(smtp.mails.at(-1)?.body ?? '', /revoked/);
    const executed = await ownerQuery<{ detail: { Run: { Status: string; Error: string } } }>(
      "select detail from events where document_id = $1 and action_type = 'Executed'",
      [res.body.id],
    );
    assert.equal(executed[0].detail.Run.Status, 'Failed');
  });

  test('a CT- query runs like a catalogue query, through an access token too', async () => {
    const token = await appToken(server, tenant);
    const ct = apiFor(server, token);
    const made = await ct('POST', '/custom-tables/Budgets', {
      KeyColumnName: 'Code',
      KeyDataTypeId: 5,
      Columns: [{ ColumnName: 'Amount', ColumnDataTypeId: 4 }],
    });
    assert.ok(made.status === 201 || made.status === 200, made.text);
    const rows = await ct('PUT', '/custom-tables/Budgets/rows', {
      OperationType: 'UpsertMany',
      UpsertManyModel: ['B-1', 'B-2', 'B-3'].map((code, i) => ({
        KeyColumnName: 'Code',
        KeyValue: code,
        Columns: [{ ColumnName: 'Amount', Value: `${i}.5` }],
      })),
    });
    assert.equal(rows.status, 200, rows.text);
    const th = { 'x-accesstoken': token };
    const res = await server.request('POST', BASE, {
      headers: th,
      json: schedule({ Name: 'budgets', Query: 'CT-Budgets', Format: 'ndjson', queryBuilder: { filters: ['Amount', '>', 0.5], orderBy: [{ field: 'Code' }] } }),
    });
    assert.equal(res.status, 201, res.text);
    const run = await runNow(res.body.id, th);
    assert.equal(run.status, 'Succeeded', run.error);
    assert.equal(run.rows, 2);
    assert.match(run.fileName, /^CT-Budgets_\d{14}\.ndjson$/);
    const file = await fetch(`${server.baseUrl}${BASE}/${res.body.id}/runs/${run.id}/file`, { headers: th });
    assert.deepEqual(
      (await file.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).Code),
      ['B-2', 'B-3'],
    );
  });

  test('a file is not downloadable before its run finished', async () => {
    const s = await create({ Name: 'pending' });
    const res = await server.request('POST', `${BASE}/${s.id}/run?wait=0`, { headers: h });
    assert.ok(res.status === 202 || res.status === 200);
    assert.match(res.headers.get('location') ?? '', new RegExp(`${BASE}/${s.id}/runs/${res.body.id}$`));
    if (res.status === 202) {
      const file = await server.request('GET', `${BASE}/${s.id}/runs/${res.body.id}/file`, { headers: h });
      assert.ok(file.status === 409 || file.status === 200);
    }
    // No .part file is ever listed as a run's file.
    for (let i = 0; i < 100; i++) {
      const one = await server.request('GET', `${BASE}/${s.id}/runs/${res.body.id}`, { headers: h });
      if (one.body.status !== 'Running') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const dir = path.join(server.runtime.ctx.config.exportsDir, tenant.tenantId, s.id);
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.part')),
      [],
    );
  });
});
