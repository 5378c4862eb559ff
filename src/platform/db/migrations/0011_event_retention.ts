// Event retention (docs/decisions/0018-retention.md): the sweep walks the outbox in dispatch order and
// finds each event's invocations by (tenant, event), so the invocations' unique key leads with the event
// instead of the subscription. It is the same key (ON CONFLICT finds a unique index by its columns, in any
// order), so dispatch writes no more index entries than before; lookups by subscription use the history
// index. Test invocations have no event: a partial index by age finds them, and costs event invocations nothing.
// Neither index holds a column that settling an invocation changes, so settling stays a HOT update.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
create unique index webhook_invocations_event on webhook_invocations (tenant_id, event_id, subscription_id);
alter table webhook_invocations drop constraint webhook_invocations_tenant_id_subscription_id_event_id_key;
create index webhook_invocations_tests on webhook_invocations (created_on_utc) where event_id is null;
`.execute(db);
}
