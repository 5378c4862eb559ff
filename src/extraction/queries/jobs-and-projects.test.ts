// The jobs-and-projects named queries against a demo tenant: exact catalogue columns and types, real
// rows, per-user flags, and values that are computed from the data (delays, estimated totals, sums).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startTestServer, type TestServer } from '../../../test/helpers.ts';
import { CATALOGUE, type CatalogueColumn, type NamedQueryDefinition, type QueryContext, sql } from '../definition.ts';
import { NAMED_QUERIES } from './index.ts';
import { jobsAndProjects } from './jobs-and-projects.ts';

type Row = Record<string, unknown>;

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('Jobs And Projects Agency', { demoData: true, scale: 0.05 });
});
after(() => server.close());

const byName = (name: string): NamedQueryDefinition => {
  const def = jobsAndProjects.find((d) => d.name === name);
  assert.ok(def, `${name} is defined`);
  return def;
};
const catalogueOf = (name: string) => {
  const entry = CATALOGUE.find((q) => q.name === name);
  assert.ok(entry, `${name} is in the catalogue`);
  return entry;
};
/** Output columns a definition must produce: the catalogue's, with the '*' placeholder as "__fields". */
const expectedColumns = (def: NamedQueryDefinition): string[] =>
  catalogueOf(def.name).columns.map((c) => (c.name === '*' && def.userFields ? '__fields' : c.name));

async function run(def: NamedQueryDefinition, userId: string | null, limit = 200): Promise<Row[]> {
  const ctx: QueryContext = { tenantId: tenant.tenantId, userId };
  const source = def.source!(ctx);
  const query = limit > 0 ? sql`select * from (${source}) q limit ${limit}` : sql`select * from (${source}) q`;
  const result = await server.runtime.ctx.db.withTenant(tenant.tenantId, (trx) => query.execute(trx));
  return result.rows as Row[];
}
/** Plain SQL on the tenant (for the independent computations the value checks compare against). */
async function query(text: TemplateStringsArray, ...values: unknown[]): Promise<Row[]> {
  const result = await server.runtime.ctx.db.withTenant(tenant.tenantId, (trx) => sql(text, ...values).execute(trx));
  return result.rows as Row[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
function fitsType(value: unknown, column: CatalogueColumn): boolean {
  if (value === null) return true;
  switch (column.type) {
    case 'string':
      return typeof value === 'string';
    case 'guid':
      return typeof value === 'string' && UUID.test(value);
    case 'decimal':
      return typeof value === 'string' && /^-?\d+(\.\d+)?$/.test(value);
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'boolean':
      return typeof value === 'boolean';
    case 'date':
      return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value);
    case 'datetime':
      return value instanceof Date;
    case 'object':
      return typeof value === 'object';
  }
}

const todayUtc = (): string => new Date().toISOString().slice(0, 10);
const dayNumber = (isoDay: string): number => Date.parse(`${isoDay}T00:00:00Z`) / 86_400_000;
const money = (v: unknown): number => Number(v);

describe('every definition of the area', () => {
  test('covers the 17 queries of the area, each once', () => {
    const names = jobsAndProjects.map((d) => d.name).sort();
    assert.deepEqual(
      names,
      [
        'DE-Contracts',
        'DE-Jobs',
        'DE-JobsCount',
        'DE-Projects',
        'DE-ProjectsAdditionalInformation',
        'DE-ProjectsClassifications',
        'DE-ProjectsCount',
        'DE-ProjectsPlannedTime',
        'DE-ProjectsPlannedTimeCount',
        'DE-ProjectsTypes',
        'DE-RateCardsColumns',
        'DE-Requests',
        'DE-Services',
        'DE-ServicesGroups',
        'DE-Stages',
        'DE-Transitions',
        'DE-Types',
      ].sort(),
    );
  });

  for (const def of jobsAndProjects) {
    if (def.countOf) {
      test(`${def.name} counts a defined query and maps its parameters onto it`, () => {
        assert.equal(def.source, undefined);
        assert.deepEqual(def.key, []);
        const counted = NAMED_QUERIES.find((d) => d.name === def.countOf);
        assert.ok(counted?.source, `${def.countOf} exists with a source`);
        const countedColumns = catalogueOf(counted.name).columns.map((c) => c.name);
        // The engine applies a count's parameters through the counted query's map.
        for (const p of catalogueOf(def.name).parameters) {
          const column = counted.parameters?.[p];
          assert.ok(column, `${def.name} maps ${p}`);
          assert.ok(countedColumns.includes(column), `${p} -> ${column} is an output of ${counted.name}`);
        }
      });
      continue;
    }
    test(`${def.name}: catalogue columns in order, typed, with rows, for a user and for none`, async () => {
      const expected = expectedColumns(def);
      const types = new Map(catalogueOf(def.name).columns.map((c) => [c.name, c]));
      for (const userId of [tenant.userId, null]) {
        const rows = await run(def, userId);
        assert.ok(rows.length > 0, `${def.name} returns rows (user ${userId})`);
        for (const row of rows) {
          assert.deepEqual(Object.keys(row), expected);
          for (const [name, value] of Object.entries(row)) {
            if (name === '__fields') {
              assert.equal(typeof value, 'object');
              continue;
            }
            assert.ok(fitsType(value, types.get(name)!), `${def.name}.${name} = ${String(value)} is a ${types.get(name)!.type}`);
          }
        }
      }
      for (const k of def.key) assert.ok(expected.includes(k), `key ${k} is an output column`);
      const outputs = new Set(expected);
      for (const p of catalogueOf(def.name).parameters) assert.ok(def.parameters?.[p], `${def.name} maps parameter ${p}`);
      for (const [p, column] of Object.entries(def.parameters ?? {})) assert.ok(outputs.has(column), `${p} -> ${column} is an output`);
    });
  }

  test('the row keys identify rows', async () => {
    for (const def of jobsAndProjects.filter((d) => d.source)) {
      const rows = await run(def, null, 0);
      const seen = new Set(rows.map((r) => JSON.stringify(def.key.map((k) => r[k]))));
      assert.equal(seen.size, rows.length, `${def.name} key ${def.key.join(',')} is unique`);
    }
  });
});

describe('values are computed from the data', () => {
  test('DE-Jobs: IsDelayed and Delayed follow the agreed date and the stage’s Delayed flag', async () => {
    const rows = await run(byName('DE-Jobs'), null, 0);
    const flagged = new Set((await query`select id from workflow_stages where delayed`).map((r) => r.id));
    const today = dayNumber(todayUtc());
    let delayed = 0;
    for (const r of rows) {
      const end = r.EndDate instanceof Date ? r.EndDate.getTime() / 86_400_000 : null;
      const late = end !== null && end < today && flagged.has(r.StageId);
      assert.equal(r.IsDelayed, late, `${r.JobNumber} IsDelayed`);
      assert.equal(r.Delayed, late ? end! - today : null, `${r.JobNumber} Delayed`);
      if (late) {
        delayed++;
        assert.ok((r.Delayed as number) < 0, 'days overdue are negative');
      }
    }
    assert.ok(delayed > 0, 'the demo data has late jobs');
    assert.ok(rows.some((r) => r.StageType === 'Completed' && (r.EndDate as Date).getTime() / 86_400_000 < today && r.IsDelayed === false));
  });

  test('DE-Jobs: company and division are the department’s, client and product the project’s', async () => {
    const rows = await run(byName('DE-Jobs'), null, 0);
    const depts = await query`select d.id, d.company_id, d.division_id from departments d`;
    const projects = await query`select id, commercial_client_id, product_id from projects`;
    for (const r of rows) {
      const d = depts.find((x) => x.id === r.DepartmentId)!;
      assert.equal(r.CompanyId, d.company_id);
      assert.equal(r.DivisionId, d.division_id);
      const p = projects.find((x) => x.id === r.ProjectId)!;
      assert.equal(r.ClientId, p.commercial_client_id);
      assert.equal(r.ProductId, p.product_id);
    }
  });

  test('per-user flags are the calling user’s reads, teams and pending approvals, and false without a user', async () => {
    // The user on most job teams; one of their jobs gets a pending approval (rare at this scale).
    const [who] = await query`
      select a.user_id as id, min(a.document_id::text)::uuid as job_id, min(a.document_type_id::text)::uuid as type_id
      from assignments a join jobs j on j.id = a.document_id group by a.user_id order by count(*) desc, a.user_id limit 1`;
    const userId = who.id as string;
    await query`
      insert into approvals (tenant_id, document_type_id, document_id, approver_id, status)
      values (${tenant.tenantId}, ${who.type_id}, ${who.job_id}, ${userId}, 'Pending')`;
    const rows = await run(byName('DE-Jobs'), userId, 0);
    const reads = new Set((await query`select document_id from document_reads where user_id = ${userId}`).map((r) => r.document_id));
    const teams = new Set((await query`select document_id from assignments where user_id = ${userId}`).map((r) => r.document_id));
    const pending = new Set((await query`select document_id from approvals where approver_id = ${userId} and status = 'Pending'`).map((r) => r.document_id));
    for (const r of rows) {
      assert.equal(r.AlreadyRead, reads.has(r.JobId), `${r.JobNumber} AlreadyRead`);
      assert.equal(r.CurrentUserInTeam, teams.has(r.JobId), `${r.JobNumber} CurrentUserInTeam`);
      assert.equal(r.CurrentUserPending, pending.has(r.JobId), `${r.JobNumber} CurrentUserPending`);
    }
    assert.ok(rows.some((r) => r.CurrentUserPending === true));
    assert.ok(rows.some((r) => r.CurrentUserInTeam === true));
    const anonymous = await run(byName('DE-Jobs'), null, 0);
    assert.ok(anonymous.every((r) => r.AlreadyRead === false && r.CurrentUserInTeam === false && r.CurrentUserPending === false));
  });

  test('DE-Requests: favourites and read marks of the calling user; IsDraft and Days from today to the end', async () => {
    const [fav] = await query`select f.user_id, f.document_id, f.id from favorites f join requests r on r.id = f.document_id limit 1`;
    assert.ok(fav, 'the demo data has a favourite request');
    const rows = await run(byName('DE-Requests'), fav.user_id as string, 0);
    const row = rows.find((r) => r.RequestId === fav.document_id)!;
    assert.equal(row.IsFavorite, true);
    assert.equal(row.FavoriteId, fav.id);
    const reads = await query`select document_id, id from document_reads where user_id = ${fav.user_id}`;
    for (const r of rows) {
      assert.equal(r.BaseObjectReadId, reads.find((x) => x.document_id === r.RequestId)?.id ?? null);
      assert.equal(r.AlreadyRead, r.BaseObjectReadId !== null);
      assert.equal(r.IsFavorite, r.FavoriteId !== null);
      assert.equal(r.IsDraft, r.StageType === 'Draft');
      const days = Math.round((Date.parse((r.EndDateUtc as Date).toISOString().slice(0, 10)) - Date.parse(todayUtc())) / 86_400_000);
      assert.equal(r.Days, days);
    }
    const anonymous = await run(byName('DE-Requests'), null, 0);
    assert.ok(anonymous.every((r) => r.IsFavorite === false && r.FavoriteId === null && r.BaseObjectReadId === null));
  });

  /**
   * Estimated totals per owner (project or contract), computed in JS by the platform's rule: line amounts
   * and line VAT in cents, each estimate in its own currency, summed without exchange.
   */
  async function estimatedByOwner(
    column: 'project_id' | 'contract_id',
  ): Promise<Map<string, { cost: number; costTax: number; sell: number; sellTax: number }>> {
    const lines = await query`
      select e.project_id, e.contract_id, e.exchange, st.name as stage_type,
             d.quantity_cost, d.unit_price_cost, d.discount_cost, d.quantity_income, d.unit_price_income, d.discount_income,
             d.agency_commission_value, dv.percentage as cost_vat, iv.percentage as sell_vat
      from estimate_item_details d
      join estimate_items i on i.id = d.estimate_item_id
      join estimates e on e.id = i.estimate_id
      join workflow_stages s on s.id = e.stage_id
      join workflow_stage_types st on st.id = s.stage_type_id
      left join vats dv on dv.id = d.vat_id
      left join vats iv on iv.id = i.vat_id`;
    const inCents = (v: number) => Math.round(v * 100) / 100;
    const totals = new Map<string, { cost: number; costTax: number; sell: number; sellTax: number }>();
    for (const l of lines) {
      const owner = l[column] as string | null;
      if (!owner || l.stage_type === 'Draft' || l.stage_type === 'Canceled') continue;
      const x = 1;
      const cost = inCents(Number(l.quantity_cost) * Number(l.unit_price_cost) - Number(l.discount_cost));
      const sell = inCents(Number(l.quantity_income) * Number(l.unit_price_income) - Number(l.discount_income) + Number(l.agency_commission_value));
      const t = totals.get(owner) ?? { cost: 0, costTax: 0, sell: 0, sellTax: 0 };
      t.cost += cost * x;
      t.costTax += inCents((cost * Number(l.cost_vat ?? 0)) / 100) * x;
      t.sell += sell * x;
      t.sellTax += inCents((sell * Number(l.sell_vat ?? 0)) / 100) * x;
      totals.set(owner, t);
    }
    return totals;
  }
  function assertEstimated(r: Row, t: { cost: number; costTax: number; sell: number; sellTax: number } | undefined, label: string): void {
    const e = t ?? { cost: 0, costTax: 0, sell: 0, sellTax: 0 };
    const near = (a: unknown, b: number, what: string) => assert.ok(Math.abs(money(a) - b) < 0.01, `${label} ${what}: ${a} vs ${b}`);
    const sum = (a: unknown, b: unknown) => Math.round((money(a) + money(b)) * 10_000) / 10_000;
    near(r.EstimatedWithoutTaxCost, e.cost, 'cost');
    near(r.EstimatedTaxCost, e.costTax, 'cost tax');
    near(r.EstimatedWithoutTaxSell, e.sell, 'sell');
    near(r.EstimatedTaxSell, e.sellTax, 'sell tax');
    assert.equal(money(r.EstimatedWithTaxCost), sum(r.EstimatedWithoutTaxCost, r.EstimatedTaxCost));
    assert.equal(money(r.EstimatedWithTaxSell), sum(r.EstimatedWithoutTaxSell, r.EstimatedTaxSell));
  }

  test('DE-Projects: estimated totals, project type and delay from the project’s jobs', async () => {
    const rows = await run(byName('DE-Projects'), null, 0);
    const totals = await estimatedByOwner('project_id');
    const jobs = await run(byName('DE-Jobs'), null, 0);
    assert.ok(rows.some((r) => money(r.EstimatedWithoutTaxSell) > 0));
    for (const r of rows) {
      assertEstimated(r, totals.get(r.ProjectId as string), r.ProjectNumber as string);
      assert.equal(r.ProjectType, r.ContractId === null ? 'Isolated' : 'Contract');
      const late = jobs.filter((j) => j.ProjectId === r.ProjectId && j.IsDelayed === true).map((j) => j.Delayed as number);
      assert.equal(r.IsDelayed, late.length > 0);
      assert.equal(r.Delayed, late.length > 0 ? Math.max(...late) : null, 'the least late job, as the platform');
    }
    assert.ok(rows.some((r) => r.IsDelayed === true));
    const count = await query`select count(*)::int as n from projects`;
    assert.equal(rows.length, count[0].n);
  });

  test('DE-Contracts: no Draft contracts; estimated totals of the contract’s estimates', async () => {
    // At this scale the contract's estimates may all be drafts: make them count.
    await query`
      update estimates e set stage_id = s.id from workflow_stages s join workflow_stage_types st on st.id = s.stage_type_id
      where e.contract_id is not null and s.workflow_id = e.workflow_id and st.name = 'Completed'`;
    const rows = await run(byName('DE-Contracts'), null, 0);
    const [{ n }] = await query`
      select count(*)::int as n from contracts c join workflow_stages s on s.id = c.stage_id
      join workflow_stage_types st on st.id = s.stage_type_id where st.name <> 'Draft'`;
    assert.equal(rows.length, n);
    assert.ok(rows.every((r) => r.StageType !== 'Draft'));
    const totals = await estimatedByOwner('contract_id');
    for (const r of rows) assertEstimated(r, totals.get(r.ContractId as string), r.ContractNumber as string);
    assert.ok(rows.some((r) => money(r.EstimatedWithoutTaxSell) > 0));
  });

  test('DE-ProjectsPlannedTime: days of the company RequiredHours; income = days × actual rate; live projects only', async () => {
    const rows = await run(byName('DE-ProjectsPlannedTime'), null, 0);
    const entries = await query`
      select t.project_id, t.estimate_item_detail_id, t.month, t.planned_hours, c.required_hours, m.hours as line_hours, st.name as stage_type
        from project_planned_times t
        join projects p on p.id = t.project_id
        join workflow_stages s on s.id = p.stage_id join workflow_stage_types st on st.id = s.stage_type_id
        join estimate_item_details dt on dt.id = t.estimate_item_detail_id
        join departments d on d.id = dt.department_id join companies c on c.id = d.company_id
        left join estimate_item_detail_months m on m.estimate_item_detail_id = dt.id and m.month = t.month
       where t.user_id is not null and t.typology_group_id is not null`;
    let contracted = 0;
    for (const r of rows) {
      assert.ok(r.StageType !== 'Draft');
      assert.ok(Math.abs(money(r.ProjectPlannedIncome) - money(r.ProjectPlannedTime) * money(r.ActualSellRate)) < 0.0001);
      const e = entries.find((x) => x.project_id === r.ProjectId && x.estimate_item_detail_id === r.EstimateItemDetailId && x.month === r.Month);
      assert.ok(e, 'an entry with a user, a typology group and a quote line');
      assert.notEqual(e.stage_type, 'Draft');
      assert.notEqual(e.stage_type, 'Canceled');
      assert.ok(Math.abs(money(r.ProjectPlannedTime) - money(e.planned_hours) / money(e.required_hours)) < 1e-9);
      if (e.line_hours === null) assert.equal(r.ProjectPlannedContractedTime, null);
      else {
        assert.ok(Math.abs(money(r.ProjectPlannedContractedTime) - money(e.line_hours) / money(e.required_hours)) < 1e-9);
        contracted++;
      }
    }
    assert.ok(contracted > 0);
  });

  test('DE-ProjectsAdditionalInformation: the tenant’s project fields and each project’s values', async () => {
    const def = byName('DE-ProjectsAdditionalInformation');
    const ctx: QueryContext = { tenantId: tenant.tenantId, userId: null };
    const fields = await server.runtime.ctx.db.withTenant(tenant.tenantId, (trx) => def.userFields!.fields(ctx).execute(trx));
    assert.deepEqual(fields.rows, [
      { name: 'ClientPoReference', type: 'string' },
      { name: 'InternalBudget', type: 'decimal' },
      { name: 'KickoffDate', type: 'date' },
    ]);
    const rows = await run(def, null, 0);
    const values = await query`
      select v.document_id, f.column_name, v.value from user_field_values v join user_fields f on f.id = v.user_field_id
      join projects p on p.id = v.document_id`;
    for (const r of rows) {
      const expected = Object.fromEntries(values.filter((v) => v.document_id === r.ProjectId).map((v) => [v.column_name, v.value]));
      assert.deepEqual(r.__fields, expected);
    }
    assert.ok(rows.some((r) => Object.keys(r.__fields as object).length === 3));
  });

  test('DE-Transitions: lists flattened to text; the types whose workflow is the transition’s', async () => {
    const rows = await run(byName('DE-Transitions'), null, 0);
    const complete = rows.find((r) => r.Document === 'Deliverable (Job)' && r.Transition === 'Complete')!;
    const ofWorkflow = await query`
      select jt.id, jt.name from job_types jt where jt.workflow_id = ${complete.WorkflowId} order by jt.name, jt.id`;
    assert.ok(ofWorkflow.length > 1);
    assert.equal(complete.TypeIds, ofWorkflow.map((t) => t.id).join(', '));
    assert.equal(complete.Types, ofWorkflow.map((t) => t.name).join(', '));
    // The contract workflow is the demo generator's own, with motives, actions and roles.
    assert.equal(rows.find((r) => r.Document === 'Contract' && r.Transition === 'Complete')!.Actions, 'SendEmail');
    const cancel = rows.find((r) => r.Document === 'Contract' && r.Transition === 'Cancel')!;
    assert.equal(cancel.Motives, 'Client canceled, Budget cut, Duplicate');
    assert.equal(cancel.FromAllowWriteTeams, 'Account Manager, Project Manager');
    assert.equal(cancel.ToAllowWriteTeams, null);
    assert.equal(cancel.Roles, 'Administrator, Producer');
  });

  test('DE-RateCardsColumns: one row per cell holding a rate, of a row with a typology group', async () => {
    const rows = await run(byName('DE-RateCardsColumns'), null, 0);
    const [{ n }] = await query`
      select count(*)::int as n from rate_card_item_values v join rate_card_items i on i.id = v.rate_card_item_id where i.typology_group_id is not null`;
    assert.equal(rows.length, n);
    assert.ok((n as number) > 0);
    const values = await query`select id, rate_card_item_id, rate_card_column_id, value from rate_card_item_values`;
    for (const r of rows) {
      const v = values.find((x) => x.rate_card_item_id === r.RateCardItemId && x.rate_card_column_id === r.RateCardColumnId);
      assert.equal(r.RateCardItemValueId, v?.id ?? null);
      assert.equal(r.Cost, v?.value ?? null);
    }
  });
});
