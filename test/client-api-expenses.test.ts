// Expense sheets and items through the Client API with the published fields: the department's workflow,
// item levels deciding the required document, mileage as kilometres × rate, ExpenseItemGroup as number
// or name, totals equal to DE-ExpenseSheets', and Created on ExpenseItem to a real receiver.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClientApiFixture, clientApiFixture } from './client-api-helpers.ts';
import { createSubscription, type Receiver, startReceiver } from './webhooks-helpers.ts';

let f: ClientApiFixture;
let receiver: Receiver;
let departmentId: string;
let workflowId: string;
let approved: string;
let approve: string;
const types: Record<string, string> = {};
let projectId: string;

before(async () => {
  f = await clientApiFixture('Expenses Agency', { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  const sub = await createSubscription(f.server, f.h, { Url: receiver.url, ActionType: 'Created', DocumentType: 'Skill.Module.BusinessObjects.ExpenseItem' });
  receiver.secret = sub.secret;
  const t = f.tenant.tenantId;
  [{ id: departmentId }] = await f.sql('select id from departments where tenant_id = $1 limit 1', [t]);
  [{ id: workflowId }] = await f.sql(
    "insert into workflows (tenant_id, document_type_id, name) select $1, id, 'Department expenses' from document_types where tenant_id = $1 and class_name = 'Expense' returning id",
    [t],
  );
  const [{ id: draft }] = await f.sql("select id from workflow_stage_types where tenant_id = $1 and name = 'Draft'", [t]);
  await f.sql("insert into workflow_stages (tenant_id, workflow_id, name, stage_type_id, is_initial) values ($1, $2, 'Submitted', $3, true)", [
    t,
    workflowId,
    draft,
  ]);
  const [{ id: inProgress }] = await f.sql("select id from workflow_stage_types where tenant_id = $1 and name = 'In Progress'", [t]);
  [{ id: approved }] = await f.sql(
    "insert into workflow_stages (tenant_id, workflow_id, name, stage_type_id, sort_order) values ($1, $2, 'Approved', $3, 1) returning id",
    [t, workflowId, inProgress],
  );
  [{ id: approve }] = await f.sql(
    "insert into workflow_transitions (tenant_id, workflow_id, from_stage_id, to_stage_id, name) select $1, $2, id, $3, 'Approve' from workflow_stages where workflow_id = $2 and is_initial returning id",
    [t, workflowId, approved],
  );
  await f.sql('update departments set expense_workflow_id = $1 where id = $2', [workflowId, departmentId]);
  const [{ id: vat }] = await f.sql("insert into vats (tenant_id, company_id, name, percentage) values ($1, $2, 'VAT 23', 23) returning id", [
    t,
    f.tenant.companyId,
  ]);
  for (const [name, level, mileage, value] of [
    ['Meals', 0, false, null],
    ['Client lunch', 1, false, null],
    ['Project travel', 2, false, null],
    ['Mileage', 2, true, 0.36],
  ] as const) {
    const [row] = await f.sql(
      'insert into expense_types (tenant_id, company_id, vat_id, name, level, is_mileage, value) values ($1, $2, $3, $4, $5, $6, $7) returning id',
      [t, f.tenant.companyId, vat, name, level, mileage, value],
    );
    types[name] = row.id;
  }
  projectId = (
    await f.send('POST', '/api/v3/projects', { OperationType: 0, CreateModel: { Name: 'Travelled', CompanyId: f.tenant.companyId, ClientId: f.clientId } })
  ).Id;
});
after(async () => {
  await receiver?.close();
  await f?.close();
});

test('an expense sheet takes its department’s workflow; item levels, groups and mileage; totals as DE-ExpenseSheets', async () => {
  const employee = await f.userWith([]);
  const sheet = await f.send('POST', '/api/expenses', {
    EmployeeId: employee.id,
    CompanyId: f.tenant.companyId,
    DepartmentId: departmentId,
    Emission: '2026-11-01',
    Due: '2026-11-30',
    Exchange: 1,
  });
  assert.equal(sheet.WorkflowId, workflowId);
  assert.equal(sheet.Stage, 'Submitted');
  const items = `/api/expenses/${sheet.Id}/items`;
  await f.send('POST', items, { ExpenseItemTypeId: types.Meals, ExpenseItemGroup: 2, ValueWithoutVat: 10.01, Motive: 'Lunch' });
  const noClient = await f.server.request('POST', items, {
    headers: f.h,
    json: { ExpenseItemTypeId: types['Client lunch'], ExpenseItemGroup: 'Refund', ValueWithoutVat: 50 },
  });
  assert.equal(noClient.status, 400, noClient.text);
  assert.equal(noClient.body.errors[0].path, '/body/ClientId');
  await f.send('POST', items, { ExpenseItemTypeId: types['Client lunch'], ExpenseItemGroup: 'refund', ValueWithoutVat: 50, ClientId: f.clientId });
  const noProject = await f.server.request('POST', items, {
    headers: f.h,
    json: { ExpenseItemTypeId: types['Project travel'], ExpenseItemGroup: 0, ValueWithoutVat: 5, ClientId: f.clientId },
  });
  assert.equal(noProject.status, 400, noProject.text);
  assert.equal(noProject.body.errors[0].path, '/body/ProjectId');
  const badGroup = await f.server.request('POST', items, {
    headers: f.h,
    json: { ExpenseItemTypeId: types.Meals, ExpenseItemGroup: 'Lost', ValueWithoutVat: 5 },
  });
  assert.equal(badGroup.status, 400, badGroup.text);
  const mileage = await f.send('POST', items, {
    ExpenseItemTypeId: types.Mileage,
    ExpenseItemGroup: 1,
    Kilometers: 123.5,
    ProjectId: projectId,
    Origin: 'Lisboa',
    Destination: 'Porto',
  });
  assert.equal(mileage.ValueWithoutVat, 44.46); // 123.5 km × 0.36
  assert.equal(mileage.KilometersValue, 0.36);

  const read = await f.send('GET', `/api/v3/expenses/${sheet.Id}`);
  assert.equal(read.Items.length, 3);
  assert.equal(read.ValueWithoutVat, 104.47);
  const [de] = await f.rowsOf('DE-ExpenseSheets', ['ExpenseSheetId', '=', sheet.Id]);
  assert.ok(de, 'DE-ExpenseSheets shows the sheet');
  assert.deepEqual([de.ValueWithoutVat, de.VatValue, de.ValueWithVat].map(Number), [read.ValueWithoutVat, read.VatValue, read.ValueWithVat]);
  const got = await receiver.waitFor(3);
  assert.deepEqual(
    got.map((r) => r.payload.detail.ExpenseItemGroup),
    [2, 2, 1],
  );
});

test('posts: Actions.Document creates an Expense in its department’s workflow and moves it (DE-History); an ExpenseItem by its sheet’s rules', async () => {
  const employee = await f.userWith([]);
  const post = await f.send('POST', '/api/posts', {
    DocumentId: '00000000-0000-0000-0000-000000000000',
    DocumentTypeName: 'Expense',
    Text: 'Trip to Porto',
    Actions: {
      Transition: { StatusId: approved, TransitionId: approve },
      Document: {
        DocumentType: 'Expense',
        Expense: { CompanyId: f.tenant.companyId, DepartmentId: departmentId, EmployeeId: employee.id, Emission: '2026-11-03', Due: '2026-12-03' },
      },
    },
  });
  assert.equal(post.Actions.Document.DocumentType, 'Expense');
  const sheet = await f.send('GET', `/api/v3/expenses/${post.DocumentId}`);
  assert.equal(sheet.WorkflowId, workflowId);
  assert.equal(sheet.Stage, 'Approved');
  assert.match(sheet.Number, /^EXP-\d{6}$/);
  const history = await f.rowsOf('DE-History', ['DocumentId', '=', post.DocumentId]);
  assert.deepEqual(history.map((h) => [h.Version, h.Action, h.Stage]).sort(), [
    [1, 'Created', 'Submitted'],
    [2, 'StageChanged', 'Approved'],
  ]);
  assert.equal((await f.rowsOf('DE-ExpenseSheets', ['ExpenseSheetId', '=', post.DocumentId])).length, 1);

  // An item through a post: the item type's level still decides what is required; the post sits on the item.
  const itemPost = (model: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
    f.server.request('POST', '/api/posts', {
      headers: f.h,
      json: {
        DocumentId: '00000000-0000-0000-0000-000000000000',
        DocumentTypeName: 'ExpenseItem',
        Text: 'Train',
        Actions: { Document: { DocumentType: 'ExpenseItem', ExpenseItem: { ExpenseSheetId: post.DocumentId, ...model } }, ...extra },
      },
    });
  const noProject = await itemPost({ ExpenseItemTypeId: types['Project travel'], ExpenseItemGroup: 'Refund', ValueWithoutVat: 42 });
  assert.equal(noProject.status, 400, noProject.text);
  assert.equal(noProject.body.errors[0].path, '/body/Actions/Document/ExpenseItem/ProjectId');
  const moved = await itemPost(
    { ExpenseItemTypeId: types['Project travel'], ExpenseItemGroup: 'Refund', ValueWithoutVat: 42, ProjectId: projectId },
    { Transition: { StatusId: approved } },
  );
  assert.equal(moved.status, 422, moved.text);
  assert.equal(moved.body.errors[0].path, '/body/Actions/Transition');
  const made = await itemPost({ ExpenseItemTypeId: types.Mileage, ExpenseItemGroup: 'Refund', Kilometers: 100, ProjectId: projectId });
  assert.equal(made.status, 201, made.text);
  const read = await f.send('GET', `/api/v3/expenses/${post.DocumentId}`);
  assert.deepEqual(
    read.Items.map((i: any) => [i.Id, i.ValueWithoutVat]),
    [[made.body.DocumentId, 36]],
  );
  const [comment] = await f.rowsOf('DE-Comments', ['DocumentId', '=', made.body.DocumentId]);
  assert.ok(comment, 'DE-Comments shows the post on the item');
});
