// Recording deliveries, a batch of finished attempts per statement: each invocation's new state (only
// while the lease it was delivered under is still this worker's) and the attempt's row; failures feed the
// subscription's deactivation window. Also the leases: claims of due invocations, batch renewals, and
// claimed invocations handed back unattempted.
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type pg from 'pg';
import type { Trx } from '../../platform/db/database.ts';
import type { Database } from '../../platform/db/schema.ts';
import { appendEvents } from '../../platform/events/outbox.ts';
import type { Logger } from '../../platform/log.ts';
import { webhookSubscriptionsDeactivated } from '../../platform/metrics.ts';
import type { AttemptOutcome } from './attempt.ts';
import { AWAITING_BATCH, type Delivery, type DispatchBatch } from './dispatch.ts';

export interface Settled {
  delivery: Delivery;
  /** The attempt's number; with no outcome, the count so far (a batch delivery handed back unattempted). */
  attempt: number;
  startedOnUtc: Date;
  durationMs: number;
  outcome: AttemptOutcome | null;
  status: 'Succeeded' | 'Retrying' | 'Failed' | 'Pending';
  nextAttemptOnUtc: Date | null;
  roundAttempts: number;
}

// Both statements are named (prepared once per connection): the batches are small, so planning would cost
// as much as the writes.
const RESULT = 'select count(*)::int as n from done';

// A success closes the subscription's failure window.
const RECOVERED = `
  recovered as (
    update webhook_subscriptions s set failing_since = null
    from (select distinct tenant_id, subscription_id from done where status = 'Succeeded') ok
    where s.tenant_id = ok.tenant_id and s.id = ok.subscription_id and s.failing_since is not null
  )`;

const ATTEMPT_COLUMNS = 'attempt int, started timestamptz, duration_ms int, status_code int, response_body text, error text';

/** Claimed invocations: the row's new state and the attempt, only while the lease is still this worker's. */
const SETTLE = `
  with r as (
    select * from jsonb_to_recordset($1::jsonb) as x(tenant_id uuid, id uuid, lease_token uuid, round_attempts int, status text,
      next_attempt timestamptz, ${ATTEMPT_COLUMNS})
  ), done as (
    update webhook_invocations i
    set status = r.status, attempt_count = r.attempt, round_attempts = r.round_attempts, next_attempt_on_utc = r.next_attempt,
      lease_until = null, lease_token = null,
      completed_on_utc = case when r.status in ('Succeeded', 'Failed') then now() end
    from r
    where i.tenant_id = r.tenant_id and i.id = r.id and i.lease_token = r.lease_token
    -- What the later parts need comes out of the update itself: joining r to it again would be planned
    -- as a nested loop over two CTEs (quadratic in the batch).
    returning i.tenant_id, i.id, i.subscription_id, i.status, r.attempt, r.started, r.duration_ms, r.status_code, r.response_body, r.error
  ), attempts as (
    insert into webhook_attempts (tenant_id, invocation_id, attempt, started_on_utc, duration_ms, status_code, response_body, error)
    select tenant_id, id, attempt, started, duration_ms, status_code, response_body, error from done
    on conflict do nothing
  ), ${RECOVERED}
  ${RESULT}`;

/**
 * A batch's invocations: their state after the first attempt, only while they still await their batch
 * (they were not made due after a lapsed lease). No indexed column changes, so the update stays on its page
 * (a HOT update, with the room the table's fillfactor leaves). Handed back unattempted (the worker stops),
 * they become due. Batches whose every invocation is settled now are deleted in the same statement.
 */
const RECORD = `
  with r as (
    select * from jsonb_to_recordset($1::jsonb) as x(tenant_id uuid, id uuid, round_attempts int, status text, next_attempt timestamptz,
      ${ATTEMPT_COLUMNS})
  ), done as (
    update webhook_invocations i
    set status = r.status, attempt_count = r.attempt, round_attempts = r.round_attempts,
      next_attempt_on_utc = case when r.started is null then now() else r.next_attempt end,
      completed_on_utc = case when r.status in ('Succeeded', 'Failed') then now() end
    from r
    where i.tenant_id = r.tenant_id and i.id = r.id and ${AWAITING_BATCH}
    returning i.tenant_id, i.id, i.subscription_id, i.status, r.attempt, r.started, r.duration_ms, r.status_code, r.response_body, r.error
  ), attempts as (
    insert into webhook_attempts (tenant_id, invocation_id, attempt, started_on_utc, duration_ms, status_code, response_body, error)
    select tenant_id, id, attempt, started, duration_ms, status_code, response_body, error from done where started is not null
    on conflict do nothing
  ), finished as (
    delete from webhook_dispatch_batches b using unnest($2::bigint[], $3::uuid[]) as k(id, token)
    where b.id = k.id and b.lease_token = k.token
  ), ${RECOVERED}
  ${RESULT}`;

// Due again at once: the invocation goes back to whichever worker claims it first.
const RELEASE = `
  update webhook_invocations i set lease_until = null, lease_token = null, next_attempt_on_utc = now()
  from unnest($1::uuid[], $2::uuid[], $3::uuid[]) as k(tenant_id, id, token)
  where i.tenant_id = k.tenant_id and i.id = k.id and i.lease_token = k.token`;

/**
 * Records settled attempts, and deletes the dispatch batches they finish. Failed attempts open their
 * subscriptions' failure windows (unless the same batch has a success), which may set them inactive.
 */
export async function recordSettled(
  pool: pg.Pool,
  db: Kysely<Database>,
  settled: Settled[],
  finished: DispatchBatch[],
  disableAfterMs: number,
  log: Logger,
): Promise<void> {
  const attemptOf = (s: Settled) => ({
    attempt: s.attempt,
    round_attempts: s.roundAttempts,
    status: s.status,
    next_attempt: s.nextAttemptOnUtc?.toISOString() ?? null,
    started: s.outcome ? s.startedOnUtc.toISOString() : null,
    duration_ms: s.durationMs,
    status_code: s.outcome?.statusCode ?? null,
    response_body: s.outcome?.responseBody ?? null,
    error: s.outcome?.error ?? null,
  });
  const claimed: object[] = [];
  const batched: object[] = [];
  for (const s of settled) {
    const d = s.delivery;
    if (d.lease.kind === 'row') claimed.push({ tenant_id: d.tenantId, id: d.id, lease_token: d.lease.token, ...attemptOf(s) });
    else batched.push({ tenant_id: d.tenantId, id: d.id, ...attemptOf(s) });
  }
  // Failures first, so that once an attempt shows in the history its subscription's state agrees with it.
  const key = (s: Settled) => `${s.delivery.tenantId}/${s.delivery.subscriptionId}`;
  const succeeded = new Set(settled.filter((s) => s.status === 'Succeeded').map(key));
  const failing = settled
    .filter((s) => s.outcome !== null && (s.status === 'Retrying' || s.status === 'Failed') && !succeeded.has(key(s)))
    .map((s) => ({ tenant_id: s.delivery.tenantId, subscription_id: s.delivery.subscriptionId }));
  if (failing.length > 0) await db.transaction().execute((trx) => trackFailures(trx as unknown as Trx, failing, disableAfterMs, log));
  if (claimed.length > 0) await pool.query({ name: 'webhooks_settle', text: SETTLE, values: [JSON.stringify(claimed)] });
  if (batched.length > 0 || finished.length > 0) {
    await pool.query({
      name: 'webhooks_record',
      text: RECORD,
      values: [JSON.stringify(batched), finished.map((b) => b.id), finished.map((b) => b.token)],
    });
  }
}

/** Leases due invocations (retries, resends, tests, lapsed leases), oldest due first, up to limit. */
export async function claimDue(pool: pg.Pool, leaseMs: number, limit: number): Promise<Delivery[]> {
  const token = randomUUID();
  const started = Date.now();
  const { rows } = await pool.query<{
    tenant_id: string;
    id: string;
    subscription_id: string;
    payload: string;
    url: string | null;
    secret: string;
    attempt_count: number;
    round_attempts: number;
    trace_context: string | null;
  }>({
    name: 'webhooks_claim',
    // A claimed invocation is due again when its lease lapses, so that due scans pass over those in flight.
    text: `
      update webhook_invocations i
      set lease_until = now() + $1 * interval '1 millisecond', lease_token = $2::uuid, next_attempt_on_utc = now() + $1 * interval '1 millisecond'
      from (
        select tenant_id, id from webhook_invocations
        where status in ('Pending', 'Retrying') and destination = 'url' and next_attempt_on_utc <= now()
          and (lease_until is null or lease_until < now())
        order by next_attempt_on_utc
        limit $3
        for update skip locked
      ) due, webhook_subscriptions s
      where i.tenant_id = due.tenant_id and i.id = due.id and s.tenant_id = i.tenant_id and s.id = i.subscription_id
      returning i.tenant_id, i.id, i.subscription_id, i.payload, s.url, s.secret, i.attempt_count, i.round_attempts, i.trace_context`,
    values: [leaseMs, token, limit],
  });
  const lease = { kind: 'row', token, deadline: started + leaseMs } as const;
  return rows.map((r) => ({
    tenantId: r.tenant_id,
    id: r.id,
    subscriptionId: r.subscription_id,
    payload: r.payload,
    url: r.url ?? '',
    secret: r.secret,
    attemptCount: r.attempt_count,
    roundAttempts: r.round_attempts,
    traceContext: r.trace_context,
    lease,
  }));
}

/** Hands claimed invocations back (not started: on stop, or when the lease would lapse before the attempt could end). */
export async function releaseLeases(pool: pg.Pool, deliveries: Delivery[]): Promise<void> {
  const rows = deliveries.flatMap((d) => (d.lease.kind === 'row' ? [{ tenantId: d.tenantId, id: d.id, token: d.lease.token }] : []));
  if (rows.length === 0) return;
  await pool.query({
    name: 'webhooks_release',
    text: RELEASE,
    values: [rows.map((r) => r.tenantId), rows.map((r) => r.id), rows.map((r) => r.token)],
  });
}

/** Extends the leases of this worker's batches; answers the ids still its own (the others were taken over). */
export async function renewBatches(pool: pg.Pool, batches: DispatchBatch[], leaseMs: number): Promise<Set<string>> {
  const { rows } = await pool.query<{ id: string }>({
    name: 'webhooks_renew',
    text: `update webhook_dispatch_batches b set lease_until = now() + $3 * interval '1 millisecond'
      from unnest($1::bigint[], $2::uuid[]) as k(id, token) where b.id = k.id and b.lease_token = k.token returning b.id::text`,
    values: [batches.map((b) => b.id), batches.map((b) => b.token), leaseMs],
  });
  return new Set(rows.map((r) => r.id));
}

/**
 * A failed attempt opens a subscription's failure window (a success closes it, above). When the window has
 * lasted ATRIUM_WEBHOOK_DISABLE_AFTER (5 days), the subscription is set inactive and an event records it.
 */
async function trackFailures(trx: Trx, recorded: { tenant_id: string; subscription_id: string }[], disableAfterMs: number, log: Logger): Promise<void> {
  const failed = unique(recorded);
  const keys = sql`unnest(${failed.map((s) => s.tenant)}::uuid[], ${failed.map((s) => s.id)}::uuid[]) as k(tenant_id, id)`;
  await sql`update webhook_subscriptions s set failing_since = now()
    from ${keys} where s.tenant_id = k.tenant_id and s.id = k.id and s.failing_since is null`.execute(trx);
  const { rows: justDisabled } = await sql<{ tenant_id: string; id: string; failing_since: Date }>`
    update webhook_subscriptions s set active = false, modified_on_utc = now()
    from ${keys}
    where s.tenant_id = k.tenant_id and s.id = k.id and s.active
      and s.failing_since <= now() - ${disableAfterMs} * interval '1 millisecond'
    returning s.tenant_id, s.id, s.failing_since`.execute(trx);
  if (justDisabled.length === 0) return;
  await appendEvents(
    trx,
    justDisabled.map((d) => ({
      tenantId: d.tenant_id,
      actionType: 'Updated',
      documentType: 'WebhookSubscription',
      documentId: d.id,
      detail: {
        Active: false,
        Reason: `every delivery has failed since ${d.failing_since.toISOString()}`,
        FailingSinceUtc: d.failing_since.toISOString(),
      },
    })),
  );
  webhookSubscriptionsDeactivated.inc(justDisabled.length);
  for (const d of justDisabled) {
    log.warn(
      {
        tenant: d.tenant_id,
        subscription: d.id,
        failingSince: d.failing_since.toISOString(),
        reason: 'every delivery failed for ATRIUM_WEBHOOK_DISABLE_AFTER',
      },
      'webhook subscription set inactive: every delivery has failed',
    );
  }
}

function unique(rows: { tenant_id: string; subscription_id: string }[]): { tenant: string; id: string }[] {
  const map = new Map<string, { tenant: string; id: string }>();
  for (const r of rows) map.set(`${r.tenant_id}/${r.subscription_id}`, { tenant: r.tenant_id, id: r.subscription_id });
  return [...map.values()];
}
