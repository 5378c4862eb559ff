// The generated Database types follow the migrated schema: a schema change makes the committed file
// stale (the check test/run.ts runs names the command that regenerates it), CHECK (col in (...)) lists
// become literal unions, and only the public schema's own tables are typed.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase } from '../../../test/helpers.ts';
import { checkDatabaseTypes, generateDatabaseTypes, REGENERATE_COMMAND } from './generate-types.ts';

let database: { connectionString: string; drop: () => Promise<void> };

before(async () => {
  database = await createTestDatabase();
});
after(async () => {
  await database.drop();
});

async function execute(statement: string): Promise<void> {
  const client = new pg.Client({ connectionString: database.connectionString });
  await client.connect();
  try {
    await client.query(statement);
  } finally {
    await client.end();
  }
}

/** The body of one generated interface, e.g. `Tenants`. */
function interfaceOf(source: string, name: string): string {
  const m = new RegExp(`export interface ${name} \\{\\n([^}]*)\\}`).exec(source);
  assert.ok(m, `no interface ${name} in the generated types`);
  return m[1];
}

test('the committed types describe the migrated template; generation is deterministic', async () => {
  assert.equal(await checkDatabaseTypes(database.connectionString), undefined);
  assert.equal(await generateDatabaseTypes(database.connectionString), await generateDatabaseTypes(database.connectionString));
});

test('only the public schema, without the migrator bookkeeping, pg-boss or custom tables', async () => {
  // A tenant's custom table lives in the customtables schema, created at run time.
  await execute('create table customtables.ct_probe (id integer primary key)');
  const source = await generateDatabaseTypes(database.connectionString);
  assert.match(source, /^ {2}tenants: Tenants;$/m);
  assert.match(source, /^ {2}custom_tables: CustomTables;$/m);
  assert.doesNotMatch(source, /kysely_migration|pgboss|customtables|ct_probe|CtProbe/);
});

test('column types follow what database.ts hands back: date and numeric as strings, timestamps as Date', async () => {
  const source = await generateDatabaseTypes(database.connectionString);
  const users = interfaceOf(source, 'Users');
  assert.match(users, /^ {2}hire_date: string \| null;$/m);
  assert.match(users, /^ {2}required_hours: Numeric \| null;$/m);
  assert.match(users, /^ {2}created_on_utc: Generated<Timestamp>;$/m);
  assert.match(source, /^export type Numeric = ColumnType<string, number \| string, number \| string>;$/m);
  assert.match(source, /^export type Timestamp = ColumnType<Date, Date \| string, Date \| string>;$/m);
});

test('a CHECK (col in (...)) list types the column as its values; other checks leave it a string', async () => {
  const runs = interfaceOf(await generateDatabaseTypes(database.connectionString), 'ExtractionScheduleRuns');
  assert.match(runs, /^ {2}trigger: "schedule" \| "manual";$/m);
  assert.match(runs, /^ {2}status: Generated<"Running" \| "Succeeded" \| "Failed">;$/m);

  await execute(`alter table tenants
    add column probe_quoted text check (probe_quoted in ('it''s', 'plain')),
    add column probe_length text check (length(probe_length) > 2),
    add column probe_pair text,
    add constraint probe_pair_check check (probe_pair in ('a', 'b') or name is null)`);
  const tenants = interfaceOf(await generateDatabaseTypes(database.connectionString), 'Tenants');
  assert.match(tenants, /^ {2}probe_quoted: "it's" \| "plain" \| null;$/m);
  assert.match(tenants, /^ {2}probe_length: string \| null;$/m);
  assert.match(tenants, /^ {2}probe_pair: string \| null;$/m);
});

test('a schema change makes the committed file stale, and the message names the command that regenerates it', async () => {
  await execute('create table probe_new_table (id uuid primary key, label text not null)');
  const stale = await checkDatabaseTypes(database.connectionString);
  assert.ok(stale, 'a new table must make the committed types stale');
  assert.ok(stale.includes(REGENERATE_COMMAND), stale);
  assert.match(stale, /schema\.generated\.ts/);
  assert.match(await generateDatabaseTypes(database.connectionString), /^ {2}probe_new_table: ProbeNewTable;$/m);
});
