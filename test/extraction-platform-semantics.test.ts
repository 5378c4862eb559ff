// Named queries compute what the platform's published statements compute (issue 30, decision 0046).
// A tenant built for the test holds the cases the statements decide — drafts, canceled, a Budget estimate,
// a foreign-currency estimate, half-day and hour-based leaves, a leave not yet requested, delayed and
// not-delayed stages, time booked in another company, a cost changed after booking, an expense sheet with
// two items — and every expected value below is worked out by hand from the statements' rules.
// A demo tenant then shows that the demo data holds each of those cases.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

type Row = Record<string, unknown>;

let server: TestServer;
let owner: pg.Client;
let headers: Record<string, string>;
let tenantId: string;

/** Ids of the fixture, by a short name. */
const id: Record<string, string> = {};
const newId = (name: string): string => {
  id[name] = randomUUID();
  return id[name];
};

async function insert(table: string, row: Row): Promise<void> {
  const columns = ['tenant_id', ...Object.keys(row)];
  const values = [tenantId, ...Object.values(row)];
  await owner.query(`insert into ${table} (${columns.join(', ')}) values (${columns.map((_, i) => `$${i + 1}`).join(', ')})`, values);
}
async function one(text: string, values: unknown[] = []): Promise<Row> {
  const { rows } = await owner.query(text, [tenantId, ...values]);
  assert.equal(rows.length, 1, text);
  return rows[0];
}

async function rows(name: string, body: Row = {}): Promise<{ data: Row[]; totalCount: number }> {
  const res = await server.request('POST', `/api/v3/analytics/named-query/${name}/dynamic-execute`, { headers, json: body });
  assert.equal(res.status, 200, res.text);
  return res.body as { data: Row[]; totalCount: number };
}
async function count(name: string): Promise<number> {
  const { data } = await rows(name);
  return data[0].Count as number;
}

const today = (): number => Math.floor(Date.now() / 86_400_000);
const dayOf = (iso: string): number => Date.parse(`${iso}T00:00:00Z`) / 86_400_000;
const isoDay = (d: number): string => new Date(d * 86_400_000).toISOString().slice(0, 10);
/** Decimal strings compared as numbers to 1e-9 (numeric division carries many digits). */
const near = (actual: unknown, expected: number, what: string): void =>
  assert.ok(actual !== null && Math.abs(Number(actual) - expected) < 1e-9, `${what}: ${String(actual)} ≠ ${expected}`);

before(async () => {
  server = await startTestServer();
  const tenant = await server.createTenant('Semantics Agency');
  tenantId = tenant.tenantId;
  headers = appHeaders(tenant);
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  await buildFixture();
});
after(async () => {
  await owner?.end();
  await server?.close();
});

async function buildFixture(): Promise<void> {
  // The bootstrap's company A (EUR, 8 daily hours), its division, department, typology group and typology.
  const a = await one(`select c.id as company, c.currency_id, dv.id as division, d.id as department, tg.id as tg, ty.id as typology
                         from companies c join divisions dv on dv.company_id = c.id join departments d on d.division_id = dv.id
                         join typology_groups tg on tg.tenant_id = c.tenant_id join typologies ty on ty.typology_group_id = tg.id
                        where c.tenant_id = $1`);
  Object.assign(id, { companyA: a.company, eur: a.currency_id, divisionA: a.division, deptA: a.department, tg: a.tg, typology: a.typology });
  const stage = async (className: string, type: string) =>
    (await one(
      `select s.id, s.workflow_id from workflow_stages s join workflows w on w.id = s.workflow_id join document_types dt on dt.id = w.document_type_id
          join workflow_stage_types st on st.id = s.stage_type_id where s.tenant_id = $1 and dt.class_name = $2 and st.name = $3`,
      [className, type],
    )) as { id: string; workflow_id: string };
  const docType = async (className: string) => (await one('select id from document_types where tenant_id = $1 and class_name = $2', [className])).id;
  const project = { draft: await stage('Project', 'Draft'), open: await stage('Project', 'In Progress'), done: await stage('Project', 'Completed') };
  const job = { draft: await stage('Deliverable', 'Draft'), open: await stage('Deliverable', 'In Progress') };

  // Company B: USD, 6 daily hours, its own division and department.
  await insert('currencies', { id: newId('usd'), name: 'US Dollar', iso_code: 'USD', symbol: '$' });
  await insert('companies', { id: newId('companyB'), code: 'B', name: 'Company B', currency_id: id.usd, required_hours: 6 });
  await insert('divisions', { id: newId('divisionB'), company_id: id.companyB, name: 'Division B' });
  await insert('departments', { id: newId('deptB'), company_id: id.companyB, division_id: id.divisionB, name: 'Department B' });
  await insert('typology_groups', { id: newId('tg2'), name: 'Seniors', company_id: id.companyA });
  await insert('typologies', { id: newId('typology2'), name: 'Senior', department_id: id.deptA, typology_group_id: id.tg2 });

  // Ana works in A; her typology is Senior now, she was Staff when she booked her time. Bruno approves.
  await insert('users', {
    id: newId('ana'),
    user_name: 'ana',
    name: 'Ana',
    company_id: id.companyA,
    department_id: id.deptA,
    typology_id: id.typology2,
    leave_day_hours: 8,
  });
  await insert('users', { id: newId('bruno'), user_name: 'bruno', name: 'Bruno', company_id: id.companyA, department_id: id.deptA, typology_id: id.typology });
  await insert('user_costs', { user_id: id.ana, company_id: id.companyA, currency_id: id.eur, hourly_value: 20, start_date: '2025-01-01' });

  // Clients: one in progress, one draft. Natures and classification of projects.
  await insert('commercial_clients', { id: newId('client'), name: 'Client One', workflow_id: project.open.workflow_id, stage_id: project.open.id });
  await insert('commercial_clients', { id: newId('draftClient'), name: 'Draft Client', workflow_id: project.draft.workflow_id, stage_id: project.draft.id });
  await insert('project_natures', {
    id: newId('nature'),
    company_id: id.companyA,
    name: 'Campaign',
    is_deliverable: true,
    template_file_name: 'campaign.docx',
  });
  await insert('project_types', { id: newId('projectType'), company_id: id.companyA, name: 'Not a nature', document_type_id: await docType('Project') });
  await insert('project_classifications', { id: newId('classification'), company_id: id.companyA, name: 'Retail' });
  const projectRow = (key: string, number: string, s: { id: string; workflow_id: string }) =>
    insert('projects', {
      id: newId(key),
      number,
      name: `Project ${number}`,
      company_id: id.companyA,
      commercial_client_id: id.client,
      nature_id: id.nature,
      classification_id: id.classification,
      workflow_id: s.workflow_id,
      stage_id: s.id,
      start_date: '2025-01-01',
      end_date: '2025-06-30',
    });
  await projectRow('p1', 'P-1', project.open);
  await projectRow('p2', 'P-2', project.draft);

  // Jobs of P1: two late in progress (10 January, 1 March 2025), one late draft (not delayed: its stage has no Delayed flag).
  const jobRow = (key: string, end: string, s: { id: string; workflow_id: string }) =>
    insert('jobs', {
      id: newId(key),
      number: key.toUpperCase(),
      name: key,
      project_id: id.p1,
      department_id: id.deptA,
      workflow_id: s.workflow_id,
      stage_id: s.id,
      start_date: '2025-01-01',
      end_date: end,
    });
  await jobRow('j1', '2025-01-10', job.open);
  await jobRow('j2', '2025-01-05', job.draft);
  await jobRow('j3', '2025-03-01', job.open);

  // Estimates of P1: E1 Fixed Price in EUR (in progress), E2 Budget in USD at 0.9 (completed), E3 draft.
  await insert('job_types', { id: newId('fixedPrice'), company_id: id.companyA, name: 'Fixed Price', document_type_id: await docType('Estimate') });
  await insert('job_types', { id: newId('budget'), company_id: id.companyA, name: 'Budget', document_type_id: await docType('Estimate') });
  const estimateRow = (key: string, type: string, currency: string, exchange: number, s: { id: string; workflow_id: string }) =>
    insert('estimates', {
      id: newId(key),
      number: key.toUpperCase(),
      name: key,
      commercial_client_id: id.client,
      project_id: id.p1,
      department_id: id.deptA,
      currency_id: currency,
      exchange,
      type_id: type,
      workflow_id: s.workflow_id,
      stage_id: s.id,
    });
  await estimateRow('e1', id.fixedPrice, id.eur, 1, project.open);
  await estimateRow('e2', id.budget, id.usd, 0.9, project.done);
  await estimateRow('e3', id.fixedPrice, id.eur, 1, project.draft);
  for (const e of ['e1', 'e2', 'e3']) await insert('estimate_items', { id: newId(`${e}item`), estimate_id: id[e], name: `${e} item` });
  const line = (key: string, item: string, fields: Row) => insert('estimate_item_details', { id: newId(key), estimate_item_id: id[item], ...fields });
  const resource = { department_id: id.deptA, typology_group_id: id.tg, user_id: id.ana, detail_type: 0 };
  // L1: 10 h at 50 (cost 20), discount 5; split 6 h in January, 4 h in February.
  await line('l1', 'e1item', {
    ...resource,
    quantity_income: 10,
    quantity_cost: 10,
    unit_price_income: 50,
    unit_price_cost: 20,
    discount_income: 5,
    table_rate: 55,
  });
  // L2: a third-party line (no typology group), 1 × 100 (cost 80), no monthly split.
  await line('l2', 'e1item', { detail_type: 1, quantity_income: 1, quantity_cost: 1, unit_price_income: 100, unit_price_cost: 80 });
  // L3 (Budget, USD): 4 h at 30 (cost 10), January. L4 (draft estimate): 2 h at 40 (cost 15), January.
  await line('l3', 'e2item', { ...resource, quantity_income: 4, quantity_cost: 4, unit_price_income: 30, unit_price_cost: 10 });
  await line('l4', 'e3item', { ...resource, quantity_income: 2, quantity_cost: 2, unit_price_income: 40, unit_price_cost: 15 });
  const month = (l: string, m: string, hours: number) => insert('estimate_item_detail_months', { estimate_item_detail_id: id[l], month: m, hours });
  await month('l1', '2025-01-01', 6);
  await month('l1', '2025-02-01', 4);
  await month('l3', '2025-01-01', 4);
  await month('l4', '2025-01-01', 2);

  // Planned time: Ana on L1 in January, 12 h at an actual sell rate of 60; a group-level entry (no user) and
  // an entry of the draft project P2 are left out by the platform.
  const planned = { department_id: id.deptA, typology_group_id: id.tg, estimate_item_detail_id: id.l1, month: '2025-01-01' };
  await insert('project_planned_times', { ...planned, project_id: id.p1, user_id: id.ana, planned_hours: 12, actual_sell_rate: 60, contracted_sell_rate: 50 });
  await insert('project_planned_times', { ...planned, project_id: id.p1, month: '2025-02-01', planned_hours: 8, actual_sell_rate: 60 });
  await insert('project_planned_times', { ...planned, project_id: id.p2, user_id: id.ana, planned_hours: 5, actual_sell_rate: 60 });

  // Timesheets of Ana on J1: 4 h in A; 1.5 h booked in company B (its department); 2 h in February booked at
  // a cost of 18 before her cost became 20 for the whole year (changed after booking).
  const booked = { user_id: id.ana, job_id: id.j1, booked_typology_id: id.typology, status: 'Approved', requested_approval: true };
  await insert('timesheets', {
    ...booked,
    id: newId('t1'),
    date: '2025-01-15',
    duration_minutes: 240,
    booked_company_id: id.companyA,
    booked_department_id: id.deptA,
    booked_hourly_cost: 20,
  });
  await insert('timesheets', {
    ...booked,
    id: newId('t2'),
    date: '2025-01-16',
    duration_minutes: 90,
    booked_company_id: id.companyB,
    booked_department_id: id.deptB,
    booked_hourly_cost: 20,
  });
  await insert('timesheets', {
    ...booked,
    id: newId('t3'),
    date: '2025-02-03',
    duration_minutes: 120,
    booked_company_id: id.companyA,
    booked_department_id: id.deptA,
    booked_hourly_cost: 18,
  });

  // A deleted entry: only in DE-TimeSheetsDeleted.
  await insert('timesheets', {
    ...booked,
    id: newId('t4'),
    date: '2025-02-04',
    duration_minutes: 60,
    booked_company_id: id.companyA,
    booked_department_id: id.deptA,
    booked_hourly_cost: 20,
    deleted_on: '2025-02-05T10:00:00Z',
  });

  // Leaves of Ana (8 h a leave day): a full day approved by Bruno, a half day, a day not yet requested, and
  // 90 minutes of an hour-based type that was canceled.
  await insert('leave_types', { id: newId('vacation'), company_id: id.companyA, name: 'Vacation' });
  await insert('leave_types', { id: newId('medical'), company_id: id.companyA, name: 'Medical', is_hourly: true });
  const leave = (key: string, fields: Row) => insert('leaves', { id: newId(key), user_id: id.ana, leave_type_id: id.vacation, total_minutes: 480, ...fields });
  await leave('lv1', { day: '2025-03-03', status: 'Approved', requested_approval: true });
  await leave('lv2', { day: '2025-03-04', is_half_day: true, total_minutes: 240, status: 'New', requested_approval: true });
  await leave('lv3', { day: '2025-03-05', status: 'Draft', requested_approval: false });
  await leave('lv4', { day: '2025-03-06', leave_type_id: id.medical, total_minutes: 90, status: 'Canceled', requested_approval: true });
  const leaveType = await docType('Leave');
  await insert('approvals', { document_type_id: leaveType, document_id: id.lv1, approver_id: id.bruno, role: 'Approver', status: 'Approved' });
  await insert('approvals', { document_type_id: leaveType, document_id: id.lv1, approver_id: id.ana, role: 'HR', status: 'Approved' });
  await insert('approvals', { document_type_id: leaveType, document_id: id.lv2, approver_id: id.bruno, role: 'Approver', status: 'Pending' });

  // An expense sheet with two items.
  await insert('expense_types', { id: newId('taxi'), company_id: id.companyA, name: 'Taxi' });
  await insert('expense_sheets', {
    id: newId('sheet'),
    company_id: id.companyA,
    currency_id: id.eur,
    emission_date: '2025-02-10',
    number: 'EXP-1',
    user_id: id.ana,
  });
  for (const [key, value] of [
    ['x1', 10],
    ['x2', 20],
  ] as const)
    await insert('expense_items', {
      id: newId(key),
      number: `EXP-1/${key}`,
      date: '2025-02-10',
      expense_sheet_id: id.sheet,
      expense_type_id: id.taxi,
      value_without_vat: value,
    });

  // A request ending in five days, of a type that belongs to department B; a purchase order of E1 whose own
  // client and department differ from the estimate's.
  await insert('job_types', {
    id: newId('requestType'),
    company_id: id.companyB,
    department_id: id.deptB,
    name: 'Creative',
    document_type_id: await docType('Request'),
  });
  await insert('requests', {
    id: newId('request'),
    number: 'R-1',
    name: 'Brief',
    department_id: id.deptA,
    type_id: id.requestType,
    begin_date_utc: '2025-01-01T00:00:00Z',
    end_date_utc: `${isoDay(today() + 5)}T12:00:00Z`,
  });
  await insert('suppliers', { id: newId('supplier'), company_id: id.companyA, name: 'Printer' });
  await insert('purchase_orders', {
    id: newId('po'),
    number: 'PO-1',
    date: '2025-02-01',
    company_id: id.companyA,
    currency_id: id.eur,
    supplier_id: id.supplier,
    estimate_id: id.e1,
    project_id: id.p1,
    commercial_client_id: id.draftClient,
    department_id: id.deptB,
  });
}

describe('a tenant with the cases the statements decide', () => {
  test('DE-Jobs / DE-JobsCount: delayed by the stage’s flag; Draft jobs listed but not counted', async () => {
    const { data } = await rows('DE-Jobs', { queryBuilder: { orderBy: [{ field: 'JobNumber' }] } });
    assert.deepEqual(
      data.map((r) => [r.JobNumber, r.IsDelayed, r.Delayed]),
      [
        ['J1', true, dayOf('2025-01-10') - today()],
        ['J2', false, null],
        ['J3', true, dayOf('2025-03-01') - today()],
      ],
    );
    assert.equal(await count('DE-JobsCount'), 2);
  });

  test('DE-Projects / DE-ProjectsCount: Estimated* in each estimate’s own currency; Delayed of the least late job; Draft not counted', async () => {
    const { data } = await rows('DE-Projects', { queryBuilder: { orderBy: [{ field: 'ProjectNumber' }] } });
    assert.deepEqual(
      data.map((r) => r.ProjectNumber),
      ['P-1', 'P-2'],
    );
    const p1 = data[0];
    // E1: cost 10 × 20 + 1 × 80 = 280, sell 10 × 50 − 5 + 1 × 100 = 595; E2 (USD, not converted): cost 40, sell 120; E3 is a draft.
    near(p1.EstimatedWithoutTaxCost, 320, 'EstimatedWithoutTaxCost');
    near(p1.EstimatedWithoutTaxSell, 715, 'EstimatedWithoutTaxSell');
    near(p1.EstimatedWithTaxSell, 715, 'EstimatedWithTaxSell (no VAT)');
    assert.equal(p1.IsDelayed, true);
    assert.equal(p1.Delayed, dayOf('2025-03-01') - today());
    assert.equal(p1.NatureId, id.nature);
    assert.equal(data[1].IsDelayed, false);
    assert.equal(await count('DE-ProjectsCount'), 1);
  });

  test('DE-ProjectsTypes: the project natures, so ProjectTypeId joins DE-Projects’ NatureId', async () => {
    const { data } = await rows('DE-ProjectsTypes');
    assert.deepEqual(
      data.map((r) => [r.ProjectTypeId, r.ProjectType, r.DocumentType, r.TemplateFileName, r.AllowsTimesheet, r.IsDeliverable, r.Active]),
      [[id.nature, 'Campaign', 'Project', 'campaign.docx', true, true, true]],
    );
  });

  test('DE-Clients: Draft clients left out', async () => {
    const { data } = await rows('DE-Clients');
    assert.deepEqual(
      data.map((r) => r.Client),
      ['Client One'],
    );
  });

  test('DE-EstimatesQuotes: cost and income are unit price × hours; Contract and Brand as the platform', async () => {
    const { data } = await rows('DE-EstimatesQuotes', { queryBuilder: { orderBy: [{ field: 'EstimateNumber' }, { field: 'EstimateItemDetailType' }] } });
    assert.deepEqual(
      data.map((r) => [r.EstimateNumber, Number(r.EstimateItemDetailCost), Number(r.EstimateItemDetailIncome), Number(r.EstimateItemDetailUnitPriceIncome)]),
      [
        ['E1', 200, 500, 500],
        ['E1', 80, 100, 100],
        ['E2', 40, 120, 120],
        ['E3', 30, 80, 80],
      ],
    );
    // The stored line values keep discounts: L1's income is 10 × 50 − 5.
    near(data[0].ValueWithoutVatIncome, 495, 'L1 ValueWithoutVatIncome');
  });

  test('DE-EstimatesQuotesMonth: resource lines of estimates neither Draft nor Canceled; unit price × the month’s hours', async () => {
    const { data, totalCount } = await rows('DE-EstimatesQuotesMonth', {
      queryBuilder: { orderBy: [{ field: 'EstimateNumber' }, { field: 'EstimateItemDetailMonth' }] },
    });
    assert.deepEqual(
      data.map((r) => [
        r.EstimateNumber,
        (r.EstimateItemDetailMonth as string).slice(0, 10),
        Number(r.EstimateItemDetailTime),
        Number(r.EstimateItemDetailCost),
        Number(r.EstimateItemDetailIncome),
      ]),
      [
        ['E1', '2025-01-01', 6, 120, 300],
        ['E1', '2025-02-01', 4, 80, 200],
        ['E2', '2025-01-01', 4, 40, 120],
      ],
    );
    assert.equal(totalCount, 3);
    assert.equal(await count('DE-EstimatesQuotesMonthCount'), 3);
  });

  test('DE-ProjectsPlannedTime: days of the quote line company’s RequiredHours; entries without a user and Draft projects left out', async () => {
    const { data } = await rows('DE-ProjectsPlannedTime');
    assert.equal(data.length, 1);
    const r = data[0];
    assert.equal(r.Project, 'P-1 - Project P-1');
    near(r.ProjectPlannedTime, 12 / 8, 'ProjectPlannedTime');
    near(r.ProjectPlannedContractedTime, 6 / 8, 'ProjectPlannedContractedTime');
    near(r.ProjectPlannedIncome, (12 / 8) * 60, 'ProjectPlannedIncome');
    near(r.RateCardSellRate, 55, 'RateCardSellRate');
    assert.equal(await count('DE-ProjectsPlannedTimeCount'), 1);
  });

  test('EstimatedPlannedActualMonthly: per resource company and quote line, in days; Budget out; planned cost = income; actual income 0', async () => {
    const { data } = await rows('EstimatedPlannedActualMonthly', {
      queryBuilder: { orderBy: [{ field: 'Month' }, { field: 'Company' }, { field: 'ContractedTime', direction: 'desc' }] },
    });
    const shape = data.map((r) => ({
      company: r.Company,
      month: r.Month,
      tg: r.TypologyGroup,
      project: r.Project,
      contracted: [Number(r.ContractedTime), Number(r.ContractedCost), Number(r.ContractedIncome)],
      planned: [Number(r.PlannedContractedTime), Number(r.PlannedTime), Number(r.PlannedCost), Number(r.PlannedIncome)],
      actual: [Number(r.ActualTime), Number(r.ActualCost), Number(r.ActualIncome)],
      symbol: r.CurrencySymbol,
      currencyCompany: r.CurrencyCompany,
    }));
    const row = (company: string, month: string, c: number[], p: number[], a: number[], symbol: string) => ({
      company,
      month,
      tg: 'Staff',
      project: 'Project P-1',
      contracted: c,
      planned: p,
      actual: a,
      symbol,
      currencyCompany: 'Semantics Agency',
    });
    assert.deepEqual(shape, [
      // Actual in January booked in B (6 h a day, USD): 1.5 h = 0.25 days × 20.
      row('Company B', '2025-01-01', [0, 0, 0], [0, 0, 0, 0], [0.25, 5, 0], '$'),
      // L1 in January: 6 h contracted at 20 / 50; planned 12 h = 1.5 days of 8 h, its line's 6 h = 0.75 days, 1.5 × 60 = 90.
      row('Semantics Agency', '2025-01-01', [6, 120, 300], [0.75, 1.5, 90, 90], [0, 0, 0], '€'),
      // Actual in January in A: 4 h = 0.5 days × 20.
      row('Semantics Agency', '2025-01-01', [0, 0, 0], [0, 0, 0, 0], [0.5, 10, 0], '€'),
      // L1 in February: 4 h contracted.
      row('Semantics Agency', '2025-02-01', [4, 80, 200], [0, 0, 0, 0], [0, 0, 0], '€'),
      // Actual in February: 2 h = 0.25 days × the 18 stored at booking.
      row('Semantics Agency', '2025-02-01', [0, 0, 0], [0, 0, 0, 0], [0.25, 4.5, 0], '€'),
    ]);
    for (const r of data) near(r.PlannedProfit, 0, 'PlannedProfit');
  });

  test('DE-TimeSheets: company, department and cost as booked; typology current; TotalUserCost from the stored cost', async () => {
    const { data } = await rows('DE-TimeSheets', { queryBuilder: { orderBy: [{ field: 'Day' }] } });
    assert.deepEqual(
      data.map((r) => [r.Day, r.Company, r.UserDepartment, r.Typology, Number(r.Hours), Number(r.HourlyUserCost), Number(r.TotalUserCost)]),
      [
        ['2025-01-15', 'Semantics Agency', 'General', 'Senior', 4, 20, 80],
        ['2025-01-16', 'Company B', 'Department B', 'Senior', 1.5, 20, 30],
        ['2025-02-03', 'Semantics Agency', 'General', 'Senior', 2, 18, 36],
      ],
    );
  });

  test('DE-TimeSheetsDeleted(Count): ModifiedFrom on the deletion time; From/To accepted and not applied, as the statement', async () => {
    const all = await rows('DE-TimeSheetsDeleted', { parameters: { From: '2030-01-01', To: '2030-01-02' } });
    assert.deepEqual(
      all.data.map((r) => r.TimesheetId),
      [id.t4],
    );
    assert.equal((await rows('DE-TimeSheetsDeleted', { parameters: { ModifiedFrom: '2025-02-06' } })).data.length, 0);
    const counted = await rows('DE-TimeSheetsDeletedCount', { parameters: { From: '2030-01-01' } });
    assert.equal(counted.data[0].Count, 1);
  });

  test('DE-Leaves / DE-LeavesCount: only leaves whose approval was requested; Hours by type; who approved', async () => {
    const { data } = await rows('DE-Leaves', { queryBuilder: { orderBy: [{ field: 'Day' }] } });
    assert.deepEqual(
      data.map((r) => [(r.Day as string).slice(0, 10), r.Hours, r.Status, r.Approvers, r.HRApprovers]),
      [
        ['2025-03-03', 8, 'Approved', 'Bruno', null],
        ['2025-03-04', 4, 'New', null, null],
        ['2025-03-06', 2, null, null, null],
      ],
    );
    assert.equal(await count('DE-LeavesCount'), 3);
  });

  test('DE-Expenses: ExpenseId and ExpenseNumber are the item’s', async () => {
    const { data } = await rows('DE-Expenses', { queryBuilder: { orderBy: [{ field: 'ExpenseNumber' }] } });
    assert.deepEqual(
      data.map((r) => [r.ExpenseId, r.ExpenseNumber, Number(r.ValueWithVat)]),
      [
        [id.x1, 'EXP-1/x1', 10],
        [id.x2, 'EXP-1/x2', 20],
      ],
    );
  });

  test('DE-Requests: Days from today to the end date; Department of the request type', async () => {
    const { data } = await rows('DE-Requests');
    assert.deepEqual(
      data.map((r) => [r.Days, r.Department, r.Division]),
      [[5, 'Department B', 'Division B']],
    );
  });

  test('DE-PurchaseOrders: client and department of the estimate; team flags never match', async () => {
    const { data } = await rows('DE-PurchaseOrders', {});
    assert.deepEqual(
      data.map((r) => [r.Client, r.Department, r.Estimate, r.CurrentUserInTeam, r.CurrentUserPending]),
      [['Client One', 'General', 'e1', false, false]],
    );
  });
});

describe('the demo tenant shows each case', () => {
  test('drafts, canceled, Budget and foreign-currency estimates, half-day and unrequested leaves, delayed stages, time booked elsewhere, changed costs, two-item sheets', async () => {
    const demo = await server.createTenant('Semantics Demo', { demoData: true, scale: 0.05 });
    const { rows: found } = await owner.query(
      `select
         (select count(*) from commercial_clients c join workflow_stages s on s.id = c.stage_id join workflow_stage_types st on st.id = s.stage_type_id
           where c.tenant_id = $1 and st.name = 'Draft') as draft_clients,
         (select count(*) from projects p join workflow_stages s on s.id = p.stage_id join workflow_stage_types st on st.id = s.stage_type_id
           where p.tenant_id = $1 and st.name = 'Canceled') as canceled_projects,
         (select count(*) from estimates e join job_types t on t.id = e.type_id where e.tenant_id = $1 and t.name = 'Budget') as budget_estimates,
         (select count(*) from estimates e join departments d on d.id = e.department_id join companies c on c.id = d.company_id
           where e.tenant_id = $1 and e.currency_id <> c.currency_id) as foreign_estimates,
         (select count(*) from leaves where tenant_id = $1 and is_half_day) as half_days,
         (select count(*) from leaves where tenant_id = $1 and not requested_approval) as unrequested,
         (select count(*) from workflow_stages where tenant_id = $1 and delayed) as delayed_stages,
         (select count(*) from workflow_stages where tenant_id = $1 and not delayed) as undelayed_stages,
         (select count(*) from timesheets t join users u on u.id = t.user_id where t.tenant_id = $1 and t.booked_company_id <> u.company_id) as elsewhere,
         (select count(*) from timesheets t where t.tenant_id = $1 and t.booked_hourly_cost <> (
            select c.hourly_value from user_costs c where c.user_id = t.user_id and c.start_date <= t.date and coalesce(c.end_date, 'infinity') >= t.date
             order by c.start_date desc limit 1)) as changed_costs,
         (select count(*) from (select expense_sheet_id from expense_items where tenant_id = $1 group by 1 having count(*) >= 2) x) as two_item_sheets`,
      [demo.tenantId],
    );
    for (const [k, v] of Object.entries(found[0])) assert.ok(Number(v) > 0, `the demo data has ${k}: ${JSON.stringify(found[0])}`);
  });
});
