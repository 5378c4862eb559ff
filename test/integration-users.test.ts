// Integration API: users and employees (create, update by Id and by ExternalId, PATCH of every field
// type, lookups, every 4xx), events, concurrency of same-key POSTs and Idempotency-Key.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let other: Awaited<ReturnType<TestServer['createTenant']>>;
let db: pg.Client;
let h: Record<string, string>;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Users Agency');
  other = await server.createTenant('Other Agency');
  h = appHeaders(tenant);
  db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
});
after(async () => {
  await db.end();
  await server.close();
});

let seq = 0;
function userBody(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  seq++;
  return {
    UserName: `user${seq}`,
    Name: `User ${seq}`,
    ExternalId: `EXT-${seq}`,
    CompanyCode: tenant.companyCode,
    DepartmentExternalId: tenant.departmentExternalId,
    TypologyExternalId: tenant.typologyExternalId,
    IsActive: true,
    ...overrides,
  };
}

async function events(documentId: string): Promise<{ action_type: string; document_type: string; detail: Record<string, unknown> }[]> {
  const res = await db.query('select action_type, document_type, detail from events where document_id = $1 order by seq', [documentId]);
  return res.rows;
}

const post = (json: unknown, headers: Record<string, string> = {}) => server.request('POST', '/api/users', { headers: { ...h, ...headers }, json });
const patch = (id: string, json: unknown) => server.request('PATCH', `/api/users/${id}`, { headers: h, json });

describe('POST /api/users', () => {
  test('creates a user (201) with its company, department and typology resolved, and emits Created', async () => {
    const body = userBody({ Mail: 'a@example.com', HireDate: '2024-03-01T00:00:00', RequiredWeeklyHours: 37.5, Tolerance: 5, SsoOnly: false });
    const res = await post(body);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.Action, 'Created');
    assert.match(res.body.Id, /^[0-9a-f-]{36}$/);
    assert.equal(res.body.UserName, body.UserName);
    assert.equal(res.body.CompanyId, tenant.companyId);
    assert.equal(res.body.DepartmentId, tenant.departmentId);
    assert.equal(res.body.TypologyId, tenant.typologyId);
    assert.equal(res.body.CompanyCode, tenant.companyCode);
    assert.equal(res.body.HireDate, '2024-03-01');
    assert.equal(res.body.RequiredWeeklyHours, 37.5);
    assert.equal(res.body.Mail, 'a@example.com');
    assert.equal(res.body.HasPassword, false);
    const row = (await db.query('select company_id, department_id, typology_id, hire_date, email, is_active from users where id = $1', [res.body.Id])).rows[0];
    assert.deepEqual(
      { ...row },
      {
        company_id: tenant.companyId,
        department_id: tenant.departmentId,
        typology_id: tenant.typologyId,
        hire_date: '2024-03-01',
        email: 'a@example.com',
        is_active: true,
      },
    );
    const ev = await events(res.body.Id);
    assert.equal(ev.length, 1);
    assert.equal(ev[0].action_type, 'Created');
    assert.equal(ev[0].document_type, 'Skill.Module.BusinessObjects.User');
    assert.equal(ev[0].detail.UserName, body.UserName);
    assert.equal(ev[0].detail.CompanyId, tenant.companyId);
    assert.equal(ev[0].detail.Mail, 'a@example.com');
  });

  test('updates by ExternalId (200): only the sent fields change, the event carries only what changed; an unchanged POST emits nothing', async () => {
    const body = userBody({ Phone: '111', Tolerance: 3 });
    const created = await post(body);
    assert.equal(created.status, 201);
    const res = await post({ ...body, Phone: '222', Name: 'Renamed', Tolerance: undefined });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.Action, 'Updated');
    assert.equal(res.body.Id, created.body.Id);
    assert.equal(res.body.Phone, '222');
    assert.equal(res.body.Name, 'Renamed');
    assert.equal(res.body.Tolerance, 3, 'a field not sent is left unchanged');
    let ev = await events(created.body.Id);
    assert.equal(ev.length, 2);
    assert.deepEqual(ev[1].detail, { Phone: '222', Name: 'Renamed' });
    const again = await post({ ...body, Phone: '222', Name: 'Renamed' });
    assert.equal(again.status, 200);
    ev = await events(created.body.Id);
    assert.equal(ev.length, 2, 'a write that changes nothing emits nothing');
  });

  test('updates by Id (200), including the ExternalId', async () => {
    const created = await post(userBody());
    const body = userBody({ Id: created.body.Id.toUpperCase() });
    const res = await post(body);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.Id, created.body.Id);
    assert.equal(res.body.ExternalId, body.ExternalId);
    assert.equal(res.body.UserName, body.UserName);
    const count = await db.query('select count(*)::int as n from users where id = $1', [created.body.Id]);
    assert.equal(count.rows[0].n, 1);
  });

  test('creates with a given Id', async () => {
    const id = '0b7f3c7e-5d6a-4c1e-9a39-2f1f5c8a0001';
    const res = await post(userBody({ Id: id }));
    assert.equal(res.status, 201);
    assert.equal(res.body.Id, id);
  });

  test('property names are matched whatever their case', async () => {
    const body = Object.fromEntries(Object.entries(userBody()).map(([k, v]) => [k.charAt(0).toLowerCase() + k.slice(1), v]));
    const res = await post(body);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.body.UserName, body.userName);
  });

  test('401 without app credentials, and with a token-less wrong secret', async () => {
    assert.equal((await server.request('POST', '/api/users', { json: userBody() })).status, 401);
    assert.equal((await server.request('POST', '/api/users', { headers: { ...h, 'x-appsecret': 'nope' }, json: userBody() })).status, 401);
  });

  test('422 names the reference that does not resolve, and its value', async () => {
    for (const [field, value] of [
      ['CompanyCode', 'NOPE'],
      ['DepartmentExternalId', 'DEP-NOPE'],
      ['TypologyExternalId', 'TYP-NOPE'],
    ]) {
      const res = await post(userBody({ [field]: value }));
      assert.equal(res.status, 422, `${field}: ${res.text}`);
      assert.equal(res.body.field, field);
      assert.equal(res.body.value, value);
      assert.equal(res.body.errors[0].path, `/body/${field}`);
      assert.match(res.body.detail, new RegExp(value));
    }
    const missingEmployee = await post(userBody({ EmployeeId: '00000000-0000-4000-8000-000000000001' }));
    assert.equal(missingEmployee.status, 422);
    assert.equal(missingEmployee.body.field, 'EmployeeId');
    // A department of another tenant does not resolve either.
    const foreign = await server.request('POST', '/api/companies', { headers: appHeaders(other), json: { code: 'OTHERCO', name: 'Other Co' } });
    assert.equal(foreign.status, 201);
    assert.equal((await post(userBody({ CompanyCode: 'OTHERCO' }))).status, 422);
  });

  test('400 for a missing required field and a wrong type, each named; an unknown field is ignored and reported', async () => {
    const { UserName: _omit, ...noUserName } = userBody();
    let res = await post(noUserName);
    assert.equal(res.status, 400);
    assert.ok(
      res.body.errors.some((e: { path: string }) => e.path === '/body/UserName'),
      res.text,
    );
    res = await post(userBody({ IsActive: 'yes' }));
    assert.equal(res.status, 400);
    assert.ok(
      res.body.errors.some((e: { path: string }) => e.path === '/body/IsActive'),
      res.text,
    );
    res = await post(userBody({ Tolerance: 1.5 }));
    assert.equal(res.status, 400);
    res = await post(userBody({ HireDate: '2024-02-30' }));
    assert.equal(res.status, 400);
    assert.equal(res.body.errors[0].path, '/body/HireDate');
    res = await post(userBody({ Shoe: 42 }));
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('x-ignored-properties'), '$.Shoe');
    res = await post(userBody({ Id: 'not-a-guid' }));
    assert.equal(res.status, 400);
  });

  test('409 when the UserName belongs to another user; nothing is written', async () => {
    const first = await post(userBody());
    const body = userBody({ UserName: first.body.UserName.toUpperCase() });
    const res = await post(body);
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.field, 'UserName');
    const n = await db.query('select count(*)::int as n from users where external_id = $1', [body.ExternalId]);
    assert.equal(n.rows[0].n, 0);
  });

  test('409 when Id is new but ExternalId belongs to another user', async () => {
    const first = await post(userBody());
    const res = await post(userBody({ Id: '0b7f3c7e-5d6a-4c1e-9a39-2f1f5c8a0002', ExternalId: first.body.ExternalId }));
    assert.equal(res.status, 409, res.text);
    assert.equal(res.body.field, 'ExternalId');
  });

  test('IsActive false records the deactivation time', async () => {
    const created = await post(userBody());
    await post({ ...userBody(), Id: created.body.Id, ExternalId: created.body.ExternalId, UserName: created.body.UserName, IsActive: false });
    const row = (await db.query('select is_active, inactivated_on_utc from users where id = $1', [created.body.Id])).rows[0];
    assert.equal(row.is_active, false);
    assert.ok(row.inactivated_on_utc);
  });
});

describe('PATCH /api/users/{id}', () => {
  let id: string;
  let cityId: string;
  before(async () => {
    const created = await post(userBody());
    id = created.body.Id;
    await server.request('POST', '/api/countries', { headers: h, json: { externalId: 'PT', name: 'Portugal' } });
    const city = await server.request('POST', '/api/cities', { headers: h, json: { externalId: 'LIS', name: 'Lisbon', countryExternalId: 'PT' } });
    assert.equal(city.status, 201, city.text);
    cityId = city.body.id;
  });

  const cases: [string, unknown, unknown][] = [
    ['Name', 'Patched Name', 'Patched Name'],
    ['ExternalNumber', 'P-0042', 'P-0042'],
    ['Tolerance', 7, 7],
    ['EntryTimeTotalMinutes', 540, 540],
    ['PaidOvertime', true, true],
    ['SsoOnly', true, true],
    ['HireDate', '2023-01-02T00:00:00Z', '2023-01-02'],
    ['ExpirationDate', '2026-12-31', '2026-12-31'],
    ['RequiredHours', 7.5, 7.5],
    ['WeeklyOvertimeThresholdHours', 42.25, 42.25],
  ];
  for (const [field, value, stored] of cases) {
    test(`${field} (${typeof value}) changes alone and emits Updated with it`, async () => {
      const before = await server.request('GET', `/api/users/${id}`, { headers: h });
      const res = await patch(id, { [field]: { value } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body[field], stored);
      for (const [k, v] of Object.entries(before.body)) if (k !== field && k !== 'ModifiedOnUtc') assert.deepEqual(res.body[k], v, `${k} unchanged`);
      const ev = await events(id);
      assert.deepEqual(ev.at(-1)?.detail, { [field]: stored });
    });
  }

  test('Guid fields: CityId, DepartmentId, UserTypeId, ResponsibleId (and "Value" is accepted)', async () => {
    const manager = await post(userBody());
    const userType = await server.request('GET', '/api/usertypes/name?name=Temporary', { headers: h });
    const res = await patch(id, {
      CityId: { Value: cityId },
      DepartmentId: { value: tenant.departmentId },
      UserTypeId: { value: userType.body.id },
      ResponsibleId: { value: manager.body.Id },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.CityId, cityId);
    assert.equal(res.body.UserTypeId, userType.body.id);
    assert.equal(res.body.ResponsibleId, manager.body.Id);
    const row = (await db.query('select city_id, responsible_id from users where id = $1', [id])).rows[0];
    assert.equal(row.city_id, cityId);
    assert.equal(row.responsible_id, manager.body.Id);
  });

  test('null clears a nullable field', async () => {
    const res = await patch(id, { Phone: { value: '123' } });
    assert.equal(res.body.Phone, '123');
    const cleared = await patch(id, { Phone: { value: null } });
    assert.equal(cleared.status, 200);
    assert.equal(cleared.body.Phone, null);
  });

  test('Password sets the login password (hashed) and POST /api/auth/token then works', async () => {
    const user = await server.request('GET', `/api/users/${id}`, { headers: h });
    const res = await patch(id, { Password: { value: 'Correct-Horse-9' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.HasPassword, true);
    assert.equal(res.body.Password, undefined);
    const stored = (await db.query('select password_hash from users where id = $1', [id])).rows[0].password_hash;
    assert.match(stored, /^scrypt\$/);
    const ev = await events(id);
    assert.deepEqual(ev.at(-1)?.detail, { Password: '********' });
    const login = await server.request('POST', '/api/auth/token', {
      headers: { 'x-apptenant': tenant.tenantId },
      json: { UserName: user.body.UserName, Password: 'Correct-Horse-9' },
    });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.UserId, id);
    const wrong = await server.request('POST', '/api/auth/token', {
      headers: { 'x-apptenant': tenant.tenantId },
      json: { UserName: user.body.UserName, Password: 'wrong' },
    });
    assert.equal(wrong.status, 401);
  });

  test('400 for a wrong type, naming it; unknown fields are ignored; nothing changes', async () => {
    const before = await server.request('GET', `/api/users/${id}`, { headers: h });
    let res = await patch(id, { Shoe: { value: 1 } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('x-ignored-properties'), '$.Shoe');
    res = await patch(id, { Name: { value: 'X' }, Tolerance: { value: 'seven' } });
    assert.equal(res.status, 400);
    assert.ok(
      res.body.errors.some((e: { path: string }) => e.path.startsWith('/body/Tolerance')),
      res.text,
    );
    res = await patch(id, { IsActive: { value: null } });
    assert.equal(res.status, 400);
    res = await patch(id, { CityId: { value: 'nope' } });
    assert.equal(res.status, 400);
    res = await patch(id, { RequiredHours: 8 });
    assert.equal(res.status, 400, 'a bare value is not {"value": …}');
    res = await patch(id, { Shoe: { value: 'x@example.com' }, HasPassword: { value: true } });
    assert.equal(res.status, 200, 'an unknown property is ignored; a read-only one is answered why');
    assert.equal(res.headers.get('x-ignored-properties'), '$.Shoe');
    assert.equal(res.headers.get('x-read-only-properties'), '$.HasPassword (follows from Password)');
    const after = await server.request('GET', `/api/users/${id}`, { headers: h });
    assert.deepEqual(after.body, before.body);
  });

  test('404 for an unknown user, 409 for a taken ExternalId, 422 for a company that does not exist; a rejected PATCH changes nothing', async () => {
    const missing = await patch('00000000-0000-4000-8000-00000000abcd', { Name: { value: 'x' } });
    assert.equal(missing.status, 404);
    const otherUser = await post(userBody());
    const taken = await patch(id, { Name: { value: 'Should not stick' }, ExternalId: { value: otherUser.body.ExternalId } });
    assert.equal(taken.status, 409, taken.text);
    assert.equal(taken.body.field, 'ExternalId');
    const bad = await patch(id, { Name: { value: 'Should not stick' }, CompanyId: { value: '00000000-0000-4000-8000-00000000abcd' } });
    assert.equal(bad.status, 422, bad.text);
    assert.equal(bad.body.field, 'CompanyId');
    const now = await server.request('GET', `/api/users/${id}`, { headers: h });
    assert.notEqual(now.body.Name, 'Should not stick');
  });
});

describe('user lookups', () => {
  test('GET /api/users/external and /api/users/{id}; 404 when nothing matches', async () => {
    const created = await post(userBody());
    const byExt = await server.request('GET', `/api/users/external?externalId=${encodeURIComponent(created.body.ExternalId)}`, { headers: h });
    assert.equal(byExt.status, 200);
    assert.equal(byExt.body.Id, created.body.Id);
    assert.equal(byExt.body.DepartmentExternalId, tenant.departmentExternalId);
    assert.equal(byExt.body.TypologyExternalId, tenant.typologyExternalId);
    const byId = await server.request('GET', `/api/users/${created.body.Id}`, { headers: h });
    assert.equal(byId.status, 200);
    assert.equal(byId.body.UserName, created.body.UserName);
    assert.equal((await server.request('GET', '/api/users/external?externalId=NOBODY', { headers: h })).status, 404);
    assert.equal((await server.request('GET', '/api/users/00000000-0000-4000-8000-000000000009', { headers: h })).status, 404);
    // Another tenant's user is not found.
    assert.equal((await server.request('GET', `/api/users/${created.body.Id}`, { headers: appHeaders(other) })).status, 404);
  });
});

describe('POST /api/employees', () => {
  test('create, update by ExternalId, update by Id; events on Person; 422 for an unknown company', async () => {
    const body = { Name: 'Ana', ExternalId: 'EMP-1', CompanyId: tenant.companyId, IsActive: true };
    const created = await server.request('POST', '/api/employees', { headers: h, json: body });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.Action, 'Created');
    assert.equal(created.body.CompanyId, tenant.companyId);
    const byExt = await server.request('POST', '/api/employees', { headers: h, json: { ...body, Name: 'Ana Maria' } });
    body.Name = 'Ana Maria';
    assert.equal(byExt.status, 200);
    assert.equal(byExt.body.Id, created.body.Id);
    const byId = await server.request('POST', '/api/employees', { headers: h, json: { ...body, Id: created.body.Id, ExternalId: 'EMP-1b', IsActive: false } });
    assert.equal(byId.status, 200);
    assert.equal(byId.body.ExternalId, 'EMP-1b');
    assert.equal(byId.body.IsActive, false);
    const ev = await events(created.body.Id);
    assert.deepEqual(
      ev.map((e) => [e.action_type, e.document_type]),
      [
        ['Created', 'Skill.Module.BusinessObjects.Person'],
        ['Updated', 'Skill.Module.BusinessObjects.Person'],
        ['Updated', 'Skill.Module.BusinessObjects.Person'],
      ],
    );
    assert.deepEqual(ev[2].detail, { ExternalId: 'EMP-1b', IsActive: false });
    const bad = await server.request('POST', '/api/employees', { headers: h, json: { ...body, ExternalId: 'EMP-2', CompanyId: other.companyId } });
    assert.equal(bad.status, 422);
    assert.equal(bad.body.field, 'CompanyId');
    const missing = await server.request('POST', '/api/employees', { headers: h, json: { Name: 'x', ExternalId: 'EMP-3', IsActive: true } });
    assert.equal(missing.status, 400);
    // A user may then point at the employee.
    const user = await post(userBody({ EmployeeId: created.body.Id }));
    assert.equal(user.status, 201);
    assert.equal(user.body.EmployeeId, created.body.Id);
  });
});

describe('concurrency', () => {
  test('20 parallel POSTs with the same ExternalId end with one user; every answer is 200 or 201', async () => {
    const body = userBody();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(body)));
    assert.deepEqual(
      answers.filter((r) => r.status !== 200 && r.status !== 201).map((r) => r.text),
      [],
    );
    assert.equal(answers.filter((r) => r.status === 201).length, 1);
    assert.equal(new Set(answers.map((r) => r.body.Id)).size, 1);
    const n = await db.query('select count(*)::int as n from users where external_id = $1', [body.ExternalId]);
    assert.equal(n.rows[0].n, 1);
    const ev = await events(answers[0].body.Id);
    assert.equal(ev.length, 1);
  });

  test('20 parallel POSTs with the same ExternalId and different values: one user, one Created, every answer 200 or 201', async () => {
    const body = userBody();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => post({ ...body, Phone: String(i) })));
    assert.deepEqual(
      answers.filter((r) => r.status !== 200 && r.status !== 201).map((r) => r.text),
      [],
    );
    const n = await db.query('select count(*)::int as n from users where external_id = $1', [body.ExternalId]);
    assert.equal(n.rows[0].n, 1);
    const ev = await events(answers[0].body.Id);
    assert.equal(ev.filter((e) => e.action_type === 'Created').length, 1);
  });

  test('20 parallel employee POSTs with the same ExternalId end with one employee', async () => {
    const body = { Name: 'Par', ExternalId: 'EMP-PAR', CompanyId: tenant.companyId, IsActive: true };
    const answers = await Promise.all(Array.from({ length: 20 }, () => server.request('POST', '/api/employees', { headers: h, json: body })));
    assert.ok(answers.every((r) => r.status === 200 || r.status === 201));
    const n = await db.query('select count(*)::int as n from employees where external_id = $1', ['EMP-PAR']);
    assert.equal(n.rows[0].n, 1);
  });
});

describe('Idempotency-Key', () => {
  test('a replay returns the first response without doing the work again', async () => {
    const body = userBody();
    const key = `k-${Date.now()}-1`;
    const first = await post(body, { 'idempotency-key': key });
    assert.equal(first.status, 201);
    // Change the user in between: a real second POST would answer 200 and undo the change.
    await patch(first.body.Id, { Name: { value: 'Changed meanwhile' } });
    const replay = await post(body, { 'idempotency-key': key });
    assert.equal(replay.status, 201);
    assert.equal(replay.headers.get('idempotent-replayed'), 'true');
    assert.equal(replay.text, first.text);
    const now = await server.request('GET', `/api/users/${first.body.Id}`, { headers: h });
    assert.equal(now.body.Name, 'Changed meanwhile');
    const ev = await events(first.body.Id);
    assert.equal(ev.length, 2, 'Created and the PATCH only');
  });

  test('the same key with a different body is a 422; keys are per app', async () => {
    const key = `k-${Date.now()}-2`;
    const body = userBody();
    assert.equal((await post(body, { 'idempotency-key': key })).status, 201);
    const res = await post({ ...body, Phone: 'different' }, { 'idempotency-key': key });
    assert.equal(res.status, 422, res.text);
    const reordered = Object.fromEntries(Object.entries(body).reverse());
    assert.equal((await post(reordered, { 'idempotency-key': key })).status, 201, 'key order does not matter');
    // Another app of the tenant has its own key space.
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const app2 = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps`, { headers: admin, json: { name: 'HR', roles: ['IntegrationWrite'] } });
    const h2 = appHeaders({ tenantId: tenant.tenantId, appId: app2.body.appId, appSecret: app2.body.appSecret });
    const res2 = await server.request('POST', '/api/users', { headers: { ...h2, 'idempotency-key': key }, json: { ...body, Phone: 'different' } });
    assert.equal(res2.status, 200, res2.text);
  });

  test('a rejected request releases its key; an invalid key is a 400', async () => {
    const key = `k-${Date.now()}-3`;
    const bad = await post(userBody({ CompanyCode: 'NOPE' }), { 'idempotency-key': key });
    assert.equal(bad.status, 422);
    const good = await post(userBody(), { 'idempotency-key': key });
    assert.equal(good.status, 201);
    assert.equal((await post(userBody(), { 'idempotency-key': 'has space' })).status, 400);
  });

  test('concurrent requests with one key: the work is done once; the others replay or answer 409 in progress', async () => {
    const key = `k-${Date.now()}-4`;
    const body = userBody();
    const answers = await Promise.all(Array.from({ length: 8 }, () => post(body, { 'idempotency-key': key })));
    const statuses = answers.map((r) => r.status);
    assert.ok(
      statuses.every((s) => s === 201 || s === 409),
      String(statuses),
    );
    const done = answers.filter((r) => r.status === 201);
    assert.ok(done.length >= 1);
    assert.equal(new Set(done.map((r) => r.text)).size, 1);
    for (const r of answers.filter((a) => a.status === 409)) assert.match(r.body.detail, /in progress/);
    const ev = await events(done[0].body.Id);
    assert.equal(ev.length, 1);
  });
});
