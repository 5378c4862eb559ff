// An estimate's items and quote lines (details), and its totals. Totals are never stored: the view reads
// them through estimateAmounts, the one money rule the Data Extraction queries use (fragments.ts), so
// GET /api/v3/estimates/{id}, DE-Estimates and DE-EstimatesQuotes show the same cents.
import { sql } from 'kysely';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem } from '../../platform/errors.ts';
import { appendEvent, eventInsert, type NewEvent } from '../../platform/events/outbox.ts';
import { requireStageWrite, requireWrite } from '../documents/access.ts';
import { loadDocument } from '../documents/documents.ts';
import type { Row } from '../documents/registry.ts';
import type { ItemInput } from './estimate-schemas.ts';

import { estimate } from './estimate-type.ts';

type RefName = 'VatId' | 'ArticleId' | 'Id';

/**
 * 422 naming the first item whose reference matches no record (VatId, then ArticleId, then Id: an item of
 * this estimate). The three lists are checked in one round trip.
 */
async function checkReferences(trx: Trx, items: ItemInput[], estimateId: string): Promise<void> {
  const distinct = (name: RefName) => [
    ...new Set(
      items
        .map((x) => x[name])
        .filter((x): x is string => typeof x === 'string')
        .map((x) => x.toLowerCase()),
    ),
  ];
  const vats = distinct('VatId');
  const articles = distinct('ArticleId');
  const ids = distinct('Id');
  if (!vats.length && !articles.length && !ids.length) return;
  const { rows } = await sql<{ name: RefName; id: string }>`
    select 'VatId' as name, x as id from unnest(${vats}::uuid[]) x where not exists (select 1 from vats v where v.id = x)
    union all
    select 'ArticleId', x from unnest(${articles}::uuid[]) x where not exists (select 1 from services s where s.id = x)
    union all
    select 'Id', x from unnest(${ids}::uuid[]) x where not exists (select 1 from estimate_items i where i.id = x and i.estimate_id = ${estimateId})`.execute(
    trx,
  );
  for (const name of ['VatId', 'ArticleId', 'Id'] as const) {
    const unknown = new Set(rows.filter((r) => r.name === name).map((r) => r.id));
    if (!unknown.size) continue;
    const i = items.findIndex((x) => typeof x[name] === 'string' && unknown.has((x[name] as string).toLowerCase()));
    const ofEstimate = name === 'Id';
    throw new HttpProblem(422, `${name} ${items[i][name]} ${ofEstimate ? `is not an item of estimate ${estimateId}` : 'does not match any record'}.`, {
      errors: [{ path: `/body/${i}/${name}`, message: ofEstimate ? 'not an item of this estimate' : 'no such record' }],
    });
  }
}

/** An item as PUT …/items answers it: its id (new ones are made here), order and name. */
export interface PutItem {
  Id: string;
  Order: number;
  Name: string;
}

/**
 * Replaces the estimate's items with those sent, in order: an item with `Id` (one of this estimate's) is
 * changed and keeps its details; one without is added; the items not sent are removed with their details.
 * Each item's own income and cost (quantity × unit price, agency commission) are its item line, upserted on
 * the line's unique index, so one statement removes, writes, stamps the estimate and appends its Updated
 * event (Items, PropertyTypes); it answers the items in the order sent without reading them back.
 */
export async function putItems(trx: Trx, actor: Principal, estimateId: string, items: ItemInput[]): Promise<PutItem[]> {
  requireWrite(actor, estimate);
  const doc = await loadDocument(trx, estimate, estimateId);
  await requireStageWrite(trx, actor, doc.id, doc.stage);
  const seen = new Map<string, number>();
  items.forEach((x, i) => {
    const key = x.Id?.toLowerCase();
    if (!key) return;
    if (seen.has(key))
      throw new HttpProblem(422, `Item ${x.Id} is sent twice.`, { errors: [{ path: `/body/${i}/Id`, message: `same item as /body/${seen.get(key)}` }] });
    seen.set(key, i);
  });
  await checkReferences(trx, items, doc.id);
  const rows = items.map((x, i) => ({
    n: i,
    sent_id: x.Id?.toLowerCase() ?? null,
    ord: x.Order ?? i + 1,
    name: x.Name || x.Description || `Item ${i + 1}`,
    description: x.Description ?? null,
    vat_id: x.VatId?.toLowerCase() ?? null,
    service_id: x.ArticleId?.toLowerCase() ?? null,
    retainer: x.Retainer ?? false,
    approved: x.Approved ?? false,
    billed: x.Billed ?? false,
    acp: x.AgencyCommissionPercentage ?? 0,
    qi: x.QuantityIncome ?? 0,
    upi: x.UnitPriceIncome ?? 0,
    qc: x.QuantityCost ?? 0,
    upc: x.UnitPriceCost ?? 0,
    cdv: x.ClientDirectValue ?? 0,
  }));
  const { rows: written } = await sql<{ id: string; ord: number; name: string }>`
    with input as (
      select coalesce(r.sent_id, gen_random_uuid()) as id, r.n, r.ord, r.name, r.description, r.vat_id, r.service_id, r.retainer, r.approved,
             r.billed, r.acp, r.qi, r.upi, r.qc, r.upc, r.cdv
        from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(
        sent_id uuid, ord int, name text, description text, vat_id uuid, service_id uuid, retainer boolean, approved boolean, billed boolean,
        acp numeric, qi numeric, upi numeric, qc numeric, upc numeric, cdv numeric, n int)
    ), gone as (
      delete from estimate_items ei where ei.estimate_id = ${doc.id} and ei.id not in (select id from input)
    ), items as (
      insert into estimate_items (tenant_id, id, estimate_id, sort_order, name, description, service_id, vat_id, is_retainer, approved, billed,
                                  agency_commission_percentage, client_direct_value, created_by_id, modified_by_id)
      select ${actor.tenantId}, id, ${doc.id}, ord, name, description, service_id, vat_id, retainer, approved, billed, acp, cdv, ${actor.userId}, ${actor.userId}
        from input
      on conflict (tenant_id, id) do update set sort_order = excluded.sort_order, name = excluded.name, description = excluded.description,
        service_id = excluded.service_id, vat_id = excluded.vat_id, is_retainer = excluded.is_retainer, approved = excluded.approved,
        billed = excluded.billed, agency_commission_percentage = excluded.agency_commission_percentage,
        client_direct_value = excluded.client_direct_value, modified_on_utc = now(), modified_by_id = excluded.modified_by_id
      returning id
    ), lines as (
      insert into estimate_item_details (tenant_id, estimate_item_id, detail_type, is_item_line, description, service_id, quantity_income,
             unit_price_income, quantity_cost, unit_price_cost, agency_commission_value, created_by_id, modified_by_id)
      select ${actor.tenantId}, i.id, 1, true, i.description, i.service_id, i.qi, i.upi, i.qc, i.upc, round(i.qi * i.upi * i.acp / 100, 2),
             ${actor.userId}, ${actor.userId}
        from input i join items using (id)
      on conflict (tenant_id, estimate_item_id) where is_item_line do update set description = excluded.description,
        service_id = excluded.service_id, quantity_income = excluded.quantity_income, unit_price_income = excluded.unit_price_income,
        quantity_cost = excluded.quantity_cost, unit_price_cost = excluded.unit_price_cost, agency_commission_value = excluded.agency_commission_value,
        modified_on_utc = now(), modified_by_id = excluded.modified_by_id
    ), stamp as (
      update estimates set modified_on_utc = now(), modified_by_id = ${actor.userId} where id = ${doc.id}
    ), event as (${eventInsert(updatedEvent(actor, doc.id, { Items: items.length }, { Items: 'Int32' }))})
    select id, ord, name from input order by n`.execute(trx);
  return written.map((r) => ({ Id: r.id, Order: r.ord, Name: r.name }));
}

const updatedEvent = (actor: Principal, estimateId: string, detail: Row, types: Record<string, string>): NewEvent => ({
  tenantId: actor.tenantId,
  actionType: 'Updated',
  documentType: estimate.className,
  documentId: estimateId,
  detail: { ...detail, PropertyTypes: types },
  userId: actor.userId,
});

/** The estimate changed through its items or details: its modification stamp and an Updated event. */
export async function touch(trx: Trx, actor: Principal, estimateId: string, detail: Row, types: Record<string, string>): Promise<void> {
  await sql`update estimates set modified_on_utc = now(), modified_by_id = ${actor.userId} where id = ${estimateId}`.execute(trx);
  await appendEvent(trx, updatedEvent(actor, estimateId, detail, types));
}
