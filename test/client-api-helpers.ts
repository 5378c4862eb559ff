// Shared setup of the Client API tests: a server with one tenant, a commercial client made through the
// Integration API, users with chosen roles, DE-* reads and the owner's SQL for test fixtures.
import assert from 'node:assert/strict';
import pg from 'pg';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';

export interface ClientApiFixture {
  server: TestServer;
  tenant: Awaited<ReturnType<TestServer['createTenant']>>;
  h: Record<string, string>;
  clientId: string;
  currencyId: string;
  /** POST/PATCH/PUT answering 200 or 201, else an assertion failure showing the problem. */
  send: (method: string, path: string, json?: unknown, headers?: Record<string, string>) => Promise<any>;
  rowsOf: (query: string, filters: unknown[]) => Promise<Record<string, any>[]>;
  sql: (text: string, values?: unknown[]) => Promise<any[]>;
  /** A user of the tenant with these roles; the headers act as that user. */
  userWith: (roles: string[]) => Promise<{ id: string; headers: Record<string, string> }>;
  close: () => Promise<void>;
}

export async function clientApiFixture(name: string, env: Record<string, string> = {}): Promise<ClientApiFixture> {
  const server = await startTestServer(env);
  const tenant = await server.createTenant(name);
  const h = appHeaders(tenant);
  const send: ClientApiFixture['send'] = async (method, path, json, headers = h) => {
    const res = await server.request(method, path, { headers, json });
    assert.ok(res.status === 200 || res.status === 201, `${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  const sql: ClientApiFixture['sql'] = async (text, values = []) => {
    const c = new pg.Client({ connectionString: server.databaseUrl });
    await c.connect();
    try {
      return (await c.query(text, values)).rows;
    } finally {
      await c.end();
    }
  };
  await send('POST', '/api/billingclients', { externalId: 'CLI-1', companyCode: tenant.companyCode, name: 'Acme Billing' });
  const client = await send('POST', '/api/commercialclients', { externalId: 'CLI-1', name: 'Acme' });
  const [{ currency_id: currencyId }] = await sql('select currency_id from companies where id = $1', [tenant.companyId]);
  let users = 0;
  return {
    server,
    tenant,
    h,
    clientId: client.id,
    currencyId,
    send,
    sql,
    rowsOf: async (query, filters) => {
      const res = await server.request('POST', `/api/v3/analytics/named-query/${query}/dynamic-execute`, { headers: h, json: { queryBuilder: { filters } } });
      assert.equal(res.status, 200, res.text);
      return res.body.data;
    },
    userWith: async (roles) => {
      const res = await server.request('POST', `/admin/tenants/${tenant.tenantId}/users`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        json: { userName: `user${++users}`, name: `User ${users}`, roles },
      });
      assert.equal(res.status, 201, res.text);
      return { id: res.body.userId, headers: { ...h, 'x-appuser': res.body.userId } };
    },
    close: () => server.close(),
  };
}

/** The ids of the default workflow of a document type: stage and transition ids by name. */
export async function defaultWorkflow(
  f: ClientApiFixture,
  documentType: string,
): Promise<{ id: string; stage: Record<string, string>; transition: Record<string, string> }> {
  const [wf] = await f.send('GET', `/api/v3/document-types/${documentType}/workflows?expandTransitions=true`);
  return {
    id: wf.Id,
    stage: Object.fromEntries(wf.Stages.map((s: any) => [s.Name, s.Id])),
    transition: Object.fromEntries(wf.Transitions.map((t: any) => [t.Name, t.Id])),
  };
}
