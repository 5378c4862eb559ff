// The clients-and-finance named-query definitions against a demo tenant: each returns the catalogue's
// columns in order with values of the catalogue's types, maps its parameters, and computes its values.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import { startTestServer, type TestServer } from '../../../test/helpers.ts';
import { CATALOGUE, type ColumnType, type NamedQueryDefinition, type QueryContext } from '../definition.ts';
import { clientsAndFinance } from './clients-and-finance.ts';
import { NAMED_QUERIES } from './index.ts';

type Row = Record<string, unknown>;

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Finance Agency', { demoData: true, scale: 0.05 });
});
after(() => server.close());

const def = (name: string): NamedQueryDefinition => {
  const found = clientsAndFinance.find((d) => d.name === name);
  assert.ok(found, `definition ${name}`);
  return found;
};
const catalogueEntry = (name: string) => {
  const entry = CATALOGUE.find((c) => c.name === name);
  assert.ok(entry, `catalogue entry ${name}`);
  return entry;
};
const ctxFor = (userId: string | null): QueryContext => ({ tenantId: tenant.tenantId, userId });

/** Rows of a definition, as the engine would wrap it (optionally with a limit). */
async function rowsOf(name: string, userId: string | null = null, limit?: number): Promise<{ rows: Row[]; columns: string[] }> {
  const source = def(name).source;
  assert.ok(source, `${name} has a source`);
  const query = limit === undefined ? sql`select * from (${source(ctxFor(userId))}) q` : sql`select * from (${source(ctxFor(userId))}) q limit ${limit}`;
  const res = await server.runtime.ctx.db.withTenant(tenant.tenantId, (trx) => query.execute(trx));
  return { rows: res.rows as Row[], columns: Object.keys((res.rows[0] as Row) ?? {}) };
}

async function dbRows<T extends Row>(query: ReturnType<typeof sql>): Promise<T[]> {
  const res = await server.runtime.ctx.db.withTenant(tenant.tenantId, (trx) => query.execute(trx));
  return res.rows as T[];
}

const fits: Record<ColumnType, (v: unknown) => boolean> = {
  string: (v) => typeof v === 'string',
  guid: (v) => typeof v === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(v),
  decimal: (v) => typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v),
  integer: (v) => typeof v === 'number' && Number.isInteger(v),
  boolean: (v) => typeof v === 'boolean',
  date: (v) => typeof v === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(v),
  datetime: (v) => v instanceof Date && !Number.isNaN(v.getTime()),
  object: () => true,
};

const num = (v: unknown): number => Number(v ?? 0);
const cents = (v: number): number => Math.round(v * 100);
/** Exact comparison of numeric(…,4) values. */
const tenThousandths = (v: unknown): number => Math.round(Number(v ?? 0) * 10000);

const QUERIES = [
  'DE-Bills',
  'DE-Brands',
  'DE-Clients',
  'DE-ClientsCompanies',
  'DE-Products',
  'DE-Suppliers',
  'DE-PurchaseOrders',
  'DE-ExpenseSheets',
  'DE-ExpenseType',
  'DE-Expenses',
  'DE-Estimates',
  'DE-EstimatesCount',
  'DE-EstimatesBillingConditions',
  'DE-EstimatesQuotes',
  'DE-EstimatesQuotesCount',
  'DE-EstimatesQuotesMonth',
  'DE-EstimatesQuotesMonthCount',
  'EstimatedPlannedActualMonthly',
];

test('the area defines each of its catalogue queries once', () => {
  assert.deepEqual(clientsAndFinance.map((d) => d.name).sort(), [...QUERIES].sort());
  for (const name of QUERIES) catalogueEntry(name);
});

describe('every definition returns the catalogue shape', () => {
  for (const name of QUERIES) {
    test(name, async () => {
      const d = def(name);
      const entry = catalogueEntry(name);
      const columnNames = entry.columns.map((c) => c.name);
      const hidden = (d.hiddenColumns ?? []).map((c) => c.name);
      if (d.countOf) {
        assert.equal(d.source, undefined, 'a count query has no source');
        assert.deepEqual(d.key, []);
        const target = NAMED_QUERIES.find((q) => q.name === d.countOf);
        assert.ok(target?.source, `${name} counts ${d.countOf}, which exists`);
        assert.deepEqual(columnNames, ['Count']);
        // The count honours the same parameters, so the counted query must map each of them.
        for (const p of entry.parameters) assert.ok(target.parameters?.[p], `${d.countOf} maps ${p} for ${name}`);
        return;
      }
      for (const k of d.key) assert.ok(columnNames.includes(k) || hidden.includes(k), `key ${k} is an output or hidden column`);
      assert.ok(d.key.length > 0, 'a key');
      for (const p of entry.parameters) assert.ok(d.parameters?.[p], `catalogue parameter ${p} is mapped`);
      for (const [p, column] of Object.entries(d.parameters ?? {})) {
        assert.ok(entry.parameters.includes(p as never), `${p} is a catalogue parameter of ${name}`);
        assert.ok(columnNames.includes(column), `${p} applies to output column ${column}`);
      }
      for (const userId of [tenant.userId, null]) {
        const { rows, columns } = await rowsOf(name, userId, 200);
        assert.deepEqual(columns, [...columnNames, ...hidden], 'columns in catalogue order, then the hidden ones');
        assert.ok(rows.length > 0, `${name} has rows for the demo tenant`);
        for (const row of rows) {
          assert.deepEqual(Object.keys(row), [...columnNames, ...hidden]);
          for (const c of entry.columns) {
            const v = row[c.name];
            if (v !== null) assert.ok(fits[c.type](v), `${name}.${c.name} is ${c.type}: ${String(v)} (${typeof v})`);
          }
        }
      }
    });
  }
});

describe('values are computed from the data', () => {
  test('DE-Bills: values are the sums of the bill lines; flags follow reads and favorites of the calling user', async () => {
    const lines = await dbRows<{ bill_id: string; net: string }>(sql`select bill_id, sum(quantity * unit_price) as net from bill_items group by bill_id`);
    const { rows } = await rowsOf('DE-Bills');
    assert.equal(rows.length, lines.length);
    for (const r of rows) {
      assert.equal(num(r.ValueWithoutVat), num(lines.find((l) => l.bill_id === r.BillId)?.net));
      assert.equal(cents(num(r.ValueWithVat)), cents(num(r.ValueWithoutVat) + num(r.VatValue)));
      assert.ok(num(r.VatValue) > 0);
      assert.equal(r.External, r.ExternalId !== null);
      assert.equal(r.AlreadyRead, false, 'no calling user: flags are false');
      assert.equal(r.IsFavorite, false);
    }
    const [read] = await dbRows<{ id: string; user_id: string; document_id: string }>(
      sql`select r.id, r.user_id, r.document_id from document_reads r join bills b on b.id = r.document_id limit 1`,
    );
    assert.ok(read, 'the demo data reads a bill');
    const asReader = (await rowsOf('DE-Bills', read.user_id)).rows;
    for (const r of asReader) {
      assert.equal(r.AlreadyRead, r.BillId === read.document_id);
      assert.equal(r.BaseObjectReadId, r.BillId === read.document_id ? read.id : null);
    }
    const [fav] = await dbRows<{ id: string; user_id: string; document_id: string }>(
      sql`select f.id, f.user_id, f.document_id from favorites f join bills b on b.id = f.document_id limit 1`,
    );
    assert.ok(fav, 'the demo data favours a bill');
    const asFan = (await rowsOf('DE-Bills', fav.user_id)).rows.find((r) => r.BillId === fav.document_id);
    assert.equal(asFan?.IsFavorite, true);
    assert.equal(asFan?.FavoriteId, fav.id);
  });

  test('DE-PurchaseOrders: line totals; client, department and in-department from the estimate; team flags always false', async () => {
    const [approval] = await dbRows<{ approver_id: string }>(
      sql`select a.approver_id from approvals a join purchase_orders po on po.id = a.document_id limit 1`,
    );
    assert.ok(approval);
    const [approver] = await dbRows<{ department_id: string | null }>(sql`select department_id from users where id = ${approval.approver_id}`);
    const pos = await dbRows<{ id: string; client: string | null; department_id: string | null }>(
      sql`select po.id, cc.name as client, e.department_id from purchase_orders po
            left join estimates e on e.id = po.estimate_id left join commercial_clients cc on cc.id = e.commercial_client_id`,
    );
    const rows = (await rowsOf('DE-PurchaseOrders', approval.approver_id)).rows;
    assert.equal(rows.length, pos.length);
    for (const r of rows) {
      assert.equal(cents(num(r.ValueWithVat)), cents(num(r.ValueWithoutVat) + num(r.VatValue)));
      const po = pos.find((p) => p.id === r.Oid);
      assert.equal(r.Client, po?.client ?? null);
      assert.equal(r.CurrentUserInDepartment, po?.department_id != null && po.department_id === approver.department_id);
      assert.equal(r.CurrentUserInTeam, false, 'the platform never matches a purchase order team');
      assert.equal(r.CurrentUserPending, false);
    }
  });

  test('DE-ExpenseSheets totals are the sums of DE-Expenses of the sheet; an expense row is its item', async () => {
    const sheets = (await rowsOf('DE-ExpenseSheets')).rows;
    const items = (await rowsOf('DE-Expenses')).rows;
    const links = await dbRows<{ id: string; number: string | null; expense_sheet_id: string }>(sql`select id, number, expense_sheet_id from expense_items`);
    assert.equal(items.length, links.length, 'one row per expense item');
    assert.equal(new Set(items.map((i) => i.ExpenseId)).size, items.length, 'ExpenseId is unique per row');
    const sheetOf = new Map(links.map((l) => [l.id, l]));
    for (const i of items) assert.equal(i.ExpenseNumber, sheetOf.get(String(i.ExpenseId))?.number ?? null);
    for (const s of sheets) {
      const mine = items.filter((i) => sheetOf.get(String(i.ExpenseId))?.expense_sheet_id === s.ExpenseSheetId);
      assert.ok(mine.length > 0);
      assert.equal(cents(num(s.ValueWithVat)), cents(mine.reduce((a, i) => a + num(i.ValueWithVat), 0)));
      assert.equal(cents(num(s.VatValue)), cents(mine.reduce((a, i) => a + num(i.VatValue), 0)));
      assert.equal(cents(num(s.ValueWithVat)), cents(num(s.ValueWithoutVat) + num(s.VatValue)));
    }
  });

  test('DE-Estimates: no Draft or Canceled; sell value is the sum of its quote lines and their months', async () => {
    const estimates = (await rowsOf('DE-Estimates')).rows;
    const [{ n }] = await dbRows<{ n: number }>(
      sql`select count(*)::int as n from estimates e join workflow_stages ws on ws.id = e.stage_id
          join workflow_stage_types wst on wst.id = ws.stage_type_id where wst.name not in ('Draft', 'Canceled')`,
    );
    assert.equal(estimates.length, n);
    const quotes = (await rowsOf('DE-EstimatesQuotes')).rows;
    const months = (await rowsOf('DE-EstimatesQuotesMonth')).rows;
    for (const e of estimates) {
      const lines = quotes.filter((q) => q.EstimateId === e.EstimateId);
      assert.ok(lines.length > 0);
      assert.equal(cents(num(e.ValueWithoutTaxSell)), cents(lines.reduce((a, q) => a + num(q.ValueWithoutVatIncome), 0)));
      assert.equal(cents(num(e.ValueWithoutTaxCost)), cents(lines.reduce((a, q) => a + num(q.ValueWithoutVatCost), 0)));
      assert.equal(cents(num(e.ValueWithTaxSell)), cents(num(e.ValueWithoutTaxSell) + num(e.TaxValueSell)));
    }
    const lines = await dbRows<{ id: string; unit_price_cost: string; unit_price_income: string }>(
      sql`select id, unit_price_cost, unit_price_income from estimate_item_details`,
    );
    const lineOf = new Map(lines.map((l) => [l.id, l]));
    const live = new Set(estimates.map((e) => e.EstimateId));
    for (const q of quotes) {
      assert.equal(cents(num(q.Margin)), cents(num(q.ValueWithoutVatIncome) - num(q.ValueWithoutVatCost)));
      // The platform's line cost and income: unit price × the line's hours (its sold quantity).
      const line = lineOf.get(String(q.EstimateItemDetailId));
      assert.equal(tenThousandths(q.EstimateItemDetailIncome), tenThousandths(num(line?.unit_price_income) * num(q.QuantityIncome)));
      assert.equal(tenThousandths(q.EstimateItemDetailCost), tenThousandths(num(line?.unit_price_cost) * num(q.QuantityIncome)));
      assert.equal(q.EstimateItemDetailUnitPriceIncome, q.EstimateItemDetailIncome, 'kept as the platform computes it');
      const split = months.filter((m) => m.EstimateItemDetailId === q.EstimateItemDetailId);
      if (!live.has(q.EstimateId) || q.EstimateItemDetailTypologyGroupId === null) assert.equal(split.length, 0, 'QuotesMonth: live resource lines only');
      else assert.ok(split.length > 0);
      const itemLines = quotes.filter((o) => o.EstimateItemId === q.EstimateItemId);
      assert.equal(cents(num(q.EstimateItemValueWithoutVatIncome)), cents(itemLines.reduce((a, o) => a + num(o.ValueWithoutVatIncome), 0)));
    }
    for (const m of months) {
      const l = lineOf.get(String(m.EstimateItemDetailId));
      assert.equal(tenThousandths(m.EstimateItemDetailIncome), tenThousandths(num(l?.unit_price_income) * num(m.EstimateItemDetailTime)));
      assert.equal(tenThousandths(m.EstimateItemDetailCost), tenThousandths(num(l?.unit_price_cost) * num(m.EstimateItemDetailTime)));
    }
  });

  test('EstimatedPlannedActualMonthly: times in days of the company RequiredHours; planned cost = income; actual income 0', async () => {
    const rows = (await rowsOf('EstimatedPlannedActualMonthly')).rows;
    const [t] = await dbRows<{ actual: string; planned: string }>(
      sql`select (select sum(t.duration_minutes / 60.0 / c.required_hours) from timesheets t
                    join companies c on c.id = t.booked_company_id
                    join typologies ty on ty.id = t.booked_typology_id
                    join departments d on d.id = t.booked_department_id join divisions dv on dv.id = d.division_id
                   where t.deleted_on is null and ty.typology_group_id is not null) as actual,
                 (select sum(t.planned_hours / c.required_hours) from project_planned_times t
                    join projects p on p.id = t.project_id
                    join estimate_item_details dt on dt.id = t.estimate_item_detail_id
                    join departments d on d.id = dt.department_id join divisions dv on dv.id = d.division_id
                    join companies c on c.id = dv.company_id
                   where t.user_id is not null and t.typology_group_id is not null
                     and exists (select 1 from estimates e join workflow_stages s on s.id = e.stage_id join workflow_stage_types st on st.id = s.stage_type_id
                                  where e.project_id = p.id and st.name not in ('Draft', 'Canceled'))) as planned`,
    );
    assert.equal(cents(rows.reduce((a, r) => a + num(r.ActualTime), 0)), cents(num(t.actual)));
    assert.equal(cents(rows.reduce((a, r) => a + num(r.PlannedTime), 0)), cents(num(t.planned)));
    assert.ok(rows.some((r) => num(r.ContractedIncome) > 0) && rows.some((r) => num(r.ActualCost) > 0));
    const keys = new Set<string>();
    const d = def('EstimatedPlannedActualMonthly');
    for (const r of rows) {
      assert.equal(num(r.ActualIncome), 0);
      assert.equal(tenThousandths(r.PlannedCost), tenThousandths(r.PlannedIncome));
      for (const kind of ['Contracted', 'Planned', 'Actual']) {
        const profit = num(r[`${kind}Profit`]) - (num(r[`${kind}Income`]) - num(r[`${kind}Cost`]));
        assert.ok(Math.abs(profit) < 1e-6, `${kind}Profit = income − cost`);
      }
      const key = d.key.map((k) => String(r[k])).join('|');
      assert.ok(!keys.has(key), `key is unique: ${key}`);
      keys.add(key);
    }
  });
});
