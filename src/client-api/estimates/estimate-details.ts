// Quote lines (details) of an estimate item on the data model's three sides (resource, third party,
// expense) and the estimate's billing conditions, which must add up to the estimate's income.
import { sql } from 'kysely';
import { estimateAmounts } from '../../domain/money.ts';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem } from '../../platform/errors.ts';
import { requireStageWrite, requireWrite } from '../documents/access.ts';
import { loadDocument } from '../documents/documents.ts';
import type { Row } from '../documents/registry.ts';
import { touch } from './estimate-items.ts';
import type { BillingConditionInput, DetailInput } from './estimate-schemas.ts';
import { estimate } from './estimate-type.ts';

export const DETAIL_SIDES = { resources: 0, thirdparty: 1, expenses: 2 } as const;
export type DetailSide = keyof typeof DETAIL_SIDES;

function constraint(err: unknown): never {
  const e = err as { code?: string; constraint?: string; detail?: string };
  if (e?.code === '23503') {
    const col = /\((?:tenant_id, )?(\w+)\)=/.exec(e.detail ?? '')?.[1] ?? 'reference';
    throw new HttpProblem(422, `${col} does not match any record.`, { errors: [{ path: `/body/${col}`, message: 'no such record' }] });
  }
  throw err;
}

/** The item's estimate, locked and writable by the actor. */
async function writableItem(trx: Trx, actor: Principal, itemId: string): Promise<{ estimateId: string; rateCardId: string | null; columnId: string | null }> {
  requireWrite(actor, estimate);
  const { rows } = await sql<{ estimate_id: string; rate_card_id: string | null; rate_card_column_id: string | null }>`
    select i.estimate_id, e.rate_card_id, e.rate_card_column_id from estimate_items i join estimates e on e.tenant_id = i.tenant_id and e.id = i.estimate_id
     where i.id = ${itemId.toLowerCase()}`.execute(trx);
  if (!rows[0])
    throw new HttpProblem(422, `EstimateItemId ${itemId} does not match any record.`, {
      errors: [{ path: '/body/EstimateItemId', message: 'no such record' }],
    });
  const doc = await loadDocument(trx, estimate, rows[0].estimate_id);
  await requireStageWrite(trx, actor, doc.id, doc.stage);
  return { estimateId: doc.id, rateCardId: rows[0].rate_card_id, columnId: rows[0].rate_card_column_id };
}

/**
 * A resource's hourly rate from the estimate's rate card column: the row of the user, else of the
 * typology group (the user's typology's, or the one sent), else of the department; null without one.
 */
async function rateOf(trx: Trx, columnId: string | null, who: { userId: string | null; groupId: string | null; departmentId: string | null }) {
  if (!columnId) return null;
  const { rows } = await sql<{ value: string }>`
    select v.value from rate_card_item_values v join rate_card_items ri on ri.tenant_id = v.tenant_id and ri.id = v.rate_card_item_id
     where v.rate_card_column_id = ${columnId}
       and (ri.user_id = ${who.userId} or (ri.user_id is null and ri.typology_group_id = ${who.groupId})
            or (ri.user_id is null and ri.typology_group_id is null and ri.department_id = ${who.departmentId}))
     order by (ri.user_id is not null) desc, (ri.typology_group_id is not null) desc limit 1`.execute(trx);
  return rows[0] ? Number(rows[0].value) : null;
}

/** Adds a quote line to an item; answers it. Resources take hours and, without a unit price, the rate card's rate. */
export async function addDetail(trx: Trx, actor: Principal, side: DetailSide, input: DetailInput): Promise<Row> {
  const item = await writableItem(trx, actor, input.EstimateItemId);
  let groupId = input.TypologyGroupId?.toLowerCase() ?? null;
  let departmentId = input.DepartmentId?.toLowerCase() ?? null;
  const userId = input.UserId?.toLowerCase() ?? null;
  let tableRate: number | null = null;
  if (side === 'resources') {
    if (!userId && !input.TypologyId && !groupId && !departmentId) {
      throw new HttpProblem(400, 'A resource names a UserId, a TypologyId, a TypologyGroupId or a DepartmentId.', {
        errors: [{ path: '/body/UserId', message: 'is required without a typology or department' }],
      });
    }
    const typologyId = input.TypologyId?.toLowerCase() ?? null;
    const { rows } = await sql<{ group_id: string | null; department_id: string | null }>`
      select coalesce(t.typology_group_id, tu.typology_group_id) as group_id, coalesce(t.department_id, u.department_id) as department_id
        from (select 1) one
        left join typologies t on t.id = ${typologyId}
        left join users u on u.id = ${userId}
        left join typologies tu on tu.id = u.typology_id`.execute(trx);
    if (typologyId && !rows[0]?.department_id && !rows[0]?.group_id) {
      throw new HttpProblem(422, `TypologyId ${input.TypologyId} does not match any record.`, {
        errors: [{ path: '/body/TypologyId', message: 'no such record' }],
      });
    }
    groupId ??= rows[0]?.group_id ?? null;
    departmentId ??= rows[0]?.department_id ?? null;
    tableRate = await rateOf(trx, item.columnId, { userId, groupId, departmentId });
  }
  const hours = input.Hours ?? null;
  const values = {
    qi: input.QuantityIncome ?? hours ?? 0,
    upi: input.UnitPriceIncome ?? tableRate ?? 0,
    qc: input.QuantityCost ?? hours ?? 0,
    upc: input.UnitPriceCost ?? 0,
  };
  try {
    const { rows } = await sql<{ id: string }>`
      insert into estimate_item_details (tenant_id, estimate_item_id, detail_type, description, supplier_id, service_id, department_id,
             typology_group_id, user_id, vat_id, quantity_income, unit_price_income, discount_income, quantity_cost, unit_price_cost,
             discount_cost, table_rate, created_by_id, modified_by_id)
      values (${actor.tenantId}, ${input.EstimateItemId.toLowerCase()}, ${DETAIL_SIDES[side]}, ${input.Description ?? null},
             ${input.SupplierId?.toLowerCase() ?? null}, ${input.ArticleId?.toLowerCase() ?? null}, ${departmentId}, ${groupId}, ${userId},
             ${input.VatCostId?.toLowerCase() ?? null}, ${values.qi}, ${values.upi}, ${input.DiscountIncome ?? 0}, ${values.qc}, ${values.upc},
             ${input.DiscountCost ?? 0}, ${tableRate}, ${actor.userId}, ${actor.userId})
      returning id`.execute(trx);
    await touch(trx, actor, item.estimateId, { EstimateItemDetailId: rows[0].id }, { EstimateItemDetailId: 'Guid' });
    return { Id: rows[0].id, EstimateId: item.estimateId, TableRate: tableRate };
  } catch (err) {
    constraint(err);
  }
}

const cents = (x: number): bigint => BigInt(Math.round(x * 100));

/**
 * Replaces an estimate's billing conditions with those sent (AmountType 0 percentage, 1 value). Together
 * they must come to the estimate's income without VAT, to the cent (percentages of it, rounded to cents
 * each, plus values): 422 with the expected and the reached amounts otherwise.
 */
export async function putBillingConditions(trx: Trx, actor: Principal, conditions: BillingConditionInput[]): Promise<Row[]> {
  const estimateId = conditions[0].EstimateId.toLowerCase();
  conditions.forEach((c, i) => {
    if (c.EstimateId.toLowerCase() !== estimateId) {
      throw new HttpProblem(422, 'All billing conditions of one call are of one estimate.', {
        errors: [{ path: `/body/${i}/EstimateId`, message: 'differs from the first' }],
      });
    }
    const byPercentage = (c.AmountType ?? 0) === 0;
    const needed = byPercentage ? 'Percentage' : 'Value';
    if ((byPercentage ? c.Percentage : c.Value) == null) {
      throw new HttpProblem(400, `${needed} is required with AmountType ${c.AmountType ?? 0}.`, {
        errors: [{ path: `/body/${i}/${needed}`, message: 'is required' }],
      });
    }
  });
  requireWrite(actor, estimate);
  // EstimateId is a reference in the body: an unknown one is a 422 naming it, as every other body reference.
  const doc = await loadDocument(trx, estimate, estimateId).catch((err: unknown) => {
    if (!(err instanceof HttpProblem && err.status === 404)) throw err;
    throw new HttpProblem(422, `EstimateId ${conditions[0].EstimateId} does not match any record.`, {
      errors: [{ path: '/body/0/EstimateId', message: 'no such record' }],
    });
  });
  await requireStageWrite(trx, actor, doc.id, doc.stage);
  const { rows } = await sql<{ sell: string }>`select t.sell from estimates e ${estimateAmounts('estimate', 'e.id', 't')} where e.id = ${doc.id}`.execute(trx);
  const total = cents(Number(rows[0].sell));
  const reached = conditions.reduce(
    (sum, c) => sum + ((c.AmountType ?? 0) === 0 ? (total * cents(c.Percentage ?? 0) + 5000n) / 10000n : cents(c.Value ?? 0)),
    0n,
  );
  if (reached !== total) {
    const show = (x: bigint) => (Number(x) / 100).toFixed(2);
    throw new HttpProblem(422, `The billing conditions come to ${show(reached)}, the estimate's income without VAT is ${show(total)}.`, {
      errors: [{ path: '/body', message: 'billing conditions must add up to the estimate’s total' }],
      extra: { expected: show(total), reached: show(reached) },
    });
  }
  await sql`delete from estimate_billing_conditions where estimate_id = ${doc.id}`.execute(trx);
  try {
    const inserted = await sql<{ row: Row }>`
      insert into estimate_billing_conditions (tenant_id, estimate_id, billing_client_id, payment_condition_id, condition_type, frequency,
             amount_type, percentage, value, your_reference, date, day_of_month, day_of_week, created_by_id, modified_by_id)
      select ${actor.tenantId}, ${doc.id}, r."BillingClientId", r."PaymentConditionId", coalesce(r."Type", 0), coalesce(r."Frequency", 0),
             coalesce(r."AmountType", 0), r."Percentage", r."Value", r."YourReference", r."Date", r."DayOfMonth", r."DayOfWeek",
             ${actor.userId}, ${actor.userId}
        from jsonb_to_recordset(${JSON.stringify(conditions)}::jsonb) as r("BillingClientId" uuid, "PaymentConditionId" uuid,
             "Type" int, "Frequency" int, "AmountType" int, "Percentage" numeric, "Value" numeric, "YourReference" text, "Date" date,
             "DayOfMonth" int, "DayOfWeek" int)
      returning jsonb_build_object('Id', id, 'EstimateId', estimate_id, 'BillingClientId', billing_client_id, 'PaymentConditionId', payment_condition_id,
             'Type', condition_type, 'Frequency', frequency, 'AmountType', amount_type, 'Percentage', percentage, 'Value', value,
             'YourReference', your_reference, 'Date', date, 'DayOfMonth', day_of_month, 'DayOfWeek', day_of_week) as row`.execute(trx);
    await touch(trx, actor, doc.id, { BillingConditions: conditions.length }, { BillingConditions: 'Int32' });
    return inserted.rows.map((r) => r.row);
  } catch (err) {
    constraint(err);
  }
}
