// How much webhook work waits, read from the tables: the outbox beyond the dispatch cursor (events not yet
// turned into invocations) and the invocations due now and not leased (retries, resends, lapsed batches).
// Counts stop at COUNT_LIMIT so that reading a huge backlog stays one short index scan.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../platform/db/schema.ts';
import type { Backlog } from '../../platform/jobs/work-status.ts';

const COUNT_LIMIT = 100_000;

export async function webhookBacklog(db: Kysely<Database>): Promise<{ outbox: Backlog; webhookInvocationsDue: Backlog }> {
  const { rows } = await sql<{ outbox_count: number; outbox_age: number | null; due_count: number; due_age: number | null }>`
    with cursor as (select last_txid, last_seq from webhook_dispatch_cursor where id = 1)
    select
      (select count(*)::int from (select 1 from events e, cursor c where (e.txid, e.seq) > (c.last_txid, c.last_seq) limit ${COUNT_LIMIT}) x) as outbox_count,
      (select extract(epoch from now() - e.occurred_on_utc)::float8 from events e, cursor c
        where (e.txid, e.seq) > (c.last_txid, c.last_seq) order by e.txid, e.seq limit 1) as outbox_age,
      (select count(*)::int from (select 1 from webhook_invocations i
        where i.next_attempt_on_utc <= now() and i.status in ('Pending', 'Retrying') and i.destination = 'url'
          and (i.lease_until is null or i.lease_until < now()) limit ${COUNT_LIMIT}) x) as due_count,
      (select extract(epoch from now() - min(i.next_attempt_on_utc))::float8 from webhook_invocations i
        where i.next_attempt_on_utc <= now() and i.status in ('Pending', 'Retrying') and i.destination = 'url'
          and (i.lease_until is null or i.lease_until < now())) as due_age`.execute(db);
  const r = rows[0];
  return {
    outbox: { count: r.outbox_count, oldestAgeSeconds: Math.max(0, r.outbox_age ?? 0) },
    webhookInvocationsDue: { count: r.due_count, oldestAgeSeconds: Math.max(0, r.due_age ?? 0) },
  };
}
