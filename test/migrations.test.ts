// Migrations are history: a database migrated one migration at a time (as a server upgraded release by
// release, pg-boss installing its schema at each start) must end up with exactly the catalog of a
// database migrated at once. And a migration that has run anywhere stays as it was.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { Migrator } from 'kysely/migration';
import pg from 'pg';
import { validateDefinition } from '../src/automations/definition.ts';
import { type AutomationToRun, runAutomation } from '../src/automations/engine.ts';
import { HANDLERS } from '../src/automations/handlers.ts';
import type { RunServices } from '../src/automations/run-services.ts';
import { loadConfig } from '../src/config.ts';
import { DatabaseHandle } from '../src/platform/db/database.ts';
import { migrateToLatest, migrations } from '../src/platform/db/migrate.ts';
import { Jobs } from '../src/platform/jobs/jobs.ts';

const MIGRATIONS_DIR = path.resolve(import.meta.dirname, '../src/platform/db/migrations');

/**
 * SHA-256 (first 16 hex digits) of every file of a migration that has been released. Editing one would
 * give fresh databases a schema that existing ones never get: write a new migration instead.
 */
const FROZEN: Record<string, string> = {
  '0001_platform.ts': '1ffedca4e1adeb57',
  '0002_domain.sql': '863bb96d19e37f2d',
  '0002_domain.ts': '5fca074fb719e082',
  '0003_grants.ts': '5c549c826b3fe15c',
  '0004_integration.ts': '54bd4f4ef25662a0',
  '0005_custom_tables.ts': 'c97f1c01be461a76',
  '0006_extraction_indexes.ts': 'f3e4c3cc97f328e1',
  '0007_webhooks.ts': '2336d93e265ad4e9',
  '0008_schedules.ts': '26af8f001856c960',
  '0009_webhooks_throughput.ts': 'd725dcb998c0774b',
  '0010_case_insensitive_order.ts': '641a8d35116046c8',
  '0011_event_retention.ts': 'b2251e5d04518f79',
  '0012_tenant_slugs.ts': 'c75d291281bea235',
  '0013_drop_stray_timesheet_typology.ts': '27b994e17cb80704',
  '0014_schedule_csv_options.ts': 'c8e6a53d058993f9',
  '0015_extraction_page_plans.ts': '4e66cc97364244d3',
  '0016_client_api.ts': 'ecbf181ca0a41f45',
  '0017_automations.ts': 'ae6642d228b703ff',
  '0018_scale_out.ts': 'd7f4ad94a0930e16',
  '0019_user_feed.ts': '93877c420ec355bb',
  '0021_client_api_estimates.ts': '1978c31a9e2ca636',
  '0022_extraction_exports.ts': '941484383e2048ec',
  '0024_route_roles.ts': '748e0578b4e6ff63',
  '0025_document_numbers.ts': '033defc5ecb4ecfa',
  '0026_platform_clients.ts': 'b010dc113156c673',
  '0027_platform_semantics.ts': 'eb70e66cdeda95e9',
  '0028_scim.ts': '830a88f7f7c7c075',
  '0029_trace_context_and_tenant_keys.ts': '8f6df67e315c253c',
  '0030_mcp_oauth.ts': '78328cc588dec764',
  '0031_automations_platform_format.ts': 'f27ca5faf9cf8148',
  '0034_import.ts': '550908a9e6204efc',
  '0035_saved_queries.ts': '0c5f9b347ef07f1d',
  '0039_document_number_indexes.ts': '5701c927b9dcf0b8',
  '0041_changed_since_parallel_restricted.ts': 'be55333c78ffe7ec',
  '0042_change_log_inserts.ts': '3447a3f91bf3f5f4',
  '0043_changed_since_by_tenant_and_table.ts': '3e8f3e498d173ddc',
  '0044_import_bulk_role.ts': '827f1e11a44a74c4',
  '0045_changed_since_index_probes.ts': '9a5bba2b4b037548',
};

/** One line per catalog object of the application's schemas, in a stable order. */
const CATALOG = `
with ns as (
  select oid, nspname from pg_namespace
   where nspname not in ('pg_catalog', 'information_schema', 'pg_toast') and nspname not like 'pg_temp%' and nspname not like 'pg_toast_temp%'
)
select line from (
  select 'schema ' || ns.nspname || ' owner=' || pg_get_userbyid(n.nspowner) || ' acl=' || coalesce(n.nspacl::text, '') as line
    from pg_namespace n join ns using (oid)
  union all
  select 'extension ' || extname || ' ' || extversion from pg_extension
  union all
  select format('relation %s.%s kind=%s persistence=%s rls=%s/%s options=%s acl=%s', ns.nspname, c.relname, c.relkind, c.relpersistence,
                c.relrowsecurity, c.relforcerowsecurity, coalesce(c.reloptions::text, ''), coalesce(c.relacl::text, ''))
    from pg_class c join ns on ns.oid = c.relnamespace where c.relkind in ('r', 'p', 'v', 'm', 'S', 'f')
  union all
  select format('column %s.%s #%s %s %s notnull=%s default=%s identity=%s generated=%s collation=%s', ns.nspname, c.relname,
                row_number() over (partition by c.oid order by a.attnum), a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
                coalesce(pg_get_expr(d.adbin, d.adrelid), ''), a.attidentity, a.attgenerated, coalesce(co.collname, ''))
    from pg_attribute a
    join pg_class c on c.oid = a.attrelid and c.relkind in ('r', 'p', 'v', 'm', 'f')
    join ns on ns.oid = c.relnamespace
    left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
    left join pg_collation co on co.oid = a.attcollation and a.attcollation <> 0 and co.collname <> 'default'
   where a.attnum > 0 and not a.attisdropped
  union all
  select format('constraint %s.%s %s %s', ns.nspname, coalesce(c.relname, t.typname), co.conname, pg_get_constraintdef(co.oid))
    from pg_constraint co join ns on ns.oid = co.connamespace
    left join pg_class c on c.oid = co.conrelid left join pg_type t on t.oid = co.contypid
  union all
  select format('index %s.%s', ns.nspname, pg_get_indexdef(i.indexrelid)) from pg_index i join pg_class c on c.oid = i.indexrelid join ns on ns.oid = c.relnamespace
  union all
  select format('policy %s.%s %s cmd=%s permissive=%s roles=%s using=%s check=%s', ns.nspname, c.relname, p.polname, p.polcmd, p.polpermissive,
                array(select pg_get_userbyid(r) from unnest(p.polroles) r order by 1), coalesce(pg_get_expr(p.polqual, p.polrelid), ''),
                coalesce(pg_get_expr(p.polwithcheck, p.polrelid), ''))
    from pg_policy p join pg_class c on c.oid = p.polrelid join ns on ns.oid = c.relnamespace
  union all
  select format('function %s.%s(%s) %s acl=%s', ns.nspname, p.proname, pg_get_function_identity_arguments(p.oid), md5(pg_get_functiondef(p.oid)),
                coalesce(p.proacl::text, ''))
    from pg_proc p join ns on ns.oid = p.pronamespace where p.prokind in ('f', 'p')
  union all
  select format('trigger %s.%s', ns.nspname, pg_get_triggerdef(t.oid)) from pg_trigger t join pg_class c on c.oid = t.tgrelid join ns on ns.oid = c.relnamespace
   where not t.tgisinternal
  union all
  select format('type %s.%s kind=%s labels=%s', ns.nspname, t.typname, t.typtype, array(select enumlabel from pg_enum e where e.enumtypid = t.oid order by e.enumsortorder))
    from pg_type t join ns on ns.oid = t.typnamespace where t.typtype in ('e', 'd')
  union all
  select format('collation %s.%s provider=%s locale=%s deterministic=%s', ns.nspname, c.collname, c.collprovider, coalesce(c.colllocale, c.collcollate), c.collisdeterministic)
    from pg_collation c join ns on ns.oid = c.collnamespace
  union all
  select format('default acl %s %s %s', pg_get_userbyid(d.defaclrole), coalesce(ns.nspname, ''), d.defaclacl) from pg_default_acl d left join ns on ns.oid = d.defaclnamespace
) objects order by line`;

const dropped: Array<() => Promise<void>> = [];
after(async () => {
  for (const drop of dropped) await drop();
});

/** An empty database of its own (not a clone of the migrated template). */
async function emptyDatabase(): Promise<DatabaseHandle> {
  const base = process.env.ATRIUM_TEST_PG_URL;
  if (!base) throw new Error('Run tests with `npm test`.');
  const name = `m_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = new URL(base);
  url.pathname = `/${name}`;
  const db = new DatabaseHandle(url.toString(), { poolSize: 2 });
  dropped.push(async () => {
    await db.close();
    const c = new pg.Client({ connectionString: base });
    await c.connect();
    await c.query(`drop database if exists ${name} with (force)`);
    await c.end();
  });
  return db;
}

async function installJobs(db: DatabaseHandle): Promise<void> {
  const jobs = new Jobs(db);
  await jobs.start({ work: false });
  await jobs.stop();
}

async function catalog(db: DatabaseHandle): Promise<string[]> {
  return (await db.pool.query<{ line: string }>(CATALOG)).rows.map((r) => r.line);
}

test('a database migrated one step at a time equals one migrated at once', async () => {
  const stepwise = await emptyDatabase();
  const migrator = new Migrator({ db: stepwise.kysely, provider: { getMigrations: async () => migrations } });
  const names: string[] = [];
  for (;;) {
    const { error, results } = await migrator.migrateUp();
    if (error) throw error;
    if (!results?.length) break;
    names.push(...results.map((r) => r.migrationName));
    // Each release started the server after migrating, and pg-boss installed or upgraded its schema.
    await installJobs(stepwise);
  }
  assert.deepEqual(names, Object.keys(migrations), 'every migration ran, in order, one per step');

  const atOnce = await emptyDatabase();
  await migrateToLatest(atOnce.kysely);
  await installJobs(atOnce);

  const [a, b] = [await catalog(stepwise), await catalog(atOnce)];
  assert.ok(
    a.some((l) => l.startsWith('relation public.timesheets ')),
    'the catalog query sees the domain tables',
  );
  assert.ok(
    a.some((l) => l.startsWith('collation public.atrium_ci ')),
    'the catalog query sees collations',
  );
  assert.deepEqual(a, b);
});

test('released migrations are frozen', () => {
  const files = readdirSync(MIGRATIONS_DIR).sort();
  const actual: Record<string, string> = {};
  for (const file of files) {
    if (!(file in FROZEN)) continue;
    actual[file] = createHash('sha256')
      .update(readFileSync(path.join(MIGRATIONS_DIR, file)))
      .digest('hex')
      .slice(0, 16);
  }
  assert.deepEqual(actual, FROZEN, 'a released migration changed: revert it and put the change in a new migration');
  for (const name of Object.keys(migrations)) assert.ok(files.includes(`${name}.ts`), `migration ${name} has its file`);
});

/** A definition in Atrium's older shape (before 0031): `type`, Case `value`, Map `body`, lists by action name, the old Reduce fold… */
const OLDER_SHAPE = {
  name: 'Older shape',
  active: true,
  logLevelType: 'Info',
  requiresAuthentication: false,
  subWorkflows: [
    {
      name: 'collect',
      actions: [
        { name: 'Start', type: 'Start', next: 'Note' },
        { name: 'Note', type: 'AddToList', list: 'Seen', value: "{{['#Item']$.sku | ToUpperCase}}", next: 'Out' },
        { name: 'Out', type: 'Result', httpResponse: { body: "{{['#Index']}}" } },
      ],
    },
    {
      name: 'add',
      actions: [
        { name: 'Start', type: 'Start', next: 'Sum' },
        { name: 'Sum', type: 'Result', httpResponse: { body: "{{['#Accumulator'] | AddDecimal(['#Item']$.n)}}" } },
      ],
    },
  ],
  actions: [
    { name: 'Start', type: 'Start', next: 'Seen' },
    { name: 'Seen', type: 'CreateList', next: 'Each' },
    { name: 'Each', type: 'Loop', body: "{{['#HttpRequest']$.Body.items}}", subWorkflow: 'collect', next: 'Total' },
    { name: 'Total', type: 'Reduce', body: "{{['#HttpRequest']$.Body.items}}", subWorkflow: 'add', initialValue: 0, next: 'Pairs' },
    { name: 'Pairs', type: 'MapFromObject', body: { a: 1, b: 2 }, next: 'Both' },
    { name: 'Both', type: 'Merge', body: [{ x: 1, y: 1 }, { y: 2 }], next: 'Shape' },
    { name: 'Shape', type: 'Map', body: { total: "{{['Total']}}" }, next: 'Stamp' },
    { name: 'Stamp', type: 'SetParameter', value: 'v1', next: 'Check' },
    { name: 'Check', type: 'ValidateJson', body: { id: 'x' }, schema: { type: 'object', required: ['id', 'name'] }, next: 'Route', nextOnError: 'Route' },
    {
      name: 'Route',
      type: 'Case',
      value: "{{['Stamp']}}",
      nextActions: [
        { value: 'v1', name: 'Done' },
        { default: true, value: '', name: 'Other' },
      ],
    },
    { name: 'Other', type: 'Result', httpResponse: { statusCode: 500 } },
    {
      name: 'Done',
      type: 'Result',
      httpResponse: {
        body: {
          seen: "{{['Seen']}}",
          indexes: "{{['Each']}}",
          total: "{{['Total']}}",
          pairs: "{{['Pairs']}}",
          both: "{{['Both']}}",
          shape: "{{['Shape']}}",
          invalid: "{{['Check']$.Error}}",
        },
      },
    },
  ],
  scheduler: null,
};

test('0031: a definition stored in the older shape is rewritten to the platform format and runs as it did', async () => {
  const db = await emptyDatabase();
  const migrator = new Migrator({ db: db.kysely, provider: { getMigrations: async () => migrations } });
  const before = await migrator.migrateTo('0030_mcp_oauth');
  if (before.error) throw before.error;
  const tenant = (await db.pool.query<{ id: string }>("insert into tenants (name, slug) values ('Older', 'older') returning id")).rows[0].id;
  const id = (
    await db.pool.query<{ id: string }>('insert into automations (tenant_id, name, definition) values ($1, $2, $3::jsonb) returning id', [
      tenant,
      OLDER_SHAPE.name,
      JSON.stringify(OLDER_SHAPE),
    ])
  ).rows[0].id;
  const after = await migrator.migrateToLatest();
  if (after.error) throw after.error;
  const stored = (await db.pool.query('select definition from automations where id = $1', [id])).rows[0].definition;
  const types = (actions: any[]) => actions.map((a) => [a.actionType, Object.hasOwn(a, 'type')]);
  assert.deepEqual(types(stored.actions), [
    ['Start', false],
    ['CreateList', false],
    ['Loop', false],
    ['AtriumFold', false],
    ['AtriumObjectEntries', false],
    ['AtriumMergeList', false],
    ['Map', false],
    ['SetParameter', false],
    ['ValidateJson', false],
    ['Case', false],
    ['Result', false],
    ['Result', false],
  ]);
  const byName = Object.fromEntries(stored.actions.map((a: any) => [a.name, a]));
  assert.equal(byName.Route.test, "{{['Stamp']}}");
  assert.deepEqual(byName.Shape.values, { total: "{{['Total']}}" });
  assert.deepEqual([byName.Seen.listName, byName.Seen.listValues], ['Seen', []]);
  assert.deepEqual([byName.Stamp.parameterName, byName.Check.payload], ['Stamp', { id: 'x' }]);
  assert.deepEqual(stored.subWorkflows[0].actions[1], {
    actionType: 'AddToList',
    name: 'Note',
    listName: 'Seen',
    next: 'Out',
    listValues: ["{{['#Item']$.sku | ToUpperCase}}"],
  });
  // The rewritten definition is valid as the platform's format, and runs with the outcome the older one had.
  const { definition, errors } = validateDefinition(stored);
  assert.deepEqual(errors, []);
  const config = loadConfig({ ATRIUM_SECRET_KEY: 'a'.repeat(64), ATRIUM_AUTOMATION_ISOLATION: 'none' });
  const automation: AutomationToRun = { tenantId: tenant, id, version: 1, definition: definition!, runAsAppId: null, runAsUserId: null, apiCredentials: null };
  const items = [
    { sku: 'a', n: 1 },
    { sku: 'b', n: 2 },
    { sku: 'c', n: 3 },
  ];
  const request = { Scheme: 'internal', Host: 'atrium', Path: '/', Method: 'POST', Query: {}, Headers: {}, Body: { items } };
  const outcome = await runAutomation(automation, { config, handlers: HANDLERS } as RunServices, request);
  assert.equal(outcome.status, 'Succeeded', JSON.stringify(outcome));
  const body = outcome.result?.body as any;
  assert.deepEqual(body.seen, ['A', 'B', 'C']);
  assert.deepEqual(body.indexes, [0, 1, 2]);
  assert.equal(body.total, 6);
  assert.deepEqual(body.pairs, [
    { Key: 'a', Value: 1 },
    { Key: 'b', Value: 2 },
  ]);
  assert.deepEqual(body.both, { x: 1, y: 2 });
  assert.deepEqual(body.shape, { total: 6 });
  assert.match(body.invalid, /name/);
});
