// Shared by the custom-tables tests: tokens for the tenant's app or for users with given roles, and a
// small client for the Custom Tables API.
import assert from 'node:assert/strict';
import { ADMIN_TOKEN, appHeaders, type TestResponse, type TestServer } from './helpers.ts';

export type Tenant = Awaited<ReturnType<TestServer['createTenant']>>;

/** A client-credentials token of the tenant's Administrator app. */
export async function appToken(server: TestServer, tenant: Tenant): Promise<string> {
  const res = await server.request('POST', '/api/auth/token', { headers: appHeaders(tenant) });
  assert.equal(res.status, 200, res.text);
  return res.body.accessToken;
}

let users = 0;
/** Creates a user with the roles and logs in with a password. */
export async function userToken(server: TestServer, tenant: Tenant, roles: string[]): Promise<string> {
  const userName = `user${++users}_${Date.now()}`;
  const password = 'a-long-password-123';
  const created = await server.request('POST', `/admin/tenants/${tenant.tenantId}/users`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    json: { userName, password, name: userName, roles },
  });
  assert.equal(created.status, 201, created.text);
  const login = await server.request('POST', '/api/auth/token', {
    headers: { 'x-apptenant': tenant.tenantId },
    json: { UserName: userName, Password: password },
  });
  assert.equal(login.status, 200, login.text);
  return login.body.accessToken;
}

export type Api = (method: string, path: string, json?: unknown) => Promise<TestResponse>;

export function apiFor(server: TestServer, token: string): Api {
  return (method, path, json) => server.request(method, `/api/v3${path}`, { headers: { 'x-accesstoken': token }, json });
}

/** Every ColumnDataType with a value of it, and the value as the API gives it back. */
export const EVERY_TYPE: { name: string; id: number; length?: number; value: unknown; back?: unknown }[] = [
  { name: 'Flag', id: 0, value: true },
  { name: 'Day', id: 1, value: '2024-02-29' },
  { name: 'Ratio', id: 2, value: 0.1 },
  { name: 'Qty', id: 3, value: -2147483648 },
  { name: 'Amount', id: 4, value: '-123456789012345.1234' },
  { name: 'Short', id: 5, value: 'é'.repeat(50) },
  { name: 'Medium', id: 6, value: '🙂'.repeat(100) },
  { name: 'Unbounded', id: 7, value: 'x'.repeat(20000) },
  { name: 'Body', id: 8, value: 'line 1\nline 2 "quoted" \\ backslash' },
  { name: 'Ref', id: 9, value: '3F2504E0-4F89-41D3-9A0C-0305E82C3301', back: '3f2504e0-4f89-41d3-9a0c-0305e82c3301' },
  { name: 'Long', id: 10, value: 'z'.repeat(200) },
  { name: 'Custom', id: 11, length: 7, value: 'seven77' },
  { name: 'Blob', id: 12, value: Buffer.from([0, 1, 2, 250, 255]).toString('base64') },
];

export const everyTypeColumns = () => EVERY_TYPE.map((c) => ({ ColumnName: c.name, ColumnDataTypeId: c.id, ...(c.length ? { Length: c.length } : {}) }));
