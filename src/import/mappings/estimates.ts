// The import's mappings of the estimate queries (src/extraction/queries/clients-and-finance/estimates.ts):
// estimates, their items and quote lines, the lines' monthly split and the billing conditions. The
// queries show amounts, not the VAT rows behind them: an item's (sell) and a line's (cost) VAT is the
// company's VAT whose rate gives the VAT value shown. A project or contract an estimate names that is not
// there yet is created from what the estimate shows of it (DE-Projects and DE-Contracts give them in full).
import { sql } from 'kysely';
import type { Trx } from '../../platform/db/database.ts';
import type { SourceRow } from '../client.ts';
import type { QueryImport, RunState, Values } from '../mappings.ts';
import { day, derivedId, id } from './helpers.ts';

interface Target {
  companyOfDepartment: Map<string, string>;
  workflowOfStage: Map<string, string>;
  vats: Map<string, { id: string; percentage: number }[]>;
}
const targets = new WeakMap<RunState, Target>();

/** The target's departments' companies, stages' workflows and VAT rates by company. */
async function loadTarget(trx: Trx, tenantId: string, state: RunState): Promise<void> {
  const [departments, stages, vats] = await Promise.all([
    sql<{ id: string; company_id: string }>`select id, company_id from departments where tenant_id = ${tenantId}`.execute(trx),
    sql<{ id: string; workflow_id: string }>`select id, workflow_id from workflow_stages where tenant_id = ${tenantId}`.execute(trx),
    sql<{ id: string; company_id: string; percentage: string }>`
      select id, company_id, percentage from vats where tenant_id = ${tenantId} order by percentage, id`.execute(trx),
  ]);
  const byCompany = new Map<string, { id: string; percentage: number }[]>();
  for (const v of vats.rows) byCompany.set(v.company_id, [...(byCompany.get(v.company_id) ?? []), { id: v.id, percentage: Number(v.percentage) }]);
  targets.set(state, {
    companyOfDepartment: new Map(departments.rows.map((r) => [r.id, r.company_id])),
    workflowOfStage: new Map(stages.rows.map((r) => [r.id, r.workflow_id])),
    vats: byCompany,
  });
}

const num = (v: unknown): number => Number(v ?? 0);
const cents = (v: number): number => Math.round(v * 100) / 100;
/** `Number - Name` (a numbered document's label) back to the name. */
const nameOf = (label: unknown, number: unknown): unknown =>
  typeof label === 'string' && typeof number === 'string' && label.startsWith(`${number} - `) ? label.slice(number.length + 3) : label;

/** The company's VAT whose rate turns `net` into `vat` (rounded to cents per line); null when the VAT is 0. */
function vatFor(state: RunState, companyId: string | null, net: unknown, vat: unknown): string | null {
  if (num(vat) === 0) return null;
  const rates = targets.get(state)?.vats.get(String(companyId)) ?? [];
  return rates.find((r) => cents((num(net) * r.percentage) / 100) === cents(num(vat)))?.id ?? null;
}

const companyOf = (r: SourceRow, s: RunState): string | null => targets.get(s)?.companyOfDepartment.get(String(r.DepartmentId)) ?? null;

/** The project an estimate row names, for insertMissing (its other columns come with DE-Projects). */
function projectOf(r: SourceRow, s: RunState): Values | null {
  const company = companyOf(r, s);
  if (!company || !id(r.ClientId) || !id(r.ProjectId)) return null;
  const number = String(r.Project ?? '').split(' - ')[0];
  return { id: r.ProjectId, number, name: nameOf(r.Project, number), commercial_client_id: r.ClientId, company_id: company };
}

/** The contract an estimate row names (its own, or its project's in DE-EstimatesQuotes), for insertMissing. */
function contractOf(r: SourceRow, s: RunState): Values | null {
  const company = companyOf(r, s);
  if (!company || !id(r.ClientId) || !id(r.ContractId)) return null;
  const number = String(r.Contract ?? '').split(' - ')[0];
  return { id: r.ContractId, number, name: nameOf(r.Contract, number), commercial_client_id: r.ClientId, company_id: company };
}

/** An estimate's columns every estimate query shows. */
const estimateCore = (r: SourceRow, s: RunState): Values => ({
  id: r.EstimateId,
  name: nameOf(r.Estimate, r.EstimateNumber),
  number: r.EstimateNumber,
  department_id: r.DepartmentId,
  stage_id: r.StageId,
  workflow_id: id(r.StageId) ? (targets.get(s)?.workflowOfStage.get(String(r.StageId)) ?? null) : null,
  commercial_client_id: r.ClientId,
  project_id: r.ProjectId,
  product_id: r.ProductId,
  currency_id: r.CurrencyId,
  exchange: r.Exchange,
});

export const ESTIMATE_IMPORTS: QueryImport[] = [
  {
    // Estimates that are neither Draft nor Canceled, in full; the others come with their quote lines.
    namedQuery: 'DE-Estimates',
    key: ['EstimateId'],
    modifiedFrom: true,
    before: loadTarget,
    writes: [
      { table: 'projects', mode: 'insertMissing', values: projectOf },
      { table: 'contracts', mode: 'insertMissing', values: contractOf },
      {
        table: 'estimates',
        values: (r, s) => ({
          ...estimateCore(r, s),
          modified_on_utc: r.ModifiedOn,
          type_id: r.TypeId,
          contract_id: r.ContractId,
          date: day(r.StartDate),
          expiration_date: day(r.EndDate),
          rate_card_id: r.RateCardId,
          rate_card_column_id: r.RateCardColumnId,
          tags: typeof r.Tags === 'string' && r.Tags ? r.Tags.split(', ') : null,
        }),
      },
    ],
  },
  {
    // One row per quote line, with its item and estimate (Draft and Canceled estimates too).
    namedQuery: 'DE-EstimatesQuotes',
    key: ['EstimateItemDetailId'],
    before: loadTarget,
    writes: [
      { table: 'projects', mode: 'insertMissing', values: projectOf },
      { table: 'contracts', mode: 'insertMissing', values: contractOf },
      // An estimate DE-Estimates leaves out (Draft, Canceled): the contract shown is its own or its project's.
      {
        table: 'estimates',
        mode: 'insertMissing',
        values: (r, s) => ({ ...estimateCore(r, s), modified_on_utc: r.ModifiedOn, contract_id: r.ContractId }),
      },
      {
        table: 'estimate_items',
        values: (r, s) => ({
          id: r.EstimateItemId,
          estimate_id: r.EstimateId,
          name: r.EstimateItem,
          description: r.EstimateItemDescription,
          service_id: r.EstimateItemServiceId,
          is_retainer: r.EstimateItemRetainer,
          quantity: r.EstimateItemQuantityIncome,
          client_direct_value: r.EstimateItemClientDirectTotal,
          vat_id: vatFor(s, companyOf(r, s), r.EstimateItemValueWithoutVatIncome, r.EstimateItemVatValueIncome),
        }),
      },
      {
        table: 'estimate_item_details',
        complete: { scope: 'all' },
        values: (r, s) => ({
          id: r.EstimateItemDetailId,
          estimate_item_id: r.EstimateItemId,
          description: r.EstimateItemDetailDescription,
          supplier_id: r.SupplierId,
          service_id: r.ServiceId,
          detail_type: r.EstimateItemDetailType,
          department_id: r.EstimateItemDetailDepartmentId,
          typology_group_id: r.EstimateItemDetailTypologyGroupId,
          user_id: r.EstimateItemDetailUserId,
          table_rate: r.EstimateItemDetailTableRate,
          unit_price_cost: r.EstimateItemDetailUnitPriceCost,
          // Income is the unit price × the sold quantity: the unit price is that back.
          unit_price_income: num(r.QuantityIncome) === 0 ? 0 : Math.round((num(r.EstimateItemDetailIncome) / num(r.QuantityIncome)) * 10000) / 10000,
          discount_cost: r.DiscountCost,
          quantity_cost: r.QuantityCost,
          discount_income: r.DiscountIncome,
          quantity_income: r.QuantityIncome,
          agency_commission_value: r.AgencyCommissionValue,
          vat_id: vatFor(s, companyOf(r, s), r.ValueWithoutVatCost, r.VatValueCost),
        }),
      },
    ],
  },
  {
    // The monthly split of resource lines (of estimates neither Draft nor Canceled).
    namedQuery: 'DE-EstimatesQuotesMonth',
    key: ['EstimateItemDetailId', 'EstimateItemDetailMonth'],
    writes: [
      {
        table: 'estimate_item_detail_months',
        // Only the months this query shows: DE-ProjectsPlannedTime gives back the hours of other lines' months.
        complete: { scope: 'shownEstimateMonths' },
        values: (r) =>
          day(r.EstimateItemDetailMonth)
            ? {
                id: derivedId('estimate_item_detail_months', r.EstimateItemDetailId, day(r.EstimateItemDetailMonth)),
                estimate_item_detail_id: r.EstimateItemDetailId,
                month: day(r.EstimateItemDetailMonth),
                hours: r.EstimateItemDetailTime,
                cost: r.EstimateItemDetailCost,
                income: r.EstimateItemDetailIncome,
              }
            : null,
      },
    ],
  },
  {
    namedQuery: 'DE-EstimatesBillingConditions',
    key: ['BillingConditionId'],
    writes: [
      {
        table: 'payment_conditions',
        mode: 'insertMissing',
        values: (r) => (id(r.PaymentConditionId) && id(r.CompanyId) ? { id: r.PaymentConditionId, name: r.PaymentCondition, company_id: r.CompanyId } : null),
      },
      {
        // BillingClient is `name (external id)`.
        table: 'billing_clients',
        mode: 'insertMissing',
        values: (r) => {
          if (!id(r.BillingClientId) || typeof r.BillingClient !== 'string') return null;
          const m = /^(.*) \(([^()]*)\)$/.exec(r.BillingClient);
          return { id: r.BillingClientId, name: m ? m[1] : r.BillingClient, external_id: m ? m[2] : null, company_id: r.CompanyId };
        },
      },
      {
        table: 'estimate_billing_conditions',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.BillingConditionId,
          estimate_id: r.EstimateId,
          billing_client_id: r.BillingClientId,
          condition_type: r.Type,
          frequency: r.Frequency,
          payment_condition_id: r.PaymentConditionId,
          amount_type: r.AmountType,
          percentage: r.Percentage,
          value: r.Value,
          your_reference: r.YourReference,
          date: day(r.Date),
          day_of_month: r.DayOfMonth,
          day_of_week: r.DayOfWeek,
        }),
      },
    ],
  },
];
