// Time through the Client API: timesheets and leaves created (Create / CreateMany), changed and deleted;
// TimeUpdated on each change to a real receiver; deletions in DE-TimeSheetsDeleted / DE-LeavesDeleted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClientApiFixture, clientApiFixture } from './client-api-helpers.ts';
import { createSubscription, type Receiver, startReceiver } from './webhooks-helpers.ts';

let f: ClientApiFixture;
let receiver: Receiver;
let jobId: string;
let leaveTypeId: string;
let userId: string;

before(async () => {
  f = await clientApiFixture('Time Agency', { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  const sub = await createSubscription(f.server, f.h, { Url: receiver.url, ActionType: 'TimeUpdated', DocumentType: 'Skill.Module.BusinessObjects.Timesheet' });
  receiver.secret = sub.secret;
  const [{ id: departmentId }] = await f.sql('select id from departments where tenant_id = $1 limit 1', [f.tenant.tenantId]);
  const project = await f.send('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Timed', CompanyId: f.tenant.companyId, ClientId: f.clientId },
  });
  jobId = (await f.send('POST', '/api/v3/jobs', { OperationType: 0, CreateModel: { Name: 'Timed job', ProjectId: project.Id, DepartmentId: departmentId } }))
    .Id;
  [{ id: leaveTypeId }] = await f.sql("insert into leave_types (tenant_id, company_id, name) values ($1, $2, 'Vacation') returning id", [
    f.tenant.tenantId,
    f.tenant.companyId,
  ]);
  userId = (await f.userWith([])).id;
});
after(async () => {
  await receiver?.close();
  await f?.close();
});

test('timesheets: create, change, delete; TimeUpdated each time; DE-TimeSheets then DE-TimeSheetsDeleted', async () => {
  const entry = await f.send('POST', '/api/v3/timesheets', {
    OperationType: 0,
    CreateModel: { UserId: userId, JobId: jobId, Date: '2026-11-02', DurationMinutes: 90, Description: 'Layout', Status: 'New' },
  });
  assert.equal(entry.DurationMinutes, 90);
  assert.equal((await f.rowsOf('DE-TimeSheets', ['TimesheetId', '=', entry.Id])).length, 1);
  const changed = await f.send('PATCH', `/api/timesheets/${entry.Id}`, { DurationMinutes: { value: 120 } });
  assert.equal(changed.DurationMinutes, 120);
  const bad = await f.server.request('PATCH', `/api/timesheets/${entry.Id}`, { headers: f.h, json: { Status: { value: 'Lost' } } });
  assert.equal(bad.status, 400, bad.text);
  const del = await f.server.request('DELETE', `/api/timesheets/${entry.Id}`, { headers: f.h });
  assert.equal(del.status, 204, del.text);
  assert.equal((await f.server.request('DELETE', `/api/timesheets/${entry.Id}`, { headers: f.h })).status, 404);
  assert.equal((await f.rowsOf('DE-TimeSheets', ['TimesheetId', '=', entry.Id])).length, 0);
  assert.equal((await f.rowsOf('DE-TimeSheetsDeleted', ['TimesheetId', '=', entry.Id])).length, 1);
  const got = await receiver.waitFor(3);
  assert.deepEqual(
    got.map((r) => r.payload.actionType),
    ['TimeUpdated', 'TimeUpdated', 'TimeUpdated'],
  );
  assert.equal(got[1].payload.detail.DurationMinutes, 120);
  assert.equal(got[1].payload.detail.PropertyTypes.DurationMinutes, 'Int32');
});

test('timesheets: a new entry keeps the booking snapshot (company, department, typology, cost); a cost changed later does not move it', async () => {
  const [company] = await f.sql(
    'select id, (select id from departments d where d.company_id = c.id limit 1) as department_id from companies c where tenant_id = $1',
    [f.tenant.tenantId],
  );
  const [typology] = await f.sql('select id from typologies where tenant_id = $1 limit 1', [f.tenant.tenantId]);
  const [currency] = await f.sql('select currency_id as id from companies where id = $1', [company.id]);
  await f.sql('update users set company_id = $2, department_id = $3, typology_id = $4 where id = $1', [userId, company.id, company.department_id, typology.id]);
  await f.sql(`insert into user_costs (tenant_id, user_id, company_id, currency_id, hourly_value, start_date) values ($1, $2, $3, $4, 30, '2026-01-01')`, [
    f.tenant.tenantId,
    userId,
    company.id,
    currency.id,
  ]);
  const entry = await f.send('POST', '/api/v3/timesheets', {
    OperationType: 0,
    CreateModel: { UserId: userId, JobId: jobId, Date: '2026-11-03', DurationMinutes: 60 },
  });
  assert.equal(entry.CompanyId, company.id);
  assert.equal(entry.UserDepartmentId, company.department_id);
  assert.equal(entry.TypologyId, typology.id);
  assert.equal(Number(entry.HourlyUserCost), 30);
  // The cost is raised for the whole year afterwards: the entry keeps what it was booked at.
  await f.sql('update user_costs set hourly_value = 45 where user_id = $1', [userId]);
  const [row] = await f.rowsOf('DE-TimeSheets', ['TimesheetId', '=', entry.Id]);
  assert.equal(Number(row.HourlyUserCost), 30);
  assert.equal(Number(row.TotalUserCost), 30);
  assert.equal(row.CompanyId, company.id);
  // Sent values win over the defaults.
  const sent = await f.send('POST', '/api/v3/timesheets', {
    OperationType: 0,
    CreateModel: { UserId: userId, JobId: jobId, Date: '2026-11-04', DurationMinutes: 60, HourlyUserCost: 12.5 },
  });
  assert.equal(Number(sent.HourlyUserCost), 12.5);
  await f.sql('delete from timesheets where id = any($1::uuid[])', [[entry.Id, sent.Id]]);
});

test('timesheets: CreateMany is all or nothing; another user’s time needs Administrator', async () => {
  const before = (await f.sql('select count(*)::int as n from timesheets'))[0].n;
  const res = await f.server.request('POST', '/api/v3/timesheets', {
    headers: f.h,
    json: {
      Type: 2,
      CreateManyModel: [
        { UserId: userId, JobId: jobId, Date: '2026-11-03', DurationMinutes: 60 },
        { UserId: userId, JobId: '00000000-0000-0000-0000-000000000123', Date: '2026-11-03', DurationMinutes: 60 },
      ],
    },
  });
  assert.equal(res.status, 422, res.text);
  assert.equal(res.body.errors[0].path, '/body/CreateManyModel/1/JobId');
  assert.equal((await f.sql('select count(*)::int as n from timesheets'))[0].n, before);
  // Time needs TimeWrite (decision 0043); another user's time needs Administrator besides.
  const nobody = await f.userWith([]);
  const noRole = await f.server.request('POST', '/api/v3/timesheets', {
    headers: nobody.headers,
    json: { OperationType: 0, CreateModel: { JobId: jobId, Date: '2026-11-03', DurationMinutes: 30 } },
  });
  assert.equal(noRole.status, 403, noRole.text);
  assert.equal(noRole.body.requiredRole, 'TimeWrite');
  const other = await f.userWith(['TimeWrite']);
  const denied = await f.server.request('POST', '/api/v3/timesheets', {
    headers: other.headers,
    json: { OperationType: 0, CreateModel: { UserId: userId, JobId: jobId, Date: '2026-11-03', DurationMinutes: 30 } },
  });
  assert.equal(denied.status, 403, denied.text);
  assert.equal(denied.body.requiredRole, 'Administrator');
  const own = await f.send(
    'POST',
    '/api/v3/timesheets',
    { OperationType: 0, CreateModel: { JobId: jobId, Date: '2026-11-03', DurationMinutes: 30 } },
    other.headers,
  );
  assert.equal(own.UserId, other.id);
});

test('leaves: create, change, delete; DE-LeavesDeleted shows the deletion', async () => {
  const [created] = await f.send('POST', '/api/v3/leaves', {
    Type: 'CreateMany',
    CreateManyModel: [{ UserId: userId, LeaveTypeId: leaveTypeId, Day: '2026-12-24', TotalMinutes: 480 }],
  });
  const changed = await f.send('PATCH', `/api/leaves/${created.Id}`, { IsHalfDay: { value: true }, TotalMinutes: { value: 240 } });
  assert.equal(changed.IsHalfDay, true);
  assert.equal((await f.server.request('DELETE', `/api/leaves/${created.Id}`, { headers: f.h })).status, 204);
  assert.equal((await f.rowsOf('DE-LeavesDeleted', ['LeaveId', '=', created.Id])).length, 1);
  const events = await f.sql("select action_type from events where document_id = $1 and document_type like '%.Leave' order by seq", [created.Id]);
  assert.deepEqual(
    events.map((e) => e.action_type),
    ['Created', 'TimeUpdated', 'Updated', 'TimeUpdated', 'Deleted', 'TimeUpdated'],
  );
});
