// The dispatcher: walks the event outbox and makes one invocation per (event, matching subscription).
// One row-locked cursor serialises dispatchers across worker processes, and the invocations' unique
// (subscription, event) key backs it up: an event is dispatched exactly once however many workers run.
// The invocations a worker can deliver at once are written without a due time, so no claim sees them,
// and the dispatcher leases their range of the outbox to itself (one row per batch, renewed while the
// worker lives). A worker that dies leaves its batch lease to lapse; then the batch's invocations not
// settled yet are made due, for any worker to claim.
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../../platform/db/schema.ts';
import { tenantBaseUrl } from '../../platform/http/tenant-address.ts';
import { outboxDispatchLag } from '../../platform/metrics.ts';
import { contextOf, failSpan, type Span, SpanKind, startSpan, traceparentOf, tracingOn } from '../../platform/tracing.ts';
import { buildPayload } from '../invocations.ts';
import { type DetailFilter, matches, type PreferenceLookup, preferenceReferences } from '../match.ts';

export interface DispatchOptions {
  /** With tenantHostPattern, where document links in payloads point: each tenant's base URL (decision 0019). */
  publicUrl: string;
  tenantHostPattern?: string;
  batchSize: number;
  /** Delay of the first attempt (the retry schedule's first entry). */
  firstDelayMs: number;
  /** Invocations this process may take to deliver itself (its room). */
  leaseCount: number;
  /**
   * End the batch at the last event whose invocations can all be taken (at least one event is taken), so
   * that the dispatcher makes no more immediate invocations than this process can deliver itself.
   */
  cutAtLeaseCount: boolean;
  leaseMs: number;
}

/** A range of the outbox leased to one worker, whose invocations it delivers and then settles. */
export interface DispatchBatch {
  id: string;
  token: string;
  /** Local clock (ms) at which the lease lapses, counted from before the statement that set it: never late. */
  deadline: number;
  /** Invocations not settled yet; the batch row is deleted with the last of them. */
  outstanding: number;
  /** Its lease is lost or could lapse: nothing more of it starts here, and its invocations go to the claim path. */
  abandoned: boolean;
}

/** One invocation to attempt: from this worker's dispatch batch, or an invocation row claimed with a lease. */
export interface Delivery {
  tenantId: string;
  id: string;
  subscriptionId: string;
  payload: string;
  url: string;
  secret: string;
  attemptCount: number;
  roundAttempts: number;
  /** The traceparent of the dispatch that made the invocation (decision 0048); null untraced. */
  traceContext: string | null;
  lease: { kind: 'batch'; batch: DispatchBatch } | { kind: 'row'; token: string; deadline: number };
}

interface OutboxEvent {
  tenant_id: string;
  id: string;
  seq_text: string;
  txid_text: string;
  action_type: string;
  document_type: string;
  document_id: string | null;
  business_object_type_name: string | null;
  detail: unknown;
  occurred_on_utc: Date;
  trace_context: string | null;
}

interface ActiveSubscription {
  tenant_id: string;
  id: string;
  action_type: string;
  document_type: string;
  business_object_type_name: string | null;
  url: string | null;
  secret: string;
  is_automation: boolean;
  detail_filters: DetailFilter[];
  tenant_slug: string;
}

interface Candidate {
  event: OutboxEvent;
  sub: ActiveSubscription;
  id: string;
  payload: string;
  /** A URL delivery due at once, which the worker may take for itself. */
  immediate: boolean;
  /** The traceparent of the event's dispatch span: the invocation's trace_context. */
  traceContext: string | null;
}

export interface DispatchResult {
  events: number;
  /** Invocations made due for the claim path (automation destinations aside). */
  due: number;
  /** Invocations of this worker's batch, to deliver now. */
  deliveries: Delivery[];
  /** The outbox may hold more right now: the batch was full or cut at the lease count. */
  more: boolean;
  /** false when another process holds the cursor. */
  ran: boolean;
}

type Db = Kysely<Database>;

/** An invocation its dispatch batch has not settled yet: Pending, with no due time and no claim lease. */
export const AWAITING_BATCH = `i.status = 'Pending' and i.destination = 'url' and i.next_attempt_on_utc is null and i.lease_token is null`;

export async function dispatchOnce(db: Db, opts: DispatchOptions): Promise<DispatchResult> {
  const started = Date.now();
  const none = { events: 0, due: 0, deliveries: [], more: false };
  // Traced: one span per event dispatched, continuing the trace of the transaction that appended it.
  const spans = new Map<OutboxEvent, Span>();
  try {
    return await dispatchIn(db, opts, started, none, spans);
  } catch (err) {
    for (const span of spans.values()) failSpan(span, err);
    throw err;
  } finally {
    for (const span of spans.values()) span.end();
  }
}

async function dispatchIn(
  db: Db,
  opts: DispatchOptions,
  started: number,
  none: Omit<DispatchResult, 'ran'>,
  spans: Map<OutboxEvent, Span>,
): Promise<DispatchResult> {
  return db.transaction().execute(async (trx) => {
    // Taken before anything else in this transaction: every transaction older than this horizon
    // has finished, so its events are all visible now and none can appear below it later.
    const { rows: horizonRows } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(trx);
    const horizon = horizonRows[0].xmin;
    const { rows: cursorRows } = await sql<{ last_txid: string; last_seq: string }>`
      select last_txid::text, last_seq::text from webhook_dispatch_cursor where id = 1 for update skip locked`.execute(trx);
    if (cursorRows.length === 0) return { ...none, ran: false };
    const cursor = cursorRows[0];
    const { rows: events } = await sql<OutboxEvent>`
      select e.tenant_id, e.id, e.seq::text as seq_text, e.txid::text as txid_text, e.action_type, e.document_type, e.document_id,
        e.business_object_type_name, e.detail, e.occurred_on_utc, e.trace_context
      from events e
      where (e.txid, e.seq) > (${cursor.last_txid}::xid8, ${cursor.last_seq}::bigint) and e.txid < ${horizon}::xid8
      -- the columns themselves: ordering by the text output names would be lexicographic
      order by e.txid, e.seq
      limit ${opts.batchSize}`.execute(trx);
    if (events.length === 0) return { ...none, ran: true };
    if (tracingOn()) for (const e of events) spans.set(e, dispatchSpan(e, started));

    const all = await candidatesFor(trx, events, opts, spans);
    // Cut after the last event whose immediate deliveries fit the room (the first event is always taken).
    let taken = events.length;
    if (opts.cutAtLeaseCount) {
      let immediate = 0;
      let e = 0;
      for (const c of all) {
        while (events[e] !== c.event) e++;
        if (c.immediate && ++immediate > opts.leaseCount && e > 0) {
          taken = e;
          break;
        }
      }
    }
    const takenEvents = new Set(events.slice(0, taken));
    // Events past the cut are dispatched by the next batch, under spans of their own.
    for (const e of events.slice(taken)) spans.delete(e);
    const candidates = all.filter((c) => takenEvents.has(c.event));
    const mine = new Set(candidates.filter((c) => c.immediate).slice(0, opts.leaseCount));
    const last = events[taken - 1];
    let batch: DispatchBatch | null = null;
    if (mine.size > 0) {
      const token = randomUUID();
      const { rows: batchRows } = await sql<{ id: string }>`
        insert into webhook_dispatch_batches (after_txid, after_seq, last_txid, last_seq, lease_token, lease_until)
        values (${cursor.last_txid}::xid8, ${cursor.last_seq}::bigint, ${last.txid_text}::xid8, ${last.seq_text}::bigint, ${token}::uuid,
          now() + ${opts.leaseMs} * interval '1 millisecond')
        returning id::text`.execute(trx);
      batch = { id: batchRows[0].id, token, deadline: started + opts.leaseMs, outstanding: 0, abandoned: false };
    }
    const inserted = await insertInvocations(trx, candidates, mine, opts);
    await sql`update webhook_dispatch_cursor set last_txid = ${last.txid_text}::xid8, last_seq = ${last.seq_text}::bigint, updated_on_utc = now() where id = 1`.execute(
      trx,
    );
    const deliveries: Delivery[] = [];
    let due = 0;
    for (const c of candidates) {
      if (!inserted.has(c.id)) continue;
      spans
        .get(c.event)
        ?.addEvent('invocation', { 'atrium.webhook.subscription.id': c.sub.id, 'atrium.webhook.destination': c.sub.is_automation ? 'automation' : 'url' });
      if (batch && mine.has(c)) deliveries.push(toDelivery(c, batch));
      else if (!c.sub.is_automation) due++;
    }
    if (batch) {
      batch.outstanding = deliveries.length;
      if (deliveries.length === 0) await sql`delete from webhook_dispatch_batches where id = ${batch.id}::bigint`.execute(trx);
    }
    // The event's time is its transaction's start: for the short transactions that write events, about its commit.
    const now = Date.now();
    for (let i = 0; i < taken; i++) outboxDispatchLag.observe(Math.max(0, now - events[i].occurred_on_utc.getTime()) / 1000);
    return { events: taken, due, deliveries, more: taken < events.length || events.length === opts.batchSize, ran: true };
  });
}

/**
 * Hands the invocations of one batch whose lease has lapsed (its worker died or lost touch) to the claim
 * path: those not settled yet become due now. Answers how many, or null when no batch has lapsed.
 */
export async function releaseLapsedBatch(db: Db): Promise<number | null> {
  return db.transaction().execute(async (trx) => {
    const { rows: lapsed } = await sql<{ after_txid: string; after_seq: string; last_txid: string; last_seq: string }>`
      delete from webhook_dispatch_batches
      where id = (select id from webhook_dispatch_batches where lease_until < now() order by id limit 1 for update skip locked)
      returning after_txid::text, after_seq::text, last_txid::text, last_seq::text`.execute(trx);
    if (lapsed.length === 0) return null;
    const b = lapsed[0];
    // Found by the unique (tenant, subscription, event) key, over every subscription of the events' tenants,
    // active or not: one may have been switched off since.
    const result = await sql`
      update webhook_invocations i set next_attempt_on_utc = now()
      from events e, webhook_subscriptions s
      where (e.txid, e.seq) > (${b.after_txid}::xid8, ${b.after_seq}::bigint) and (e.txid, e.seq) <= (${b.last_txid}::xid8, ${b.last_seq}::bigint)
        and s.tenant_id = e.tenant_id and i.tenant_id = e.tenant_id and i.subscription_id = s.id and i.event_id = e.id
        and ${sql.raw(AWAITING_BATCH)}`.execute(trx);
    return Number(result.numAffectedRows ?? 0);
  });
}

/** The span of one event's dispatch: a child of the span that appended it (its trace_context), started with the batch. */
function dispatchSpan(e: OutboxEvent, started: number): Span {
  return startSpan('webhook dispatch', {
    kind: SpanKind.PRODUCER,
    parent: contextOf(e.trace_context),
    startTime: started,
    attributes: {
      'atrium.tenant.id': e.tenant_id,
      'atrium.event.id': e.id,
      'atrium.event.action_type': e.action_type,
      'atrium.event.document_type': e.document_type,
    },
  }) as Span;
}

function toDelivery(c: Candidate, batch: DispatchBatch): Delivery {
  return {
    tenantId: c.event.tenant_id,
    id: c.id,
    subscriptionId: c.sub.id,
    payload: c.payload,
    url: c.sub.url as string,
    secret: c.sub.secret,
    attemptCount: 0,
    roundAttempts: 0,
    traceContext: c.traceContext,
    lease: { kind: 'batch', batch },
  };
}

/** Every (event, active subscription) that matches, in outbox order, with its payload. */
async function candidatesFor(
  trx: Db,
  events: OutboxEvent[],
  opts: Pick<DispatchOptions, 'publicUrl' | 'tenantHostPattern' | 'firstDelayMs'>,
  spans: Map<OutboxEvent, Span>,
): Promise<Candidate[]> {
  const tenants = [...new Set(events.map((e) => e.tenant_id))];
  const { rows: subs } = await sql<ActiveSubscription>`
    select s.tenant_id, s.id, s.action_type, s.document_type, s.business_object_type_name, s.url, s.secret, s.is_automation,
      coalesce((select jsonb_agg(jsonb_build_object('groupCondition', f.group_condition, 'jsonPathExpression', f.json_path_expression,
        'condition', f.condition, 'value', f.value) order by f.position)
        from webhook_detail_filters f where f.tenant_id = s.tenant_id and f.subscription_id = s.id), '[]'::jsonb) as detail_filters,
      (select t.slug from tenants t where t.id = s.tenant_id) as tenant_slug
    from webhook_subscriptions s
    where s.active and s.tenant_id = any(${tenants}::uuid[])`.execute(trx);
  const preferences = await loadPreferences(trx, subs);
  const out: Candidate[] = [];
  for (const event of events) {
    for (const sub of subs) {
      if (sub.tenant_id !== event.tenant_id) continue;
      const matched = matches(
        {
          active: true,
          actionType: sub.action_type,
          documentType: sub.document_type,
          businessObjectTypeName: sub.business_object_type_name,
          detailFilters: sub.detail_filters,
        },
        {
          actionType: event.action_type,
          documentType: event.document_type,
          businessObjectTypeName: event.business_object_type_name,
          detail: event.detail,
        },
        preferences(event.tenant_id),
      );
      if (!matched) continue;
      const payload = buildPayload(
        tenantBaseUrl(opts, sub.tenant_slug),
        {
          id: event.id,
          tenantId: event.tenant_id,
          actionType: event.action_type,
          documentType: event.document_type,
          documentId: event.document_id,
          businessObjectTypeName: event.business_object_type_name,
          detail: event.detail,
          occurredOnUtc: event.occurred_on_utc,
        },
        sub.id,
      );
      // Automation subscriptions keep their invocations for the automation engine (not delivered here).
      const immediate = !sub.is_automation && !!sub.url && opts.firstDelayMs === 0;
      out.push({ event, sub, id: randomUUID(), payload, immediate, traceContext: traceparentOf(spans.get(event)) });
    }
  }
  return out;
}

/**
 * The invocation rows, in one statement: those this worker delivers itself without a due time (outside the
 * due index, so no claim sees them, and settling them changes no indexed column), the others due after the
 * first delay (automation destinations: never). Answers the ids written: an existing (subscription, event)
 * is left as it is.
 */
async function insertInvocations(trx: Db, candidates: Candidate[], mine: Set<Candidate>, opts: Pick<DispatchOptions, 'firstDelayMs'>): Promise<Set<string>> {
  if (candidates.length === 0) return new Set();
  const rows = candidates.map((c) => ({
    tenant_id: c.event.tenant_id,
    id: c.id,
    subscription_id: c.sub.id,
    event_id: c.event.id,
    destination: c.sub.is_automation ? 'automation' : 'url',
    action_type: c.event.action_type,
    document_type: c.event.document_type,
    document_id: c.event.document_id,
    payload: c.payload,
    mine: mine.has(c),
    trace_context: c.traceContext,
  }));
  const { rows: created } = await sql<{ id: string }>`
    insert into webhook_invocations (tenant_id, id, subscription_id, event_id, destination, action_type, document_type, document_id, payload,
      next_attempt_on_utc, trace_context)
    select x.tenant_id, x.id, x.subscription_id, x.event_id, x.destination, x.action_type, x.document_type, x.document_id, x.payload,
      case when x.destination = 'url' and not x.mine then now() + ${opts.firstDelayMs} * interval '1 millisecond' end, x.trace_context
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(tenant_id uuid, id uuid, subscription_id uuid, event_id uuid, destination text,
      action_type text, document_type text, document_id uuid, payload text, mine boolean, trace_context text)
    on conflict (tenant_id, subscription_id, event_id) do nothing
    returning id`.execute(trx);
  return new Set(created.map((r) => r.id));
}

/** The system preferences the subscriptions' filters name, per tenant. */
async function loadPreferences(trx: Db, subs: ActiveSubscription[]): Promise<(tenantId: string) => PreferenceLookup> {
  const wanted = subs.flatMap((s) => preferenceReferences(s.detail_filters).map((r) => ({ tenant: s.tenant_id, ...r })));
  const values = new Map<string, string>();
  if (wanted.length > 0) {
    const { rows } = await sql<{ tenant_id: string; name: string; key: string; value: string | null }>`
      select tenant_id, name, key, value from system_preferences
      where (tenant_id, lower(name), lower(key)) in (select * from unnest(${wanted.map((w) => w.tenant)}::uuid[], ${wanted.map((w) => w.name.toLowerCase())}::text[], ${wanted.map((w) => w.key.toLowerCase())}::text[]))`.execute(
      trx,
    );
    for (const r of rows) values.set(`${r.tenant_id}/${r.name.toLowerCase()}/${r.key.toLowerCase()}`, r.value ?? '');
  }
  return (tenantId) => (name, key) => values.get(`${tenantId}/${name.toLowerCase()}/${key.toLowerCase()}`);
}
