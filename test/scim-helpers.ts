// Shared by the SCIM tests: a tenant with a SCIM token, and requests as an identity provider sends them
// (application/scim+json, Authorization: Bearer).
import assert from 'node:assert/strict';
import pg from 'pg';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { appHeaders, startTestServer, type TestResponse, type TestServer } from './helpers.ts';

export const SCIM_JSON = 'application/scim+json';
export const CORE_USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
export const ENTERPRISE = 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User';
export const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
export const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';

export interface ScimFixture {
  server: TestServer;
  tenant: TenantCredentials;
  h: Record<string, string>;
  token: string;
  db: pg.Client;
  /** A SCIM request with the tenant's token; `json` is sent as application/scim+json. */
  scim: (method: string, path: string, json?: unknown, headers?: Record<string, string>) => Promise<TestResponse>;
  sql: (text: string, params?: unknown[]) => Promise<any[]>;
  close: () => Promise<void>;
}

export async function scimFixture(name = 'Scim Agency', env: Record<string, string> = {}): Promise<ScimFixture> {
  const server = await startTestServer(env);
  const tenant = await server.createTenant(name);
  const h = appHeaders(tenant);
  const created = await server.request('POST', '/api/v3/scim/tokens', { headers: h, json: { name: 'Identity provider' } });
  assert.equal(created.status, 201, created.text);
  const token = created.body.token as string;
  const db = new pg.Client({ connectionString: server.databaseUrl });
  await db.connect();
  const scim: ScimFixture['scim'] = (method, path, json, headers = {}) =>
    server.request(method, `/scim/v2${path}`, {
      headers: { authorization: `Bearer ${token}`, ...(json !== undefined ? { 'content-type': SCIM_JSON } : {}), ...headers },
      body: json === undefined ? undefined : JSON.stringify(json),
    });
  return {
    server,
    tenant,
    h,
    token,
    db,
    scim,
    sql: async (text, params = []) => (await db.query(text, params)).rows,
    close: async () => {
      await db.end();
      await server.close();
    },
  };
}

/** Asserts a SCIM error: its status, scimType and the error schema; never a 500. */
export function assertScimError(res: TestResponse, status: number, scimType?: string): void {
  assert.equal(res.status, status, res.text);
  assert.match(res.headers.get('content-type') ?? '', /application\/scim\+json/);
  assert.deepEqual(res.body.schemas, [ERROR]);
  assert.equal(res.body.status, String(status));
  if (scimType) assert.equal(res.body.scimType, scimType, res.text);
}

export const userBody = (userName: string, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  schemas: [CORE_USER, ENTERPRISE],
  userName,
  name: { givenName: 'Given', familyName: userName.split('@')[0] },
  emails: [{ value: userName, type: 'work', primary: true }],
  active: true,
  ...extra,
});

export const patchBody = (...Operations: Record<string, unknown>[]) => ({ schemas: [PATCH_OP], Operations });

/** Rows of a named query of the Data Extraction API. */
export async function rowsOf(f: ScimFixture, query: string, filters: unknown[]): Promise<Record<string, unknown>[]> {
  const res = await f.server.request('POST', `/api/v3/analytics/named-query/${query}/dynamic-execute`, { headers: f.h, json: { queryBuilder: { filters } } });
  assert.equal(res.status, 200, res.text);
  return res.body.data as Record<string, unknown>[];
}
