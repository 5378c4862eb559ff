// Small API faults a new user met on the demo tenant (issue 27, points 6, 7, 8, 10), through HTTP: numbers
// continue after the demo data's per document type and tenant (and after an import's), query strings are
// coerced to their schema's types, an empty body with a JSON content type is no body, and /health answers.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let db: pg.Client;
let demo: TenantCredentials;
let h: Record<string, string>;

before(async () => {
  server = await startTestServer();
  db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
  demo = await server.createTenant('Demo Agency', { demoData: true });
  h = appHeaders(demo);
});

after(async () => {
  await db?.end();
  await server?.close();
});

const highest = async (table: string, prefix: string, tenantId: string): Promise<number> =>
  Number(
    (
      await db.query(`select coalesce(max(substring(number from $2)::int), 0) as n from ${table} where tenant_id = $1 and number ~ $2`, [
        tenantId,
        `^${prefix}-([0-9]+)$`,
      ])
    ).rows[0].n,
  );

const pad = (prefix: string, n: number) => `${prefix}-${String(n).padStart(6, '0')}`;

test('point 6: a Job without a Number takes the one after the highest in use, per type and tenant, also after an import', async () => {
  const jobsInUse = await highest('jobs', 'JOB', demo.tenantId);
  assert.ok(jobsInUse >= 300, `the demo tenant holds JOB-000001… (highest ${jobsInUse})`);
  const project = (await db.query('select id from projects where tenant_id = $1 order by number limit 1', [demo.tenantId])).rows[0];
  const job = (extra: Record<string, unknown> = {}) =>
    server.request('POST', '/api/v3/jobs', {
      headers: h,
      json: { OperationType: 'Create', CreateModel: { Name: 'New user job', ProjectId: project.id, DepartmentId: demo.departmentId, ...extra } },
    });
  const first = await job();
  assert.equal(first.status, 201, first.text);
  assert.equal(first.body.Number, pad('JOB', jobsInUse + 1));
  const second = await job();
  assert.equal(second.body.Number, pad('JOB', jobsInUse + 2));
  // An import writes its own numbers: the sequence continues after them.
  const imported = await job({ Number: pad('JOB', jobsInUse + 500) });
  assert.equal(imported.status, 201, imported.text);
  assert.equal((await job()).body.Number, pad('JOB', jobsInUse + 501));
  // Another type has its own sequence, past its own highest number.
  const projectsInUse = await highest('projects', 'PRJ', demo.tenantId);
  const p = await server.request('POST', '/api/v3/projects', {
    headers: h,
    json: {
      OperationType: 0,
      CreateModel: {
        Name: 'New user project',
        CompanyId: demo.companyId,
        ClientId: (await db.query('select commercial_client_id as id from projects where tenant_id = $1 limit 1', [demo.tenantId])).rows[0].id,
      },
    },
  });
  assert.equal(p.status, 201, p.text);
  assert.equal(p.body.Number, pad('PRJ', projectsInUse + 1));
  // Another tenant starts at 1.
  const fresh = await server.createTenant('Fresh Agency');
  const fh = appHeaders(fresh);
  const billing = await server.request('POST', '/api/billingclients', {
    headers: fh,
    json: { externalId: 'F-1', companyCode: fresh.companyCode, name: 'Fresh Billing' },
  });
  assert.ok(billing.status < 300, billing.text);
  const client = await server.request('POST', '/api/commercialclients', { headers: fh, json: { externalId: 'F-1', name: 'Fresh' } });
  assert.ok(client.status < 300, client.text);
  const fp = await server.request('POST', '/api/v3/projects', {
    headers: fh,
    json: { OperationType: 0, CreateModel: { Name: 'First', CompanyId: fresh.companyId, ClientId: client.body.id } },
  });
  assert.equal(fp.status, 201, fp.text);
  assert.equal(fp.body.Number, 'PRJ-000001');
  // Concurrent creates never meet: every number is distinct and follows on.
  const many = await Promise.all(Array.from({ length: 6 }, () => job()));
  const numbers = many.map((r) => r.body.Number).sort();
  assert.equal(new Set(numbers).size, 6);
  assert.deepEqual(
    numbers,
    Array.from({ length: 6 }, (_, i) => pad('JOB', jobsInUse + 502 + i)),
  );
});

test('point 7: query-string numbers and booleans are coerced on every route; a value that is no number stays a 400 naming it', async () => {
  const job = (await db.query('select id from jobs where tenant_id = $1 limit 1', [demo.tenantId])).rows[0].id;
  const posts = await server.request('GET', `/api/posts?documentId=${job}&take=20&skip=0`, { headers: h });
  assert.equal(posts.status, 200, posts.text);
  const bad = await server.request('GET', `/api/posts?documentId=${job}&take=twenty`, { headers: h });
  assert.equal(bad.status, 400);
  assert.match(JSON.stringify(bad.body.errors), /querystring\/take/);
  const bodyStaysStrict = await server.request('POST', '/api/v3/jobs', {
    headers: h,
    json: { OperationType: 0, CreateModel: { Name: 'x', Priority: '2', ProjectId: job } },
  });
  assert.equal(bodyStaysStrict.status, 400, 'bodies are JSON: "2" is not coerced to a number');
});

test('point 8: an empty body with Content-Type: application/json is no body; a route that takes one still says so', async () => {
  const json = { ...h, 'content-type': 'application/json' };
  const del = await server.request('DELETE', '/api/v3/schedules/00000000-0000-4000-8000-000000000000', { headers: json });
  assert.equal(del.status, 404, del.text);
  const run = await server.request('POST', '/api/v3/user-feed/run', { headers: json });
  assert.notEqual(run.status, 400, run.text);
  assert.doesNotMatch(run.text, /Body cannot be empty/);
  const needsBody = await server.request('POST', '/api/v3/jobs', { headers: json });
  assert.equal(needsBody.status, 400);
  assert.match(JSON.stringify(needsBody.body), /body/);
});

test('point 10: GET /health answers like /health/live', async () => {
  const res = await server.request('GET', '/health');
  assert.equal(res.status, 200);
  assert.deepEqual(res.body, (await server.request('GET', '/health/live')).body);
});

test('point 9: validation names the real cause; 1e15 × 1e15 on estimate items is a 400 naming the field; an unknown EstimateId of a billing condition is a 422', async () => {
  const bad = await server.request('POST', '/api/v3/jobs', { headers: h, json: { OperationType: 0, CreateModel: { Name: 'x', ProjectId: 'not-a-guid' } } });
  assert.equal(bad.status, 400);
  const said = JSON.stringify(bad.body.errors);
  assert.match(said, /\/body\/CreateModel\/ProjectId/);
  assert.doesNotMatch(said, /must be null|must match a schema in anyOf/, 'no noise from the nullable branch');
  assert.doesNotMatch(bad.body.detail, /must be null|anyOf/);

  const estimate = (await db.query('select id from estimates where tenant_id = $1 order by number limit 1', [demo.tenantId])).rows[0].id;
  const huge = await server.request('PUT', `/api/estimates/${estimate}/items`, {
    headers: h,
    json: [{ Order: 1, Description: 'Overflow', QuantityIncome: 1e15, UnitPriceIncome: 1e15 }],
  });
  assert.equal(huge.status, 400, huge.text);
  assert.deepEqual(
    huge.body.errors.map((e: { path: string }) => e.path),
    ['/body/0/QuantityIncome', '/body/0/UnitPriceIncome'],
  );
  assert.equal(huge.body.errors[0].message, 'must be < 100000000');
  assert.doesNotMatch(huge.text, /numeric field overflow/);

  const unknown = await server.request('POST', '/api/billing-conditions', {
    headers: h,
    json: [{ EstimateId: '00000000-0000-4000-8000-000000000000', AmountType: 0, Percentage: 100 }],
  });
  assert.equal(unknown.status, 422, unknown.text);
  assert.equal(unknown.body.errors[0].path, '/body/0/EstimateId');
});

test('point 11: the demo Mileage type is mileage (kilometres × its rate); an Estimate without project, contract or company takes its department’s company’s currency', async () => {
  const [mileage] = (
    await db.query(`select t.id, t.value, t.company_id from expense_types t where t.tenant_id = $1 and t.name = 'Mileage' and t.company_id = $2`, [
      demo.tenantId,
      demo.companyId,
    ])
  ).rows;
  assert.ok(mileage, 'the demo company has a Mileage type');
  const project = (await db.query('select id from projects where tenant_id = $1 and company_id = $2 limit 1', [demo.tenantId, demo.companyId])).rows[0].id;
  const employee = (await db.query('select id from users where tenant_id = $1 and company_id = $2 limit 1', [demo.tenantId, demo.companyId])).rows[0].id;
  const sheet = await server.request('POST', '/api/expenses', {
    headers: h,
    json: { CompanyId: demo.companyId, DepartmentId: demo.departmentId, EmployeeId: employee, Emission: '2026-11-01', Due: '2026-11-30' },
  });
  assert.equal(sheet.status, 201, sheet.text);
  const item = await server.request('POST', `/api/expenses/${sheet.body.Id}/items`, {
    headers: h,
    json: { ExpenseItemTypeId: mileage.id, ExpenseItemGroup: 'Refund', Kilometers: 120, ProjectId: project, Origin: 'Lisboa', Destination: 'Porto' },
  });
  assert.equal(item.status, 201, item.text);
  const stored = (await db.query('select value_without_vat, kilometers_value from expense_items where id = $1', [item.body.Id])).rows[0];
  assert.equal(Number(stored.value_without_vat), Math.round(120 * Number(mileage.value) * 100) / 100);

  const client = (await db.query('select commercial_client_id as id from projects where tenant_id = $1 limit 1', [demo.tenantId])).rows[0].id;
  const estimate = await server.request('POST', '/api/v3/estimates', {
    headers: h,
    json: { OperationType: 0, CreateModel: { Name: 'Quote without company', ClientId: client, DepartmentId: demo.departmentId } },
  });
  assert.equal(estimate.status, 201, estimate.text);
  const currency = (await db.query('select c.currency_id from departments d join companies c on c.id = d.company_id where d.id = $1', [demo.departmentId]))
    .rows[0].currency_id;
  assert.equal(estimate.body.CurrencyId, currency);
});
