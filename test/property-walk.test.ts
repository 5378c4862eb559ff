// The property walk (issue 31, point 7): for users, employees, clients, suppliers, projects, jobs,
// contracts, requests, estimates and expenses, every property of the resource's answer is sent back, on
// its own and with the value read, to the write of the same resource (the value-wrapped PATCH, or the
// Integration API's upsert where that is the resource's write). Each is either taken — a 2xx that does not
// list it among the ignored properties and answers the value sent — or answered why not, in
// X-Read-Only-Properties with its reason. Nothing is dropped in silence.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClientApiFixture, clientApiFixture } from './client-api-helpers.ts';

let f: ClientApiFixture;
before(async () => {
  f = await clientApiFixture('Walk Agency');
});
after(() => f.close());

interface Walk {
  /** The resource's answer. */
  view: () => Promise<Record<string, unknown>>;
  /** The write of one property with the value read. */
  write: (name: string, value: unknown) => Promise<{ status: number; headers: Headers; text: string; body: any }>;
}

const listed = (header: string | null, name: string) =>
  (header ?? '').split(',').some((p) => p === `$.${name}` || p.startsWith(`$.${name} `) || p.startsWith(`$.${name}.`) || p.startsWith(`$.${name}[`));

const same = (a: unknown, b: unknown) =>
  JSON.stringify(a) === JSON.stringify(b) || (typeof a === 'string' && typeof b === 'string' && a.toLowerCase() === b.toLowerCase());

async function walk(resource: string, w: Walk): Promise<{ taken: string[]; readOnly: string[] }> {
  const view = await w.view();
  const taken: string[] = [];
  const readOnly: string[] = [];
  const failures: string[] = [];
  for (const [name, value] of Object.entries(view)) {
    const res = await w.write(name, value);
    const ro = res.headers.get('x-read-only-properties');
    if (listed(ro, name)) {
      assert.match(ro ?? '', new RegExp(`\\$\\.${name} \\([^)]+\\)`), `${resource}.${name}: a reason is given`);
      readOnly.push(name);
    } else if (res.status >= 200 && res.status < 300 && !listed(res.headers.get('x-ignored-properties'), name)) {
      if (name in res.body && !same(res.body[name], value))
        failures.push(`${resource}.${name}: sent ${JSON.stringify(value)}, answered ${JSON.stringify(res.body[name])}`);
      else taken.push(name);
    } else failures.push(`${resource}.${name}: ${res.status} ignored=${res.headers.get('x-ignored-properties')} ${res.text.slice(0, 300)}`);
  }
  assert.deepEqual(failures, [], `${resource}: every property is taken or answered why not`);
  assert.ok(taken.length > 0, `${resource}: something is writable`);
  return { taken, readOnly };
}

/** The value-wrapped PATCH of a document or user. */
const patchOf = (path: string) => (name: string, value: unknown) => f.server.request('PATCH', path, { headers: f.h, json: { [name]: { value } } });
const getOf = (path: string) => () => f.send('GET', path);

test('users: GET /api/users/{id} → PATCH /api/users/{id} (TimesheetRequired and Mail included)', async () => {
  const [user] = await f.send('POST', '/api/v3/users', {
    Type: 2,
    CreateManyModel: [{ UserName: 'walker', Mail: 'walker@example.com', TimesheetRequired: true }],
  });
  const r = await walk('user', { view: getOf(`/api/users/${user.Id}`), write: patchOf(`/api/users/${user.Id}`) });
  for (const name of ['TimesheetRequired', 'Mail', 'AdUserName', 'ResponsibleId']) assert.ok(r.taken.includes(name), name);
  assert.deepEqual(r.readOnly.sort(), ['CompanyCode', 'CreatedOnUtc', 'DepartmentExternalId', 'HasPassword', 'Id', 'ModifiedOnUtc', 'TypologyExternalId']);
});

for (const [plural, model] of [
  ['projects', () => ({ Name: 'Walked project', CompanyId: f.tenant.companyId, ClientId: f.clientId, Investment: 250 })],
  ['contracts', () => ({ Name: 'Walked contract', CompanyId: f.tenant.companyId, ClientId: f.clientId })],
  ['requests', () => ({ Name: 'Walked request', DepartmentId: f.tenant.departmentId, ClientId: f.clientId })],
  ['estimates', () => ({ Name: 'Walked estimate', ClientId: f.clientId, DepartmentId: f.tenant.departmentId, CompanyId: f.tenant.companyId })],
] as const) {
  test(`${plural}: GET /api/v3/${plural}/{id} → PATCH /api/${plural}/{id}`, async () => {
    const doc = await f.send('POST', `/api/v3/${plural}`, { OperationType: 0, CreateModel: model() });
    const r = await walk(plural, { view: getOf(`/api/v3/${plural}/${doc.Id}`), write: patchOf(`/api/${plural}/${doc.Id}`) });
    for (const name of ['Id', 'Stage', 'CreatedOnUtc']) assert.ok(r.readOnly.includes(name), name);
  });
}

test('jobs: GET /api/v3/jobs/{id} → PATCH /api/jobs/{id}', async () => {
  const project = await f.send('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Job home', CompanyId: f.tenant.companyId, ClientId: f.clientId },
  });
  const job = await f.send('POST', '/api/v3/jobs', {
    OperationType: 0,
    CreateModel: { Name: 'Walked job', ProjectId: project.Id, DepartmentId: f.tenant.departmentId },
  });
  const r = await walk('jobs', { view: getOf(`/api/v3/jobs/${job.Id}`), write: patchOf(`/api/jobs/${job.Id}`) });
  assert.ok(r.taken.includes('ProjectId'));
});

test('expenses: GET /api/v3/expenses/{id} → PATCH /api/expenses/{id}', async () => {
  const sheet = await f.send('POST', '/api/expenses', {
    CompanyId: f.tenant.companyId,
    EmployeeId: f.tenant.userId,
    Emission: '2026-03-02',
    Due: '2026-03-31',
  });
  const r = await walk('expenses', { view: getOf(`/api/v3/expenses/${sheet.Id}`), write: patchOf(`/api/expenses/${sheet.Id}`) });
  for (const name of ['EmployeeId', 'Due', 'DocumentNumber']) assert.ok(r.taken.includes(name), name);
  assert.ok(r.readOnly.includes('Items'));
});

/** An Integration API upsert as the resource's write: its key with the one property, the answer as its view. */
function upsert(path: string, key: Record<string, unknown>, first: Record<string, unknown>): Walk {
  let view: Record<string, unknown> | null = null;
  return {
    view: async () => {
      view = await f.send('POST', path, { ...key, ...first });
      return view as Record<string, unknown>;
    },
    write: (name, value) => f.server.request('POST', path, { headers: f.h, json: { ...key, [name]: value } }),
  };
}

test('employees, clients and suppliers: the upsert answer → the upsert by key', async () => {
  await walk('employees', upsert('/api/employees', { ExternalId: 'EMP-W', Name: 'Walked employee', CompanyId: f.tenant.companyId, IsActive: true }, {}));
  await walk('clients', upsert('/api/commercialclients', { externalId: 'CLI-1', name: 'Acme' }, { code: 'ACM' }));
  await walk('suppliers', upsert('/api/suppliers', { externalId: 'SUP-W', companyCode: f.tenant.companyCode, name: 'Walked supplier' }, {}));
});
