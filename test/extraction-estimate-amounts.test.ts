// One definition of an estimate's amounts, seen through the Data Extraction API on a demo tenant:
// DE-Estimates is the sum of its quote lines (DE-EstimatesQuotes) to the cent; DE-Projects' and
// DE-Contracts' Estimated* are their estimates' amounts as the platform sums them (each in its own currency,
// no exchange); EstimatedPlannedActualMonthly's contracted figures of a project are the monthly split of its
// live, non-Budget estimates' resource lines (DE-EstimatesQuotesMonth).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

type Row = Record<string, unknown>;

let server: TestServer;
let headers: Record<string, string>;
let owner: pg.Client;
/** Estimates given an exchange rate with 8 decimals, so converted totals need their rounding. */
let converted: string[] = [];

before(async () => {
  server = await startTestServer();
  const tenant = await server.createTenant('Estimate Amounts', { demoData: true, scale: 0.2 });
  headers = appHeaders(tenant);
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  // At this scale few estimates count: make the contracts' estimates and four project estimates count
  // (stage Completed), the latter at rates no amount converts to whole cents at, so that rounding once
  // and rounding per line (or per estimate) would disagree.
  const completed = `select s.id from workflow_stages s join workflow_stage_types st on st.id = s.stage_type_id
                      where s.workflow_id = e.workflow_id and st.name = 'Completed' limit 1`;
  await owner.query(`update estimates e set stage_id = (${completed}) where e.tenant_id = $1 and e.contract_id is not null`, [tenant.tenantId]);
  const res = await owner.query<{ id: string }>(
    `with picked as (
       select id, row_number() over (order by number) as n from estimates where tenant_id = $1 and project_id is not null order by number limit 4)
     update estimates e set stage_id = (${completed}), exchange = case when p.n % 2 = 1 then 0.91234567 else 1.13579246 end
       from picked p where e.id = p.id
     returning e.id`,
    [tenant.tenantId],
  );
  converted = res.rows.map((r) => r.id);
});
after(async () => {
  await owner?.end();
  await server?.close();
});

/** Every row of a named query, through dynamic-execute, paged. */
async function rowsOf(name: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (;;) {
    const res = await server.request('POST', `/api/v3/analytics/named-query/${name}/dynamic-execute`, {
      headers,
      json: { queryBuilder: { skip: rows.length, take: 5000 } },
    });
    assert.equal(res.status, 200, res.text);
    const page = res.body as { data: Row[]; totalCount: number };
    rows.push(...page.data);
    if (page.data.length === 0 || rows.length >= page.totalCount) return rows;
  }
}

// Exact decimal arithmetic: amounts as BigInt units of 10^-8 (exchange rates carry 8 decimals).
const SCALE = 8;
const ONE = 10n ** BigInt(SCALE);
function units(v: unknown): bigint {
  const text = typeof v === 'number' ? (Number.isInteger(v) ? String(v) : v.toFixed(SCALE)) : String(v ?? '0');
  const m = /^(-?)(\d+)(?:\.(\d+))?$/.exec(text.trim());
  assert.ok(m, `a decimal: ${text}`);
  const fraction = (m[3] ?? '').padEnd(SCALE, '0');
  assert.ok(/^0*$/.test(fraction.slice(SCALE)), `at most ${SCALE} decimals: ${text}`);
  const n = BigInt(m[2]) * ONE + BigInt(fraction.slice(0, SCALE));
  return m[1] === '-' ? -n : n;
}
const sum = (values: unknown[]): bigint => values.reduce<bigint>((a, v) => a + units(v), 0n);
const show = (u: bigint): string => `${u < 0n ? '-' : ''}${(u < 0n ? -u : u) / ONE}.${String((u < 0n ? -u : u) % ONE).padStart(SCALE, '0')}`;
const inCents = (u: bigint): boolean => u % (ONE / 100n) === 0n;

function groupBy(rows: Row[], column: string): Map<unknown, Row[]> {
  const groups = new Map<unknown, Row[]>();
  for (const r of rows) groups.set(r[column], [...(groups.get(r[column]) ?? []), r]);
  return groups;
}

const AMOUNTS = [
  ['ValueWithoutTaxCost', 'EstimatedWithoutTaxCost'],
  ['TaxValueCost', 'EstimatedTaxCost'],
  ['ValueWithoutTaxSell', 'EstimatedWithoutTaxSell'],
  ['TaxValueSell', 'EstimatedTaxSell'],
] as const;

test('DE-Estimates amounts are the sums of their DE-EstimatesQuotes lines, to the cent', async () => {
  const estimates = await rowsOf('DE-Estimates');
  const quotes = await rowsOf('DE-EstimatesQuotes');
  const months = await rowsOf('DE-EstimatesQuotesMonth');
  assert.ok(estimates.length > 5, 'the demo tenant has estimates that count');
  const linesOf = groupBy(quotes, 'EstimateId');
  const monthsOf = groupBy(months, 'EstimateItemDetailId');
  for (const e of estimates) {
    const lines = linesOf.get(e.EstimateId) ?? [];
    assert.ok(lines.length > 0, `${e.EstimateNumber} has quote lines`);
    const items = [...new Map(lines.map((q) => [q.EstimateItemId, q])).values()];
    const label = (what: string) => `${e.EstimateNumber} ${what}`;
    assert.equal(show(sum(lines.map((q) => q.ValueWithoutVatCost))), show(units(e.ValueWithoutTaxCost)), label('cost'));
    assert.equal(show(sum(lines.map((q) => q.VatValueCost))), show(units(e.TaxValueCost)), label('cost VAT'));
    assert.equal(show(sum(lines.map((q) => q.ValueWithVatCost))), show(units(e.ValueWithTaxCost)), label('cost with VAT'));
    assert.equal(show(sum(lines.map((q) => q.ValueWithoutVatIncome))), show(units(e.ValueWithoutTaxSell)), label('sell'));
    assert.equal(show(sum(items.map((i) => i.EstimateItemValueWithoutVatIncome))), show(units(e.ValueWithoutTaxSell)), label('sell by item'));
    assert.equal(show(sum(items.map((i) => i.EstimateItemVatValueIncome))), show(units(e.TaxValueSell)), label('sell VAT'));
    assert.equal(show(sum(items.map((i) => i.EstimateItemValueWithVatIncome))), show(units(e.ValueWithTaxSell)), label('sell with VAT'));
    for (const q of lines) {
      for (const c of ['ValueWithoutVatCost', 'VatValueCost', 'ValueWithoutVatIncome']) {
        assert.ok(inCents(units(q[c])), `${label(c)} is in cents: ${q[c]}`);
      }
      // The platform's line cost and income: unit price × hours (the sold quantity), without discount or commission.
      assert.equal(show(units(q.EstimateItemDetailCost)), show((units(q.EstimateItemDetailUnitPriceCost) * units(q.QuantityIncome)) / ONE));
      // Each month of the split: unit price × the month's hours.
      for (const m of monthsOf.get(q.EstimateItemDetailId) ?? []) {
        assert.equal(show(units(m.EstimateItemDetailCost)), show((units(q.EstimateItemDetailUnitPriceCost) * units(m.EstimateItemDetailTime)) / ONE));
      }
    }
  }
});

/** Per owner (project or contract): the counted estimates' amounts, each in its own currency, summed (no exchange). */
function expectedTotals(estimates: Row[], ownerColumn: 'ProjectId' | 'ContractId', ownerId: unknown): Record<string, bigint> {
  const mine = estimates.filter((e) => e[ownerColumn] === ownerId);
  const totals: Record<string, bigint> = {};
  for (const [value, estimated] of AMOUNTS) totals[estimated] = mine.reduce<bigint>((a, e) => a + units(e[value]), 0n);
  return totals;
}

test('DE-Projects and DE-Contracts Estimated* are their estimates’ DE-Estimates amounts added without exchange, as the platform', async () => {
  const estimates = await rowsOf('DE-Estimates');
  assert.equal(converted.length, 4, 'the setup gave estimates rates to convert at');
  const subCent = (e: Row) => (units(e.ValueWithoutTaxSell) * units(e.Exchange)) % ((ONE * ONE) / 100n) !== 0n;
  assert.ok(
    estimates.some((e) => converted.includes(e.EstimateId as string) && subCent(e)),
    'an estimate whose converted amount is not whole cents',
  );
  let nonZero = 0;
  for (const [query, column] of [
    ['DE-Projects', 'ProjectId'],
    ['DE-Contracts', 'ContractId'],
  ] as const) {
    for (const r of await rowsOf(query)) {
      const expected = expectedTotals(estimates, column, r[column]);
      for (const [, estimated] of AMOUNTS) {
        assert.equal(show(units(r[estimated])), show(expected[estimated]), `${query} ${String(r[column])} ${estimated}`);
        if (expected[estimated] !== 0n) nonZero++;
      }
      assert.equal(show(units(r.EstimatedWithTaxCost)), show(units(r.EstimatedWithoutTaxCost) + units(r.EstimatedTaxCost)));
      assert.equal(show(units(r.EstimatedWithTaxSell)), show(units(r.EstimatedWithoutTaxSell) + units(r.EstimatedTaxSell)));
    }
  }
  assert.ok(nonZero > 0, 'some owners have estimated amounts');
});

test('EstimatedPlannedActualMonthly: a project’s contracted cost and income are the monthly split of its live, non-Budget estimates', async () => {
  const estimates = await rowsOf('DE-Estimates');
  const months = await rowsOf('DE-EstimatesQuotesMonth');
  const monthly = await rowsOf('EstimatedPlannedActualMonthly');
  const counted = new Map(estimates.filter((e) => e.Type !== 'Budget' && e.ProjectId !== null).map((e) => [e.EstimateId, e.ProjectId]));
  assert.ok(
    estimates.some((e) => e.Type === 'Budget'),
    'the demo has Budget estimates that count elsewhere',
  );
  const expected = new Map<unknown, { cost: bigint; income: bigint }>();
  for (const m of months) {
    const project = counted.get(m.EstimateId);
    if (project === undefined || m.EstimateItemDetailMonth === null) continue;
    const t = expected.get(project) ?? { cost: 0n, income: 0n };
    t.cost += units(m.EstimateItemDetailCost);
    t.income += units(m.EstimateItemDetailIncome);
    expected.set(project, t);
  }
  let compared = 0;
  for (const [project, rows] of groupBy(monthly, 'ProjectId')) {
    const e = expected.get(project) ?? { cost: 0n, income: 0n };
    assert.equal(show(sum(rows.map((r) => r.ContractedCost))), show(e.cost), `${String(project)} ContractedCost`);
    assert.equal(show(sum(rows.map((r) => r.ContractedIncome))), show(e.income), `${String(project)} ContractedIncome`);
    if (e.income !== 0n) compared++;
  }
  assert.ok(compared > 0, 'some projects have contracted figures');
});
