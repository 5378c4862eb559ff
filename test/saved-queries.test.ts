// Saved queries (/api/v3/saved-queries): saved by a user, private until shared, changed only by who saved
// them (or an Administrator), checked against the named query when saved, per tenant, bounded.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let app: Record<string, string>;
let other: Record<string, string>;
let owner: pg.Client;
let alice: Record<string, string>;
let bob: Record<string, string>;
let admin: Record<string, string>;
let roleless: Record<string, string>;

before(async () => {
  server = await startTestServer();
  const tenant = await server.createTenant('Saved queries', { demoData: true, scale: 0.02 });
  app = appHeaders(tenant);
  other = appHeaders(await server.createTenant('Other agency', { demoData: true, scale: 0.02 }));
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  const users = (
    await owner.query(
      `select u.id, exists (select 1 from user_roles ur join roles r on r.tenant_id = ur.tenant_id and r.id = ur.role_id
                             where ur.tenant_id = u.tenant_id and ur.user_id = u.id and r.name = 'Administrator') as admin
         from users u where u.tenant_id = $1 and u.is_active order by u.user_name`,
      [tenant.tenantId],
    )
  ).rows as { id: string; admin: boolean }[];
  const plain = users.filter((u) => !u.admin);
  const administrator = users.find((u) => u.admin);
  assert.ok(plain.length >= 3 && administrator, 'the demo tenant has users and an Administrator');
  // Alice and Bob may read named queries; the third user has no role for it.
  for (const u of plain.slice(0, 2))
    await owner.query(
      `insert into user_roles (tenant_id, user_id, role_id) select $1, $2, id from roles where tenant_id = $1 and name = 'DataExtractionRead' on conflict do nothing`,
      [tenant.tenantId, u.id],
    );
  await owner.query('delete from user_roles where tenant_id = $1 and user_id = $2', [tenant.tenantId, plain[2].id]);
  alice = { ...app, 'x-appuser': plain[0].id };
  bob = { ...app, 'x-appuser': plain[1].id };
  roleless = { ...app, 'x-appuser': plain[2].id };
  admin = { ...app, 'x-appuser': administrator.id };
});
after(async () => {
  await owner?.end();
  await server?.close();
});

const call = (method: string, url: string, headers: Record<string, string>, json?: unknown) => server.request(method, url, { headers, json });
const hours = {
  name: 'Hours by client',
  query: 'de-timesheets',
  queryBuilder: { filters: ['Hours', '>', 0], orderBy: [{ field: 'Client' }], fields: ['Client', 'Hours'] },
  view: { type: 'chart', chart: { groupBy: [{ field: 'Client' }], aggregate: { function: 'sum', field: 'Hours' }, kind: 'bars' } },
};

test('a user saves, lists, gets, renames, changes and deletes a query; it is private until shared', async () => {
  const created = await call('POST', '/api/v3/saved-queries', alice, hours);
  assert.equal(created.status, 201, created.text);
  const saved = created.body;
  assert.equal(saved.query, 'DE-TimeSheets', 'the named query is stored by its catalogue name');
  assert.deepEqual(saved.queryBuilder, hours.queryBuilder);
  assert.deepEqual(saved.view, hours.view);
  assert.deepEqual([saved.shared, saved.mine], [false, true]);

  const listed = await call('GET', '/api/v3/saved-queries', alice);
  assert.deepEqual(
    listed.body.data.map((q: { id: string }) => q.id),
    [saved.id],
  );
  assert.equal(listed.body.totalCount, 1);
  assert.equal((await call('GET', `/api/v3/saved-queries/${saved.id}`, alice)).body.name, 'Hours by client');

  // Bob sees nothing of it until Alice shares it, then may open but not change or delete it.
  assert.equal((await call('GET', `/api/v3/saved-queries/${saved.id}`, bob)).status, 404);
  assert.equal((await call('GET', '/api/v3/saved-queries', bob)).body.totalCount, 0);
  assert.equal((await call('PATCH', `/api/v3/saved-queries/${saved.id}`, bob, { name: 'mine now' })).status, 404);
  const shared = await call('PATCH', `/api/v3/saved-queries/${saved.id}`, alice, { shared: true, name: 'Hours per client' });
  assert.equal(shared.status, 200, shared.text);
  assert.deepEqual(
    [shared.body.shared, shared.body.name, shared.body.queryBuilder],
    [true, 'Hours per client', hours.queryBuilder],
    'a patch keeps what it does not name',
  );
  const seen = await call('GET', `/api/v3/saved-queries/${saved.id}`, bob);
  assert.deepEqual([seen.status, seen.body.mine], [200, false]);
  assert.equal((await call('PATCH', `/api/v3/saved-queries/${saved.id}`, bob, { name: 'mine now' })).status, 403);
  assert.equal((await call('DELETE', `/api/v3/saved-queries/${saved.id}`, bob)).status, 403);
  // An Administrator may change it.
  const renamed = await call('PATCH', `/api/v3/saved-queries/${saved.id}`, admin, { view: { type: 'table', columns: ['Client'] } });
  assert.equal(renamed.status, 200, renamed.text);
  assert.deepEqual(renamed.body.view, { type: 'table', columns: ['Client'] });

  // Another tenant's app sees none of it, even by its id.
  assert.equal((await call('GET', `/api/v3/saved-queries/${saved.id}`, other)).status, 404);
  assert.equal((await call('DELETE', `/api/v3/saved-queries/${saved.id}`, other)).status, 404);
  assert.equal((await call('GET', '/api/v3/saved-queries', other)).body.totalCount, 0);

  assert.equal((await call('DELETE', `/api/v3/saved-queries/${saved.id}`, alice)).status, 204);
  assert.equal((await call('GET', `/api/v3/saved-queries/${saved.id}`, alice)).status, 404);
});

test('a saved query must run: an unknown query or field is a 400 naming it; roles and bounds apply', async () => {
  const noQuery = await call('POST', '/api/v3/saved-queries', alice, { ...hours, query: 'DE-Nope' });
  assert.equal(noQuery.status, 400, noQuery.text);
  assert.match(noQuery.body.detail, /DE-Nope/);
  const noField = await call('POST', '/api/v3/saved-queries', alice, { ...hours, queryBuilder: { fields: ['Client', 'Nope'] } });
  assert.equal(noField.status, 400);
  assert.ok(
    noField.body.errors.some((e: { path: string; message: string }) => e.path === '/queryBuilder/fields/1' && /Nope/.test(e.message)),
    noField.text,
  );
  const patchBad = await call('POST', '/api/v3/saved-queries', alice, hours);
  assert.equal((await call('PATCH', `/api/v3/saved-queries/${patchBad.body.id}`, alice, { queryBuilder: { orderBy: [{ field: 'Nope' }] } })).status, 400);
  assert.equal((await call('POST', '/api/v3/saved-queries', alice, { ...hours, name: '' })).status, 400);
  assert.equal((await call('POST', '/api/v3/saved-queries', alice, { ...hours, view: { blob: 'x'.repeat(70_000) } })).status, 400);
  assert.equal((await call('GET', '/api/v3/saved-queries', roleless)).status, 403, 'saved queries run named queries: DataExtractionRead');
  assert.equal((await call('POST', '/api/v3/saved-queries', roleless, hours)).status, 403);
  assert.equal((await call('GET', '/api/v3/saved-queries?take=501', alice)).status, 400);
  // An app acting without a user keeps its own.
  const byApp = await call('POST', '/api/v3/saved-queries', app, { ...hours, name: 'The app’s' });
  assert.equal(byApp.status, 201, byApp.text);
  assert.deepEqual([byApp.body.ownerUserId, byApp.body.mine], [null, true]);
  assert.equal((await call('GET', `/api/v3/saved-queries/${byApp.body.id}`, alice)).status, 404);
  // One user keeps at most 500.
  await owner.query(
    `insert into saved_queries (tenant_id, name, named_query, owner_user_id) select u.tenant_id, 'q' || n, 'DE-Jobs', u.id
       from users u, generate_series(1, 500) n where u.id = $1`,
    [bob['x-appuser']],
  );
  const full = await call('POST', '/api/v3/saved-queries', bob, hours);
  assert.equal(full.status, 409, full.text);
  assert.match(full.body.detail, /500 saved queries/);
  assert.equal((await call('GET', '/api/v3/saved-queries?skip=490', bob)).body.data.length, 10);
});
