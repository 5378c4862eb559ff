// Data Extraction API over a demo tenant: paging, order, fields, totalCount, CSV / NDJSON streams,
// discovery routes, aliases, parameters and X-AppUser (per-user flags; no row filter, as the platform's statements).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let headers: Record<string, string>;
let tenantId: string;
let owner: pg.Client;

before(async () => {
  server = await startTestServer();
  const tenant = await server.createTenant('Extraction', { demoData: true, scale: 0.05 });
  tenantId = tenant.tenantId;
  headers = appHeaders(tenant);
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
});
after(async () => {
  await owner?.end();
  await server?.close();
});

const run = (name: string, body: unknown, extra: Record<string, string> = {}) =>
  server.request('POST', `/api/v3/analytics/named-query/${name}/dynamic-execute`, { headers: { ...headers, ...extra }, json: body });

async function page(name: string, body: unknown, extra: Record<string, string> = {}) {
  const res = await run(name, body, extra);
  assert.equal(res.status, 200, res.text);
  return res.body as { data: Record<string, unknown>[]; totalCount: number };
}

/** RFC 4180 reader for the tests (quoted fields, doubled quotes, CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (quoted && ch === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (quoted && ch === '"') quoted = false;
    else if (quoted) field += ch;
    else if (ch === '"') quoted = true;
    else if (ch === ',') endField();
    else if (ch === '\r' && text[i + 1] === '\n') {
      endField();
      rows.push(row);
      row = [];
      i++;
    } else field += ch;
  }
  if (field || row.length) {
    endField();
    rows.push(row);
  }
  return rows;
}

describe('query builder', () => {
  test('an empty body answers the first page of every field with totalCount', async () => {
    const { data, totalCount } = await page('DE-TimeSheets', {});
    assert.ok(totalCount > 100, `totalCount ${totalCount}`);
    assert.equal(data.length, Math.min(totalCount, 10_000));
    const meta = await server.request('GET', '/api/v3/analytics/named-query/DE-TimeSheets/metadata', { headers });
    assert.deepEqual(
      Object.keys(data[0]),
      meta.body.fields.map((f: { name: string }) => f.name),
    );
  });

  test('DE-Employees applies ModifiedFrom, Email and TaxPayerNumber to hidden columns, never answering them', async () => {
    const all = await server.request('POST', '/api/v3/analytics/named-query/DE-Employees/dynamic-execute', { headers, json: {} });
    assert.equal(all.status, 200, all.text);
    assert.ok(all.body.totalCount > 0);
    assert.ok(!('ModifiedOnUtc' in all.body.data[0]) && !('Email' in all.body.data[0]));
    const future = await server.request('POST', '/api/v3/analytics/named-query/DE-Employees/dynamic-execute', {
      headers,
      json: { parameters: { ModifiedFrom: '2999/01/01' } },
    });
    assert.equal(future.status, 200, future.text);
    assert.equal(future.body.totalCount, 0);
    const past = await server.request('POST', '/api/v3/analytics/named-query/DE-Employees/dynamic-execute', {
      headers,
      json: { parameters: { ModifiedFrom: '2000-01-01', Email: null } },
    });
    assert.equal(past.body.totalCount, all.body.totalCount);
    const noSuchMail = await server.request('POST', '/api/v3/analytics/named-query/DE-Employees/dynamic-execute', {
      headers,
      json: { parameters: { Email: 'nobody@nowhere.invalid' } },
    });
    assert.equal(noSuchMail.body.totalCount, 0);
    const hiddenFilter = await server.request('POST', '/api/v3/analytics/named-query/DE-Employees/dynamic-execute', {
      headers,
      json: { queryBuilder: { filters: [['ModifiedOnUtc', '>', '2000-01-01']] } },
    });
    assert.equal(hiddenFilter.status, 400, 'hidden columns are not filterable');
  });

  test('a call with no body at all answers the same first page', async () => {
    const res = await server.request('POST', '/api/v3/analytics/named-query/DE-Cities/dynamic-execute', { headers });
    assert.equal(res.status, 200, res.text);
    assert.ok(Array.isArray(res.body.data));
    assert.equal(typeof res.body.totalCount, 'number');
  });

  test('paging over a column with ties is stable: pages concatenate to the whole ordered result', async () => {
    const filters = ['Day', '>=', '2000-01-01'];
    const whole = await page('DE-TimeSheets', { queryBuilder: { take: 10_000, orderBy: [{ field: 'Status' }], fields: ['TimesheetId', 'Status'], filters } });
    const pieces: Record<string, unknown>[] = [];
    for (let skip = 0; skip < whole.totalCount; skip += 37) {
      const p = await page('DE-TimeSheets', { queryBuilder: { skip, take: 37, orderBy: [{ field: 'Status' }], fields: ['TimesheetId', 'Status'], filters } });
      assert.equal(p.totalCount, whole.totalCount);
      pieces.push(...p.data);
    }
    assert.deepEqual(pieces, whole.data);
    assert.equal(new Set(pieces.map((r) => r.TimesheetId)).size, whole.totalCount);
  });

  test('orderBy on several fields, both directions', async () => {
    const { data } = await page('DE-TimeSheets', {
      queryBuilder: {
        take: 500,
        orderBy: [
          { field: 'Day', direction: 'desc' },
          { field: 'Hours', direction: 'ASC' },
        ],
      },
    });
    for (let i = 1; i < data.length; i++) {
      const [a, b] = [data[i - 1], data[i]];
      assert.ok((a.Day as string) >= (b.Day as string));
      if (a.Day === b.Day) assert.ok((a.Hours as number) <= (b.Hours as number));
    }
  });

  test('fields: only those keys, in the order asked; values typed as the catalogue says', async () => {
    const { data } = await page('DE-TimeSheets', { queryBuilder: { take: 5, fields: ['Hours', 'TimesheetId', 'Day', 'ModifiedOn', 'IsBillable'] } });
    assert.deepEqual(Object.keys(data[0]), ['Hours', 'TimesheetId', 'Day', 'ModifiedOn', 'IsBillable']);
    assert.equal(typeof data[0].Hours, 'number');
    assert.match(data[0].Day as string, /^\d{4}-\d{2}-\d{2}$/);
    assert.match(data[0].ModifiedOn as string, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.equal(typeof data[0].IsBillable, 'boolean');
  });

  test('totalCount counts every matching row, not the page; take 0 answers only the count', async () => {
    const filters = [['Status', '=', 'approved'], 'or', ['Hours', '>', 4]];
    const small = await page('DE-TimeSheets', { queryBuilder: { take: 3, filters } });
    const all = await page('DE-TimeSheets', { queryBuilder: { take: 10_000, filters, fields: ['Status', 'Hours'] } });
    assert.equal(small.data.length, 3);
    assert.equal(small.totalCount, all.data.length);
    assert.ok(all.data.every((r) => r.Status === 'Approved' || (r.Hours as number) > 4));
    const none = await page('DE-TimeSheets', { queryBuilder: { take: 0, filters } });
    assert.deepEqual(none.data, []);
    assert.equal(none.totalCount, all.data.length);
    const count = await page('DE-TimeSheetsCount', { queryBuilder: { filters } });
    assert.deepEqual(count.data, [{ Count: all.data.length }]);
  });
});

describe('CSV and NDJSON streams', () => {
  const body = { queryBuilder: { fields: ['TimesheetId', 'User', 'Day', 'Hours', 'IsBillable', 'ModifiedOn', 'Approvers'], orderBy: [{ field: 'Day' }] } };

  test('Accept: text/csv streams RFC 4180 with a header row of the field names, every row', async () => {
    const json = await page('DE-TimeSheets', { queryBuilder: { ...body.queryBuilder, take: 10_000 } });
    const res = await run('DE-TimeSheets', body, { accept: 'text/csv' });
    assert.equal(res.status, 200, res.text);
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    assert.match(res.headers.get('content-disposition') ?? '', /attachment; filename="DE-TimeSheets\.csv"/);
    assert.ok(res.text.endsWith('\r\n'));
    const rows = parseCsv(res.text);
    assert.deepEqual(rows[0], body.queryBuilder.fields);
    assert.equal(rows.length - 1, json.totalCount);
    const asText = (v: unknown) => (v === null ? '' : String(v));
    assert.deepEqual(
      rows.slice(1),
      json.data.map((r) => body.queryBuilder.fields.map((f) => asText(r[f]))),
    );
  });

  test('Accept: application/x-ndjson streams one JSON object per line, equal to the JSON page', async () => {
    const json = await page('DE-TimeSheets', { queryBuilder: { ...body.queryBuilder, take: 10_000 } });
    // fetch itself: the helper would parse a body whose type mentions json as one document.
    const res = await fetch(`${server.baseUrl}/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute`, {
      method: 'POST',
      headers: { ...headers, accept: 'application/x-ndjson', 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    const lines = (await res.text()).split('\n');
    assert.equal(lines.pop(), '');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l)),
      json.data,
    );
  });

  test('a stream honours filters, skip and take; errors before the first row are problems', async () => {
    const res = await run('DE-TimeSheets', { queryBuilder: { skip: 2, take: 3, fields: ['TimesheetId'], filters: ['Hours', '>', 0] } }, { accept: 'text/csv' });
    assert.equal(parseCsv(res.text).length, 4);
    const bad = await run('DE-TimeSheets', { queryBuilder: { filters: ['Nope', '=', 1] } }, { accept: 'text/csv' });
    assert.equal(bad.status, 400);
    assert.match(bad.headers.get('content-type') ?? '', /problem\+json/);
  });
});

describe('discovery', () => {
  test('GET named-queries lists all 72 (the spec’s 70 and the AD blocker’s two) with purpose, aliases and parameters', async () => {
    const res = await server.request('GET', '/api/v3/analytics/named-queries', { headers });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.filter((q: { name: string }) => !q.name.startsWith('CT-')).length, 72);
    const ts = res.body.find((q: { name: string }) => q.name === 'DE-TimeSheets');
    assert.ok(typeof ts.purpose === 'string' && ts.purpose.length > 0);
    assert.deepEqual(ts.parameters, ['ModifiedFrom', 'ProjectNumber', 'ProjectId', 'From', 'To']);
    assert.deepEqual(res.body.find((q: { name: string }) => q.name === 'DE-Attendances').aliases, ['DE-Attendences']);
  });

  test('GET metadata gives fields, types and operations; count queries add the fields they filter', async () => {
    const res = await server.request('GET', '/api/v3/analytics/named-query/de-jobs/metadata', { headers });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'DE-Jobs');
    assert.equal(res.body.fields.length, 44);
    const job = res.body.fields.find((f: { name: string }) => f.name === 'JobId');
    assert.deepEqual(job.dataType, 'guid');
    assert.equal(res.body.maxPageSize, 10_000);
    const count = await server.request('GET', '/api/v3/analytics/named-query/DE-JobsCount/metadata', { headers });
    assert.deepEqual(count.body.fields, [
      { name: 'Count', dataType: 'integer', operations: ['=', '<>', '<', '>', '<=', '>=', 'between', 'isblank', 'isnotblank'], defaultOperation: '=' },
    ]);
    assert.equal(count.body.filterFields.length, 44);
    const missing = await server.request('GET', '/api/v3/analytics/named-query/DE-Nope/metadata', { headers });
    assert.equal(missing.status, 404);
    assert.match(missing.headers.get('content-type') ?? '', /problem\+json/);
  });

  test('aliases reach the same query', async () => {
    for (const [alias, name] of [
      ['DE-Attendences', 'DE-Attendances'],
      ['DE-ExpenseTypes', 'DE-ExpenseType'],
      ['DE-ServiceGroups', 'DE-ServicesGroups'],
      ['DE-EstimatedPlannedActualMonthly', 'EstimatedPlannedActualMonthly'],
    ]) {
      const a = await page(alias, { queryBuilder: { take: 50 } });
      const b = await page(name, { queryBuilder: { take: 50 } });
      assert.deepEqual(a, b, alias);
    }
  });
});

describe('parameters', () => {
  test('From / To bound the day; ProjectId selects; null means not applied', async () => {
    const all = await page('DE-TimeSheets', { queryBuilder: { take: 10_000, fields: ['Day', 'ProjectId'] } });
    const days = all.data.map((r) => r.Day as string).sort();
    const from = days[Math.floor(days.length / 4)];
    const to = days[Math.floor((days.length * 3) / 4)];
    const ranged = await page('DE-TimeSheets', {
      queryBuilder: { take: 10_000, fields: ['Day'] },
      parameters: { From: from.replace(/-/g, '/'), To: `${to}T00:00:00Z`, ProjectId: null },
    });
    assert.equal(ranged.totalCount, days.filter((d) => d >= from && d <= to).length);
    const project = all.data[0].ProjectId as string;
    const byProject = await page('DE-TimeSheets', { queryBuilder: { take: 10_000, fields: ['ProjectId'] }, parameters: { ProjectId: project } });
    assert.equal(byProject.totalCount, all.data.filter((r) => r.ProjectId === project).length);
    const counted = await page('DE-TimeSheetsCount', { parameters: { ProjectId: project } });
    assert.deepEqual(counted.data, [{ Count: byProject.totalCount }]);
  });

  test('a parameter the query does not take, or an unconvertible one, is a 400', async () => {
    const res = await run('DE-Cities', { parameters: { ModifiedFrom: '2024-01-01' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].path, '/parameters/ModifiedFrom');
    const bad = await run('DE-TimeSheets', { parameters: { From: 'yesterday' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, '/parameters/From');
  });
});

describe('X-AppUser', () => {
  test('per-user flags for that user; every row, as the platform’s statements filter none by team or department', async () => {
    const { rows } = await owner.query(
      `select u.id from users u
        where u.tenant_id = $1 and u.is_active
          and not exists (select 1 from user_roles ur join roles r on r.tenant_id = ur.tenant_id and r.id = ur.role_id
                           where ur.tenant_id = u.tenant_id and ur.user_id = u.id and r.name = 'Administrator')
          and exists (select 1 from assignments a join jobs j on j.tenant_id = a.tenant_id and j.id = a.document_id
                       where a.tenant_id = u.tenant_id and a.user_id = u.id and j.department_id is distinct from u.department_id)
        order by u.user_name limit 1`,
      [tenantId],
    );
    assert.equal(rows.length, 1, 'the demo tenant has a non-administrator on a team');
    const user = rows[0] as { id: string };
    // Acting as the user, the user's roles apply: reading named queries needs DataExtractionRead (decision 0043).
    await owner.query(
      `insert into user_roles (tenant_id, user_id, role_id)
         select $1, $2, id from roles where tenant_id = $1 and name = 'DataExtractionRead' on conflict do nothing`,
      [tenantId, user.id],
    );
    const all = await owner.query('select id from jobs where tenant_id = $1', [tenantId]);
    const mine = await page('DE-Jobs', { queryBuilder: { take: 10_000, fields: ['JobId', 'CurrentUserInTeam'] } }, { 'x-appuser': user.id });
    assert.deepEqual(mine.data.map((r) => r.JobId).sort(), all.rows.map((r) => r.id).sort());
    const teamJobs = await owner.query('select distinct document_id from assignments where tenant_id = $1 and user_id = $2', [tenantId, user.id]);
    const inTeam = new Set(teamJobs.rows.map((r) => r.document_id));
    for (const r of mine.data) assert.equal(r.CurrentUserInTeam, inTeam.has(r.JobId), `job ${r.JobId}`);
    assert.ok(mine.data.some((r) => r.CurrentUserInTeam === true) && mine.data.some((r) => r.CurrentUserInTeam === false));

    const app = await page('DE-Jobs', { queryBuilder: { take: 10_000, fields: ['JobId', 'CurrentUserInTeam', 'CurrentUserPending'] } });
    assert.equal(app.totalCount, mine.totalCount);
    assert.ok(app.data.every((r) => r.CurrentUserInTeam === false && r.CurrentUserPending === false));
  });

  test('an Administrator as X-AppUser sees every document', async () => {
    const { rows } = await owner.query(
      `select ur.user_id from user_roles ur join roles r on r.tenant_id = ur.tenant_id and r.id = ur.role_id where ur.tenant_id = $1 and r.name = 'Administrator' limit 1`,
      [tenantId],
    );
    const all = await page('DE-Jobs', { queryBuilder: { take: 0 } });
    const admin = await page('DE-Jobs', { queryBuilder: { take: 0 } }, { 'x-appuser': rows[0].user_id });
    assert.equal(admin.totalCount, all.totalCount);
  });

  test('an X-AppUser that is not a user of the tenant is a 401', async () => {
    const res = await run('DE-Jobs', {}, { 'x-appuser': '00000000-0000-4000-8000-000000000000' });
    assert.equal(res.status, 401);
  });
});
