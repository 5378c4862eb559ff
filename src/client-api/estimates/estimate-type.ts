// The Estimate document type of the Client API: the older published model names mapped onto the data
// model's columns, its defaults (department from the acting user; client and currency from the project or
// contract, else the company's currency, else the department's company's) and a copy from EstimateCopyId (items, quote lines, billing
// conditions). Listed with the other types (../document-type-list.ts), so v3 creates, posts and custom fields find it.
import { sql } from 'kysely';
import { HttpProblem } from '../../platform/errors.ts';
import { departmentDefault } from '../documents/document-types.ts';
import { departmentField, guidField, nameAndNumber } from '../documents/fields.ts';
import { defineDocument, type Row, type WriteHookArgs } from '../documents/registry.ts';
import { estimateContents } from './estimate-contents.ts';

function noRecord(path: string, name: string, value: unknown): HttpProblem {
  return new HttpProblem(422, `${name} ${value} does not match any record.`, { errors: [{ path: `${path}/${name}`, message: 'no such record' }] });
}

async function estimateDefaults(a: WriteHookArgs): Promise<void> {
  await departmentDefault(a);
  if (a.before) return;
  const v = a.values;
  const owner =
    typeof v.project_id === 'string'
      ? await a.trx
          .selectFrom('projects')
          .select(['commercial_client_id', 'currency_id', 'contract_id', 'product_id', 'brand_id', 'company_id'])
          .where('id', '=', v.project_id)
          .executeTakeFirst()
      : undefined;
  if (typeof v.project_id === 'string' && !owner) throw noRecord(a.path, 'ProjectId', v.project_id);
  const contract =
    typeof v.contract_id === 'string'
      ? await a.trx
          .selectFrom('contracts')
          .select(['commercial_client_id', 'currency_id', 'product_id', 'brand_id', 'company_id'])
          .where('id', '=', v.contract_id)
          .executeTakeFirst()
      : undefined;
  if (typeof v.contract_id === 'string' && !contract) throw noRecord(a.path, 'ContractId', v.contract_id);
  for (const from of [owner, contract]) {
    if (!from) continue;
    v.commercial_client_id ??= from.commercial_client_id;
    v.currency_id ??= from.currency_id;
    v.product_id ??= from.product_id;
    v.brand_id ??= from.brand_id;
  }
  if (owner?.contract_id) v.contract_id ??= owner.contract_id;
  const companyId = a.model.CompanyId ?? owner?.company_id ?? contract?.company_id;
  if (v.currency_id === undefined && typeof companyId === 'string') {
    const co = await a.trx.selectFrom('companies').select('currency_id').where('id', '=', companyId.toLowerCase()).executeTakeFirst();
    if (!co) throw noRecord(a.path, 'CompanyId', companyId);
    v.currency_id = co.currency_id;
  }
  // Neither project, contract nor company given (the Estimate post of the docs): the department's company's.
  if (v.currency_id === undefined && typeof v.department_id === 'string') {
    const dep = await a.trx
      .selectFrom('departments as d')
      .innerJoin('companies as c', 'c.id', 'd.company_id')
      .select('c.currency_id')
      .where('d.id', '=', v.department_id)
      .executeTakeFirst();
    if (dep) v.currency_id = dep.currency_id;
  }
}

/** EstimateCopyId: the source's items, their quote lines and monthly splits, and its billing conditions. */
async function copyFrom(a: WriteHookArgs & { id: string }): Promise<void> {
  const source = a.model.EstimateCopyId;
  if (a.before || typeof source !== 'string') return;
  const src = source.toLowerCase();
  const found = await a.trx.selectFrom('estimates').select('id').where('id', '=', src).executeTakeFirst();
  if (!found) throw noRecord(a.path, 'EstimateCopyId', source);
  await sql`
    with items as (
      select ei.id as old_id, gen_random_uuid() as new_id, ei.* from estimate_items ei where ei.estimate_id = ${src}
    ), new_items as (
      insert into estimate_items (tenant_id, id, estimate_id, sort_order, name, description, service_id, vat_id, is_retainer, quantity,
                                  client_direct_value, approved, billed, agency_commission_percentage, created_by_id, modified_by_id)
      select tenant_id, new_id, ${a.id}, sort_order, name, description, service_id, vat_id, is_retainer, quantity,
             client_direct_value, false, false, agency_commission_percentage, ${a.actor.userId}, ${a.actor.userId} from items
    ), details as (
      select d.id as old_id, gen_random_uuid() as new_id, i.new_id as item_id, d.* from estimate_item_details d join items i on i.old_id = d.estimate_item_id
    ), new_details as (
      insert into estimate_item_details (tenant_id, id, estimate_item_id, detail_type, description, supplier_id, service_id, department_id,
             typology_group_id, user_id, vat_id, quantity_cost, unit_price_cost, discount_cost, quantity_income, unit_price_income,
             discount_income, agency_commission_value, table_rate, is_item_line, created_by_id, modified_by_id)
      select tenant_id, new_id, item_id, detail_type, description, supplier_id, service_id, department_id, typology_group_id, user_id, vat_id,
             quantity_cost, unit_price_cost, discount_cost, quantity_income, unit_price_income, discount_income, agency_commission_value,
             table_rate, is_item_line, ${a.actor.userId}, ${a.actor.userId} from details
    ), months as (
      insert into estimate_item_detail_months (tenant_id, estimate_item_detail_id, month, hours, cost, income, created_by_id, modified_by_id)
      select m.tenant_id, d.new_id, m.month, m.hours, m.cost, m.income, ${a.actor.userId}, ${a.actor.userId}
        from estimate_item_detail_months m join details d on d.old_id = m.estimate_item_detail_id
    )
    insert into estimate_billing_conditions (tenant_id, estimate_id, billing_client_id, payment_condition_id, condition_type, frequency,
           amount_type, percentage, value, your_reference, date, day_of_month, day_of_week, created_by_id, modified_by_id)
    select tenant_id, ${a.id}, billing_client_id, payment_condition_id, condition_type, frequency, amount_type, percentage, value,
           your_reference, date, day_of_month, day_of_week, ${a.actor.userId}, ${a.actor.userId}
      from estimate_billing_conditions where estimate_id = ${src}`.execute(a.trx);
}

export const estimate = defineDocument({
  type: 'Estimate',
  className: 'Estimate',
  aliases: [],
  table: 'estimates',
  roles: { read: 'EstimateRead', write: 'EstimateWrite' },
  numberPrefix: 'EST',
  typeColumn: 'type_id',
  departmentColumn: 'department_id',
  fields: [
    ...nameAndNumber('EST'),
    departmentField,
    { ...guidField('ClientId', 'commercial_client_id', 'The commercial client (default: the project’s or contract’s)'), required: true },
    guidField('ProjectId', 'project_id'),
    guidField('ContractId', 'contract_id', 'Default: the project’s contract'),
    guidField('JobTypeId', 'type_id', 'A type (job_types) of document type Estimate; its workflow is the estimate’s'),
    guidField('BrandId', 'brand_id'),
    guidField('ProductId', 'product_id'),
    { ...guidField('CurrencyId', 'currency_id', 'Default: the project’s or contract’s, else the company’s, else the department’s company’s'), required: true },
    { name: 'Exchange', column: 'exchange', kind: 'double', notNull: true, description: 'Rate from the estimate’s currency to the company’s (default 1)' },
    guidField('RateCardId', 'rate_card_id', 'The rate card of resource details'),
    guidField('RateCardColumnId', 'rate_card_column_id'),
    { name: 'Date', column: 'date', kind: 'date', aliases: ['StartDate'] },
    { name: 'Expiration', column: 'expiration_date', kind: 'date', aliases: ['EndDate'] },
  ],
  extras: [
    guidField('CompanyId', '', 'Gives the currency when neither project nor contract does (not stored)'),
    guidField('EstimateCopyId', '', 'Copy the items, quote lines and billing conditions of this estimate'),
    { name: 'IsDraft', column: '', kind: 'bool', description: 'A new estimate starts in its workflow’s initial stage either way' },
  ],
  prepare: estimateDefaults,
  finish: copyFrom,
  view: async (trx, row) => {
    const { rows } = await sql<{ list: Row[] }>`
      select coalesce(jsonb_agg(jsonb_build_object('Id', id, 'BillingClientId', billing_client_id, 'PaymentConditionId', payment_condition_id,
             'Type', condition_type, 'Frequency', frequency, 'AmountType', amount_type, 'Percentage', percentage, 'Value', value,
             'YourReference', your_reference, 'Date', date, 'DayOfMonth', day_of_month, 'DayOfWeek', day_of_week) order by created_on_utc, id), '[]') as list
        from estimate_billing_conditions where estimate_id = ${row.id}`.execute(trx);
    return { ...(await estimateContents(trx, String(row.id))), BillingConditions: rows[0].list };
  },
});
