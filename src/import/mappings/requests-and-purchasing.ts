// The import's mappings of DE-Requests, DE-Bills and DE-PurchaseOrders (src/extraction/queries/
// jobs-and-projects/requests-and-contracts.ts, clients-and-finance/purchases-and-billing.ts). These queries
// name what the documents refer to (type, stage, product, brand, currency, supplier…): each is looked up by
// name among the target's rows earlier queries wrote (`before`, in the query's own transaction). Bills and
// purchase orders show their lines only as totals (and a purchase order its lines' articles): the import
// writes lines that give the same totals (docs/import.md, "Requests, bills and purchase orders").
import { sql } from 'kysely';
import type { Trx } from '../../platform/db/database.ts';
import type { SourceRow } from '../client.ts';
import type { QueryImport, RunState, TableWrite, Values } from '../mappings.ts';
import { day, derivedId, id, jsonText } from './helpers.ts';
import { CLIENT, COMPANY, CREATED_BY, imageFlags, MODIFIED_BY } from './images.ts';

/** What the three queries look up in the target, by name (keys joined with NUL). */
interface Lookups {
  /** `{document type class or name}\0{stage}\0{stage type}` and `\0{stage}\0{stage type}` → stage and its workflow. */
  stages: Map<string, { id: string; workflowId: string }>;
  /** Document type name → a workflow of it (a request with a workflow and no stage). */
  workflows: Map<string, string>;
  /** `{name}\0{department}\0{company}` and `{name}\0{department}\0` → job type (Request types first). */
  types: Map<string, string>;
  /** `{client}\0{name}` and `\0{name}` → product, brand. */
  products: Map<string, string>;
  brands: Map<string, string>;
  /** Company → its first department (a request's own department, which no query shows but by its company). */
  departmentOf: Map<string, string>;
  /** Department → its company. */
  companyOf: Map<string, string>;
  /** `{name}\0{iso code}` → currency. */
  currencies: Map<string, string>;
  /** `{company}\0{name}` → payment condition, billing client, service; `{company}\0{name (external id)}` → supplier. */
  paymentConditions: Map<string, string>;
  billingClients: Map<string, string>;
  suppliers: Map<string, string>;
  services: Map<string, string>;
  /** Company → its services' names (to read a purchase order's Articles back). */
  serviceNames: Map<string, string[]>;
  /** Client group name → group; clients DE-Clients leaves out (Draft ones: their group shows only by name here). */
  clientGroups: Map<string, string>;
  draftClients: Set<string>;
  /** Company → its VAT rates (percentage in ten-thousandths). */
  vats: Map<string, { id: string; rate: bigint }[]>;
}
const lookups = new WeakMap<RunState, Lookups>();
const key = (...parts: unknown[]): string => parts.map((p) => (p === null || p === undefined ? '' : String(p))).join('\u0000');
/** The first id seen for a key wins (rows are loaded in a stable order). */
const put = (m: Map<string, string>, k: string, v: string) => {
  if (!m.has(k)) m.set(k, v);
};

async function loadLookups(trx: Trx, tenantId: string, state: RunState): Promise<void> {
  const q = <T>(query: ReturnType<typeof sql<T>>) => query.execute(trx).then((r) => r.rows);
  const [stages, workflows, types, products, brands, departments, currencies, pcs, bcs, suppliers, services, vats, groups, drafts] = await Promise.all([
    q(sql<{ id: string; name: string; workflow_id: string; type: string | null; class_name: string | null; dt_name: string | null }>`
      select s.id, s.name, s.workflow_id, st.name as type, dt.class_name, dt.name as dt_name
        from workflow_stages s
        left join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
        left join workflows w on w.tenant_id = s.tenant_id and w.id = s.workflow_id
        left join document_types dt on dt.tenant_id = w.tenant_id and dt.id = w.document_type_id
       where s.tenant_id = ${tenantId} order by s.id`),
    q(sql<{ id: string; dt_name: string }>`
      select w.id, dt.name as dt_name from workflows w join document_types dt on dt.tenant_id = w.tenant_id and dt.id = w.document_type_id
       where w.tenant_id = ${tenantId} order by w.id`),
    q(sql<{ id: string; name: string; department_id: string | null; company_id: string | null }>`
      select jt.id, jt.name, jt.department_id, jt.company_id from job_types jt
        left join document_types dt on dt.tenant_id = jt.tenant_id and dt.id = jt.document_type_id
       where jt.tenant_id = ${tenantId} order by dt.class_name is distinct from 'Request', jt.id`),
    q(sql<{ id: string; name: string; client: string | null }>`
      select id, name, commercial_client_id as client from products where tenant_id = ${tenantId} order by id`),
    q(sql<{ id: string; name: string; client: string | null }>`
      select id, name, commercial_client_id as client from brands where tenant_id = ${tenantId} order by id`),
    q(sql<{ id: string; company_id: string }>`select id, company_id from departments where tenant_id = ${tenantId} order by id`),
    q(sql<{ id: string; name: string; iso_code: string }>`select id, name, iso_code from currencies where tenant_id = ${tenantId} order by id`),
    q(sql<{ id: string; company_id: string; name: string }>`select id, company_id, name from payment_conditions where tenant_id = ${tenantId} order by id`),
    q(sql<{ id: string; company_id: string; name: string }>`select id, company_id, name from billing_clients where tenant_id = ${tenantId} order by id`),
    // The label DE-PurchaseOrders shows: name (external id).
    q(sql<{ id: string; company_id: string; name: string }>`
      select id, company_id, name || coalesce(' (' || external_id || ')', '') as name from suppliers where tenant_id = ${tenantId} order by id`),
    q(sql<{ id: string; company_id: string; name: string }>`select id, company_id, name from services where tenant_id = ${tenantId} order by id`),
    q(sql<{ id: string; company_id: string; percentage: string }>`
      select id, company_id, percentage::text as percentage from vats where tenant_id = ${tenantId} and percentage > 0 order by percentage desc, id`),
    q(sql<{ id: string; name: string }>`select id, name from client_groups where tenant_id = ${tenantId} order by id`),
    // As DE-Clients leaves them out: in a Draft stage (or none, which DE-Clients keeps: not a draft here).
    q(sql<{ id: string }>`
      select cc.id from commercial_clients cc
        join workflow_stages s on s.tenant_id = cc.tenant_id and s.id = cc.stage_id
        join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
       where cc.tenant_id = ${tenantId} and st.name = 'Draft'`),
  ]);
  const l: Lookups = {
    stages: new Map(),
    workflows: new Map(),
    types: new Map(),
    products: new Map(),
    brands: new Map(),
    departmentOf: new Map(),
    companyOf: new Map(),
    currencies: new Map(),
    paymentConditions: new Map(),
    billingClients: new Map(),
    suppliers: new Map(),
    services: new Map(),
    serviceNames: new Map(),
    clientGroups: new Map(),
    draftClients: new Set(drafts.map((d) => d.id)),
    vats: new Map(),
  };
  for (const g of groups) put(l.clientGroups, g.name, g.id);
  for (const s of stages) {
    const v = { id: s.id, workflowId: s.workflow_id };
    for (const k of [key(s.class_name, s.name, s.type), key(s.dt_name, s.name, s.type), key('', s.name, s.type)]) if (!l.stages.has(k)) l.stages.set(k, v);
  }
  for (const w of workflows) put(l.workflows, w.dt_name, w.id);
  for (const t of types) {
    put(l.types, key(t.name, t.department_id, t.company_id), t.id);
    put(l.types, key(t.name, t.department_id, ''), t.id);
  }
  for (const [rows, m] of [
    [products, l.products],
    [brands, l.brands],
  ] as const) {
    for (const r of rows) {
      put(m, key(r.client, r.name), r.id);
      put(m, key('', r.name), r.id);
    }
  }
  for (const d of departments) {
    put(l.departmentOf, d.company_id, d.id);
    l.companyOf.set(d.id, d.company_id);
  }
  for (const c of currencies) put(l.currencies, key(c.name, c.iso_code), c.id);
  for (const [rows, m] of [
    [pcs, l.paymentConditions],
    [bcs, l.billingClients],
    [suppliers, l.suppliers],
    [services, l.services],
  ] as const) {
    for (const r of rows) put(m, key(r.company_id, r.name), r.id);
  }
  for (const s of services) l.serviceNames.set(s.company_id, [...(l.serviceNames.get(s.company_id) ?? []), s.name]);
  for (const v of vats) l.vats.set(v.company_id, [...(l.vats.get(v.company_id) ?? []), { id: v.id, rate: units(v.percentage, 4) }]);
  lookups.set(state, l);
}

const look = (s: RunState): Lookups => {
  const l = lookups.get(s);
  if (!l) throw new Error('requests and purchasing: lookups not loaded');
  return l;
};

// ---- Money: a document's totals back to lines ----------------------------------------------------------

/** A decimal figure as an integer count of 10^-scale units (exact for the 4 decimals the queries show). */
export function units(v: unknown, scale: number): bigint {
  const text = typeof v === 'number' ? v.toFixed(scale) : String(v ?? '0');
  const m = /^(-?)(\d*)(?:\.(\d*))?$/.exec(text.trim());
  if (!m) return BigInt(Math.round(Number(text) * 10 ** scale));
  const frac = (m[3] ?? '').padEnd(scale + 1, '0');
  let n = BigInt((m[2] || '0') + frac.slice(0, scale));
  if (Number(frac[scale]) >= 5) n += 1n;
  return m[1] ? -n : n;
}
/** n / d rounded half away from zero, as PostgreSQL's round() on numeric. */
function divRound(n: bigint, d: bigint): bigint {
  const q = n / d;
  const r = n % d;
  return 2n * (r < 0n ? -r : r) >= d ? q + (n < 0n ? -1n : 1n) : q;
}
/** A line's VAT in cents: round(net × rate / 100, 2) (lineVat), net in 10^-4, rate in 10^-4 percent. */
const lineVatCents = (net4: bigint, rate4: bigint): bigint => divRound(net4 * rate4, 100_000_000n);
/** 10^-4 units as the numeric's text. */
function decimal4(n: bigint): string {
  const sign = n < 0n ? '-' : '';
  const a = (n < 0n ? -n : n).toString().padStart(5, '0');
  return `${sign}${a.slice(0, -4)}.${a.slice(-4)}`;
}

/**
 * Lines (quantity 1, no article) whose totals are a document's: net = Σ net, VAT = Σ each line's VAT rounded
 * to cents (documentTotals). One line at a VAT rate of `rates` (the company's, percentages in 10^-4) that
 * gives the VAT shown; else a line carrying the VAT at one of those rates and one with the rest of the net,
 * without VAT.
 */
export function linesForTotals(rates: { id: string; rate: bigint }[], net: unknown, vat: unknown): { unit_price: string; vat_id: string | null }[] {
  const net4 = units(net, 4);
  const vatCents = units(vat, 2);
  if (vatCents === 0n) return net4 === 0n ? [] : [{ unit_price: decimal4(net4), vat_id: null }];
  const exact = rates.find((r) => lineVatCents(net4, r.rate) === vatCents);
  if (exact) return [{ unit_price: decimal4(net4), vat_id: exact.id }];
  for (const r of rates) {
    const base = divRound(vatCents * 100_000_000n, r.rate);
    const taxed = [base, base - 1n, base + 1n, base - 2n, base + 2n].find((a) => lineVatCents(a, r.rate) === vatCents);
    if (taxed !== undefined) {
      return [
        { unit_price: decimal4(taxed), vat_id: r.id },
        { unit_price: decimal4(net4 - taxed), vat_id: null },
      ];
    }
  }
  // No rate of the company gives that VAT: the net alone (the VAT then differs, and the comparison says so).
  return [{ unit_price: decimal4(net4), vat_id: null }];
}

const totalLines = (s: RunState, companyId: unknown, net: unknown, vat: unknown) => linesForTotals(look(s).vats.get(String(companyId)) ?? [], net, vat);

/**
 * A purchase order's Articles ("a, b, a": its lines' services in order) back to the names of `names` (a
 * company's services): the longest name that the text starts with, so a name holding ", " is read whole.
 */
export function articleNames(names: string[], text: unknown): string[] {
  if (typeof text !== 'string' || text === '') return [];
  const longestFirst = [...names].sort((a, b) => b.length - a.length);
  const found: string[] = [];
  let rest = text;
  while (rest.length > 0) {
    const name = longestFirst.find((n) => rest === n || rest.startsWith(`${n}, `)) ?? rest.split(', ')[0];
    found.push(name);
    rest = rest.slice(name.length + 2);
  }
  return found;
}

/** A purchase order's articles as services of its company (an article the target lacks is left out). */
function articles(s: RunState, companyId: unknown, text: unknown): string[] {
  const l = look(s);
  return articleNames(l.serviceNames.get(String(companyId)) ?? [], text).flatMap((name) => l.services.get(key(companyId, name)) ?? []);
}

// ---- Rows shown by name ------------------------------------------------------------------------------

/** A stage shown by name and stage type, in a workflow of the document type (class or name) given. */
const stageOf = (s: RunState, documentType: string, stage: unknown, stageType: unknown) =>
  stage === null || stage === undefined
    ? null
    : (look(s).stages.get(key(documentType, stage, stageType)) ?? look(s).stages.get(key('', stage, stageType)) ?? null);

/** `Number - Name` back to the number and name. */
function numberAndName(label: unknown): { number: string; name: string } {
  const text = String(label ?? '');
  const at = text.indexOf(' - ');
  return at < 0 ? { number: text, name: text } : { number: text.slice(0, at), name: text.slice(at + 3) };
}

/** A document a bill names that is not there yet (a project, a contract), from what the bill shows of it. */
const namedDocument = (docId: unknown, label: unknown, r: SourceRow): Values | null =>
  id(docId) && id(r.ClientId) && id(r.CompanyId) ? { id: docId, ...numberAndName(label), commercial_client_id: r.ClientId, company_id: r.CompanyId } : null;

/** A payment condition or billing client a bill names and the target lacks: created under an id of its company and name. */
const byCompanyName = (m: Map<string, string>, table: string, companyId: unknown, name: unknown): string | null =>
  typeof name === 'string' && id(companyId) ? (m.get(key(companyId, name)) ?? derivedId(table, companyId, name)) : null;

function requestValues(r: SourceRow, s: RunState): Values | null {
  const l = look(s);
  const workflowName = String(r.Workflow ?? '');
  const stage = stageOf(s, workflowName, r.Stage, r.StageType);
  // Types are per company: the request's (its department's) first, else any of that name and department.
  const typeId =
    r.Type === null || r.Type === undefined
      ? null
      : (l.types.get(key(r.Type, r.DepartmentId, r.CompanyId)) ?? l.types.get(key(r.Type, r.DepartmentId, '')) ?? null);
  // The request's own department shows only through its company: its type's department when of that
  // company, else the company's first (docs/import.md).
  const departmentId = id(r.DepartmentId) && l.companyOf.get(String(r.DepartmentId)) === r.CompanyId ? r.DepartmentId : l.departmentOf.get(String(r.CompanyId));
  if (!departmentId) return null;
  const named = (m: Map<string, string>, name: unknown) =>
    name === null || name === undefined ? null : (m.get(key(r.ClientId, name)) ?? m.get(key('', name)) ?? null);
  return {
    id: r.RequestId,
    name: r.Request,
    number: r.RequestNumber,
    department_id: departmentId,
    commercial_client_id: r.ClientId,
    brand_id: named(l.brands, r.Brand),
    product_id: named(l.products, r.Product),
    contract_id: r.ContractId,
    type_id: typeId,
    workflow_id: stage?.workflowId ?? (r.Workflow === null || r.Workflow === undefined ? null : (l.workflows.get(workflowName) ?? null)),
    stage_id: stage?.id ?? null,
    begin_date_utc: r.BeginDateUtc,
    end_date_utc: r.EndDateUtc,
    tags: jsonText(r.TagsJson),
    is_activated: r.IsActivated,
    priority: r.Priority,
    version: r.Version,
    created_on_utc: r.CreatedOnUtc,
    created_by_id: r.CreatedById,
    modified_on_utc: r.ModifiedOnUtc,
    modified_by_id: r.ModifiedById,
  };
}

/** The group a row's ClientGroup names (one the target lacks: created under an id of its name). */
const groupOf = (r: SourceRow, s: RunState): string | null =>
  typeof r.ClientGroup === 'string' ? (look(s).clientGroups.get(r.ClientGroup) ?? derivedId('client_groups', r.ClientGroup)) : null;

/**
 * A Draft client's group (DE-Clients, which gives the others', leaves Draft clients out): by the name a
 * request or bill shows, on clients the target holds in a Draft stage only.
 */
const draftClientGroup: TableWrite[] = [
  {
    table: 'client_groups',
    mode: 'insertMissing',
    values: (r, s) => {
      const g = id(r.ClientId) && look(s).draftClients.has(r.ClientId as string) ? groupOf(r, s) : null;
      return g ? { id: g, name: r.ClientGroup } : null;
    },
  },
  {
    table: 'commercial_clients',
    mode: 'updateOnly',
    values: (r, s) => (id(r.ClientId) && look(s).draftClients.has(r.ClientId as string) ? { id: r.ClientId, client_group_id: groupOf(r, s) } : null),
  },
];

export const REQUEST_AND_PURCHASING_IMPORTS: QueryImport[] = [
  {
    namedQuery: 'DE-Requests',
    key: ['RequestId'],
    before: loadLookups,
    writes: [
      // A Draft contract no project names (DE-Contracts leaves Draft ones out): its name and id are all any
      // query shows; company, number and stage are placeholders of the target's.
      {
        table: 'contracts',
        mode: 'insertMissing',
        values: (r, s) =>
          id(r.ContractId) && id(r.ClientId) && s.anyId.companies
            ? {
                id: r.ContractId,
                name: r.Contract,
                number: `imported-${r.ContractId}`,
                commercial_client_id: r.ClientId,
                company_id: s.anyId.companies,
                stage_id: s.draftStageId,
              }
            : null,
      },
      // A creator's tags and a client's classification show only here.
      { table: 'users', mode: 'updateOnly', values: (r) => (id(r.CreatedById) ? { id: r.CreatedById, tags: jsonText(r.CreatedByTags) } : null) },
      {
        table: 'commercial_clients',
        mode: 'updateOnly',
        values: (r) => (id(r.ClientId) ? { id: r.ClientId, classification: r.ClientClassification } : null),
      },
      ...draftClientGroup,
      { table: 'requests', complete: { scope: 'all' }, values: requestValues },
      // Image flags of what the document names (a client only requests or bills name, e.g. a Draft one).
      ...imageFlags(COMPANY, CLIENT, CREATED_BY, MODIFIED_BY),
    ],
  },
  {
    namedQuery: 'DE-Bills',
    key: ['BillId'],
    before: loadLookups,
    writes: [
      { table: 'projects', mode: 'insertMissing', values: (r) => namedDocument(r.ProjectId, r.Project, r) },
      { table: 'contracts', mode: 'insertMissing', values: (r) => namedDocument(r.ContractId, r.Contract, r) },
      ...draftClientGroup,
      {
        table: 'payment_conditions',
        mode: 'insertMissing',
        values: (r, s) => {
          const pc = byCompanyName(look(s).paymentConditions, 'payment_conditions', r.CompanyId, r.PaymentCondition);
          return pc ? { id: pc, name: r.PaymentCondition, company_id: r.CompanyId } : null;
        },
      },
      {
        table: 'billing_clients',
        mode: 'insertMissing',
        values: (r, s) => {
          const bc = byCompanyName(look(s).billingClients, 'billing_clients', r.CompanyId, r.BillingClient);
          return bc ? { id: bc, name: r.BillingClient, company_id: r.CompanyId } : null;
        },
      },
      // A bill's stage colour is the stage's own (not its type's).
      {
        table: 'workflow_stages',
        mode: 'updateOnly',
        values: (r, s) => {
          const stage = stageOf(s, 'Bill', r.Stage, r.StageType);
          return stage ? { id: stage.id, color: r.StageColor } : null;
        },
      },
      {
        // Its department shows only as its estimate's (none is kept); its lines as totals (totalLines).
        table: 'bills',
        complete: { scope: 'all' },
        values: (r, s) => {
          const l = look(s);
          const stage = stageOf(s, 'Bill', r.Stage, r.StageType);
          const currencyId = l.currencies.get(key(r.Currency, r.CurrencyIsoCode));
          const billingClientId = byCompanyName(l.billingClients, 'billing_clients', r.CompanyId, r.BillingClient);
          if (!currencyId || !billingClientId) return null;
          return {
            id: r.BillId,
            company_id: r.CompanyId,
            department_id: null,
            commercial_client_id: r.ClientId,
            billing_client_id: billingClientId,
            project_id: r.ProjectId,
            contract_id: r.ContractId,
            estimate_id: r.EstimateId,
            currency_id: currencyId,
            payment_condition_id: byCompanyName(l.paymentConditions, 'payment_conditions', r.CompanyId, r.PaymentCondition),
            workflow_id: stage?.workflowId ?? null,
            stage_id: stage?.id ?? null,
            number: r.BillNumber,
            name: r.Bill,
            date: day(r.Date),
            due_date: day(r.Due),
            management_date: day(r.ManagementDate),
            your_reference: r.YourReference,
            paid: r.Paid,
            paid_value: r.PaidValue,
            remarks: r.Remarks,
            external_id: r.ExternalId,
            external_error: r.ExternalError,
            created_on_utc: r.CreatedOnUtc,
            created_by_id: r.CreatedById,
            modified_on_utc: r.ModifiedOnUtc,
            modified_by_id: r.ModifiedById,
          };
        },
      },
      {
        table: 'bill_items',
        complete: { scope: 'all' },
        values: (r, s) =>
          totalLines(s, r.CompanyId, r.ValueWithoutVat, r.VatValue).map((line, i) => ({
            id: derivedId('bill_items', r.BillId, i),
            bill_id: r.BillId,
            sort_order: i,
            service_id: null,
            estimate_item_id: null,
            description: null,
            quantity: 1,
            ...line,
          })),
      },
      // Image flags of what the document names (a client only requests or bills name, e.g. a Draft one).
      ...imageFlags(COMPANY, CLIENT, CREATED_BY, MODIFIED_BY),
    ],
  },
  {
    namedQuery: 'DE-PurchaseOrders',
    key: ['Oid'],
    before: loadLookups,
    writes: [
      {
        // Client, department and contract show only as the estimate's and the project's: the order keeps the
        // estimate's client and the project's contract, no department (docs/import.md).
        table: 'purchase_orders',
        complete: { scope: 'all' },
        values: (r, s) => {
          const l = look(s);
          const stage = stageOf(s, 'PurchaseOrder', r.Stage, r.StageType);
          const currencyId = l.currencies.get(key(r.Currency, r.CurrencyIsoCode));
          const supplierId = l.suppliers.get(key(r.CompanyId, r.Supplier));
          if (!currencyId || !supplierId) return null;
          return {
            id: r.Oid,
            company_id: r.CompanyId,
            department_id: null,
            supplier_id: supplierId,
            commercial_client_id: r.ClientId,
            contract_id: r.ContractId,
            project_id: r.ProjectId,
            estimate_id: r.EstimateId,
            currency_id: currencyId,
            workflow_id: stage?.workflowId ?? null,
            stage_id: stage?.id ?? null,
            number: r.Number,
            date: day(r.StartDate),
            delivery_date: day(r.DeliveryDate),
            status: r.Status,
            financial_status: r.FinancialStatus,
            invoiced: r.Invoiced,
            invoiced_value: r.InvoicedValue,
            controlled_value: r.ControlledValue,
            external_id: r.ExternalId,
            external_error: r.ExternalError,
            created_on_utc: r.CreatedOnUtc,
            created_by_id: r.CreatedById,
            modified_on_utc: r.ModifiedOnUtc,
            modified_by_id: r.ModifiedById,
          };
        },
      },
      {
        // One line per article shown (its service, no value), then the lines that carry the totals (no article).
        table: 'purchase_order_items',
        complete: { scope: 'all' },
        values: (r, s) => {
          const line = (i: number, v: Values) => ({
            id: derivedId('purchase_order_items', r.Oid, i),
            purchase_order_id: r.Oid,
            sort_order: i,
            estimate_item_detail_id: null,
            description: null,
            quantity: 1,
            ...v,
          });
          const shown = articles(s, r.CompanyId, r.Articles);
          return [
            ...shown.map((serviceId, i) => line(i, { service_id: serviceId, unit_price: 0, vat_id: null })),
            ...totalLines(s, r.CompanyId, r.ValueWithoutVat, r.VatValue).map((t, i) => line(shown.length + i, { service_id: null, ...t })),
          ];
        },
      },
      // Image flags of what the document names (a client only requests or bills name, e.g. a Draft one).
      ...imageFlags(COMPANY, CLIENT, CREATED_BY, MODIFIED_BY),
    ],
  },
];

// ---- An estimate's type, from DE-Assignments -----------------------------------------------------------

/** Per run: the target's estimates without a type (→ their company), Estimate types by company and business object type. */
const untypedEstimates = new WeakMap<RunState, { estimates: Map<string, string>; types: Map<string, string> }>();

/** DE-Assignments' `before`: what estimateTypeFromAssignments looks up. */
export async function loadUntypedEstimates(trx: Trx, tenantId: string, state: RunState): Promise<void> {
  const [estimates, types] = await Promise.all([
    sql<{ id: string; company_id: string }>`
      select e.id, d.company_id from estimates e join departments d on d.tenant_id = e.tenant_id and d.id = e.department_id
       where e.tenant_id = ${tenantId} and e.type_id is null`.execute(trx),
    sql<{ id: string; company_id: string | null; bot: string }>`
      select jt.id, jt.company_id, bot.name as bot from job_types jt
        join business_object_types bot on bot.tenant_id = jt.tenant_id and bot.id = jt.business_object_type_id
        join document_types dt on dt.tenant_id = jt.tenant_id and dt.id = jt.document_type_id
       where jt.tenant_id = ${tenantId} and dt.class_name = 'Estimate' order by jt.id`.execute(trx),
  ]);
  const byBot = new Map<string, string>();
  for (const t of types.rows) {
    put(byBot, key(t.company_id, t.bot), t.id);
    put(byBot, key('', t.bot), t.id);
  }
  untypedEstimates.set(state, { estimates: new Map(estimates.rows.map((e) => [e.id, e.company_id])), types: byBot });
}

/**
 * A Draft or Canceled estimate's type shows in no query but as DE-Assignments' DocumentSubType (its type's
 * business object type): an estimate the target holds without a type takes an Estimate type of its company
 * with that business object type (types of one business object type differ in no column any query shows of
 * such an estimate).
 */
export const estimateTypeFromAssignments: TableWrite = {
  table: 'estimates',
  mode: 'updateOnly',
  values: (r, s) => {
    const u = untypedEstimates.get(s);
    const companyId = u?.estimates.get(String(r.DocumentId));
    if (r.DocumentType !== 'Estimate' || !companyId || typeof r.DocumentSubType !== 'string') return null;
    const typeId = u?.types.get(key(companyId, r.DocumentSubType)) ?? u?.types.get(key('', r.DocumentSubType));
    return typeId ? { id: r.DocumentId, type_id: typeId } : null;
  },
};
