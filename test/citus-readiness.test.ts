// Citus readiness of the migrated schema (docs/deployment.md, "Beyond one primary: Citus"): every table with
// a tenant_id is distributed by it, so every primary key, unique constraint, unique index and foreign key
// of such a table must include tenant_id (Citus enforces uniqueness and references within one shard). Tables
// without tenant_id are the reference tables (copied to every node) and are listed here: a new table must be
// either tenant-keyed or added to this list on purpose.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase } from './helpers.ts';

/**
 * Tables without tenant_id and what each is under Citus (docs/deployment.md says why): tenants is the reference
 * table every shard joins to; the rest are the platform's own bookkeeping, kept on the coordinator as local
 * tables (the migrator's, the outbox cursor and dispatch batches, the count cache's change log and horizon, the
 * rate limit's buckets).
 */
/** The tables Citus copies to every node (the others without tenant_id stay local on the coordinator). */
const CITUS_REFERENCE_TABLES = ['tenants', 'oauth_clients'];

export const REFERENCE_TABLES = [
  'extraction_change_horizon',
  'extraction_changes',
  'kysely_migration',
  'kysely_migration_lock',
  // MCP's OAuth clients register once per server (dynamic client registration precedes any tenant): a reference
  // table, which the tokens and codes of every tenant may point at.
  'oauth_clients',
  'rate_limit_buckets',
  'tenants',
  'webhook_dispatch_batches',
  'webhook_dispatch_cursor',
];

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let db: pg.Client;

before(async () => {
  database = await createTestDatabase();
  db = new pg.Client({ connectionString: database.connectionString });
  await db.connect();
});

after(async () => {
  await db?.end();
  await database?.drop();
});

const TABLES = `
  select c.oid, c.relname as name,
    exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped) as tenant_keyed
  from pg_class c join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
  where c.relkind in ('r', 'p') and not c.relispartition
  order by c.relname`;

test('tables without tenant_id are exactly the listed reference tables', async () => {
  const { rows } = await db.query<{ name: string; tenant_keyed: boolean }>(TABLES);
  assert.ok(rows.filter((r) => r.tenant_keyed).length >= 100, 'the tenant tables are found');
  assert.deepEqual(
    rows.filter((r) => !r.tenant_keyed).map((r) => r.name),
    REFERENCE_TABLES,
  );
});

test('every primary key, unique constraint, unique index and foreign key of a tenant table includes tenant_id', async () => {
  const { rows } = await db.query<{ table_name: string; name: string; kind: string; definition: string; has_tenant: boolean; references: string | null }>(`
    with t as (${TABLES}),
    keyed as (select t.oid, t.name, a.attnum from t join pg_attribute a on a.attrelid = t.oid and a.attname = 'tenant_id' where t.tenant_keyed)
    select k.name as table_name, c.conname as name, c.contype::text as kind, pg_get_constraintdef(c.oid) as definition,
      k.attnum = any(c.conkey) as has_tenant, c.confrelid::regclass::text as references
    from keyed k join pg_constraint c on c.conrelid = k.oid and c.contype in ('p', 'u', 'f', 'x')
    union all
    select k.name, ic.relname, 'i', pg_get_indexdef(i.indexrelid), k.attnum = any(i.indkey::int2[]), null
    from keyed k join pg_index i on i.indrelid = k.oid and i.indisunique join pg_class ic on ic.oid = i.indexrelid
    order by 1, 2`);
  const byKind = (kind: string) => rows.filter((r) => r.kind === kind).length;
  // Found: hundreds of them (527 constraints when this test was written), of every kind.
  assert.ok(byKind('p') >= 100 && byKind('f') >= 100 && byKind('i') >= 100, JSON.stringify({ p: byKind('p'), u: byKind('u'), f: byKind('f'), i: byKind('i') }));
  // A foreign key to a table copied to every node (a reference table) needs no tenant_id.
  const toReference = (r: { kind: string; references: unknown }) => r.kind === 'f' && CITUS_REFERENCE_TABLES.includes(String(r.references));
  const missing = rows.filter((r) => !r.has_tenant && !toReference(r)).map((r) => `${r.table_name}.${r.name} (${r.kind}): ${r.definition}`);
  assert.deepEqual(missing, [], 'constraints and unique indexes of tenant tables without tenant_id');
  // A foreign key of a tenant table points at a tenant table by (tenant_id, …), or at tenants itself.
  const references = rows.filter(
    (r) => r.kind === 'f' && REFERENCE_TABLES.includes(String(r.references)) && !CITUS_REFERENCE_TABLES.includes(String(r.references)),
  );
  assert.deepEqual(
    references.map((r) => r.name),
    [],
  );
});

test('docs/citus/distribute.sql sets the foreign keys aside, distributes every tenant table once and puts the keys back', async () => {
  const script = readFileSync(path.join(import.meta.dirname, '..', 'docs', 'citus', 'distribute.sql'), 'utf8');
  // Its statements in order: each \gexec runs the query before it; the other statements run as they are.
  const parts = script
    .replace(/^--.*$/gm, '')
    .split(/\\gexec|;\s*$/m)
    .map((p) => p.trim())
    .filter(Boolean);
  const generated: string[][] = [];
  await db.query('begin');
  try {
    for (const part of parts) {
      if (part.startsWith('select create_reference_table')) continue; // Citus's, absent here
      const { rows } = await db.query(part);
      if (part.startsWith('select format')) generated.push((rows as { format: string }[]).map((r) => r.format));
    }
  } finally {
    await db.query('rollback');
  }
  const [drops, distributions, adds] = generated;
  const { rows: fks } = await db.query(`select count(*)::int as n from pg_constraint where contype = 'f' and connamespace = 'public'::regnamespace`);
  assert.ok(fks[0].n >= 100);
  assert.equal(drops.length, fks[0].n);
  assert.equal(adds.length, fks[0].n);
  const { rows: tables } = await db.query<{ name: string; tenant_keyed: boolean }>(TABLES);
  assert.deepEqual(
    distributions,
    tables.filter((t) => t.tenant_keyed).map((t) => `select create_distributed_table('${t.name}', 'tenant_id')`),
  );
  // The keys put back are the keys set aside: dropping and adding them on this database leaves the same catalog.
  await db.query('begin');
  try {
    const before = (await db.query(`select conname, pg_get_constraintdef(oid) as d from pg_constraint where contype = 'f' order by 1`)).rows;
    for (const s of drops) await db.query(s);
    for (const s of adds) await db.query(s);
    const after = (await db.query(`select conname, pg_get_constraintdef(oid) as d from pg_constraint where contype = 'f' order by 1`)).rows;
    assert.deepEqual(after, before);
  } finally {
    await db.query('rollback');
  }
});
