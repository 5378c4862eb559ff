// Tenant isolation, proven over every route the server has: tenant A's credentials aimed at tenant
// B's ids (in paths, queries and bodies) never return B's data and never change B's rows, and A's
// credentials presented for B are refused. Routes come from the server itself, so none is forgotten.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let a: Awaited<ReturnType<TestServer['createTenant']>>;
let b: Awaited<ReturnType<TestServer['createTenant']>>;

before(async () => {
  server = await startTestServer();
  a = await server.createTenant('Tenant A');
  b = await server.createTenant('Tenant B Confidential Agency', { demoData: true, scale: 0.02 });
});
after(() => server.close());

async function withOwner<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: server.databaseUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Every public table with a tenant_id column. */
const tenantTables = () =>
  withOwner(async (c) =>
    (
      await c.query(`select table_name from information_schema.columns where table_schema = 'public' and column_name = 'tenant_id' order by table_name`)
    ).rows.map((r) => r.table_name as string),
  );

/** A fingerprint of all of tenant B's rows: any change to them changes it. */
async function fingerprint(tenantId: string): Promise<Record<string, string>> {
  const tables = await tenantTables();
  return withOwner(async (c) => {
    const out: Record<string, string> = {};
    for (const t of tables) {
      if (t === 'events' || t === 'refresh_tokens' || t === 'idempotency_keys') continue;
      const r = await c.query(
        `select count(*)::text || ':' || coalesce(md5(string_agg(x::text, '|' order by x::text)), '') as f from "${t}" x where tenant_id = $1`,
        [tenantId],
      );
      out[t] = r.rows[0].f;
    }
    return out;
  });
}

/** All of a tenant's rows as one text. */
async function dumpOf(tenantId: string): Promise<string> {
  const tables = await tenantTables();
  return withOwner(async (c) => {
    let out = '';
    for (const t of tables) {
      const r = await c.query(`select coalesce(string_agg(x::text, '|'), '') as d from "${t}" x where tenant_id = $1`, [tenantId]);
      out += r.rows[0].d;
    }
    return out;
  });
}

/** Sample identifiers and texts of B: ids of each table, external ids, names. */
async function sampleOf(tenantId: string): Promise<{ ids: string[]; texts: string[] }> {
  const tables = await tenantTables();
  return withOwner(async (c) => {
    const ids: string[] = [];
    const texts: string[] = [];
    for (const t of tables) {
      const cols = (await c.query(`select column_name from information_schema.columns where table_schema='public' and table_name=$1`, [t])).rows.map(
        (r) => r.column_name,
      );
      if (!cols.includes('id')) continue;
      const textCols = ['external_id', 'name', 'code', 'user_name'].filter((x) => cols.includes(x));
      const rows = await c.query(`select id::text ${textCols.map((x) => `, "${x}"::text`).join('')} from "${t}" where tenant_id = $1 limit 2`, [tenantId]);
      for (const row of rows.rows) {
        ids.push(row.id);
        for (const x of textCols) if (typeof row[x] === 'string' && row[x].length >= 6) texts.push(row[x]);
      }
    }
    return { ids, texts };
  });
}

test('tenant A can neither read nor change tenant B through any route', async () => {
  const routes = server.runtime.app?.routeList ?? [];
  const guarded = routes.filter((r) => r.auth !== 'none' && r.auth !== 'admin');
  assert.ok(guarded.length >= 2, `expected guarded routes, found ${guarded.length}`);
  const before = await fingerprint(b.tenantId);
  const sample = await sampleOf(b.tenantId);
  // Texts every tenant has (role names, user types), and words the API itself publishes (its
  // catalogue and OpenAPI document), are not B's secrets.
  const published =
    (await dumpOf(a.tenantId)) +
    (await server.request('GET', '/openapi.json')).text +
    JSON.stringify(await import('../src/extraction/named-queries.json', { with: { type: 'json' } }));
  sample.texts = sample.texts.filter((t) => !published.includes(t));
  assert.ok(sample.ids.length > 10, 'tenant B has rows to protect');
  const bUser = b.userId;
  const tokenRes = await server.request('POST', '/api/auth/token', { headers: appHeaders(a) });
  const headerSets: Record<string, string>[] = [appHeaders(a), { 'x-accesstoken': tokenRes.body.accessToken }, { ...appHeaders(a), 'x-appuser': a.userId }];
  // Client API documents of B (demo data): ids in paths, queries (documentId) and bodies (posts, teams, custom fields).
  const bDocs = await withOwner(async (c) => {
    const one = async (sql: string) => (await c.query(sql, [b.tenantId])).rows[0]?.id as string;
    return {
      project: await one('select id from projects where tenant_id = $1 order by id limit 1'),
      job: await one('select id from jobs where tenant_id = $1 order by id limit 1'),
      contract: await one('select id from contracts where tenant_id = $1 order by id limit 1'),
      request: await one('select id from requests where tenant_id = $1 order by id limit 1'),
      folder: await one('select id from folders where tenant_id = $1 and document_id is not null order by id limit 1'),
      team: await one('select id from teams where tenant_id = $1 order by id limit 1'),
      transition: await one('select id from workflow_transitions where tenant_id = $1 order by id limit 1'),
      stage: await one('select id from workflow_stages where tenant_id = $1 order by id limit 1'),
      // The second half: estimates and their items, expense sheets, time, typology histories, commercial clients.
      estimate: await one('select id from estimates where tenant_id = $1 order by id limit 1'),
      estimateItem: await one('select id from estimate_items where tenant_id = $1 order by id limit 1'),
      expenseSheet: await one('select id from expense_sheets where tenant_id = $1 order by id limit 1'),
      timesheet: await one('select id from timesheets where tenant_id = $1 and deleted_on is null order by id limit 1'),
      leave: await one('select id from leaves where tenant_id = $1 and deleted_on is null order by id limit 1'),
      typologyHistory: await one('select id from user_typology_histories where tenant_id = $1 order by id limit 1'),
      commercialClient: await one('select id from commercial_clients where tenant_id = $1 order by id limit 1'),
    };
  });
  const candidates = [bUser, b.companyId, b.departmentId, b.typologyId, b.divisionId, ...sample.ids.slice(0, 6)];
  const documentCandidates = [
    bDocs.project,
    bDocs.job,
    bDocs.contract,
    bDocs.request,
    bDocs.folder,
    b.companyId,
    ...[bDocs.estimate, bDocs.expenseSheet, bDocs.timesheet, bDocs.leave, bDocs.typologyHistory].filter(Boolean),
  ];
  const isDocumentRoute = (url: string) =>
    /^\/api\/(v3\/)?(projects|jobs|contracts|requests|file-system|estimates|expenses|timesheets|leaves|user-typology-histories)\//.test(url);
  const body = {
    Id: bUser,
    id: bUser,
    UserName: 'admin',
    ExternalId: b.departmentExternalId,
    externalId: b.typologyExternalId,
    CompanyCode: b.companyCode,
    companyCode: b.companyCode,
    CompanyId: b.companyId,
    companyId: b.companyId,
    DepartmentExternalId: b.departmentExternalId,
    TypologyExternalId: b.typologyExternalId,
    departmentId: b.departmentId,
    name: 'Injected',
    Name: 'Injected',
    IsActive: false,
    value: { value: 'x' },
    queryBuilder: { take: 1000 },
    // Client API: a post acting on B's job, a Put of B's project, B's team and custom fields.
    DocumentId: bDocs.job,
    DocumentTypeName: 'Job',
    DocumentOid: bDocs.job,
    ProjectId: bDocs.project,
    ContractId: bDocs.contract,
    ClientId: b.companyId,
    Text: 'Injected',
    Actions: {
      Transition: { TransitionId: bDocs.transition, StatusId: bDocs.stage },
      Document: { DocumentType: 'Project', DocumentActionType: 'Put', Project: { Id: bDocs.project, Name: 'Injected' } },
      Files: [{ Link: 'https://example.com/x' }],
    },
    OperationType: 0,
    CreateModel: { Name: 'Injected', ProjectId: bDocs.project, DepartmentId: b.departmentId, ContractId: bDocs.contract },
    AssignmentPostModels: [{ User: bUser, DocumentType: 'Job', DocumentOid: bDocs.job, AssignmentType: 'Producer' }],
    AssignmentDeleteModels: [{ User: bUser, DocumentId: bDocs.job, AssignmentTypeId: bDocs.team }],
    DocumentUserFieldValues: [{ ColumnName: 'Forecasting', Value: true }],
    SourceUri: 'https://example.com/x',
    // Second half: B's estimate, its item, users, clients and time in the bodies.
    EstimateId: bDocs.estimate,
    EstimateItemId: bDocs.estimateItem,
    EstimateCopyId: bDocs.estimate,
    UserId: bUser,
    UserToDuplicateId: bUser,
    TypologyId: b.typologyId,
    CommercialClientId: bDocs.commercialClient,
    JobId: bDocs.job,
    StartDate: '2020-01-01',
    AmountType: 1,
    Value: 1,
  };
  // Posts acting on B's documents of the second half: a Put of B's estimate and expense sheet, an item on B's sheet.
  const moreBodies: Record<string, Record<string, unknown>[]> = {
    'POST /api/posts': [
      {
        DocumentId: bDocs.estimate,
        DocumentTypeName: 'Estimate',
        Text: 'Injected',
        Actions: { Document: { DocumentType: 'Estimate', DocumentActionType: 'Put', Estimate: { Name: 'Injected' } } },
      },
      {
        DocumentId: bDocs.expenseSheet,
        DocumentTypeName: 'Expense',
        Text: 'Injected',
        Actions: { Document: { DocumentType: 'Expense', DocumentActionType: 'Put', Expense: { DocumentNumber: 'Injected' } } },
      },
      {
        DocumentTypeName: 'ExpenseItem',
        Text: 'Injected',
        Actions: {
          Document: {
            DocumentType: 'ExpenseItem',
            ExpenseItem: { ExpenseSheetId: bDocs.expenseSheet, ExpenseItemTypeId: bUser, ExpenseItemGroup: 2, ValueWithoutVat: 1 },
          },
        },
      },
    ],
  };
  let requests = 0;
  for (const route of guarded) {
    const paramNames = [...route.url.matchAll(/:(\w+)/g)].map((m) => m[1]);
    const fills = paramNames.length ? (isDocumentRoute(route.url) ? documentCandidates : candidates) : [null];
    for (const id of fills) {
      const path = route.url.replace(/:(\w+)/g, () => String(id));
      const query = `?externalId=${encodeURIComponent(b.departmentExternalId)}&name=${encodeURIComponent('Regular/Permanent')}&keyValue=${encodeURIComponent(String(id))}&documentId=${bDocs.job}&documentTypeName=Job`;
      const hasBody = !['GET', 'DELETE'].includes(route.method);
      for (const json of hasBody ? [body, ...(moreBodies[`${route.method} ${route.url}`] ?? [])] : [undefined]) {
        for (const headers of headerSets) {
          const sent = `${path}${query}${json ? JSON.stringify(json) : ''}`;
          const res = await server.request(route.method, `${path}${query}`, { headers, ...(json ? { json } : {}) });
          requests++;
          assert.notEqual(res.status, 500, `${route.method} ${path} answered 500: ${res.text}`);
          for (const secret of [...sample.ids, ...sample.texts, 'Tenant B Confidential Agency']) {
            if (sent.includes(secret)) continue;
            assert.ok(!res.text.includes(secret), `${route.method} ${route.url} leaked ${secret} of tenant B`);
          }
        }
      }
    }
    // The same credentials presented for tenant B are refused outright, before the route reads its path (once per
    // route: each refusal spends a secret verification's scrypt, ~45 ms, on purpose).
    const path = route.url.replace(/:(\w+)/g, () => String(fills[0]));
    const crossed = await server.request(route.method, path, { headers: { ...appHeaders(a), 'x-apptenant': b.tenantId } });
    assert.equal(crossed.status, 401, `${route.method} ${route.url} with A's app presented for B`);
    requests++;
  }
  assert.deepEqual(await fingerprint(b.tenantId), before, "tenant B's rows are unchanged");
  assert.ok(requests > guarded.length);
});

test('row-level security holds even for a query without a tenant filter', async () => {
  const ctx = server.runtime.ctx;
  const seen = await ctx.db.withTenant(a.tenantId, async (trx) => {
    const users = await trx.selectFrom('users').select(['tenant_id']).execute();
    const tenants = await trx.selectFrom('tenants').select('id').execute();
    return { users: new Set(users.map((u) => u.tenant_id)), tenants: tenants.map((t) => t.id) };
  });
  assert.deepEqual([...seen.users], [a.tenantId]);
  assert.deepEqual(seen.tenants, [a.tenantId]);
  await assert.rejects(
    ctx.db.withTenant(a.tenantId, (trx) => trx.insertInto('roles').values({ tenant_id: b.tenantId, name: 'Sneaky' }).execute()),
    /row-level security/,
  );
  const changed = await ctx.db.withTenant(a.tenantId, (trx) =>
    trx.updateTable('users').set({ name: 'Hijacked' }).where('tenant_id', '=', b.tenantId).executeTakeFirst(),
  );
  assert.equal(Number(changed.numUpdatedRows), 0);
});
