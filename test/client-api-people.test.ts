// Users, commercial clients, their links and typology histories through the Client API v3 envelopes,
// with the published bodies verbatim: CreateMany all or none, Duplicate copying roles (UserRoleAdded to
// a real receiver), the billing-client ordering rule, and typology periods that may not overlap.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { type ClientApiFixture, clientApiFixture } from './client-api-helpers.ts';
import { createSubscription, type Receiver, startReceiver } from './webhooks-helpers.ts';

let f: ClientApiFixture;
let receiver: Receiver;
let departmentId: string;
let typologies: string[];

before(async () => {
  f = await clientApiFixture('People Agency', { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  const sub = await createSubscription(f.server, f.h, { Url: receiver.url, ActionType: 'UserRoleAdded', DocumentType: 'Skill.Module.BusinessObjects.User' });
  receiver.secret = sub.secret;
  [{ id: departmentId }] = await f.sql('select id from departments where tenant_id = $1 limit 1', [f.tenant.tenantId]);
  typologies = [];
  for (const name of ['Designer', 'Senior designer']) {
    const [row] = await f.sql('insert into typologies (tenant_id, department_id, name) values ($1, $2, $3) returning id', [
      f.tenant.tenantId,
      departmentId,
      name,
    ]);
    typologies.push(row.id);
  }
});
after(async () => {
  await receiver?.close();
  await f?.close();
});

test('users: Create with the published model; CreateMany is all or nothing; Duplicate copies roles, typology and company', async () => {
  const created = await f.send('POST', '/api/v3/users', {
    OperationType: 0,
    CreateModel: {
      UserName: 'ana',
      Name: 'Ana Silva',
      ExternalId: 'U-1',
      CompanyId: f.tenant.companyId,
      DepartmentId: departmentId,
      TypologyId: typologies[0],
      Mail: 'ana@example.com',
      IsActive: true,
      RequiredHours: 8,
      TimesheetRequired: true,
      TaxpayerNumber: '123',
    },
  });
  assert.equal(created.UserName, 'ana');
  assert.equal(created.TypologyId, typologies[0]);

  const count = async () => (await f.sql('select count(*)::int as n from users'))[0].n;
  const before = await count();
  const res = await f.server.request('POST', '/api/v3/users', {
    headers: f.h,
    json: { Type: 2, CreateManyModel: [{ UserName: 'bruno' }, { UserName: 'ana' }, { UserName: 'carla' }] },
  });
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.errors[0].path, '/body/CreateManyModel/1/UserName');
  assert.equal(await count(), before);
  const many = await f.send('POST', '/api/v3/users', { Type: 'CreateMany', CreateManyModel: [{ UserName: 'bruno' }, { UserName: 'carla' }] });
  assert.deepEqual(
    many.map((u: any) => u.UserName),
    ['bruno', 'carla'],
  );

  const source = await f.userWith(['EstimateRead', 'ProjectWrite']);
  await f.sql('update users set typology_id = $1, company_id = $2, department_id = $3 where id = $4', [
    typologies[1],
    f.tenant.companyId,
    departmentId,
    source.id,
  ]);
  const copy = await f.send('POST', '/api/v3/users', {
    OperationType: 1,
    DuplicateModel: { UserToDuplicateId: source.id, Name: 'Copy of source', UserName: 'copy' },
  });
  assert.equal(copy.Name, 'Copy of source');
  assert.equal(copy.TypologyId, typologies[1]);
  assert.equal(copy.CompanyId, f.tenant.companyId);
  const roles = await f.sql('select r.name from user_roles ur join roles r on r.id = ur.role_id where ur.user_id = $1 order by 1', [copy.Id]);
  assert.deepEqual(
    roles.map((r) => r.name),
    ['EstimateRead', 'ProjectWrite'],
  );
  // Two for the source (made by the admin API), two for the copy. Deliveries are at least once: a receiver slow
  // under load may get one again, so this waits for the copy's two roles, not for a number of requests.
  const forCopy = async (): Promise<string[]> => {
    for (let n = 4; ; n++) {
      const got = await receiver.waitFor(n);
      const roles = [...new Set(got.filter((r) => r.payload.document.id === copy.Id).map((r) => r.payload.detail.RoleName as string))].sort();
      if (roles.length >= 2) return roles;
    }
  };
  assert.deepEqual(await forCopy(), ['EstimateRead', 'ProjectWrite']);
  const missing = await f.server.request('POST', '/api/v3/users', {
    headers: f.h,
    json: { OperationType: 1, DuplicateModel: { UserToDuplicateId: '00000000-0000-0000-0000-000000000009', Name: 'X', UserName: 'x' } },
  });
  assert.equal(missing.status, 422, missing.text);
});

test('commercial clients: CreateMany is atomic and needs no billing clients (that ordering rule is the Integration API’s); users are linked to them', async () => {
  const res = await f.server.request('POST', '/api/v3/commercial-clients', {
    headers: f.h,
    json: {
      Type: 2,
      CreateManyModel: [
        { Name: 'Beta', ExternalId: 'CLI-1B' },
        { Name: 'Gamma', ExternalId: 'CLI-1B' },
      ],
    },
  });
  assert.equal(res.status, 409, res.text);
  assert.equal(res.body.errors[0].path, '/body/CreateManyModel/1/ExternalId');
  assert.equal((await f.sql("select count(*)::int as n from commercial_clients where name in ('Beta', 'Gamma')"))[0].n, 0);
  const alone = await f.send('POST', '/api/v3/commercial-clients', { Type: 2, CreateManyModel: [{ Name: 'Epsilon', ExternalId: 'CLI-NONE' }] });
  assert.equal(alone[0].ExternalId, 'CLI-NONE', 'no billing client with that ExternalId exists, and none is needed');
  await f.send('POST', '/api/billingclients', { externalId: 'CLI-2', companyCode: f.tenant.companyCode, name: 'Delta Billing' });
  const [client] = await f.send('POST', '/api/v3/commercial-clients', {
    Type: 2,
    CreateManyModel: [
      { Name: 'Delta', ExternalId: 'CLI-2', Code: 'DLT', Street: 'Rua 1', Email: 'hi@delta.example', Margin: 12.5, Website: 'https://delta.example' },
    ],
  });
  assert.equal(client.Name, 'Delta');
  assert.equal(client.Email, 'hi@delta.example');
  assert.equal(client.Margin, 12.5);
  const user = await f.userWith([]);
  const link = await f.send('POST', '/api/v3/commercial-client-users', {
    OperationType: 'Create',
    CreateModel: { CommercialClientId: client.Id, UserId: user.id, Active: true },
    CreateManyModel: null,
  });
  assert.equal(link.Active, true);
  assert.equal((await f.sql('select count(*)::int as n from commercial_client_users where user_id = $1', [user.id]))[0].n, 1);
});

test('typology histories: periods may not overlap (409); the user’s typology follows the history', async () => {
  const user = await f.userWith([]);
  const first = await f.send('POST', '/api/v3/user-typology-histories', {
    OperationType: 0,
    CreateModel: { UserId: user.id, DepartmentId: departmentId, TypologyId: typologies[0], StartDate: '2020-01-01', EndDate: '2023-12-31' },
  });
  const overlapping = await f.server.request('POST', '/api/v3/user-typology-histories', {
    headers: f.h,
    json: { OperationType: 0, CreateModel: { UserId: user.id, TypologyId: typologies[1], StartDate: '2023-06-01' } },
  });
  assert.equal(overlapping.status, 409, overlapping.text);
  assert.equal(overlapping.body.overlappingId, first.Id);
  await f.send('POST', '/api/v3/user-typology-histories', {
    OperationType: 0,
    CreateModel: { UserId: user.id, TypologyId: typologies[1], StartDate: '2024-01-01' },
  });
  const typologyOf = async () => (await f.sql('select typology_id from users where id = $1', [user.id]))[0].typology_id;
  assert.equal(await typologyOf(), typologies[1]);
  const clash = await f.server.request('PATCH', `/api/v3/user-typology-histories/${first.Id}`, { headers: f.h, json: { EndDate: { value: null } } });
  assert.equal(clash.status, 409, clash.text);
  const patched = await f.send('PATCH', `/api/v3/user-typology-histories/${first.Id}`, { EndDate: { value: '2022-12-31' } });
  assert.equal(patched.EndDate, '2022-12-31');
});
