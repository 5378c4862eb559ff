// The import's mappings of the finance queries (the inverse of src/extraction/queries/clients-and-finance/
// and DE-RateCardsColumns): expense types, suppliers and the payment conditions they show, rate cards.
// Where a query names a row instead of giving its id (an expense type's VAT, a supplier's country), the
// id is looked up by name among the target's rows an earlier query wrote (`before`, in the query's own
// transaction, so a resumed run finds them too).
import { sql } from 'kysely';
import type { Trx } from '../../platform/db/database.ts';
import type { SourceRow } from '../client.ts';
import type { QueryImport, RunState } from '../mappings.ts';
import { ESTIMATE_IMPORTS } from './estimates.ts';
import { day, id } from './helpers.ts';

/** Ids of the target's rows by name (`vat\u0000{company}\u0000{name}`, `country\u0000{name}`), per run. */
const byName = new WeakMap<RunState, Map<string, string>>();
const named = (state: RunState, ...key: unknown[]): string | null => byName.get(state)?.get(key.map(String).join('\u0000')) ?? null;

/** Loads the target's VATs (by company and name) and countries (by name): what DE-ExpenseType and DE-Suppliers name. */
async function loadNames(trx: Trx, tenantId: string, state: RunState): Promise<void> {
  const rows = await sql<{ kind: string; company_id: string | null; name: string; id: string }>`
    select 'vat' as kind, company_id, name, id from vats where tenant_id = ${tenantId}
    union all
    select 'country', null, name, id from countries where tenant_id = ${tenantId}`.execute(trx);
  const names = new Map<string, string>();
  for (const r of rows.rows) names.set(r.kind === 'vat' ? [r.kind, r.company_id, r.name].join('\u0000') : [r.kind, r.name].join('\u0000'), r.id);
  byName.set(state, names);
}

/** A payment condition a row shows (id and name), kept with the company of the row that uses it. */
const paymentCondition = (r: SourceRow, companyId: unknown) =>
  id(r.PaymentConditionId) && id(companyId) ? { id: r.PaymentConditionId, name: r.PaymentCondition, company_id: companyId } : null;

/** A money figure the query shows, as a number of 4 decimals (the stored numeric's scale). */
const money = (v: unknown): number => Math.round(Number(v ?? 0) * 10000) / 10000;

interface SheetOfTarget {
  id: string;
  companyId: string;
  createdById: string | null;
  createdOn: number;
}
/** Per run: each company's currency and a user of it (DE-ExpenseSheets), the target's expense sheets (DE-Expenses). */
const companiesOf = new WeakMap<RunState, Map<string, { currencyId: string; userId: string | null }>>();
const sheetsOf = new WeakMap<RunState, SheetOfTarget[]>();

async function loadCompanies(trx: Trx, tenantId: string, state: RunState): Promise<void> {
  const rows = await sql<{ id: string; currency_id: string; user_id: string | null }>`
    select co.id, co.currency_id, (select min(u.id::text) from users u where u.tenant_id = co.tenant_id and u.company_id = co.id) as user_id
      from companies co where co.tenant_id = ${tenantId}`.execute(trx);
  companiesOf.set(state, new Map(rows.rows.map((r) => [r.id, { currencyId: r.currency_id, userId: r.user_id }])));
}

async function loadSheets(trx: Trx, tenantId: string, state: RunState): Promise<void> {
  const rows = await sql<{ id: string; company_id: string; created_by_id: string | null; created_on_utc: Date }>`
    select id, company_id, created_by_id, created_on_utc from expense_sheets where tenant_id = ${tenantId} order by id`.execute(trx);
  sheetsOf.set(
    state,
    rows.rows.map((r) => ({ id: r.id, companyId: r.company_id, createdById: r.created_by_id, createdOn: new Date(r.created_on_utc).getTime() })),
  );
}

/**
 * The sheet an expense item belongs to, which DE-Expenses does not show: of the sheets of its company, the
 * one its creator created closest in time (items are created with their sheet, by the sheet's user), else
 * the company's sheet created closest in time.
 */
function sheetOf(r: SourceRow, state: RunState): string | null {
  const created = Date.parse(String(r.CreatedOnUtc));
  let best: SheetOfTarget | null = null;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const sh of sheetsOf.get(state) ?? []) {
    if (sh.companyId !== r.CompanyId) continue;
    const score = (sh.createdById === r.CreatedById ? 0 : 1e15) + Math.abs(sh.createdOn - created);
    if (score < bestScore) [best, bestScore] = [sh, score];
  }
  return best?.id ?? null;
}

export const FINANCE_IMPORTS: QueryImport[] = [
  {
    namedQuery: 'DE-ExpenseType',
    key: ['ExpenseTypeId'],
    before: loadNames,
    writes: [
      {
        // Whether a type is mileage is shown by no query (docs/import.md).
        table: 'expense_types',
        complete: { scope: 'all' },
        values: (r, s) => ({
          id: r.ExpenseTypeId,
          name: r.ExpenseType,
          company_id: r.CompanyId,
          vat_id: r.Vat === null || r.Vat === undefined ? null : named(s, 'vat', r.CompanyId, r.Vat),
          external_id: r.ExternalId,
          vat_deductible_percentage: r.VatDeductiblePercentage,
          value: r.Value,
          is_active: r.Active,
          created_on_utc: r.CreatedOnUtc,
          modified_on_utc: r.ModifiedOnUtc,
          created_by_id: r.CreatedById,
          modified_by_id: r.ModifiedById,
        }),
      },
    ],
  },
  {
    namedQuery: 'DE-Suppliers',
    key: ['SupplierId'],
    before: loadNames,
    writes: [
      // Payment conditions show only their id and name where they are used; the company is the supplier's.
      { table: 'payment_conditions', mode: 'insertMissing', values: (r) => paymentCondition(r, r.CompanyId) },
      {
        // The city is kept as its name (the query shows the city's name, or the supplier's own city text).
        table: 'suppliers',
        complete: { scope: 'all' },
        values: (r, s) => ({
          id: r.SupplierId,
          name: r.Supplier,
          company_id: r.CompanyId,
          department_id: r.DepartmentId,
          currency_id: r.CurrencyId,
          vat_id: r.VatId,
          external_id: r.ExternalId,
          is_active: r.IsActive,
          payment_condition_id: r.PaymentConditionId,
          category: r.Category,
          created_by_id: r.CreatedById,
          modified_by_id: r.ModifiedById,
          created_on_utc: r.CreatedOnUtc,
          modified_on_utc: r.ModifiedOnUtc,
          email: r.Mail,
          remarks: r.Remarks,
          discount_percentage: r.DiscountPercentage,
          volume_discount_percentage: r.VolumeDiscountPercentage,
          other_creditor: r.OtherCreditor,
          street: r.Street,
          tax_payer_number: r.TaxPayerNumber,
          related_department_id: r.RelatedDepartmentId,
          related_company_id: r.RelatedCompanyId,
          country_id: r.Country === null || r.Country === undefined ? null : named(s, 'country', r.Country),
          city: r.City,
          city_id: null,
        }),
      },
    ],
  },
  {
    // One row per cell of a rate card holding a rate: the card, its column, its row and the cell.
    namedQuery: 'DE-RateCardsColumns',
    key: ['RateCardColumnId', 'RateCardItemId'],
    writes: [
      // Cards and columns without a rate show in no row: they are upserted, never deleted as unseen.
      {
        table: 'rate_cards',
        values: (r) => ({ id: r.RateCardId, name: r.RateCard, company_id: r.CompanyId, currency_id: r.CurrencyId }),
      },
      {
        table: 'rate_card_columns',
        values: (r) => ({
          id: r.RateCardColumnId,
          name: r.RateCardColumn,
          rate_card_id: r.RateCardId,
          is_active: r.Active,
          start_date: day(r.StartDate),
          end_date: day(r.EndDate),
        }),
      },
      {
        table: 'rate_card_items',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.RateCardItemId,
          rate_card_id: r.RateCardId,
          department_id: r.RateCardItemDepartmentId,
          typology_group_id: r.RateCardItemTypologyGroupId,
          user_id: r.RateCardItemUserId,
        }),
      },
      {
        table: 'rate_card_item_values',
        complete: { scope: 'all' },
        values: (r) => ({ id: r.RateCardItemValueId, rate_card_item_id: r.RateCardItemId, rate_card_column_id: r.RateCardColumnId, value: r.Cost }),
      },
    ],
  },
  // Estimates, their quote lines, monthly split and billing conditions (src/import/mappings/estimates.ts).
  ...ESTIMATE_IMPORTS,
  {
    namedQuery: 'DE-ExpenseSheets',
    key: ['ExpenseSheetId'],
    before: loadCompanies,
    writes: [
      {
        // The sheet's currency and user show in no query: the company's currency, the sheet's creator.
        // Its values are its items' (DE-Expenses).
        table: 'expense_sheets',
        complete: { scope: 'all' },
        values: (r, s) => {
          const company = companiesOf.get(s)?.get(String(r.CompanyId));
          const userId = id(r.CreatedById) ?? id(r.ModifiedById) ?? company?.userId ?? null;
          if (!company || !userId) return null;
          return {
            id: r.ExpenseSheetId,
            number: r.ExpenseSheetNumber,
            external_name: r.ExternalName,
            external_error: r.ExternalError,
            emission_date: day(r.Emission),
            due_date: day(r.Due),
            exchange: r.Exchange,
            blocked: r.Blocked,
            paid: r.Paid,
            paid_value: r.PaidValue,
            company_id: r.CompanyId,
            currency_id: company.currencyId,
            user_id: userId,
            created_on_utc: r.CreatedOnUtc,
            modified_on_utc: r.ModifiedOnUtc,
            created_by_id: r.CreatedById,
            modified_by_id: r.ModifiedById,
          };
        },
      },
    ],
  },
  {
    namedQuery: 'DE-Expenses',
    key: ['ExpenseId'],
    before: loadSheets,
    writes: [
      {
        // An item's net value is its value with VAT less the VAT; its date, quantity, job and sheet show in no
        // query (the sheet is matched by creator and time, the date is the day it was created).
        table: 'expense_items',
        complete: { scope: 'all' },
        values: (r, s) => {
          const sheet = sheetOf(r, s);
          if (!sheet) return null;
          return {
            id: r.ExpenseId,
            expense_sheet_id: sheet,
            number: r.ExpenseNumber,
            billable: r.Billable,
            motive: r.Motive,
            expense_type_id: r.ExpenseTypeId,
            vat_id: r.VatId,
            value_without_vat: money(money(r.ValueWithVat) - money(r.VatValue)),
            date: day(r.CreatedOnUtc),
            created_on_utc: r.CreatedOnUtc,
            modified_on_utc: r.ModifiedOnUtc,
            created_by_id: r.CreatedById,
            modified_by_id: r.ModifiedById,
          };
        },
      },
    ],
  },
];
