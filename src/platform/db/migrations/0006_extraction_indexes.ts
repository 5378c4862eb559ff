// Indexes the Data Extraction plans need (see bench/extraction.ts). `contains` on a job's name is an
// ILIKE '%…%', which only a trigram index can serve (pg_trgm ships with PostgreSQL's contrib and the
// embedded cluster, and is a trusted extension). A filter on jobs then reaches timesheets by job and
// day: with the date and user in the index, the date range is an index condition and a count needs no
// heap visits (index-only scan) for the rows outside the range.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create extension if not exists pg_trgm;
create index if not exists jobs_name_trgm on jobs using gin (name gin_trgm_ops);
create index if not exists timesheets_live_job_date on timesheets (tenant_id, job_id, date) include (user_id) where deleted_on is null;
`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists timesheets_live_job_date; drop index if exists jobs_name_trgm;`.execute(db);
}
