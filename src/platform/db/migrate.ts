// Runs the migrations in order (Kysely's migrator); called at every start and by `atrium migrate`.
import type { Kysely } from 'kysely';
import { type Migration, Migrator } from 'kysely/migration';
import * as m0001 from './migrations/0001_platform.ts';
import * as m0002 from './migrations/0002_domain.ts';
import * as m0003 from './migrations/0003_grants.ts';
import * as m0004 from './migrations/0004_integration.ts';
import * as m0005 from './migrations/0005_custom_tables.ts';
import * as m0006 from './migrations/0006_extraction_indexes.ts';
import * as m0007 from './migrations/0007_webhooks.ts';
import * as m0008 from './migrations/0008_schedules.ts';
import * as m0009 from './migrations/0009_webhooks_throughput.ts';
import * as m0010 from './migrations/0010_case_insensitive_order.ts';
import * as m0011 from './migrations/0011_event_retention.ts';
import * as m0012 from './migrations/0012_tenant_slugs.ts';
import * as m0013 from './migrations/0013_drop_stray_timesheet_typology.ts';
import * as m0014 from './migrations/0014_schedule_csv_options.ts';
import * as m0015 from './migrations/0015_extraction_page_plans.ts';

export const migrations: Record<string, Migration> = {
  '0001_platform': m0001,
  '0002_domain': m0002,
  '0003_grants': m0003,
  '0004_integration': m0004,
  '0005_custom_tables': m0005,
  '0006_extraction_indexes': m0006,
  '0007_webhooks': m0007,
  '0008_schedules': m0008,
  '0009_webhooks_throughput': m0009,
  '0010_case_insensitive_order': m0010,
  '0011_event_retention': m0011,
  '0012_tenant_slugs': m0012,
  '0013_drop_stray_timesheet_typology': m0013,
  '0014_schedule_csv_options': m0014,
  '0015_extraction_page_plans': m0015,
};

export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    const cause = error instanceof Error ? error.message : String(error);
    // The cause stays attached: its code (a SQLSTATE, ECONNREFUSED) says whether the database was reachable at all.
    throw new Error(failed ? `Migration ${failed.migrationName} failed: ${cause}` : `Migrations could not run: ${cause}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** True when every known migration has been applied (readiness check). */
export async function migrationsApplied(db: Kysely<any>): Promise<boolean> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const all = await migrator.getMigrations();
  return all.every((m) => m.executedAt !== undefined);
}
