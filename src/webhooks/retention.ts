// Retention of the event outbox and the webhook history (docs/decisions/0018-retention.md): settled
// invocations (with their attempts) and delivered events older than ATRIUM_EVENT_RETENTION are deleted by
// the maintenance job, a batch per statement. Each statement is its own short transaction and locks only
// rows no worker touches (settled invocations; a resend in progress is skipped), so delivery goes on.
import { type Kysely, sql } from 'kysely';
import type { Database } from '../platform/db/schema.ts';

export interface RetentionOptions {
  retentionMs: number;
  /** Events (or test invocations) examined per statement. */
  batchSize?: number;
  /** The run stops after this long; the next run goes on from the oldest rows left. */
  budgetMs?: number;
  /** Called after each statement, with the run's totals so far. */
  onBatch?: (progress: RetentionResult) => void | Promise<void>;
}

export interface RetentionResult {
  events: number;
  invocations: number;
  attempts: number;
  statements: number;
  /** false when the budget ran out before the sweep reached rows within the retention. */
  complete: boolean;
}

/**
 * Events per statement. A statement that deletes holds the dispatcher's horizon (the oldest transaction
 * still running) for as long as it runs, so events committed meanwhile wait for it: a short statement
 * bounds that wait (bench/RESULTS.md: about 0.2 s per 1,000 events on the loaded 2-core machine, and the
 * rows per second barely change with bigger statements).
 */
export const RETENTION_BATCH = 1000;
const RETENTION_BUDGET_MS = 10 * 60_000;

interface WindowResult {
  scanned: number;
  recent: number;
  last_txid: string | null;
  last_seq: string | null;
  events: number;
  invocations: number;
  attempts: number;
}

/**
 * One window of the outbox, oldest first, that the dispatcher has passed: below its cursor and below the
 * start of every dispatch batch still leased (a lapsed batch finds its invocations through its events).
 * Of the window's events older than the cutoff, their invocations settled before the cutoff are deleted
 * (attempts follow by the invocations' delete trigger), then the events with no invocation left: an
 * event matched by no subscription goes, one with an invocation still due, in flight or awaiting the
 * automation engine stays. Both deletes read the same snapshot, so the events' check counts the
 * invocations the same statement deletes as gone, and only those (one a resend has locked is skipped, and
 * keeps its event).
 */
const window = (cutoff: Date, after: { txid: string; seq: string }, batchSize: number) => sql<WindowResult>`
  with bound as (
    select txid, seq from (
      select last_txid as txid, last_seq as seq from webhook_dispatch_cursor
      union all
      select after_txid, after_seq from webhook_dispatch_batches
    ) w
    order by txid, seq
    limit 1
  ), win as materialized (
    select e.tenant_id, e.id, e.txid, e.seq, e.occurred_on_utc < ${cutoff}::timestamptz as old
    from events e, bound b
    where (e.txid, e.seq) > (${after.txid}::xid8, ${after.seq}::bigint) and (e.txid, e.seq) <= (b.txid, b.seq)
    order by e.txid, e.seq
    limit ${batchSize}
  ), gone_invocations as (
    delete from webhook_invocations i
    where (i.tenant_id, i.id) in (
      select s.tenant_id, s.id
      from win w join webhook_invocations s on s.tenant_id = w.tenant_id and s.event_id = w.id
      where w.old and s.completed_on_utc < ${cutoff}::timestamptz
      for update of s skip locked)
    returning i.tenant_id, i.id, i.attempt_count
  ), left_over as (
    -- The window's old events that keep an invocation: one this statement does not delete. Joined, not
    -- correlated, so that PostgreSQL hashes the statement's deletions once instead of scanning them per row.
    select distinct i.tenant_id, i.event_id
    from win w
    join webhook_invocations i on i.tenant_id = w.tenant_id and i.event_id = w.id
    left join gone_invocations g on g.tenant_id = i.tenant_id and g.id = i.id
    where w.old and g.id is null
  ), gone_events as (
    delete from events e
    using win w
    left join left_over k on k.tenant_id = w.tenant_id and k.event_id = w.id
    where w.old and k.event_id is null and e.tenant_id = w.tenant_id and e.id = w.id
    returning 1
  ), last as (
    select txid::text as last_txid, seq::text as last_seq from win order by txid desc, seq desc limit 1
  )
  select (select count(*) from win)::int as scanned,
    (select count(*) from win where not old)::int as recent,
    (select last_txid from last) as last_txid,
    (select last_seq from last) as last_seq,
    (select count(*) from gone_events)::int as events,
    (select count(*) from gone_invocations)::int as invocations,
    (select coalesce(sum(attempt_count), 0) from gone_invocations)::int as attempts`;

/** Test invocations (no event) settled before the cutoff, oldest first. */
const tests = (cutoff: Date, batchSize: number) => sql<{ invocations: number; attempts: number }>`
  with gone as (
    delete from webhook_invocations i
    where (i.tenant_id, i.id) in (
      select tenant_id, id from webhook_invocations
      where event_id is null and created_on_utc < ${cutoff}::timestamptz and completed_on_utc < ${cutoff}::timestamptz
      order by created_on_utc
      limit ${batchSize}
      for update skip locked)
    returning i.attempt_count
  )
  select count(*)::int as invocations, coalesce(sum(attempt_count), 0)::int as attempts from gone`;

/**
 * Deletes what has outlived the retention, a batch per statement, until it reaches rows within the
 * retention (or the watermark of the dispatcher) or the budget runs out. Runs as the database owner.
 */
export async function sweepExpired(db: Kysely<Database>, opts: RetentionOptions): Promise<RetentionResult> {
  const batchSize = opts.batchSize ?? RETENTION_BATCH;
  const until = Date.now() + (opts.budgetMs ?? RETENTION_BUDGET_MS);
  const result: RetentionResult = { events: 0, invocations: 0, attempts: 0, statements: 0, complete: false };
  // One cutoff for the whole run, from the database's clock (the one the rows were stamped with).
  const { rows } = await sql<{ cutoff: Date }>`select now() - ${opts.retentionMs} * interval '1 millisecond' as cutoff`.execute(db);
  const cutoff = rows[0].cutoff;
  const step = async (counts: { events?: number; invocations: number; attempts: number }) => {
    result.events += counts.events ?? 0;
    result.invocations += counts.invocations;
    result.attempts += counts.attempts;
    result.statements++;
    await opts.onBatch?.({ ...result });
  };

  // The window moves on past the events it keeps (an invocation still due, say), so each is read once per run.
  let after = { txid: '0', seq: '0' };
  for (;;) {
    if (Date.now() >= until) return result;
    const w = (await window(cutoff, after, batchSize).execute(db)).rows[0];
    await step(w);
    // Events are stamped in about the order they are dispatched (a transaction's start, against the order of
    // its first write): a window with none older than the cutoff ends the walk.
    if (w.scanned < batchSize || w.recent === w.scanned || w.last_txid === null || w.last_seq === null) break;
    after = { txid: w.last_txid, seq: w.last_seq };
  }
  for (;;) {
    if (Date.now() >= until) return result;
    const t = (await tests(cutoff, batchSize).execute(db)).rows[0];
    await step(t);
    if (t.invocations < batchSize) break;
  }
  result.complete = true;
  return result;
}
