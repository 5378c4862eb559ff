// The dispatcher: walks the event outbox and makes one invocation per (event, matching subscription).
// One row-locked cursor serialises dispatchers across worker processes, and the invocations' unique
// (subscription, event) key backs it up: an event is dispatched exactly once however many workers run.
import { randomUUID } from 'node:crypto';
import { type Kysely, sql } from 'kysely';
import type { Database } from '../platform/db/schema.ts';
import { buildPayload } from './invocations.ts';
import { type DetailFilter, matches, type PreferenceLookup, preferenceReferences } from './match.ts';

export interface DispatchOptions {
  publicUrl: string;
  batchSize: number;
  /** Delay of the first attempt (the retry schedule's first entry). */
  firstDelayMs: number;
  /** Invocations this process may lease for itself at once (free delivery slots). */
  leaseCount: number;
  leaseMs: number;
}

/** An invocation leased to this process by the dispatcher, ready to deliver without another poll. */
export interface LeasedInvocation {
  tenantId: string;
  id: string;
  subscriptionId: string;
  payload: string;
  url: string;
  secret: string;
  attemptCount: number;
  roundAttempts: number;
  leaseToken: string;
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
}

export interface DispatchResult {
  events: number;
  invocations: number;
  leased: LeasedInvocation[];
  /** false when another process holds the cursor. */
  ran: boolean;
}

export async function dispatchOnce(db: Kysely<Database>, opts: DispatchOptions): Promise<DispatchResult> {
  return db.transaction().execute(async (trx) => {
    // Taken before anything else in this transaction: every transaction older than this horizon
    // has finished, so its events are all visible now and none can appear below it later.
    const { rows: horizonRows } = await sql<{ xmin: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as xmin`.execute(trx);
    const horizon = horizonRows[0].xmin;
    const { rows: cursorRows } = await sql<{ last_txid: string; last_seq: string }>`
      select last_txid::text, last_seq::text from webhook_dispatch_cursor where id = 1 for update skip locked`.execute(trx);
    if (cursorRows.length === 0) return { events: 0, invocations: 0, leased: [], ran: false };
    const cursor = cursorRows[0];
    const { rows: events } = await sql<OutboxEvent>`
      select e.tenant_id, e.id, e.seq::text as seq_text, e.txid::text as txid_text, e.action_type, e.document_type, e.document_id,
        e.business_object_type_name, e.detail, e.occurred_on_utc
      from events e
      where (e.txid, e.seq) > (${cursor.last_txid}::xid8, ${cursor.last_seq}::bigint) and e.txid < ${horizon}::xid8
      -- the columns themselves: ordering by the text output names would be lexicographic
      order by e.txid, e.seq
      limit ${opts.batchSize}`.execute(trx);
    if (events.length === 0) return { events: 0, invocations: 0, leased: [], ran: true };

    const tenants = [...new Set(events.map((e) => e.tenant_id))];
    const { rows: subs } = await sql<ActiveSubscription>`
      select s.tenant_id, s.id, s.action_type, s.document_type, s.business_object_type_name, s.url, s.secret, s.is_automation,
        coalesce((select jsonb_agg(jsonb_build_object('groupCondition', f.group_condition, 'jsonPathExpression', f.json_path_expression,
          'condition', f.condition, 'value', f.value) order by f.position)
          from webhook_detail_filters f where f.tenant_id = s.tenant_id and f.subscription_id = s.id), '[]'::jsonb) as detail_filters
      from webhook_subscriptions s
      where s.active and s.tenant_id = any(${tenants}::uuid[])`.execute(trx);
    const preferences = await loadPreferences(trx, subs);

    const rows: Record<string, unknown>[] = [];
    const leaseable: { row: Record<string, unknown>; sub: ActiveSubscription }[] = [];
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
          opts.publicUrl,
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
        const row: Record<string, unknown> = {
          tenant_id: event.tenant_id,
          id: randomUUID(),
          subscription_id: sub.id,
          event_id: event.id,
          destination: sub.is_automation ? 'automation' : 'url',
          action_type: event.action_type,
          document_type: event.document_type,
          document_id: event.document_id,
          payload,
          lease_token: null,
        };
        rows.push(row);
        if (!sub.is_automation && sub.url && opts.firstDelayMs === 0) leaseable.push({ row, sub });
      }
    }

    const leased: LeasedInvocation[] = [];
    for (const { row, sub } of leaseable.slice(0, opts.leaseCount)) {
      row.lease_token = randomUUID();
      leased.push({
        tenantId: row.tenant_id as string,
        id: row.id as string,
        subscriptionId: sub.id,
        payload: row.payload as string,
        url: sub.url as string,
        secret: sub.secret,
        attemptCount: 0,
        roundAttempts: 0,
        leaseToken: row.lease_token as string,
      });
    }
    let inserted = new Set<string>();
    if (rows.length > 0) {
      const { rows: created } = await sql<{ id: string }>`
        insert into webhook_invocations (tenant_id, id, subscription_id, event_id, destination, action_type, document_type, document_id, payload,
          next_attempt_on_utc, lease_token, lease_until)
        select x.tenant_id, x.id, x.subscription_id, x.event_id, x.destination, x.action_type, x.document_type, x.document_id, x.payload,
          case when x.destination = 'url' then now() + ${opts.firstDelayMs} * interval '1 millisecond' end,
          x.lease_token, case when x.lease_token is not null then now() + ${opts.leaseMs} * interval '1 millisecond' end
        from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(tenant_id uuid, id uuid, subscription_id uuid, event_id uuid, destination text,
          action_type text, document_type text, document_id uuid, payload text, lease_token uuid)
        on conflict (tenant_id, subscription_id, event_id) do nothing
        returning id`.execute(trx);
      inserted = new Set(created.map((r) => r.id));
    }
    const last = events[events.length - 1];
    await sql`update webhook_dispatch_cursor set last_txid = ${last.txid_text}::xid8, last_seq = ${last.seq_text}::bigint, updated_on_utc = now() where id = 1`.execute(
      trx,
    );
    return { events: events.length, invocations: inserted.size, leased: leased.filter((l) => inserted.has(l.id)), ran: true };
  });
}

/** The system preferences the subscriptions' filters name, per tenant. */
async function loadPreferences(trx: Kysely<Database>, subs: ActiveSubscription[]): Promise<(tenantId: string) => PreferenceLookup> {
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
