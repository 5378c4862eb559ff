// Data Extraction at the limit, second part (decision 0035; the plan in docs/extraction-page-plans.md).
// DE-Leaves answers its Day as the leave's date at midnight UTC (an instant), so `orderBy Day` sorts on
// that expression, which leaves_day_idx (on the date) cannot serve: the key phase sorted every live leave
// to keep a page. An index on the same expression (immutable: a date cast to timestamp, then at a fixed
// zone) lets the key phase read the page's entries in order, as the hand-written SQL reads leaves_day_idx.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create index leaves_day_utc_idx on leaves (tenant_id, ((day::timestamp at time zone 'UTC')))`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index if exists leaves_day_utc_idx`.execute(db);
}
