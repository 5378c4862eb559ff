// Tracing (decision 0048): the W3C traceparent of the span that appended an outbox event, and of the dispatch
// that made an invocation, so the webhook delivery or automation run an event causes continues the trace of
// the request that raised it, in whichever worker process and however much later it runs. The default reads
// the transaction's atrium.traceparent, which a traced process sets with the tenant binding, so no writer of
// events names the column; untraced, the setting is absent and the column null. A traceparent is 55
// characters; the check keeps anything longer out. The default is set apart from the ADD COLUMN so that
// existing rows keep null without a rewrite.
// Citus readiness (docs/deployment.md): the two unique indexes of tenant tables that did not include tenant_id
// go. events.seq is unique by construction (its sequence) and events_tenant_seq already serves lookups by
// (tenant_id, seq); a custom table's physical name is unique per tenant, and PostgreSQL's catalog keeps the
// physical tables' names unique in their schema in any case.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['events', 'webhook_invocations']) {
    await sql`alter table ${sql.table(table)} add column trace_context text check (char_length(trace_context) <= 64)`.execute(db);
    await sql`alter table ${sql.table(table)} alter column trace_context set default nullif(current_setting('atrium.traceparent', true), '')`.execute(db);
  }
  await sql`drop index events_seq`.execute(db);
  await sql`drop index custom_tables_physical_name`.execute(db);
  await sql`create unique index custom_tables_physical_name on custom_tables (tenant_id, physical_name)`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop index custom_tables_physical_name`.execute(db);
  await sql`create unique index custom_tables_physical_name on custom_tables (physical_name)`.execute(db);
  await sql`create unique index events_seq on events (seq)`.execute(db);
  await sql`alter table webhook_invocations drop column if exists trace_context`.execute(db);
  await sql`alter table events drop column if exists trace_context`.execute(db);
}
