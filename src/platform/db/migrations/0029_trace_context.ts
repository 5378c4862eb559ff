// Tracing (decision 0048): the W3C traceparent of the span that appended an outbox event, and of the dispatch
// that made an invocation, so the webhook delivery or automation run an event causes continues the trace of
// the request that raised it, in whichever worker process and however much later it runs. The default reads
// the transaction's atrium.traceparent, which a traced process sets with the tenant binding, so no writer of
// events names the column; untraced, the setting is absent and the column null. A traceparent is 55
// characters; the check keeps anything longer out. The default is set apart from the ADD COLUMN so that
// existing rows keep null without a rewrite.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const table of ['events', 'webhook_invocations']) {
    await sql`alter table ${sql.table(table)} add column trace_context text check (char_length(trace_context) <= 64)`.execute(db);
    await sql`alter table ${sql.table(table)} alter column trace_context set default nullif(current_setting('atrium.traceparent', true), '')`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table webhook_invocations drop column if exists trace_context`.execute(db);
  await sql`alter table events drop column if exists trace_context`.execute(db);
}
