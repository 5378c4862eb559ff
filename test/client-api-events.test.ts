// Webhook events of the Client API's second half, at a real receiver on loopback: users (Create,
// CreateMany, Duplicate with UserRoleAdded), commercial clients and their users, typology histories,
// timesheets and leaves (TimeUpdated), estimates (items, quote lines, billing conditions) and expenses.
// Each write's events carry the changed properties with PropertyTypes (decision 0024), and a refused
// write leaves no event behind (they are written in its transaction).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ClientApiFixture, clientApiFixture } from './client-api-helpers.ts';
import { createSubscription, type Received, type Receiver, startReceiver } from './webhooks-helpers.ts';

let f: ClientApiFixture;
let receiver: Receiver;
let departmentId: string;
let typologyId: string;
let jobId: string;
let workerId: string;

const NS = 'Skill.Module.BusinessObjects';
const SUBSCRIBED: [string, string][] = [
  ['Created', 'User'],
  ['Updated', 'User'],
  ['UserRoleAdded', 'User'],
  ['Created', 'CommercialClient'],
  ['Updated', 'CommercialClient'],
  ['Updated', 'Estimate'],
  ['Created', 'Expense'],
  ['Created', 'ExpenseItem'],
  ...['Created', 'Updated', 'Deleted', 'TimeUpdated'].flatMap((a): [string, string][] => [
    [a, 'Timesheet'],
    [a, 'Leave'],
  ]),
];

before(async () => {
  f = await clientApiFixture('Events Agency', { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  receiver.secret = `whsec_${randomBytes(32).toString('base64')}`;
  for (const [ActionType, type] of SUBSCRIBED) {
    await createSubscription(f.server, f.h, { Url: receiver.url, ActionType, DocumentType: `${NS}.${type}`, Secret: receiver.secret });
  }
  const t = f.tenant.tenantId;
  [{ id: departmentId }] = await f.sql('select id from departments where tenant_id = $1 limit 1', [t]);
  [{ id: typologyId }] = await f.sql("insert into typologies (tenant_id, department_id, name) values ($1, $2, 'Art director') returning id", [t, departmentId]);
  const project = await f.send('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Evented', CompanyId: f.tenant.companyId, ClientId: f.clientId },
  });
  workerId = (await f.userWith([])).id;
  jobId = (await f.send('POST', '/api/v3/jobs', { OperationType: 0, CreateModel: { Name: 'Evented job', ProjectId: project.Id, DepartmentId: departmentId } }))
    .Id;
});
after(async () => {
  await receiver?.close();
  await f?.close();
});

/** The deliveries about one document (in the order the outbox wrote them), once `count` have come. */
async function eventsOf(documentId: string, count: number): Promise<Received[]> {
  const until = Date.now() + 20_000;
  for (;;) {
    const got = receiver.received.filter((r) => r.payload?.document?.id === documentId);
    if (got.length >= count) {
      for (const r of got) assert.ok(r.verified, r.verifyError ?? 'unverified');
      return got;
    }
    if (Date.now() > until) throw new Error(`receiver got ${got.length} of ${count} events for ${documentId}: ${JSON.stringify(got.map((r) => r.payload))}`);
    await sleep(20);
  }
}

const kinds = (got: Received[]) => got.map((r) => `${r.payload.actionType} ${r.payload.document.type.slice(NS.length + 1)}`);
const eventCount = async () => (await f.sql('select count(*)::int as n from events where tenant_id = $1', [f.tenant.tenantId]))[0].n;

test('users: Create, CreateMany and Duplicate fire Created with PropertyTypes; Duplicate fires UserRoleAdded per role', async () => {
  const ana = await f.send('POST', '/api/v3/users', {
    OperationType: 0,
    CreateModel: { UserName: 'ana', Name: 'Ana', IsActive: true, TypologyId: typologyId },
  });
  const [created] = await eventsOf(ana.Id, 1);
  assert.equal(kinds([created])[0], 'Created User');
  assert.equal(created.payload.detail.UserName, 'ana');
  assert.equal(created.payload.detail.TypologyId, typologyId);
  assert.equal(created.payload.detail.PropertyTypes.UserName, 'String');
  assert.equal(created.payload.detail.PropertyTypes.TypologyId, 'Guid');
  assert.equal(created.payload.detail.PropertyTypes.IsActive, 'Boolean');

  const before = await eventCount();
  const refused = await f.server.request('POST', '/api/v3/users', {
    headers: f.h,
    json: { Type: 2, CreateManyModel: [{ UserName: 'bea' }, { UserName: 'ana' }] },
  });
  assert.equal(refused.status, 409, refused.text);
  assert.equal(await eventCount(), before, 'a refused CreateMany leaves no event');
  const many = await f.send('POST', '/api/v3/users', { Type: 2, CreateManyModel: [{ UserName: 'bea', Name: 'Bea' }, { UserName: 'carl' }] });
  for (const u of many) {
    const [e] = await eventsOf(u.Id, 1);
    assert.equal(kinds([e])[0], 'Created User');
    assert.equal(e.payload.detail.UserName, u.UserName);
    assert.equal(e.payload.detail.PropertyTypes.UserName, 'String');
  }

  const source = await f.userWith(['ExpenseRead', 'EstimateWrite']);
  const copy = await f.send('POST', '/api/v3/users', { OperationType: 1, DuplicateModel: { UserToDuplicateId: source.id, Name: 'Copy', UserName: 'copy' } });
  const got = await eventsOf(copy.Id, 3);
  assert.deepEqual(kinds(got), ['Created User', 'UserRoleAdded User', 'UserRoleAdded User']);
  assert.equal(got[0].payload.detail.Name, 'Copy');
  assert.equal(got[0].payload.detail.PropertyTypes.Name, 'String');
  assert.deepEqual(
    got
      .slice(1)
      .map((r) => r.payload.detail.RoleName)
      .sort(),
    ['EstimateWrite', 'ExpenseRead'],
  );
  for (const r of got.slice(1)) assert.match(r.payload.detail.RoleId, /^[0-9a-f-]{36}$/);
});

test('commercial clients: Create fires Created; linking and unlinking a user fire Updated with UserAdded / UserRemoved', async () => {
  await f.send('POST', '/api/billingclients', { externalId: 'EV-1', companyCode: f.tenant.companyCode, name: 'Evented Billing' });
  const client = await f.send('POST', '/api/v3/commercial-clients', {
    OperationType: 0,
    CreateModel: { Name: 'Evented', ExternalId: 'EV-1', Email: 'ev@example.com' },
  });
  const user = await f.userWith([]);
  const link = { CommercialClientId: client.Id, UserId: user.id };
  await f.send('POST', '/api/v3/commercial-client-users', { OperationType: 0, CreateModel: { ...link, Active: true } });
  await f.send('POST', '/api/v3/commercial-client-users', { Type: 2, CreateManyModel: [{ ...link, Active: false }] });
  const got = await eventsOf(client.Id, 4);
  assert.deepEqual(kinds(got), ['Created CommercialClient', 'Updated CommercialClient', 'Updated CommercialClient', 'Updated CommercialClient']);
  assert.equal(got[0].payload.detail.Name, 'Evented');
  assert.equal(got[0].payload.detail.PropertyTypes.Name, 'String');
  assert.equal(got[1].payload.detail.Email, 'ev@example.com');
  assert.equal(got[1].payload.detail.PropertyTypes.Email, 'String');
  assert.equal(got[2].payload.detail.UserAdded, user.id);
  assert.equal(got[2].payload.detail.PropertyTypes.UserAdded, 'Guid');
  assert.equal(got[3].payload.detail.UserRemoved, user.id);
});

test('typology histories: POST and PATCH fire Updated on the user with the period’s changed properties and their types', async () => {
  const user = await f.userWith([]);
  const period = await f.send('POST', '/api/v3/user-typology-histories', {
    OperationType: 0,
    CreateModel: { UserId: user.id, TypologyId: typologyId, StartDate: '2020-01-01', EndDate: null },
  });
  await f.send('PATCH', `/api/v3/user-typology-histories/${period.Id}`, { EndDate: { value: '2020-12-31' } });
  // The period, then the user's typology following it; the PATCH's period change (the typology stays).
  // (The user's own Created came from the admin API.)
  const got = (await eventsOf(user.id, 4)).filter((r) => r.payload.actionType === 'Updated');
  assert.deepEqual(kinds(got), ['Updated User', 'Updated User', 'Updated User']);
  const [created, follows, patched] = got.map((r) => r.payload.detail);
  assert.equal(created.TypologyHistoryId, period.Id);
  assert.equal(created.StartDate, '2020-01-01');
  assert.deepEqual(created.PropertyTypes, { TypologyHistoryId: 'Guid', UserId: 'Guid', TypologyId: 'Guid', StartDate: 'DateTime', EndDate: 'DateTime' });
  assert.equal(follows.TypologyId, typologyId);
  assert.equal(follows.PropertyTypes.TypologyId, 'Guid');
  assert.deepEqual(patched, { TypologyHistoryId: period.Id, EndDate: '2020-12-31', PropertyTypes: { TypologyHistoryId: 'Guid', EndDate: 'DateTime' } });
});

test('timesheets and leaves: Created / Updated / Deleted, each with TimeUpdated', async () => {
  const entry = await f.send('POST', '/api/v3/timesheets', {
    OperationType: 0,
    CreateModel: { UserId: workerId, JobId: jobId, Date: '2026-11-02', DurationMinutes: 90 },
  });
  await f.send('PATCH', `/api/timesheets/${entry.Id}`, { DurationMinutes: { value: 120 } });
  assert.equal((await f.server.request('DELETE', `/api/timesheets/${entry.Id}`, { headers: f.h })).status, 204);
  const sheets = await eventsOf(entry.Id, 6);
  assert.deepEqual(kinds(sheets), [
    'Created Timesheet',
    'TimeUpdated Timesheet',
    'Updated Timesheet',
    'TimeUpdated Timesheet',
    'Deleted Timesheet',
    'TimeUpdated Timesheet',
  ]);
  assert.equal(sheets[0].payload.detail.DurationMinutes, 90);
  assert.deepEqual(sheets[2].payload.detail, { DurationMinutes: 120, PropertyTypes: { DurationMinutes: 'Int32' } });

  const [{ id: leaveTypeId }] = await f.sql("insert into leave_types (tenant_id, company_id, name) values ($1, $2, 'Holiday') returning id", [
    f.tenant.tenantId,
    f.tenant.companyId,
  ]);
  const leave = await f.send('POST', '/api/v3/leaves', {
    OperationType: 0,
    CreateModel: { UserId: workerId, LeaveTypeId: leaveTypeId, Day: '2026-12-24', TotalMinutes: 480 },
  });
  await f.send('PATCH', `/api/leaves/${leave.Id}`, { IsHalfDay: { value: true } });
  assert.equal((await f.server.request('DELETE', `/api/leaves/${leave.Id}`, { headers: f.h })).status, 204);
  const leaves = await eventsOf(leave.Id, 6);
  assert.deepEqual(kinds(leaves), ['Created Leave', 'TimeUpdated Leave', 'Updated Leave', 'TimeUpdated Leave', 'Deleted Leave', 'TimeUpdated Leave']);
  assert.deepEqual(leaves[2].payload.detail, { IsHalfDay: true, PropertyTypes: { IsHalfDay: 'Boolean' } });
});

test('estimates: items, quote lines, billing conditions and a PATCH each fire Updated; a refused write fires nothing', async () => {
  const est = await f.send('POST', '/api/v3/estimates', {
    OperationType: 0,
    CreateModel: { Name: 'Evented quote', ClientId: f.clientId, CurrencyId: f.currencyId, DepartmentId: departmentId },
  });
  const put = await f.send('PUT', `/api/estimates/${est.Id}/items`, [{ Description: 'Work', QuantityIncome: 2, UnitPriceIncome: 50 }]);
  const detail = await f.send('POST', '/api/estimates/details/thirdparty', { EstimateItemId: put.Items[0].Id, QuantityIncome: 1, UnitPriceIncome: 20 });
  const before = await eventCount();
  const short = await f.server.request('POST', '/api/billing-conditions', { headers: f.h, json: { EstimateId: est.Id, AmountType: 1, Value: 1 } });
  assert.equal(short.status, 422, short.text);
  assert.equal(await eventCount(), before, 'refused billing conditions leave no event');
  await f.send('POST', '/api/billing-conditions', { EstimateId: est.Id, AmountType: 1, Value: 120 });
  await f.send('PATCH', `/api/estimates/${est.Id}`, { Name: { value: 'Evented quote v2' } });
  const got = await eventsOf(est.Id, 4);
  assert.deepEqual(kinds(got), ['Updated Estimate', 'Updated Estimate', 'Updated Estimate', 'Updated Estimate']);
  assert.deepEqual(
    got.map((r) => r.payload.detail),
    [
      { Items: 1, PropertyTypes: { Items: 'Int32' } },
      { EstimateItemDetailId: detail.Id, PropertyTypes: { EstimateItemDetailId: 'Guid' } },
      { BillingConditions: 1, PropertyTypes: { BillingConditions: 'Int32' } },
      { Name: 'Evented quote v2', PropertyTypes: { Name: 'String' } },
    ],
  );
});

test('expenses: a sheet fires Created on Expense, an item Created on ExpenseItem, with PropertyTypes', async () => {
  const [{ id: typeId }] = await f.sql("insert into expense_types (tenant_id, company_id, name, level) values ($1, $2, 'Taxi', 0) returning id", [
    f.tenant.tenantId,
    f.tenant.companyId,
  ]);
  const sheet = await f.send('POST', '/api/expenses', {
    CompanyId: f.tenant.companyId,
    DepartmentId: departmentId,
    EmployeeId: workerId,
    Emission: '2026-11-01',
    Due: '2026-11-30',
  });
  const item = await f.send('POST', `/api/expenses/${sheet.Id}/items`, { ExpenseItemTypeId: typeId, ExpenseItemGroup: 'Refund', ValueWithoutVat: 18.5 });
  const [created] = await eventsOf(sheet.Id, 1);
  assert.equal(kinds([created])[0], 'Created Expense');
  assert.equal(created.payload.detail.CompanyId, f.tenant.companyId);
  assert.equal(created.payload.detail.PropertyTypes.CompanyId, 'Guid');
  assert.equal(created.payload.detail.PropertyTypes.Emission, 'DateTime');
  const [itemCreated] = await eventsOf(item.Id, 1);
  assert.equal(kinds([itemCreated])[0], 'Created ExpenseItem');
  assert.equal(itemCreated.payload.detail.ExpenseSheetId, sheet.Id);
  assert.equal(itemCreated.payload.detail.ValueWithoutVat, 18.5);
  assert.equal(itemCreated.payload.detail.PropertyTypes.ExpenseItemTypeId, 'Guid');
});
