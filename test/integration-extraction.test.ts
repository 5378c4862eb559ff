// Records written through the Integration API show up in the Data Extraction API at once.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let h: Record<string, string>;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Feed Agency');
  h = appHeaders(tenant);
});
after(() => server.close());

const post = async (path: string, json: unknown) => {
  const res = await server.request('POST', path, { headers: h, json });
  assert.ok(res.status === 200 || res.status === 201, `${path}: ${res.status} ${res.text}`);
  return res.body;
};

const rowsOf = async (query: string, filters: unknown[]) => {
  const res = await server.request('POST', `/api/v3/analytics/named-query/${query}/dynamic-execute`, { headers: h, json: { queryBuilder: { filters } } });
  assert.equal(res.status, 200, res.text);
  return res.body.data as Record<string, unknown>[];
};

test('users, employees, clients and suppliers written by the Integration API are in DE- queries at once', async () => {
  const user = await post('/api/users', {
    UserName: 'feed.user',
    Name: 'Feed User',
    ExternalId: 'HR-1001',
    CompanyCode: tenant.companyCode,
    DepartmentExternalId: tenant.departmentExternalId,
    TypologyExternalId: tenant.typologyExternalId,
    IsActive: true,
  });
  const [u] = await rowsOf('DE-Users', ['UserId', '=', user.Id]);
  assert.equal(u?.User, 'Feed User');
  assert.equal(u.DepartmentId, tenant.departmentId);
  assert.equal(u.TypologyId, tenant.typologyId);

  const patched = await server.request('PATCH', `/api/users/${user.Id}`, { headers: h, json: { Name: { value: 'Feed User Renamed' } } });
  assert.equal(patched.status, 200, patched.text);
  assert.equal((await rowsOf('DE-Users', ['UserId', '=', user.Id]))[0]?.User, 'Feed User Renamed');

  const employee = await post('/api/employees', { Name: 'Feed Employee', ExternalId: 'EMP-1001', CompanyId: tenant.companyId, IsActive: true });
  const [e] = await rowsOf('DE-Employees', ['EmployeeId', '=', employee.Id]);
  assert.equal(e?.ExternalId, 'EMP-1001');

  await post('/api/billingclients', { externalId: 'CLI-1001', companyCode: tenant.companyCode, name: 'Feed Client' });
  const client = await post('/api/commercialclients', { externalId: 'CLI-1001', name: 'Feed Client' });
  const clients = await rowsOf('DE-Clients', ['ExternalId', '=', 'CLI-1001']);
  assert.ok(
    clients.some((c) => c.ClientId === client.id && c.Client === 'Feed Client'),
    JSON.stringify(clients),
  );

  const supplier = await post('/api/suppliers', { externalId: 'SUP-1001', companyCode: tenant.companyCode, name: 'Feed Supplier' });
  const [s] = await rowsOf('DE-Suppliers', ['SupplierId', '=', supplier.id]);
  assert.equal(s?.ExternalId, 'SUP-1001');
  assert.equal(s.CompanyId, tenant.companyId);
});
