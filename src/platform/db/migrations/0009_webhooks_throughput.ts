// Webhook throughput: recording a delivery costs PostgreSQL little more than the invocation's insert.
// - webhook_dispatch_batches: the ranges of the outbox a worker has taken to deliver itself, each with a
//   lease the worker renews. Their invocations are written with no due time, outside the due index, so
//   no claim (and no claim's lease) is needed; when a batch's lease lapses (its worker died), its
//   invocations not settled yet are made due, for any worker to claim. One row per batch.
// - The due index keys on the due time alone (no status in its predicate) and the table leaves room on its
//   pages: settling such an invocation then changes no indexed column, and PostgreSQL updates the row in
//   place (a HOT update: no new index entries). The price is space: pages are filled to half at insert.
// - webhook_attempts loses its foreign key to the invocation: the per-row check (a key-share lock on the
//   invocation the same statement has just updated) cost a quarter of recording a delivery, and the
//   reference cannot dangle, since attempts are written only by the statements that update their
//   invocation, from the rows they updated. Deleting invocations (directly, or by cascade from a
//   subscription or a tenant) deletes their attempts through a statement trigger, as the cascade did.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
-- Owner-only, like the dispatch cursor: (after, last] is the range of events in (txid, seq) order.
create table webhook_dispatch_batches (
  id bigint generated always as identity primary key,
  after_txid xid8 not null,
  after_seq bigint not null,
  last_txid xid8 not null,
  last_seq bigint not null,
  lease_token uuid not null,
  lease_until timestamptz not null,
  created_on_utc timestamptz not null default now()
);
revoke all on webhook_dispatch_batches from atrium_app;

-- Every invocation with a due time is one to attempt (Pending or Retrying, to a URL); settled ones have none.
drop index webhook_invocations_due;
create index webhook_invocations_due on webhook_invocations (next_attempt_on_utc) where next_attempt_on_utc is not null;
alter table webhook_invocations set (fillfactor = 50);

alter table webhook_attempts drop constraint webhook_attempts_tenant_id_invocation_id_fkey;

-- Security definer: a cascade from a tenant runs where no tenant is set, and row-level security would
-- hide the attempts from the delete. It deletes only the attempts of the rows just deleted.
create function webhook_delete_attempts() returns trigger language plpgsql security definer set search_path = pg_catalog, public as $f$
begin
  delete from webhook_attempts a using deleted_invocations d where a.tenant_id = d.tenant_id and a.invocation_id = d.id;
  return null;
end $f$;
revoke all on function webhook_delete_attempts() from public;

create trigger webhook_invocations_delete_attempts after delete on webhook_invocations
  referencing old table as deleted_invocations for each statement execute function webhook_delete_attempts();
`.execute(db);
}
