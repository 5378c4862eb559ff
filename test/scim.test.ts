// SCIM 2.0 through HTTP: tokens and tenant isolation, discovery, Users (create, get, filter, page, sort,
// attributes, PUT, PATCH, ETags, DELETE) over the Integration API's write path, deactivation by the user
// feed's rule, Groups as roles, Bulk, settings, and bad input answered as SCIM errors with nothing written.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { appHeaders } from './helpers.ts';
import { assertScimError, CORE_USER, ENTERPRISE, patchBody, rowsOf, type ScimFixture, scimFixture, userBody } from './scim-helpers.ts';

let f: ScimFixture;

before(async () => {
  f = await scimFixture();
});
after(() => f.close());

const create = async (userName: string, extra: Record<string, unknown> = {}) => {
  const res = await f.scim('POST', '/Users', userBody(userName, extra));
  assert.equal(res.status, 201, res.text);
  return res.body;
};
const userCount = async () => Number((await f.sql('select count(*)::int as n from users'))[0].n);

describe('tokens and authentication', () => {
  test('a token is shown once, listed without its secret, stored as a hash, and revocable at once', async () => {
    const created = await f.server.request('POST', '/api/v3/scim/tokens', { headers: f.h, json: { name: 'Second' } });
    assert.equal(created.status, 201, created.text);
    assert.match(created.body.token, new RegExp(`^scim_${f.tenant.tenantId}_[A-Za-z0-9_-]{40,}$`));
    const list = await f.server.request('GET', '/api/v3/scim/tokens', { headers: f.h });
    assert.equal(list.status, 200);
    assert.ok(list.body.every((t: Record<string, unknown>) => !('token' in t)));
    const secret = created.body.token.slice(`scim_${f.tenant.tenantId}_`.length);
    assert.ok(!list.text.includes(secret));
    const stored = await f.sql('select token_hash from scim_tokens where id = $1', [created.body.id]);
    assert.equal(stored[0].token_hash, createHash('sha256').update(secret).digest('base64url'));
    const ok = await f.server.request('GET', '/scim/v2/Users?count=1', { headers: { authorization: `Bearer ${created.body.token}` } });
    assert.equal(ok.status, 200, ok.text);
    const revoked = await f.server.request('DELETE', `/api/v3/scim/tokens/${created.body.id}`, { headers: f.h });
    assert.equal(revoked.status, 204, revoked.text);
    const refused = await f.server.request('GET', '/scim/v2/Users?count=1', { headers: { authorization: `Bearer ${created.body.token}` } });
    assertScimError(refused, 401);
  });

  test('only an Administrator creates tokens; no token, a wrong one, an access token or another tenant’s token is a 401 SCIM error', async () => {
    const other = await f.server.createTenant('Other Scim Agency');
    const user = await f.server.request('POST', '/admin/tenants/' + other.tenantId + '/users', {
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
      json: { userName: 'plain', password: 'Plain-password-1', roles: [] },
    });
    assert.equal(user.status, 201, user.text);
    const login = await f.server.request('POST', '/api/auth/token', {
      headers: { 'x-apptenant': other.tenantId },
      json: { userName: 'plain', password: 'Plain-password-1' },
    });
    assert.equal(login.status, 200, login.text);
    const forbidden = await f.server.request('POST', '/api/v3/scim/tokens', {
      headers: { authorization: `Bearer ${login.body.accessToken}` },
      json: { name: 'x' },
    });
    assert.equal(forbidden.status, 403, forbidden.text);
    assertScimError(await f.server.request('GET', '/scim/v2/Users'), 401);
    assertScimError(await f.server.request('GET', '/scim/v2/Users', { headers: { authorization: 'Bearer nonsense' } }), 401);
    assertScimError(await f.server.request('GET', '/scim/v2/Users', { headers: { authorization: `Bearer ${login.body.accessToken}` } }), 401);
    assertScimError(await f.server.request('GET', '/scim/v2/Users', { headers: appHeaders(f.tenant) }), 401);
    const otherToken = (await f.server.request('POST', '/api/v3/scim/tokens', { headers: appHeaders(other), json: { name: 'theirs' } })).body.token;
    // Their token under our base path is refused; under theirs it sees only their users.
    const slug = (await f.sql('select slug from tenants where id = $1', [f.tenant.tenantId]))[0].slug;
    assertScimError(await f.server.request('GET', `/t/${slug}/scim/v2/Users`, { headers: { authorization: `Bearer ${otherToken}` } }), 401);
    const ours = await create('isolated@example.com');
    const theirs = await f.server.request('GET', `/scim/v2/Users?filter=${encodeURIComponent('userName eq "isolated@example.com"')}`, {
      headers: { authorization: `Bearer ${otherToken}` },
    });
    assert.equal(theirs.status, 200);
    assert.equal(theirs.body.totalResults, 0);
    assertScimError(await f.server.request('GET', `/scim/v2/Users/${ours.id}`, { headers: { authorization: `Bearer ${otherToken}` } }), 404);
    // A token of another tenant cannot be forged by naming our tenant with their secret.
    const forged = otherToken.replace(other.tenantId, f.tenant.tenantId);
    assertScimError(await f.server.request('GET', '/scim/v2/Users', { headers: { authorization: `Bearer ${forged}` } }), 401);
  });

  test('the base path /t/{slug}/scim/v2 answers with locations under it', async () => {
    const slug = (await f.sql('select slug from tenants where id = $1', [f.tenant.tenantId]))[0].slug;
    const res = await f.server.request('POST', `/t/${slug}/scim/v2/Users`, {
      headers: { authorization: `Bearer ${f.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(userBody('based@example.com')),
    });
    assert.equal(res.status, 201, res.text);
    assert.ok(res.body.meta.location.endsWith(`/t/${slug}/scim/v2/Users/${res.body.id}`), res.body.meta.location);
  });
});

describe('discovery', () => {
  test('ServiceProviderConfig, ResourceTypes and Schemas say what is supported', async () => {
    const spc = await f.scim('GET', '/ServiceProviderConfig');
    assert.equal(spc.status, 200);
    assert.match(spc.headers.get('content-type') ?? '', /application\/scim\+json/);
    assert.equal(spc.body.patch.supported, true);
    assert.deepEqual(spc.body.bulk, { supported: true, maxOperations: 1000, maxPayloadSize: 1048576 });
    assert.deepEqual(spc.body.filter, { supported: true, maxResults: 200 });
    assert.equal(spc.body.etag.supported, true);
    assert.equal(spc.body.authenticationSchemes[0].type, 'oauthbearertoken');
    const types = await f.scim('GET', '/ResourceTypes');
    assert.deepEqual(
      types.body.Resources.map((r: { id: string }) => r.id),
      ['User', 'Group'],
    );
    assert.equal((await f.scim('GET', '/ResourceTypes/User')).body.schemaExtensions[0].schema, ENTERPRISE);
    const schemas = await f.scim('GET', '/Schemas');
    assert.equal(schemas.body.totalResults, 3);
    const user = (await f.scim('GET', `/Schemas/${CORE_USER}`)).body;
    const attr = (n: string) => user.attributes.find((a: { name: string }) => a.name === n);
    assert.equal(attr('userName').required, true);
    assert.equal(attr('userName').uniqueness, 'server');
    assert.equal(attr('groups').mutability, 'readOnly');
    assert.equal(attr('locale').returned, 'never');
    assertScimError(await f.scim('GET', '/Schemas/urn:nothing'), 404);
    assertScimError(await f.scim('GET', '/NoSuchEndpoint'), 404);
  });
});

describe('Users', () => {
  test('POST creates through the Integration API: DE-Users, Created event, location, ETag; a taken userName is 409 uniqueness', async () => {
    const before = await userCount();
    const res = await f.scim('POST', '/Users', {
      ...userBody('ana@example.com'),
      externalId: 'E-ANA',
      name: { givenName: 'Ana', familyName: 'Silva' },
      phoneNumbers: [
        { value: '+351 1', type: 'mobile' },
        { value: '+351 2', type: 'work' },
      ],
      userType: 'Regular/Permanent',
      [ENTERPRISE]: { employeeNumber: '0042', department: f.tenant.departmentExternalId, organization: f.tenant.companyCode },
    });
    assert.equal(res.status, 201, res.text);
    assert.match(res.headers.get('content-type') ?? '', /application\/scim\+json/);
    assert.equal(res.headers.get('etag'), res.body.meta.version);
    assert.match(res.body.meta.version, /^W\/"/);
    assert.equal(res.headers.get('location'), res.body.meta.location);
    assert.equal(res.body.userName, 'ana@example.com');
    assert.equal(res.body.name.formatted, 'Ana Silva');
    assert.deepEqual(res.body.emails, [{ value: 'ana@example.com', type: 'work', primary: true }]);
    assert.deepEqual(res.body.phoneNumbers, [{ value: '+351 2', type: 'work', primary: true }]);
    assert.equal(res.body[ENTERPRISE].employeeNumber, '0042');
    assert.equal(await userCount(), before + 1);
    const [u] = await rowsOf(f, 'DE-Users', ['UserId', '=', res.body.id]);
    assert.equal(u.User, 'Ana Silva');
    assert.equal(u.ExternalId, 'E-ANA');
    assert.equal(u.DepartmentId, f.tenant.departmentId);
    assert.equal(u.IsActive, true);
    const row = (await f.sql('select external_number, timesheet_required, sso_user_name, phone from users where id = $1', [res.body.id]))[0];
    assert.deepEqual({ ...row }, { external_number: '0042', timesheet_required: true, sso_user_name: 'ana@example.com', phone: '+351 2' });
    const events = await f.sql('select action_type, detail from events where document_id = $1 order by seq', [res.body.id]);
    assert.equal(events[0].action_type, 'Created');
    assert.equal(events[0].detail.UserName, 'ana@example.com');

    const again = await f.scim('POST', '/Users', { ...userBody('ANA@example.com'), externalId: 'E-ANA-2' });
    assertScimError(again, 409, 'uniqueness');
    const sameExternal = await f.scim('POST', '/Users', { ...userBody('other-ana@example.com'), externalId: 'E-ANA' });
    assertScimError(sameExternal, 409, 'uniqueness');
    assert.equal(await userCount(), before + 1);
  });

  test('filters: every operator, and/or/not, grouping, value paths, enterprise paths; compiled with bound values', async () => {
    await create('f1@example.com', { externalId: 'F-1', title: 'Designer', [ENTERPRISE]: { employeeNumber: 'N-100' } });
    await create('f2@example.com', { externalId: 'F-2', active: true, [ENTERPRISE]: { employeeNumber: 'N-200' } });
    await create('f3@other.example.com', { externalId: 'F-3' });
    const names = async (filter: string) => {
      const res = await f.scim('GET', `/Users?count=200&sortBy=userName&filter=${encodeURIComponent(filter)}`);
      assert.equal(res.status, 200, `${filter}: ${res.text}`);
      assert.equal(res.body.totalResults, res.body.Resources.length);
      return res.body.Resources.map((r: { userName: string }) => r.userName).filter((n: string) => /^f\d/.test(n));
    };
    assert.deepEqual(await names('userName eq "F1@EXAMPLE.COM"'), ['f1@example.com']);
    assert.deepEqual(await names('userName ne "f1@example.com" and userName sw "f"'), ['f2@example.com', 'f3@other.example.com']);
    assert.deepEqual(await names('userName co "other"'), ['f3@other.example.com']);
    assert.deepEqual(await names('userName sw "f2"'), ['f2@example.com']);
    assert.deepEqual(await names('userName ew "@example.com" and userName sw "f"'), ['f1@example.com', 'f2@example.com']);
    assert.deepEqual(await names('externalId eq "F-1" or externalId eq "F-3"'), ['f1@example.com', 'f3@other.example.com']);
    assert.deepEqual(await names('externalId eq "f-1"'), [], 'externalId is caseExact');
    assert.deepEqual(await names('title pr and userName sw "f"'), ['f1@example.com', 'f2@example.com', 'f3@other.example.com']);
    assert.deepEqual(await names('userName sw "f" and not (userName ew "example.com")'), []);
    assert.deepEqual(await names('userName sw "f" and not (userName co "other")'), ['f1@example.com', 'f2@example.com']);
    assert.deepEqual(await names('(externalId eq "F-1" or externalId eq "F-2") and active eq true'), ['f1@example.com', 'f2@example.com']);
    assert.deepEqual(await names('emails[type eq "work" and value co "other"]'), ['f3@other.example.com']);
    assert.deepEqual(await names('emails.value eq "f2@example.com"'), ['f2@example.com']);
    assert.deepEqual(await names(`${ENTERPRISE}:employeeNumber gt "N-100"`), ['f2@example.com']);
    assert.deepEqual(await names(`${ENTERPRISE}:employeeNumber ge "N-100"`), ['f1@example.com', 'f2@example.com']);
    assert.deepEqual(await names('externalId lt "F-2" and externalId sw "F-"'), ['f1@example.com']);
    assert.deepEqual(await names('externalId le "F-2" and externalId sw "F-"'), ['f1@example.com', 'f2@example.com']);
    assert.deepEqual(await names(`${CORE_USER}:userName eq "f2@example.com"`), ['f2@example.com']);
    const future = new Date(Date.now() + 3600_000).toISOString();
    assert.deepEqual(await names(`meta.created gt "${future}"`), []);
    assert.deepEqual(await names(`meta.lastModified lt "${future}" and externalId eq "F-3"`), ['f3@other.example.com']);
    // A value that would break a glued string is only a value.
    assert.deepEqual(await names(`userName eq "x' or '1'='1"`), []);
    assert.deepEqual(await names('userName co "%"'), []);
  });

  test('malformed filters and unknown attributes are 400 invalidFilter; the length, depth and comparisons are bounded', async () => {
    for (const filter of [
      'userName eq',
      'userName eq "unterminated',
      'userName xx "a"',
      'nonsense eq "a"',
      'userName eq "a" and',
      '(userName eq "a"',
      'active eq "yes"',
      'emails[type eq "work"',
      'userName[value eq "a"]',
      'meta.created gt "not a date"',
      'name.middleName eq "x"',
      `${'('.repeat(20)}userName eq "a"${')'.repeat(20)}`,
      Array.from({ length: 40 }, (_, i) => `userName eq "u${i}"`).join(' or '),
      `userName eq "${'x'.repeat(3000)}"`,
    ]) {
      const res = await f.scim('GET', `/Users?filter=${encodeURIComponent(filter)}`);
      assertScimError(res, 400, 'invalidFilter');
    }
    assertScimError(await f.scim('GET', '/Users?sortBy=groups'), 400);
    assertScimError(await f.scim('GET', '/Users?sortOrder=sideways'), 400, 'invalidValue');
    assertScimError(await f.scim('GET', '/Users?count=abc'), 400);
  });

  test('startIndex and count page with totalResults; sortBy and sortOrder; attributes and excludedAttributes', async () => {
    for (let i = 0; i < 5; i++) await create(`page${i}@example.com`, { externalId: `P-${i}` });
    const filter = encodeURIComponent('userName sw "page"');
    const first = await f.scim('GET', `/Users?filter=${filter}&startIndex=1&count=2&sortBy=userName&sortOrder=descending`);
    assert.equal(first.body.totalResults, 5);
    assert.equal(first.body.itemsPerPage, 2);
    assert.equal(first.body.startIndex, 1);
    assert.deepEqual(
      first.body.Resources.map((r: { userName: string }) => r.userName),
      ['page4@example.com', 'page3@example.com'],
    );
    const last = await f.scim('GET', `/Users?filter=${filter}&startIndex=5&count=2&sortBy=userName&sortOrder=descending`);
    assert.deepEqual(
      last.body.Resources.map((r: { userName: string }) => r.userName),
      ['page0@example.com'],
    );
    const beyond = await f.scim('GET', `/Users?filter=${filter}&startIndex=50&count=2`);
    assert.equal(beyond.body.totalResults, 5);
    assert.deepEqual(beyond.body.Resources, []);
    const counted = await f.scim('GET', `/Users?filter=${filter}&count=0`);
    assert.equal(counted.body.totalResults, 5);
    const capped = await f.scim('GET', '/Users?count=100000');
    assert.ok(capped.body.Resources.length <= 200);
    const only = await f.scim('GET', `/Users?filter=${filter}&count=1&attributes=userName,name.givenName,${ENTERPRISE}:employeeNumber`);
    assert.deepEqual(Object.keys(only.body.Resources[0]).sort(), ['id', 'name', 'schemas', 'userName']);
    assert.deepEqual(Object.keys(only.body.Resources[0].name), ['givenName']);
    const without = await f.scim('GET', `/Users?filter=${filter}&count=1&excludedAttributes=emails,meta,name`);
    assert.ok(!('emails' in without.body.Resources[0]) && !('meta' in without.body.Resources[0]) && !('name' in without.body.Resources[0]));
    assert.ok('userName' in without.body.Resources[0]);
    const one = await f.scim('GET', `/Users/${only.body.Resources[0].id}?attributes=active`);
    assert.deepEqual(Object.keys(one.body).sort(), ['active', 'id', 'schemas']);
    const searched = await f.scim('POST', '/Users/.search', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:SearchRequest'],
      filter: 'userName sw "page"',
      count: 2,
      startIndex: 2,
    });
    assert.equal(searched.status, 200, searched.text);
    assert.equal(searched.body.totalResults, 5);
    assert.equal(searched.body.Resources.length, 2);
  });

  test('PUT replaces: attributes not sent are cleared; If-Match with an old version is 412 and changes nothing', async () => {
    const u = await create('put@example.com', { externalId: 'PUT-1', phoneNumbers: [{ value: '+1', type: 'work' }] });
    const replaced = await f.scim(
      'PUT',
      `/Users/${u.id}`,
      { ...userBody('put@example.com'), externalId: 'PUT-1', name: { formatted: 'Put Person' } },
      { 'if-match': u.meta.version },
    );
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.body.name.formatted, 'Put Person');
    assert.equal(replaced.body.phoneNumbers, undefined);
    assert.notEqual(replaced.body.meta.version, u.meta.version);
    const stale = await f.scim('PUT', `/Users/${u.id}`, { ...userBody('put@example.com'), name: { formatted: 'Stale' } }, { 'if-match': u.meta.version });
    assertScimError(stale, 412);
    const stalePatch = await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', path: 'displayName', value: 'Stale' }), {
      'if-match': u.meta.version,
    });
    assertScimError(stalePatch, 412);
    assert.equal((await f.scim('GET', `/Users/${u.id}`)).body.name.formatted, 'Put Person');
    const got = await f.scim('GET', `/Users/${u.id}`);
    assert.equal(got.headers.get('etag'), replaced.body.meta.version);
    assertScimError(await f.scim('PUT', '/Users/00000000-0000-0000-0000-000000000000', userBody('ghost@example.com')), 404);
  });

  test('PATCH: add, replace, remove with paths, value filters and without a path', async () => {
    const u = await create('patch@example.com', { externalId: 'PATCH-1', name: { givenName: 'Pat', familyName: 'Old' } });
    let res = await f.scim(
      'PATCH',
      `/Users/${u.id}`,
      patchBody(
        { op: 'replace', path: 'name.familyName', value: 'New' },
        { op: 'add', path: 'phoneNumbers[type eq "work"].value', value: '+44 1' },
        { op: 'replace', path: 'emails[type eq "work"].value', value: 'patched@example.com' },
        { op: 'add', path: `${ENTERPRISE}:employeeNumber`, value: 'EN-9' },
        { op: 'replace', value: { title: 'Engineer', [`${ENTERPRISE}:department`]: f.tenant.departmentExternalId } },
      ),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name.formatted, 'Pat New');
    assert.equal(res.body.phoneNumbers[0].value, '+44 1');
    assert.equal(res.body.emails[0].value, 'patched@example.com');
    assert.equal(res.body[ENTERPRISE].employeeNumber, 'EN-9');
    res = await f.scim(
      'PATCH',
      `/Users/${u.id}`,
      patchBody({ op: 'remove', path: 'phoneNumbers[type eq "work"]' }, { op: 'remove', path: `${ENTERPRISE}:employeeNumber` }),
    );
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.phoneNumbers, undefined);
    assert.equal(res.body[ENTERPRISE]?.employeeNumber, undefined);
    const manager = await create('manager@example.com', { externalId: 'MGR-1' });
    res = await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'Replace', path: `${ENTERPRISE}:manager`, value: manager.id }));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body[ENTERPRISE].manager.value, manager.id);
    assert.equal((await f.sql('select responsible_id from users where id = $1', [u.id]))[0].responsible_id, manager.id);
    // Errors: unknown path, read-only attributes, remove without a path, bad values.
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', path: 'favouriteColour', value: 'x' })), 400, 'invalidPath');
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', path: 'groups', value: [] })), 400, 'mutability');
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', path: 'id', value: 'x' })), 400, 'mutability');
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'remove' })), 400, 'noTarget');
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', path: 'active', value: 'maybe' })), 400, 'invalidValue');
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', path: 'userName', value: 42 })), 400, 'invalidValue');
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', path: `${ENTERPRISE}:manager`, value: u.id })), 400, 'invalidValue');
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', path: 'emails[type eq', value: 'x' })), 400, 'invalidPath');
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'move', path: 'userName', value: 'x' })), 400, 'invalidSyntax');
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, { Operations: [] }), 400, 'invalidSyntax');
  });

  test('bad input: malformed JSON, unknown attributes, wrong types, unknown references are SCIM errors and write nothing', async () => {
    const before = await userCount();
    const eventsBefore = Number((await f.sql('select count(*)::int as n from events'))[0].n);
    const bad = await f.server.request('POST', '/scim/v2/Users', {
      headers: { authorization: `Bearer ${f.token}`, 'content-type': 'application/scim+json' },
      body: '{"userName": ',
    });
    assertScimError(bad, 400, 'invalidSyntax');
    assertScimError(await f.scim('POST', '/Users', [1, 2]), 400, 'invalidSyntax');
    assertScimError(await f.scim('POST', '/Users', { ...userBody('x1@example.com'), shoeSize: 44 }), 400, 'invalidValue');
    assertScimError(await f.scim('POST', '/Users', { ...userBody('x2@example.com'), active: 'perhaps' }), 400, 'invalidValue');
    assertScimError(await f.scim('POST', '/Users', { ...userBody('x3@example.com'), emails: 'x3@example.com' }), 400, 'invalidValue');
    assertScimError(await f.scim('POST', '/Users', { ...userBody('x4@example.com'), name: { nickname: 'x' } }), 400, 'invalidValue');
    assertScimError(await f.scim('POST', '/Users', { schemas: [CORE_USER], name: { formatted: 'No Username' } }), 400, 'invalidValue');
    assertScimError(await f.scim('POST', '/Users', { ...userBody('x5@example.com'), [ENTERPRISE]: { department: 'No Such Department' } }), 400, 'invalidValue');
    assertScimError(await f.scim('POST', '/Users', { ...userBody('x6@example.com'), [ENTERPRISE]: { organization: 'No Such Company' } }), 400, 'invalidValue');
    assertScimError(await f.scim('POST', '/Users', { ...userBody('x7@example.com'), userType: 'Astronaut' }), 400, 'invalidValue');
    assertScimError(await f.scim('POST', '/Users', { ...userBody('x8@example.com'), [ENTERPRISE]: { manager: { value: 'not-a-user' } } }), 400, 'invalidValue');
    assertScimError(await f.scim('POST', '/Users', { ...userBody('x9@example.com'), userName: 'u'.repeat(5000) }), 400, 'invalidValue');
    const big = await f.scim('POST', '/Users', { ...userBody('x10@example.com'), addresses: [{ formatted: 'x'.repeat(300_000) }] });
    assertScimError(big, 413);
    assert.equal(await userCount(), before);
    // A typology would have been created for x7 before its user type failed: the transaction took it back.
    assert.equal(Number((await f.sql('select count(*)::int as n from events'))[0].n), eventsBefore);
  });

  test('DELETE deactivates as the feed does and the user is gone from SCIM (404); a POST with its externalId brings it back', async () => {
    const u = await create('gone@example.com', { externalId: 'GONE-1' });
    const del = await f.scim('DELETE', `/Users/${u.id}`);
    assert.equal(del.status, 204, del.text);
    assertScimError(await f.scim('GET', `/Users/${u.id}`), 404);
    assertScimError(await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', path: 'active', value: true })), 404);
    const row = (await f.sql('select user_name, is_active, expiration_date from users where id = $1', [u.id]))[0];
    assert.equal(row.user_name, 'gone@example.com_GONE-1');
    assert.equal(row.is_active, false);
    assert.equal(row.expiration_date, new Date().toISOString().slice(0, 10));
    const list = await f.scim('GET', `/Users?filter=${encodeURIComponent('externalId eq "GONE-1"')}`);
    assert.equal(list.body.totalResults, 0);
    const back = await f.scim('POST', '/Users', { ...userBody('gone@example.com'), externalId: 'GONE-1' });
    assert.equal(back.status, 201, back.text);
    assert.equal(back.body.id, u.id);
    assert.equal(back.body.userName, 'gone@example.com');
    assert.equal(back.body.active, true);
  });

  test('Idempotency-Key on POST /Users replays the first answer', async () => {
    const body = userBody('idem@example.com', { externalId: 'IDEM-1' });
    const first = await f.scim('POST', '/Users', body, { 'idempotency-key': 'scim-key-1' });
    assert.equal(first.status, 201, first.text);
    const second = await f.scim('POST', '/Users', body, { 'idempotency-key': 'scim-key-1' });
    assert.equal(second.status, 201, second.text);
    assert.equal(second.headers.get('idempotent-replayed'), 'true');
    assert.equal(second.body.id, first.body.id);
  });
});

describe('deactivation', () => {
  test('PATCH active false: no sign-in, no API call with an earlier token, the user name is free; re-activation restores it when free', async () => {
    const u = await create('leaver@example.com', { externalId: 'LEAVER-1', password: 'Leaver-password-1' });
    const login = () =>
      f.server.request('POST', '/api/auth/token', {
        headers: { 'x-apptenant': f.tenant.tenantId },
        json: { userName: 'leaver@example.com', password: 'Leaver-password-1' },
      });
    const signedIn = await login();
    assert.equal(signedIn.status, 200, signedIn.text);
    const whoami = () => f.server.request('GET', '/api/v3/whoami', { headers: { authorization: `Bearer ${signedIn.body.accessToken}` } });
    assert.equal((await whoami()).status, 200);

    const res = await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', path: 'active', value: false }));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.active, false);
    assert.equal(res.body.userName, 'leaver@example.com_LEAVER-1');
    const row = (await f.sql('select user_name, sso_user_name, is_active, expiration_date, inactivated_on_utc from users where id = $1', [u.id]))[0];
    assert.equal(row.sso_user_name, 'leaver@example.com_LEAVER-1');
    assert.equal(row.expiration_date, new Date().toISOString().slice(0, 10));
    assert.ok(row.inactivated_on_utc);
    assert.equal((await login()).status, 401);
    assert.equal((await whoami()).status, 401);
    const refresh = await f.server.request('POST', '/api/auth/token/refresh', { json: { refreshToken: signedIn.body.refreshToken } });
    assert.equal(refresh.status, 401);
    // The feed's order: expiration date, then IsActive, then the names, each an Updated event.
    const events = await f.sql("select detail from events where document_id = $1 and action_type = 'Updated' order by seq", [u.id]);
    const keys = events.map((e) => Object.keys(e.detail).sort().join(','));
    assert.deepEqual(keys.slice(-3), ['ExpirationDate', 'IsActive', 'SsoUserName,UserName']);

    // The name is free for someone else…
    const successor = await create('leaver@example.com', { externalId: 'LEAVER-2' });
    assert.equal(successor.userName, 'leaver@example.com');
    // …so re-activating the first keeps its freed name; after the successor leaves, the next re-activation restores it.
    let back = await f.scim('PATCH', `/Users/${u.id}`, patchBody({ op: 'replace', value: { active: true } }));
    assert.equal(back.status, 200, back.text);
    assert.equal(back.body.active, true);
    assert.equal(back.body.userName, 'leaver@example.com_LEAVER-1');
    await f.scim('PATCH', `/Users/${successor.id}`, patchBody({ op: 'replace', value: { active: 'False' } }));
    back = await f.scim('PUT', `/Users/${u.id}`, { ...userBody('leaver@example.com'), externalId: 'LEAVER-1', active: true });
    assert.equal(back.status, 200, back.text);
    assert.equal(back.body.userName, 'leaver@example.com');
    const restored = (await f.sql('select sso_user_name, expiration_date from users where id = $1', [u.id]))[0];
    assert.equal(restored.sso_user_name, 'leaver@example.com');
    assert.equal(restored.expiration_date, null);
    assert.equal((await login()).status, 200);
  });
});

describe('Groups', () => {
  test('roles as groups: filter by displayName, membership by PATCH and PUT raises UserRoleAdded/UserRoleRemoved', async () => {
    const a = await create('member-a@example.com', { externalId: 'MA' });
    const b = await create('member-b@example.com', { externalId: 'MB' });
    const found = await f.scim('GET', `/Groups?filter=${encodeURIComponent('displayName eq "ProjectRead"')}&excludedAttributes=members`);
    assert.equal(found.status, 200, found.text);
    assert.equal(found.body.totalResults, 1);
    const group = found.body.Resources[0];
    assert.equal(group.members, undefined);
    let res = await f.scim('PATCH', `/Groups/${group.id}`, patchBody({ op: 'add', path: 'members', value: [{ value: a.id }, { value: b.id }] }));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.members.map((m: { value: string }) => m.value).sort(), [a.id, b.id].sort());
    assert.deepEqual(
      (await f.scim('GET', `/Users/${a.id}`)).body.groups.map((g: { display: string }) => g.display),
      ['ProjectRead'],
    );
    const byMember = await f.scim('GET', `/Groups?filter=${encodeURIComponent(`members[value eq "${a.id}"]`)}`);
    assert.deepEqual(
      byMember.body.Resources.map((g: { displayName: string }) => g.displayName),
      ['ProjectRead'],
    );
    const usersInGroup = await f.scim('GET', `/Users?filter=${encodeURIComponent(`groups eq "${group.id}"`)}`);
    assert.equal(usersInGroup.body.totalResults, 2);
    res = await f.scim('PATCH', `/Groups/${group.id}`, patchBody({ op: 'remove', path: `members[value eq "${a.id}"]` }));
    assert.deepEqual(
      res.body.members.map((m: { value: string }) => m.value),
      [b.id],
    );
    res = await f.scim('PUT', `/Groups/${group.id}`, {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'ProjectRead',
      members: [{ value: a.id }],
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.members.map((m: { value: string }) => m.value),
      [a.id],
    );
    const events = await f.sql(
      "select document_id, action_type, detail->>'RoleName' as role from events where action_type in ('UserRoleAdded', 'UserRoleRemoved') and document_id = any($1) order by seq",
      [[a.id, b.id]],
    );
    assert.deepEqual(
      events.map((e) => `${e.document_id === a.id ? 'a' : 'b'} ${e.action_type} ${e.role}`),
      [
        'a UserRoleAdded ProjectRead',
        'b UserRoleAdded ProjectRead',
        'a UserRoleRemoved ProjectRead',
        'a UserRoleAdded ProjectRead',
        'b UserRoleRemoved ProjectRead',
      ],
    );
    assertScimError(await f.scim('PUT', `/Groups/${group.id}`, { displayName: 'Renamed' }), 400, 'mutability');
    assertScimError(await f.scim('DELETE', `/Groups/${group.id}`), 400, 'mutability');
    assertScimError(
      await f.scim('PATCH', `/Groups/${group.id}`, patchBody({ op: 'add', path: 'members', value: [{ value: '00000000-0000-0000-0000-000000000000' }] })),
      400,
      'invalidValue',
    );
    assertScimError(await f.scim('PATCH', `/Groups/${group.id}`, patchBody({ op: 'add', path: 'owners', value: [] })), 400, 'invalidPath');
  });

  test('a group the provider creates is a new role, which it may rename and delete; a taken name is 409 uniqueness', async () => {
    const m = await create('crew@example.com', { externalId: 'CREW' });
    const created = await f.scim('POST', '/Groups', {
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'],
      displayName: 'Crew',
      members: [{ value: m.id }],
    });
    assert.equal(created.status, 201, created.text);
    assert.equal(created.body.members[0].value, m.id);
    assertScimError(await f.scim('POST', '/Groups', { displayName: 'crew' }), 409, 'uniqueness');
    const renamed = await f.scim('PATCH', `/Groups/${created.body.id}`, patchBody({ op: 'replace', value: { displayName: 'Crew 2' } }));
    assert.equal(renamed.body.displayName, 'Crew 2');
    assert.equal((await f.scim('DELETE', `/Groups/${created.body.id}`)).status, 204);
    assertScimError(await f.scim('GET', `/Groups/${created.body.id}`), 404);
    const removed = await f.sql("select count(*)::int as n from events where action_type = 'UserRoleRemoved' and document_id = $1", [m.id]);
    assert.equal(removed[0].n, 1);
  });
});

describe('Bulk', () => {
  test('operations in order with bulkId references; each fails alone; failOnErrors stops; bounds are enforced', async () => {
    const res = await f.scim('POST', '/Bulk', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
      Operations: [
        { method: 'POST', path: '/Users', bulkId: 'u1', data: userBody('bulk1@example.com', { externalId: 'B-1' }) },
        { method: 'POST', path: '/Users', bulkId: 'u2', data: userBody('bulk1@example.com', { externalId: 'B-2' }) },
        { method: 'POST', path: '/Groups', bulkId: 'g1', data: { displayName: 'Bulk Team', members: [{ value: 'bulkId:u1' }] } },
        { method: 'PATCH', path: '/Users/bulkId:u1', data: patchBody({ op: 'replace', path: 'title', value: 'Bulk Title' }) },
        { method: 'DELETE', path: '/Users/00000000-0000-0000-0000-000000000000' },
      ],
    });
    assert.equal(res.status, 200, res.text);
    const ops = res.body.Operations;
    assert.deepEqual(
      ops.map((o: { status: string }) => o.status),
      ['201', '409', '201', '200', '404'],
    );
    assert.equal(ops[1].response.scimType, 'uniqueness');
    const group = await f.scim('GET', ops[2].location.slice(ops[2].location.indexOf('/Groups')));
    assert.equal(group.body.members[0].display, 'Given bulk1');
    const stopped = await f.scim('POST', '/Bulk', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
      failOnErrors: 1,
      Operations: [
        { method: 'POST', path: '/Users', bulkId: 'x', data: { userName: 42 } },
        { method: 'POST', path: '/Users', bulkId: 'y', data: userBody('bulk-never@example.com') },
      ],
    });
    assert.equal(stopped.body.Operations.length, 1);
    assert.equal((await f.sql("select count(*)::int as n from users where user_name = 'bulk-never@example.com'"))[0].n, 0);
    const tooMany = await f.scim('POST', '/Bulk', {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:BulkRequest'],
      Operations: Array.from({ length: 1001 }, (_, i) => ({ method: 'DELETE', path: `/Users/${i}` })),
    });
    assertScimError(tooMany, 413);
    assertScimError(await f.scim('POST', '/Bulk', { Operations: [] }), 400, 'invalidSyntax');
  });
});

describe('settings', () => {
  test('GET shows the defaults; PUT checks references; user types map and typologies come from titles', async () => {
    const got = await f.server.request('GET', '/api/v3/scim/settings', { headers: f.h });
    assert.equal(got.status, 200, got.text);
    assert.equal(got.body.companyCode, f.tenant.companyCode);
    assert.equal(got.body.departmentExternalId, f.tenant.departmentExternalId);
    const bad = await f.server.request('PUT', '/api/v3/scim/settings', { headers: f.h, json: { userType: 'Astronaut' } });
    assert.equal(bad.status, 422, bad.text);
    const badDep = await f.server.request('PUT', '/api/v3/scim/settings', { headers: f.h, json: { departmentExternalId: 'NOPE' } });
    assert.equal(badDep.status, 422, badDep.text);
    const put = await f.server.request('PUT', '/api/v3/scim/settings', {
      headers: f.h,
      json: { typologyFromTitle: true, typologyGroup: 'SCIM Titles', userTypes: { Contractor: 'Temporary' }, ssoUserName: 'none' },
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.typologyFromTitle, true);
    const u = await create('contractor@example.com', { externalId: 'C-1', title: 'Rigger', userType: 'Contractor' });
    const row = (
      await f.sql(
        `select ty.name as typology, g.name as grp, ut.name as user_type, u.timesheet_required, u.sso_user_name
         from users u join typologies ty on ty.id = u.typology_id left join typology_groups g on g.id = ty.typology_group_id
         join user_types ut on ut.id = u.user_type_id where u.id = $1`,
        [u.id],
      )
    )[0];
    assert.deepEqual({ ...row }, { typology: 'Rigger', grp: 'SCIM Titles', user_type: 'Temporary', timesheet_required: false, sso_user_name: null });
    await f.server.request('PUT', '/api/v3/scim/settings', { headers: f.h, json: {} });
  });
});
