// Runs the migrations in order (Kysely's migrator); called at every start and by `atrium migrate`.
import { type Kysely, sql } from 'kysely';
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
import * as m0016 from './migrations/0016_client_api.ts';
import * as m0017 from './migrations/0017_automations.ts';
import * as m0018 from './migrations/0018_scale_out.ts';
import * as m0019 from './migrations/0019_user_feed.ts';
import * as m0021 from './migrations/0021_client_api_estimates.ts';
import * as m0022 from './migrations/0022_extraction_exports.ts';
import * as m0024 from './migrations/0024_route_roles.ts';
import * as m0025 from './migrations/0025_document_numbers.ts';
import * as m0026 from './migrations/0026_platform_clients.ts';
import * as m0027 from './migrations/0027_platform_semantics.ts';
import * as m0028 from './migrations/0028_scim.ts';
import * as m0029 from './migrations/0029_trace_context_and_tenant_keys.ts';
import * as m0030 from './migrations/0030_mcp_oauth.ts';
import * as m0031 from './migrations/0031_automations_platform_format.ts';
import * as m0034 from './migrations/0034_import.ts';
import * as m0035 from './migrations/0035_saved_queries.ts';
import * as m0039 from './migrations/0039_document_number_indexes.ts';
import * as m0041 from './migrations/0041_changed_since_parallel_restricted.ts';
import * as m0042 from './migrations/0042_change_log_inserts.ts';
import * as m0043 from './migrations/0043_changed_since_by_tenant_and_table.ts';
import * as m0044 from './migrations/0044_import_bulk_role.ts';
import * as m0045 from './migrations/0045_changed_since_index_probes.ts';

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
  '0016_client_api': m0016,
  '0017_automations': m0017,
  '0018_scale_out': m0018,
  '0019_user_feed': m0019,
  '0021_client_api_estimates': m0021,
  '0022_extraction_exports': m0022,
  '0024_route_roles': m0024,
  '0025_document_numbers': m0025,
  '0026_platform_clients': m0026,
  '0027_platform_semantics': m0027,
  '0028_scim': m0028,
  '0029_trace_context_and_tenant_keys': m0029,
  '0030_mcp_oauth': m0030,
  '0031_automations_platform_format': m0031,
  '0034_import': m0034,
  '0035_saved_queries': m0035,
  '0039_document_number_indexes': m0039,
  '0041_changed_since_parallel_restricted': m0041,
  '0042_change_log_inserts': m0042,
  '0043_changed_since_by_tenant_and_table': m0043,
  '0044_import_bulk_role': m0044,
  '0045_changed_since_index_probes': m0045,
};

/** The session advisory lock that serialises migrations of processes starting together (a constant of our own). */
const MIGRATION_LOCK = 7_403_161_418;

/**
 * Several processes may start at once on one database: each takes a session advisory lock on a connection of
 * its own first, so one migrates while the others wait and then find nothing left to do. Kysely's own lock is
 * taken only after it has created its bookkeeping tables, which concurrent first starts would race to create.
 */
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  try {
    return await db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
      try {
        return await migrateUnlocked(db);
      } finally {
        await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
      }
    });
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    throw new MigrationError(`Migrations could not run: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/** A migration failed, or they could not run at all; the cause (a SQLSTATE, ECONNREFUSED) stays attached. */
class MigrationError extends Error {}

async function migrateUnlocked(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    const cause = error instanceof Error ? error.message : String(error);
    // The cause stays attached: its code (a SQLSTATE, ECONNREFUSED) says whether the database was reachable at all.
    throw new MigrationError(failed ? `Migration ${failed.migrationName} failed: ${cause}` : `Migrations could not run: ${cause}`, { cause: error });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** True when every known migration has been applied (readiness check). */
export async function migrationsApplied(db: Kysely<any>): Promise<boolean> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const all = await migrator.getMigrations();
  return all.every((m) => m.executedAt !== undefined);
}
