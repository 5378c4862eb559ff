// Generates schema.generated.ts (the Kysely `Database` interface) from a migrated database with
// kysely-codegen, and checks that the committed file is current (test/run.ts does, on its template).
// Development-only: kysely-codegen is a devDependency and nothing the server runs imports this module.
// `npm run db:types` runs it as a script: a throwaway embedded PostgreSQL, migrated, then generated.
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { type DatabaseMetadata, generate, getDialect } from 'kysely-codegen';
import pg from 'pg';
import { startEmbeddedPostgres } from './embedded-postgres.ts';
import { migrateToLatest } from './migrate.ts';

export const GENERATED_TYPES_FILE = path.join(import.meta.dirname, 'schema.generated.ts');
export const REGENERATE_COMMAND = 'npm run db:types';

/** The generated file's text for the migrated database at connectionString. */
export async function generateDatabaseTypes(connectionString: string): Promise<string> {
  // Our own pool rather than kysely-codegen's connect(), which tries SSL first and leaves that pool open.
  const pool = new pg.Pool({ connectionString, max: 2 });
  pool.on('error', () => {}); // an idle client killed by the cluster stopping is not our failure
  const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool }) });
  try {
    return await generate({
      db,
      // Matches database.ts: `date` is parsed to 'yyyy-mm-dd'; numeric and bigint stay strings.
      dialect: getDialect('postgres', { dateParser: 'string', numericParser: 'string' }),
      outFile: null,
      // Only public: pg-boss owns its schema, and customtables holds per-tenant tables created at
      // run time, reached through the custom-tables catalogue rather than static types.
      defaultSchemas: ['public'],
      includePattern: 'public.*',
      // The migrator's bookkeeping is Kysely's, not ours.
      excludePattern: 'public.kysely_migration*',
      camelCase: false,
      postprocess: async ({ metadata }) => withCheckedValues(metadata, await checkedValues(db)),
    });
  } finally {
    await db.destroy();
  }
}

/**
 * Text columns whose values a CHECK (col in ('a', 'b')) constraint lists, keyed 'table.column'.
 * PostgreSQL keeps such a check as `CHECK ((col = ANY (ARRAY['a'::text, 'b'::text])))`; checks of
 * any other shape say nothing about a column's type and are left alone.
 */
async function checkedValues(db: Kysely<unknown>): Promise<Map<string, string[]>> {
  const { rows } = await sql<{ table: string; definition: string }>`
    select c.conrelid::regclass::text as table, pg_get_constraintdef(c.oid) as definition
    from pg_constraint c join pg_namespace n on n.oid = c.connamespace
    where c.contype = 'c' and n.nspname = 'public' and cardinality(c.conkey) = 1`.execute(db);
  const found = new Map<string, string[]>();
  for (const { table, definition } of rows) {
    const m = /^CHECK \(\((\w+) = ANY \(ARRAY\[((?:'(?:[^']|'')*'::text(?:, )?)+)\]\)\)\)$/.exec(definition);
    if (!m) continue;
    const values = [...m[2].matchAll(/'((?:[^']|'')*)'::text/g)].map((v) => v[1].replaceAll("''", "'"));
    found.set(`${table}.${m[1]}`, values);
  }
  return found;
}

function withCheckedValues(metadata: DatabaseMetadata, checked: Map<string, string[]>): DatabaseMetadata {
  for (const table of metadata.tables) {
    for (const column of table.columns) {
      const values = checked.get(`${table.name}.${column.name}`);
      if (values && column.dataType === 'text') column.enumValues = values;
    }
  }
  return metadata;
}

/** Undefined when the committed file matches the database; otherwise why not, naming the fix. */
export async function checkDatabaseTypes(connectionString: string): Promise<string | undefined> {
  const expected = await generateDatabaseTypes(connectionString);
  const committed = await readFile(GENERATED_TYPES_FILE, 'utf8').catch(() => '');
  if (committed === expected) return undefined;
  const rel = path.relative(process.cwd(), GENERATED_TYPES_FILE);
  return `${rel} does not describe the migrated schema (a new migration, or an edit by hand); run \`${REGENERATE_COMMAND}\` and commit the result`;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'atrium-db-types-'));
  // Readable by the OS user PostgreSQL runs as when we are root (as in test/run.ts).
  await chmod(dir, 0o755);
  try {
    const cluster = await startEmbeddedPostgres({ dataDir: path.join(dir, 'pg'), fast: true, log: () => {} });
    try {
      const db = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: cluster.connectionString, max: 2 }) }) });
      try {
        await migrateToLatest(db);
      } finally {
        await db.destroy();
      }
      await writeFile(GENERATED_TYPES_FILE, await generateDatabaseTypes(cluster.connectionString));
    } finally {
      await cluster.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  process.stdout.write(`wrote ${path.relative(process.cwd(), GENERATED_TYPES_FILE)}; run \`npm run typecheck\` to see what it changed\n`);
}

if (import.meta.main) await main();
