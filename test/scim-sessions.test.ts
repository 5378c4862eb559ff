// Two identity providers' provisioning sessions replayed request by request, as their documentation says
// they send them: Microsoft Entra ID (a userName eq probe before each create, PATCH replace without a path,
// "active": "False" as a string, the manager by id, group membership by PATCH) and Okta (a filtered probe,
// create with a password, PUT with the whole user for updates, group push, PATCH deactivation). Each ends
// with the users, roles and events expected in DE-Users, in the database and at a loopback webhook receiver.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertScimError, CORE_USER, ENTERPRISE, PATCH_OP, rowsOf, type ScimFixture, scimFixture } from './scim-helpers.ts';
import { createSubscription, type Receiver, startReceiver, USER_TYPE } from './webhooks-helpers.ts';

let f: ScimFixture;
let receiver: Receiver;
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

before(async () => {
  f = await scimFixture('Sessions Agency', { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  for (const ActionType of ['Created', 'Updated', 'UserRoleAdded', 'UserRoleRemoved']) {
    await createSubscription(f.server, f.h, { Url: `${receiver.url}/${ActionType}`, ActionType, DocumentType: USER_TYPE });
  }
});
after(async () => {
  await receiver?.close();
  await f?.close();
});

const probe = async (userName: string): Promise<any[]> => {
  const res = await f.scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}`);
  assert.equal(res.status, 200, res.text);
  assert.equal(res.body.schemas[0], 'urn:ietf:params:scim:api:messages:2.0:ListResponse');
  return res.body.Resources;
};

/** Waits until the receiver holds deliveries satisfying `done` (deliveries are at least once: duplicates are fine). */
async function deliveries(done: (got: { path: string; payload: any }[]) => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!done(receiver.received)) {
    if (Date.now() > until)
      throw new Error(`the expected deliveries never arrived: ${JSON.stringify(receiver.received.map((r) => [r.path, r.payload?.detail]))}`);
    await sleep(50);
  }
}
const delivered = (got: { path: string; payload: any }[], id: string, action: string, has: (detail: any) => boolean = () => true) =>
  got.some((r) => r.path.endsWith(`/${action}`) && r.payload?.document?.id === id && has(r.payload.detail ?? {}));

test('Microsoft Entra ID: probe, create, manager, group membership, path-less replace, deactivation with "False"', async () => {
  // Entra reads the service's configuration first.
  assert.equal((await f.scim('GET', '/ServiceProviderConfig')).status, 200);
  // The probe Entra sends before it creates; an empty list means "create".
  assert.deepEqual(await probe('alice@contoso.example.com'), []);
  const entraUser = (userName: string, externalId: string, given: string, family: string, employeeNumber: string) => ({
    schemas: [CORE_USER, ENTERPRISE],
    externalId,
    userName,
    active: true,
    displayName: `${given} ${family}`,
    title: 'Consultant',
    emails: [{ primary: true, type: 'work', value: userName }],
    meta: { resourceType: 'User' },
    name: { formatted: `${given} ${family}`, familyName: family, givenName: given },
    phoneNumbers: [{ type: 'work', value: '+1 555 0100' }],
    addresses: [{ type: 'work', streetAddress: '1 Main St', locality: 'Redmond', country: 'US' }],
    preferredLanguage: 'en-US',
    [ENTERPRISE]: { employeeNumber, department: f.tenant.departmentExternalId },
  });
  const alice = await f.scim('POST', '/Users', entraUser('alice@contoso.example.com', 'alice', 'Alice', 'Smith', '1001'));
  assert.equal(alice.status, 201, alice.text);
  assert.deepEqual(await probe('bob@contoso.example.com'), []);
  const bob = await f.scim('POST', '/Users', entraUser('bob@contoso.example.com', 'bob', 'Bob', 'Jones', '1002'));
  assert.equal(bob.status, 201, bob.text);
  // The probe now finds Alice: Entra then updates rather than creates.
  assert.equal((await probe('ALICE@contoso.example.com'))[0].id, alice.body.id);

  // Manager by the manager's SCIM id.
  const manager = await f.scim('PATCH', `/Users/${bob.body.id}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'Add', path: `${ENTERPRISE}:manager`, value: alice.body.id }],
  });
  assert.equal(manager.status, 200, manager.text);
  assert.equal(manager.body[ENTERPRISE].manager.value, alice.body.id);

  // Groups: Entra looks the group up by displayName without members, then PATCHes members in and out.
  const groups = await f.scim('GET', `/Groups?excludedAttributes=members&filter=${encodeURIComponent('displayName eq "ProjectWrite"')}`);
  assert.equal(groups.body.totalResults, 1, groups.text);
  const groupId = groups.body.Resources[0].id;
  const added = await f.scim('PATCH', `/Groups/${groupId}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'Add', path: 'members', value: [{ value: alice.body.id }, { value: bob.body.id }] }],
  });
  assert.equal(added.status, 200, added.text);
  const removed = await f.scim('PATCH', `/Groups/${groupId}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'Remove', path: 'members', value: [{ value: bob.body.id }] }],
  });
  assert.equal(removed.status, 200, removed.text);

  // A change in Entra: replace without a path, attribute names as keys (dotted and qualified ones too).
  const renamed = await f.scim('PATCH', `/Users/${alice.body.id}`, {
    schemas: [PATCH_OP],
    Operations: [
      {
        op: 'Replace',
        value: {
          displayName: 'Alice Smith-Brown',
          'name.familyName': 'Smith-Brown',
          'name.formatted': 'Alice Smith-Brown',
          title: 'Senior Consultant',
          [`${ENTERPRISE}:employeeNumber`]: '1001-B',
        },
      },
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'alice.brown@contoso.example.com' },
    ],
  });
  assert.equal(renamed.status, 200, renamed.text);
  assert.equal(renamed.body.name.formatted, 'Alice Smith-Brown');
  assert.equal(renamed.body.emails[0].value, 'alice.brown@contoso.example.com');

  // Bob leaves: Entra's soft delete, "active" as the string "False", without a path.
  const left = await f.scim('PATCH', `/Users/${bob.body.id}`, { schemas: [PATCH_OP], Operations: [{ op: 'Replace', value: { active: 'False' } }] });
  assert.equal(left.status, 200, left.text);
  assert.equal(left.body.active, false);
  // Entra's next probe for a new Bob finds nobody: the name is free.
  assert.deepEqual(await probe('bob@contoso.example.com'), []);

  // DE-Users, the database and the webhook receiver agree.
  const [a] = await rowsOf(f, 'DE-Users', ['UserId', '=', alice.body.id]);
  const [b] = await rowsOf(f, 'DE-Users', ['UserId', '=', bob.body.id]);
  assert.equal(a.User, 'Alice Smith-Brown');
  assert.equal(a.Email, 'alice.brown@contoso.example.com');
  assert.equal(a.IsActive, true);
  assert.equal(a.DepartmentId, f.tenant.departmentId);
  assert.equal(a.Typology !== null, true);
  assert.equal(b.IsActive, false);
  assert.equal(b.TerminationDate !== null, true);
  const rows = await f.sql('select user_name, responsible_id, external_number from users where id = any($1) order by external_id', [
    [alice.body.id, bob.body.id],
  ]);
  assert.deepEqual(
    rows.map((r) => ({ ...r })),
    [
      { user_name: 'alice@contoso.example.com', responsible_id: null, external_number: '1001-B' },
      { user_name: 'bob@contoso.example.com_bob', responsible_id: alice.body.id, external_number: '1002' },
    ],
  );
  const roles = await f.sql(
    'select u.external_id, r.name from user_roles ur join roles r on r.id = ur.role_id join users u on u.id = ur.user_id where u.id = any($1)',
    [[alice.body.id, bob.body.id]],
  );
  assert.deepEqual(
    roles.map((r) => `${r.external_id}:${r.name}`),
    ['alice:ProjectWrite'],
  );
  await deliveries(
    (got) =>
      delivered(got, alice.body.id, 'Created', (d) => d.UserName === 'alice@contoso.example.com') &&
      delivered(got, bob.body.id, 'Created') &&
      delivered(got, alice.body.id, 'UserRoleAdded', (d) => d.RoleName === 'ProjectWrite') &&
      delivered(got, bob.body.id, 'UserRoleAdded', (d) => d.RoleName === 'ProjectWrite') &&
      delivered(got, bob.body.id, 'UserRoleRemoved', (d) => d.RoleName === 'ProjectWrite') &&
      delivered(got, alice.body.id, 'Updated', (d) => d.Name === 'Alice Smith-Brown') &&
      delivered(got, bob.body.id, 'Updated', (d) => d.IsActive === false) &&
      delivered(got, bob.body.id, 'Updated', (d) => d.UserName === 'bob@contoso.example.com_bob'),
  );
});

test('Okta: probe, create with a password, PUT updates, group push, PATCH deactivation', async () => {
  const userName = 'carol@okta.example.com';
  const list = await f.scim('GET', `/Users?filter=${encodeURIComponent(`userName eq "${userName}"`)}&startIndex=1&count=100`);
  assert.equal(list.body.totalResults, 0);
  const created = await f.scim('POST', '/Users', {
    schemas: [CORE_USER],
    userName,
    name: { givenName: 'Carol', familyName: 'Danvers' },
    emails: [{ primary: true, value: userName, type: 'work' }],
    displayName: 'Carol Danvers',
    locale: 'en-US',
    externalId: '00u1carol',
    groups: [],
    password: 'Okta-password-1',
    active: true,
  });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id;
  const login = () =>
    f.server.request('POST', '/api/auth/token', { headers: { 'x-apptenant': f.tenant.tenantId }, json: { userName, password: 'Okta-password-1' } });
  assert.equal((await login()).status, 200);

  // Okta reads the user and PUTs it back whole with the change.
  const got = await f.scim('GET', `/Users/${id}`);
  const put = await f.scim('PUT', `/Users/${id}`, {
    ...got.body,
    name: { givenName: 'Carol', familyName: 'Rambeau' },
    displayName: 'Carol Rambeau',
    title: 'Pilot',
  });
  assert.equal(put.status, 200, put.text);
  assert.equal(put.body.name.formatted, 'Carol Rambeau');
  // typologyFromTitle is off: title does not choose the typology, and answers the typology the settings give.
  assert.equal(put.body.title, created.body.title);
  // A PUT that changes nothing changes nothing (no event).
  const before = Number((await f.sql("select count(*)::int as n from events where document_id = $1 and action_type = 'Updated'", [id]))[0].n);
  const same = await f.scim('PUT', `/Users/${id}`, put.body);
  assert.equal(same.status, 200, same.text);
  assert.equal(same.body.meta.version, put.body.meta.version);
  assert.equal(Number((await f.sql("select count(*)::int as n from events where document_id = $1 and action_type = 'Updated'", [id]))[0].n), before);

  // Group push: create, link a member, rename, unlink.
  const group = await f.scim('POST', '/Groups', { schemas: [GROUP], displayName: 'Okta Crew', members: [] });
  assert.equal(group.status, 201, group.text);
  const gid = group.body.id;
  let res = await f.scim('PATCH', `/Groups/${gid}`, {
    schemas: [PATCH_OP],
    Operations: [{ op: 'add', path: 'members', value: [{ value: id, display: userName }] }],
  });
  assert.equal(res.status, 200, res.text);
  res = await f.scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { id: gid, displayName: 'Okta Crew Renamed' } }] });
  assert.equal(res.body.displayName, 'Okta Crew Renamed');
  res = await f.scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH_OP], Operations: [{ op: 'remove', path: `members[value eq "${id}"]` }] });
  assert.deepEqual(res.body.members, []);
  res = await f.scim('PATCH', `/Groups/${gid}`, { schemas: [PATCH_OP], Operations: [{ op: 'add', path: 'members', value: [{ value: id }] }] });
  assert.equal(res.body.members.length, 1);

  // Deactivation: PATCH replace active false.
  const off = await f.scim('PATCH', `/Users/${id}`, { schemas: [PATCH_OP], Operations: [{ op: 'replace', value: { active: false } }] });
  assert.equal(off.status, 200, off.text);
  assert.equal(off.body.active, false);
  assert.equal((await login()).status, 401);
  // Okta's later GET of the deactivated user still works (only DELETE removes from SCIM).
  assert.equal((await f.scim('GET', `/Users/${id}`)).body.active, false);
  // A stale version is refused.
  assertScimError(await f.scim('PUT', `/Users/${id}`, { ...got.body, active: true }, { 'if-match': got.body.meta.version }), 412);

  const [row] = await rowsOf(f, 'DE-Users', ['UserId', '=', id]);
  assert.equal(row.User, 'Carol Rambeau');
  assert.equal(row.IsActive, false);
  assert.equal(row.ExternalId, '00u1carol');
  const roles = await f.sql('select r.name from user_roles ur join roles r on r.id = ur.role_id where ur.user_id = $1', [id]);
  assert.deepEqual(
    roles.map((r) => r.name),
    ['Okta Crew Renamed'],
  );
  await deliveries(
    (got) =>
      delivered(got, id, 'Created', (d) => d.UserName === userName) &&
      delivered(got, id, 'Updated', (d) => d.Password === '********') &&
      delivered(got, id, 'Updated', (d) => d.Name === 'Carol Rambeau') &&
      delivered(got, id, 'UserRoleAdded', (d) => d.RoleName === 'Okta Crew') &&
      delivered(got, id, 'UserRoleRemoved', (d) => d.RoleName === 'Okta Crew Renamed') &&
      delivered(got, id, 'UserRoleAdded', (d) => d.RoleName === 'Okta Crew Renamed') &&
      delivered(got, id, 'Updated', (d) => d.IsActive === false),
  );
});
