// Estimates through the Client API: create (Create / CreateMany / copy), items, quote lines, billing
// conditions, and the totals of GET /api/v3/estimates/{id} against DE-Estimates, DE-EstimatesQuotes and
// DE-EstimatesBillingConditions over random estimates: one money rule, the same cents everywhere.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClientApiFixture, clientApiFixture } from './client-api-helpers.ts';
import { createSubscription, type Receiver, startReceiver } from './webhooks-helpers.ts';

let f: ClientApiFixture;
let receiver: Receiver;
let departmentId: string;
let vats: { id: string; percentage: number }[];

before(async () => {
  f = await clientApiFixture('Estimates Agency', { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  const sub = await createSubscription(f.server, f.h, { Url: receiver.url, ActionType: 'Created', DocumentType: 'Skill.Module.BusinessObjects.Estimate' });
  receiver.secret = sub.secret;
  [{ id: departmentId }] = await f.sql('select id from departments where tenant_id = $1 limit 1', [f.tenant.tenantId]);
  const rates = [23, 6, 13.5];
  vats = [];
  for (const [i, p] of rates.entries()) {
    const [row] = await f.sql('insert into vats (tenant_id, company_id, name, percentage) values ($1, $2, $3, $4) returning id', [
      f.tenant.tenantId,
      f.tenant.companyId,
      `VAT ${i}`,
      p,
    ]);
    vats.push({ id: row.id, percentage: p });
  }
});
after(async () => {
  await receiver?.close();
  await f?.close();
});

const create = (model: Record<string, unknown>) => f.send('POST', '/api/v3/estimates', { OperationType: 0, CreateModel: model });

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) % 2147483648;
    return s / 2147483648;
  };
}

test('Create answers the estimate with its defaults and fires Created; CreateMany is all or nothing', async () => {
  const est = await create({ Name: 'Spring quote', ClientId: f.clientId, DepartmentId: departmentId, CompanyId: f.tenant.companyId, Date: '2026-03-01' });
  assert.equal(est.Name, 'Spring quote');
  assert.equal(est.CurrencyId, f.currencyId);
  // Tenants have no default estimate workflow: a new estimate has no stage, and counts in DE-Estimates.
  assert.equal(est.StageId, null);
  assert.match(est.Number, /^EST-\d{6}$/);
  assert.deepEqual(est.Items, []);
  assert.equal(est.Totals.ValueWithVatIncome, 0);
  const [got] = await receiver.waitFor(1);
  assert.equal(got.payload.document.id, est.Id);
  assert.equal(got.payload.detail.Name, 'Spring quote');
  assert.equal(got.payload.detail.PropertyTypes.ClientId, 'Guid');

  const before = await f.sql('select count(*)::int as n from estimates');
  const res = await f.server.request('POST', '/api/v3/estimates', {
    headers: f.h,
    json: {
      Type: 'CreateMany',
      CreateManyModel: [
        { Name: 'A', ClientId: f.clientId, CurrencyId: f.currencyId, DepartmentId: departmentId },
        { Name: 'B', ClientId: '00000000-0000-0000-0000-00000000beef', CurrencyId: f.currencyId, DepartmentId: departmentId },
      ],
    },
  });
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.errors[0].path, '/body/CreateManyModel/1/ClientId');
  assert.deepEqual(await f.sql('select count(*)::int as n from estimates'), before);
});

test('PUT items replaces them; totals round each line to cents; details on three sides; a copy keeps the money', async () => {
  const est = await create({ Name: 'Rounding', ClientId: f.clientId, CurrencyId: f.currencyId, DepartmentId: departmentId, Exchange: 0.91234567 });
  const put = await f.send('PUT', `/api/estimates/${est.Id}/items`, [
    { Order: 1, Description: 'Design', VatId: vats[0].id, QuantityIncome: 3, UnitPriceIncome: 33.333, QuantityCost: 3, UnitPriceCost: 10.005, Approved: true },
    { Order: 2, Description: 'Print', VatId: vats[1].id, QuantityIncome: 1, UnitPriceIncome: 200, AgencyCommissionPercentage: 15, Billed: true },
  ]);
  // 3 × 33.333 = 99.999 → 100.00 (VAT 23.00); 200 + 15% = 230.00 (VAT 13.80); cost 30.015 → 30.02.
  assert.equal(put.Totals.ValueWithoutVatIncome, 330);
  assert.equal(put.Totals.VatValueIncome, 36.8);
  assert.equal(put.Totals.ValueWithVatIncome, 366.8);
  assert.equal(put.Totals.ValueWithoutVatCost, 30.02);
  assert.equal(put.Totals.CompanyValueWithoutVatIncome, 301.07); // 330 × 0.91234567 = 301.0740711
  // The PUT answers the items' ids in the order sent and the totals; the item amounts are the estimate's view.
  assert.deepEqual(
    put.Items.map((i: any) => [i.Order, i.Name]),
    [
      [1, 'Design'],
      [2, 'Print'],
    ],
  );
  const view = await f.send('GET', `/api/v3/estimates/${est.Id}`);
  assert.deepEqual(view.Totals, put.Totals);
  assert.deepEqual(
    view.Items.map((i: any) => [i.Id, i.Description, i.Approved, i.Billed, i.ValueWithoutVatIncome]),
    [
      [put.Items[0].Id, 'Design', true, false, 100],
      [put.Items[1].Id, 'Print', false, true, 230],
    ],
  );
  const design = put.Items[0];
  const third = await f.send('POST', '/api/estimates/details/thirdparty', {
    EstimateItemId: design.Id,
    Description: 'Photographer',
    QuantityIncome: 2,
    UnitPriceIncome: 50,
    QuantityCost: 2,
    UnitPriceCost: 40,
  });
  assert.equal(third.EstimateId, est.Id);
  await f.send('POST', '/api/estimates/details/expenses', { EstimateItemId: design.Id, Description: 'Travel', QuantityIncome: 1, UnitPriceIncome: 12.5 });
  const missing = await f.server.request('POST', '/api/estimates/details/resources', { headers: f.h, json: { EstimateItemId: design.Id, Hours: 2 } });
  assert.equal(missing.status, 400, missing.text);
  await f.send('POST', '/api/estimates/details/resources', { EstimateItemId: design.Id, DepartmentId: departmentId, Hours: 2, UnitPriceIncome: 80 });

  // Resending the items by Id keeps their details; an item left out goes.
  const again = await f.send('PUT', `/api/estimates/${est.Id}/items`, [
    { Id: design.Id, Description: 'Design', VatId: vats[0].id, QuantityIncome: 1, UnitPriceIncome: 10 },
  ]);
  assert.deepEqual(
    again.Items.map((i: any) => i.Id),
    [design.Id],
  );
  const kept = await f.send('GET', `/api/v3/estimates/${est.Id}`);
  assert.equal(kept.Items.length, 1);
  assert.equal(kept.Items[0].UnitPriceIncome, 10);
  assert.deepEqual(kept.Items[0].Details.map((d: any) => d.DetailTypeName).sort(), ['Expense', 'Resource', 'ThirdParty']);
  assert.equal(again.Totals.ValueWithoutVatIncome, 10 + 100 + 12.5 + 160);

  const wrongItem = await f.server.request('PUT', `/api/estimates/${est.Id}/items`, { headers: f.h, json: [{ Id: '00000000-0000-0000-0000-000000000001' }] });
  assert.equal(wrongItem.status, 422, wrongItem.text);
  assert.equal(wrongItem.body.errors[0].path, '/body/0/Id');

  const copy = await create({ Name: 'Copy', ClientId: f.clientId, CurrencyId: f.currencyId, DepartmentId: departmentId, EstimateCopyId: est.Id });
  assert.deepEqual(copy.Totals, { ...again.Totals, Exchange: 1, ...companyAt1(again.Totals) });
});

/** The Company* amounts of totals at exchange 1: the same as the estimate's own. */
function companyAt1(t: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of Object.keys(t)) if (k.startsWith('Company')) out[k] = t[k.replace(/^Company/, '')];
  return out;
}

test('billing conditions must add up to the income without VAT; DE-EstimatesBillingConditions shows them', async () => {
  const est = await create({ Name: 'Billing', ClientId: f.clientId, CurrencyId: f.currencyId, DepartmentId: departmentId });
  await f.send('PUT', `/api/estimates/${est.Id}/items`, [{ Description: 'Work', QuantityIncome: 3, UnitPriceIncome: 33.33 }]);
  // 50% of 99.99 rounds to 50.00, so with 49.98 the conditions fall a cent short.
  const short = await f.server.request('POST', '/api/billing-conditions', {
    headers: f.h,
    json: [
      { EstimateId: est.Id, AmountType: 0, Percentage: 50 },
      { EstimateId: est.Id, AmountType: 1, Value: 49.98 },
    ],
  });
  assert.equal(short.status, 422, short.text);
  assert.equal(short.body.expected, '99.99');
  assert.equal(short.body.reached, '99.98');
  const set = await f.send('POST', '/api/billing-conditions', [
    { EstimateId: est.Id, AmountType: 0, Percentage: 50, Frequency: 0, DayOfMonth: 15 },
    { EstimateId: est.Id, AmountType: 1, Value: 49.99, Date: '2026-06-30' },
  ]);
  assert.equal(set.length, 2);
  const rows = await f.rowsOf('DE-EstimatesBillingConditions', ['EstimateId', '=', est.Id]);
  assert.deepEqual(rows.map((r) => [Number(r.Percentage ?? 0), Number(r.Value ?? 0)]).sort(), [
    [0, 49.99],
    [50, 0],
  ]);
});

test('random estimates: the API totals equal DE-Estimates, DE-EstimatesQuotes, DE-EstimatesBillingConditions and the Estimated* of DE-Projects and DE-Contracts to the cent', async () => {
  const next = random(20261125);
  const ids: string[] = [];
  // The estimates share one project (and so its contract), whose Estimated* add their company amounts up.
  const contract = await f.send('POST', '/api/v3/contracts', {
    OperationType: 0,
    CreateModel: { Name: 'Money frame', CompanyId: f.tenant.companyId, ClientId: f.clientId },
  });
  const project = await f.send('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Money', CompanyId: f.tenant.companyId, ClientId: f.clientId, ContractId: contract.Id },
  });
  for (let e = 0; e < 6; e++) {
    const est = await create({
      ClientId: f.clientId,
      CurrencyId: f.currencyId,
      DepartmentId: departmentId,
      ProjectId: project.Id,
      Exchange: Math.round((0.5 + next()) * 1e6) / 1e6,
    });
    const items = Array.from({ length: 1 + Math.floor(next() * 6) }, (_, i) => ({
      Description: `Item ${i}`,
      VatId: vats[Math.floor(next() * vats.length)].id,
      QuantityIncome: Math.round(next() * 5000) / 1000,
      UnitPriceIncome: Math.round(next() * 100000) / 1000,
      QuantityCost: Math.round(next() * 5000) / 1000,
      UnitPriceCost: Math.round(next() * 50000) / 1000,
      AgencyCommissionPercentage: Math.round(next() * 2000) / 100,
    }));
    const put = await f.send('PUT', `/api/estimates/${est.Id}/items`, items);
    await f.send('POST', '/api/estimates/details/thirdparty', {
      EstimateItemId: put.Items[0].Id,
      VatCostId: vats[2].id,
      QuantityIncome: 1.5,
      UnitPriceIncome: Math.round(next() * 10000) / 1000,
      QuantityCost: 1.5,
      UnitPriceCost: Math.round(next() * 10000) / 1000,
    });
    ids.push(est.Id);
  }
  const companyTotals: Record<string, number>[] = [];
  for (const id of ids) {
    const api = await f.send('GET', `/api/v3/estimates/${id}`);
    const [de] = await f.rowsOf('DE-Estimates', ['EstimateId', '=', id]);
    assert.ok(de, `DE-Estimates shows ${id}`);
    const t = api.Totals;
    assert.deepEqual([de.ValueWithoutTaxSell, de.TaxValueSell, de.ValueWithTaxSell, de.ValueWithoutTaxCost, de.TaxValueCost, de.ValueWithTaxCost].map(Number), [
      t.ValueWithoutVatIncome,
      t.VatValueIncome,
      t.ValueWithVatIncome,
      t.ValueWithoutVatCost,
      t.VatValueCost,
      t.ValueWithVatCost,
    ]);
    const quotes = await f.rowsOf('DE-EstimatesQuotes', ['EstimateId', '=', id]);
    for (const item of api.Items) {
      const q = quotes.find((r) => r.EstimateItemId === item.Id);
      assert.ok(q, `DE-EstimatesQuotes shows item ${item.Id}`);
      assert.deepEqual([q.EstimateItemValueWithoutVatIncome, q.EstimateItemVatValueIncome, q.EstimateItemValueWithVatIncome].map(Number), [
        item.ValueWithoutVatIncome,
        item.VatValueIncome,
        item.ValueWithVatIncome,
      ]);
    }
    const sellCents = api.Items.reduce((s: number, i: any) => s + Math.round(i.ValueWithoutVatIncome * 100), 0);
    assert.equal(sellCents, Math.round(t.ValueWithoutVatIncome * 100));
    assert.equal(t.CompanyValueWithoutVatIncome, Math.round(t.ValueWithoutVatIncome * t.Exchange * 100) / 100);
    // Every quote line (item lines and details) of DE-EstimatesQuotes adds up to the totals.
    const lines = (column: string) => cents(quotes.reduce((s, r) => s + cents(Number(r[column])), 0) / 100);
    assert.deepEqual(
      [lines('ValueWithoutVatIncome'), lines('ValueWithoutVatCost'), lines('VatValueCost'), lines('ValueWithVatCost')],
      [t.ValueWithoutVatIncome, t.ValueWithoutVatCost, t.VatValueCost, t.ValueWithVatCost].map(cents),
    );

    // Billing conditions: a random percentage and the rest as a value; DE-EstimatesBillingConditions shows
    // what reaches the income without VAT to the cent.
    const percentage = Math.round(next() * 9000) / 100;
    const share = Math.round(((t.ValueWithoutVatIncome * percentage) / 100) * 100) / 100;
    await f.send('POST', '/api/billing-conditions', [
      { EstimateId: id, AmountType: 0, Percentage: percentage },
      { EstimateId: id, AmountType: 1, Value: (cents(t.ValueWithoutVatIncome) - cents(share)) / 100 },
    ]);
    const conditions = await f.rowsOf('DE-EstimatesBillingConditions', ['EstimateId', '=', id]);
    const reached = conditions.reduce(
      (s, c) => s + (Number(c.AmountType) === 0 ? cents((t.ValueWithoutVatIncome * Number(c.Percentage)) / 100) : cents(Number(c.Value))),
      0,
    );
    assert.equal(reached, cents(t.ValueWithoutVatIncome));
    companyTotals.push(t);
  }
  // DE-Projects and DE-Contracts: the project's estimates (none in Draft or Canceled), each amount of the API in
  // the estimate's own currency, summed without exchange (as the platform's statements sum the stored totals).
  const once = (k: string) => companyTotals.reduce((s, t) => s + cents(t[k]), 0) / 100;
  const [costOnce, costVatOnce, sellOnce, sellVatOnce] = ['ValueWithoutVatCost', 'VatValueCost', 'ValueWithoutVatIncome', 'VatValueIncome'].map(once);
  const expected = [costOnce, costVatOnce, (cents(costOnce) + cents(costVatOnce)) / 100, sellOnce, sellVatOnce, (cents(sellOnce) + cents(sellVatOnce)) / 100];
  const estimated = (r: Record<string, any>) =>
    ['EstimatedWithoutTaxCost', 'EstimatedTaxCost', 'EstimatedWithTaxCost', 'EstimatedWithoutTaxSell', 'EstimatedTaxSell', 'EstimatedWithTaxSell'].map((k) =>
      Number(r[k]),
    );
  const [p] = await f.rowsOf('DE-Projects', ['ProjectId', '=', project.Id]);
  assert.deepEqual(estimated(p), expected);
  const [c] = await f.rowsOf('DE-Contracts', ['ContractId', '=', contract.Id]);
  assert.deepEqual(estimated(c), expected);
});

/** An amount in whole cents (amounts are rounded to cents by the money rule). */
const cents = (x: number) => Math.round(x * 100);

test('roles: without EstimateWrite a create is 403; the post Actions.Document creates an Estimate', async () => {
  const reader = await f.userWith(['EstimateRead']);
  const res = await f.server.request('POST', '/api/v3/estimates', {
    headers: reader.headers,
    json: { OperationType: 0, CreateModel: { ClientId: f.clientId, CurrencyId: f.currencyId, DepartmentId: departmentId } },
  });
  assert.equal(res.status, 403, res.text);
  const post = await f.send('POST', '/api/posts', {
    DocumentId: '00000000-0000-0000-0000-000000000000',
    DocumentTypeName: 'Estimate',
    Text: 'New quote',
    Actions: {
      Document: { DocumentType: 'Estimate', Estimate: { Name: 'From a post', ClientId: f.clientId, CurrencyId: f.currencyId, DepartmentId: departmentId } },
    },
  });
  const est = await f.send('GET', `/api/v3/estimates/${post.DocumentId}`);
  assert.equal(est.Name, 'From a post');
});

test('posts: Actions.Document creates an Estimate in its type’s workflow and moves it (DE-History, DE-Estimates)', async () => {
  const t = f.tenant.tenantId;
  const [{ id: workflowId }] = await f.sql(
    "insert into workflows (tenant_id, document_type_id, name) select $1, id, 'Quotes' from document_types where tenant_id = $1 and class_name = 'Estimate' returning id",
    [t],
  );
  const stage = async (name: string, type: string, initial: boolean) =>
    (
      await f.sql(
        'insert into workflow_stages (tenant_id, workflow_id, name, stage_type_id, is_initial) select $1, $2, $3, id, $5 from workflow_stage_types where tenant_id = $1 and name = $4 returning id',
        [t, workflowId, name, type, initial],
      )
    )[0].id;
  const draft = await stage('Drafting', 'Draft', true);
  const sent = await stage('Sent', 'In Progress', false);
  const [{ id: send }] = await f.sql(
    "insert into workflow_transitions (tenant_id, workflow_id, from_stage_id, to_stage_id, name) values ($1, $2, $3, $4, 'Send') returning id",
    [t, workflowId, draft, sent],
  );
  const [{ id: typeId }] = await f.sql(
    "insert into job_types (tenant_id, company_id, document_type_id, workflow_id, name) select $1, $2, id, $3, 'Quote' from document_types where tenant_id = $1 and class_name = 'Estimate' returning id",
    [t, f.tenant.companyId, workflowId],
  );
  const post = await f.send('POST', '/api/posts', {
    DocumentId: '00000000-0000-0000-0000-000000000000',
    DocumentTypeName: 'Estimate',
    Text: 'Quote sent',
    Actions: {
      Transition: { StatusId: sent, TransitionId: send },
      Document: {
        DocumentType: 'Estimate',
        Estimate: { Name: 'Moved quote', JobTypeId: typeId, ClientId: f.clientId, CurrencyId: f.currencyId, DepartmentId: departmentId },
      },
    },
  });
  const est = await f.send('GET', `/api/v3/estimates/${post.DocumentId}`);
  assert.equal(est.WorkflowId, workflowId);
  assert.equal(est.Stage, 'Sent');
  const history = await f.rowsOf('DE-History', ['DocumentId', '=', post.DocumentId]);
  assert.deepEqual(history.map((h) => [h.Version, h.Action, h.Stage]).sort(), [
    [1, 'Created', 'Drafting'],
    [2, 'StageChanged', 'Sent'],
  ]);
  const [de] = await f.rowsOf('DE-Estimates', ['EstimateId', '=', post.DocumentId]);
  assert.ok(de, 'DE-Estimates shows the estimate');
  assert.equal(de.StageId, sent);
  assert.equal(de.Stage, 'Sent');
});
