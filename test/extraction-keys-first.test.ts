// The keys-first page plan answers exactly what the single-statement plan (the one pages had before it)
// answers: the same rows, in the same order, with the same totalCount, and the same JSON text, for every named query, on random
// query builders over the demo data — filters on any column (computed names and flags included),
// orders, skips (deep ones too) and takes, as the app and as a user who sees only some documents.
// Deterministic: the random builders come from a fixed seed (ATRIUM_KEYS_FIRST_SEED to try another).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { sql } from 'kysely';
import { CATALOGUE, type CatalogueColumn } from '../src/extraction/definition.ts';
import { executePage, executePageJson, type PageStrategy } from '../src/extraction/pages/execute.ts';
import { OPERATIONS } from '../src/extraction/query/compile-filter.ts';
import type { ExecuteBody } from '../src/extraction/query/query-builder.ts';
import { plan } from '../src/extraction/service.ts';
import type { Principal } from '../src/platform/auth/principal.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { startTestServer, type TestServer } from './helpers.ts';

const SEED = Number(process.env.ATRIUM_KEYS_FIRST_SEED ?? 20261125);
const BUILDERS_PER_QUERY = 4;

let server: TestServer;
let db: DatabaseHandle;
let tenant: TenantCredentials;
let asApp: Principal;
let asUser: Principal;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Keys First', { demoData: true, scale: 0.5 });
  db = new DatabaseHandle(server.databaseUrl);
  asApp = { tenantId: tenant.tenantId, appId: null, userId: null, userName: null, roles: new Set(['Administrator']), via: 'app-headers' };
  // A user who is not an Administrator: document queries keep only what that user may see.
  const user = await db.withTenant(tenant.tenantId, async (trx) => {
    const { rows } = await sql<{ id: string }>`select u.id from users u
      where u.tenant_id = ${tenant.tenantId} and u.is_active and u.id <> ${tenant.userId} order by u.user_name limit 1 offset 3`.execute(trx);
    return rows[0].id;
  });
  asUser = { ...asApp, userId: user, userName: 'someone', roles: new Set(['Reader']) };
});
after(async () => {
  await db?.close();
  await server?.close();
});

/** mulberry32: a small seeded generator, so a failure names a builder that can be replayed. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Row = Record<string, unknown>;

/** A filter leaf on `c` whose value comes from the sample rows, so filters match some rows and not others. */
function leaf(rnd: () => number, c: CatalogueColumn, sample: Row[]): unknown[] {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const values = sample.map((r) => r[c.name]).filter((v) => v !== null && v !== undefined);
  const op = pick(OPERATIONS[c.type]);
  if (op === 'isblank' || op === 'isnotblank' || values.length === 0) return [c.name, rnd() < 0.5 ? 'isblank' : 'isnotblank'];
  const v = pick(values);
  if (['contains', 'notcontains', 'startswith', 'endswith'].includes(op)) {
    const s = String(v);
    const from = op === 'startswith' ? 0 : Math.floor(rnd() * Math.max(1, s.length - 2));
    return [c.name, op, s.slice(from, from + 1 + Math.floor(rnd() * 4)).toUpperCase()];
  }
  if (op === 'between') {
    const w = pick(values);
    const [lo, hi] =
      String(v) <= String(w) || typeof v === 'number' ? [v, w].sort((x, y) => (Number(x) - Number(y) || String(x) < String(y) ? -1 : 1)) : [w, v];
    return [c.name, 'between', [lo, hi]];
  }
  return [c.name, op, v];
}

function builder(rnd: () => number, columns: CatalogueColumn[], sample: Row[], total: number): ExecuteBody {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
  const filters: unknown[] = [];
  const n = Math.floor(rnd() * 3);
  for (let i = 0; i < n; i++) {
    if (i > 0) filters.push(rnd() < 0.7 ? 'and' : 'or');
    const f = leaf(rnd, pick(columns), sample);
    filters.push(rnd() < 0.15 ? ['!', f] : f);
  }
  const orderable = columns.filter((c) => c.type !== 'object');
  const orderBy = Array.from({ length: Math.floor(rnd() * 3) }, () => ({ field: pick(orderable).name, direction: rnd() < 0.5 ? 'asc' : 'desc' }));
  // Skips from the first page to past the end, with a bias to deep pages.
  const skip = rnd() < 0.3 ? 0 : Math.floor(rnd() * (total + 5));
  const take = pick([1, 7, 50, 200]);
  return { queryBuilder: { skip, take, orderBy, filters: filters.length === 1 ? (filters[0] as unknown[]) : filters } };
}

const run = (principal: Principal, name: string, body: ExecuteBody, strategy: PageStrategy) =>
  db.withTenant(principal.tenantId, async (trx) => {
    const p = await plan(trx, principal, name, body, true);
    return executePage(trx, p.query, p.plan, strategy);
  });

test('keys-first pages answer the rows, order and totalCount of the single-statement plan on random builders', async () => {
  const rnd = random(SEED);
  let compared = 0;
  let nonEmpty = 0;
  for (const entry of CATALOGUE) {
    const principal = rnd() < 0.3 ? asUser : asApp;
    const sample = await run(asApp, entry.name, { queryBuilder: { take: 200 } }, 'single-statement');
    // Count queries filter on the fields of the query they count; user-field queries add the tenant's fields.
    const columns = await db.withTenant(tenant.tenantId, async (trx) => (await plan(trx, asApp, entry.name, {}, true)).query.filterColumns);
    const rows = entry.name.endsWith('Count')
      ? (await run(asApp, entry.name.replace(/Count$/, ''), { queryBuilder: { take: 200 } }, 'single-statement').catch(() => sample)).data
      : sample.data;
    for (let i = 0; i < BUILDERS_PER_QUERY; i++) {
      const body = builder(rnd, columns, rows, sample.totalCount);
      const label = `${entry.name} as ${principal === asUser ? 'user' : 'app'}: ${JSON.stringify(body)}`;
      const before = await run(principal, entry.name, body, 'single-statement');
      const after = await run(principal, entry.name, body, 'keys-first');
      assert.equal(after.totalCount, before.totalCount, `totalCount of ${label}`);
      assert.deepEqual(after.data, before.data, `rows of ${label}`);
      // The answer's text, rows printed by PostgreSQL, is what JSON.stringify prints of the same page.
      const text = await db.withTenant(principal.tenantId, async (trx) => {
        const p = await plan(trx, principal, entry.name, body, true);
        return (await executePageJson(trx, p.query, p.plan)).toString('utf8');
      });
      assert.equal(text, JSON.stringify(before), `JSON text of ${label}`);
      compared++;
      if (before.data.length) nonEmpty++;
    }
  }
  assert.equal(compared, CATALOGUE.length * BUILDERS_PER_QUERY);
  // Random filters must not reduce the comparison to empty pages.
  assert.ok(nonEmpty > compared / 3, `${nonEmpty} of ${compared} pages had rows`);
});

test('narrow key phases (DE-TimeSheets alone and with its job, DE-History, DE-Workloads, DE-Leaves) answer as the full plan', async () => {
  const total = (await run(asApp, 'DE-TimeSheets', { queryBuilder: { take: 0 } }, 'single-statement')).totalCount;
  const bodies: ExecuteBody[] = [
    { queryBuilder: { take: 50, orderBy: [{ field: 'Day', direction: 'desc' }] } },
    { queryBuilder: { take: 50, skip: Math.floor(total / 2), orderBy: [{ field: 'Day', direction: 'desc' }] } },
    { queryBuilder: { take: 200, skip: total - 70 } },
    { queryBuilder: { take: 20, skip: 5, filters: [['IsBillable', '=', true], 'and', ['Hours', '>', 2]], orderBy: [{ field: 'Hours' }] } },
    { queryBuilder: { take: 20, filters: ['Status', 'startswith', 'a'] }, parameters: { ModifiedFrom: '2000-01-01' } },
    // The job's name: the second narrow source (timesheets and jobs).
    {
      queryBuilder: {
        take: 25,
        skip: 3,
        filters: [['Job', 'contains', 'a'], 'and', ['Day', '>=', '2000-01-01']],
        orderBy: [{ field: 'Day', direction: 'desc' }],
      },
    },
    // Order on a looked-up column: the full keys source.
    { queryBuilder: { take: 30, skip: 100, orderBy: [{ field: 'Typology', direction: 'desc' }, { field: 'Day' }] } },
  ];
  const others: [string, ExecuteBody][] = [
    ['DE-History', { queryBuilder: { take: 40, skip: 30, orderBy: [{ field: 'CreatedOnUtc', direction: 'desc' }] } }],
    ['DE-History', { queryBuilder: { take: 40, filters: ['Action', 'isnotblank'], orderBy: [{ field: 'Version' }] } }],
    ['DE-Workloads', { queryBuilder: { take: 40, skip: 50, orderBy: [{ field: 'DayUtc', direction: 'desc' }] } }],
    ['DE-Workloads', { queryBuilder: { take: 40, filters: ['Workload', '>', 1] } }],
    ['DE-Leaves', { queryBuilder: { take: 30, skip: 20, orderBy: [{ field: 'Day', direction: 'desc' }] } }],
    ['DE-Leaves', { queryBuilder: { take: 30, filters: [['Hours', '>', 4], 'and', ['IsHalfDay', '=', false]], orderBy: [{ field: 'Status' }] } }],
    // A looked-up column: the full keys source.
    ['DE-Leaves', { queryBuilder: { take: 30, skip: 5, orderBy: [{ field: 'LeaveType' }, { field: 'Day', direction: 'desc' }] } }],
  ];
  for (const [name, body] of [...bodies.map((b): [string, ExecuteBody] => ['DE-TimeSheets', b]), ...others]) {
    for (const principal of [asApp, asUser]) {
      const before = await run(principal, name, body, 'single-statement');
      const after = await run(principal, name, body, 'keys-first');
      assert.equal(after.totalCount, before.totalCount, `${name} ${JSON.stringify(body)}`);
      assert.deepEqual(after.data, before.data, `${name} ${JSON.stringify(body)}`);
    }
  }
});
