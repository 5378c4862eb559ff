// The Active Directory blocker's exchange, driven by a client shaped like the platform's public agent
// (SkillsWorkflow/ADBlocker, Program.cs): its headers, paths, bodies (Newtonsoft's shapes) and its exact
// sequence — users to block → block → blocked login requests → answer → unblock requests → answer → task
// runtime — against a tenant with one expired user, one blocked sign-in and one unblock request. Every
// state change shows in DE-Users / DE-UsersToBlock / DE-UsersToUnblock; a second tenant sees none of it;
// the password is sealed at rest, answered once, gone when answered or after 15 minutes, never logged.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';

type Tenant = Awaited<ReturnType<TestServer['createTenant']>>;

let server: TestServer;
let a: Tenant;
let b: Tenant;
const logged: string[] = [];
const PASSWORD = 'Corr3ct-Horse-Battery!';

before(async () => {
  server = await startTestServer({ LOG_LEVEL: 'debug' }, { logDestination: { write: (chunk: string) => void logged.push(chunk) } });
  a = await server.createTenant('Blocker Agency');
  b = await server.createTenant('Other Agency');
});
after(() => server?.close());

async function sql(text: string, values: unknown[] = []): Promise<any[]> {
  const c = new pg.Client({ connectionString: server.databaseUrl });
  await c.connect();
  try {
    return (await c.query(text, values)).rows;
  } finally {
    await c.end();
  }
}

/** An app of the tenant holding only these roles (the agent's own credentials). */
async function appWith(t: Tenant, roles: string[]): Promise<Record<string, string>> {
  const res = await server.request('POST', `/admin/tenants/${t.tenantId}/apps`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    json: { name: `agent ${roles.join(',')}`, roles },
  });
  assert.equal(res.status, 201, res.text);
  return { 'x-appid': res.body.appId, 'x-appsecret': res.body.appSecret, 'x-apptenant': t.tenantId, accept: 'application/json' };
}

/** The agent as Program.cs talks: relative paths under its ApiUrl, JSON bodies as Newtonsoft writes them, EnsureSuccessStatusCode. */
function agent(headers: Record<string, string>) {
  const call = async (method: string, path: string, body?: { json?: unknown; text?: string }) => {
    const h = { ...headers };
    let payload: string | undefined;
    if (body?.json !== undefined) {
      h['content-type'] = 'application/json; charset=utf-8';
      payload = JSON.stringify(body.json);
    } else if (body?.text !== undefined) {
      h['content-type'] = 'text/plain; charset=utf-8';
      payload = body.text;
    }
    const res = await server.request(method, `/${path}`, { headers: h, body: payload });
    assert.ok(res.status >= 200 && res.status < 300, `${method} ${path}: ${res.status} ${res.text}`);
    return res.body;
  };
  return {
    usersToBlock: () => call('GET', 'api/blockedloginrequests/userstoblock'),
    block: (Oid: string, AccountExpirationDate: string | null) => call('POST', 'api/blockedloginrequests/block', { json: { Oid, AccountExpirationDate } }),
    blockedLoginRequests: () => call('GET', 'api/blockedloginrequests'),
    answerBlockedLogin: (Id: string, RequestResult: boolean, RequestResultMessage: string) =>
      call('PUT', 'api/blockedloginrequests', { json: { Id, RequestResult, RequestResultMessage } }),
    unblockUserRequests: () => call('GET', 'api/unblockuserrequests'),
    answerUnblock: (Id: string, RequestResult: boolean, RequestResultMessage: string) =>
      call('PUT', 'api/unblockuserrequests', { json: { Id, RequestResult, RequestResultMessage } }),
    taskRuntime: () => call('POST', 'api/blockedloginrequests/taskruntime', { text: '' }),
  };
}

const rowsOf = async (t: Tenant, query: string, filters: unknown[] = []) => {
  const res = await server.request('POST', `/api/v3/analytics/named-query/${query}/dynamic-execute`, {
    headers: appHeaders(t),
    json: { queryBuilder: { filters } },
  });
  assert.equal(res.status, 200, res.text);
  return res.body.data as Record<string, any>[];
};

async function userOf(t: Tenant, userName: string, extra: Record<string, unknown>): Promise<string> {
  const res = await server.request('POST', '/api/users', {
    headers: appHeaders(t),
    json: {
      UserName: userName,
      ExternalId: `X-${userName}`,
      IsActive: true,
      AdUserName: `CORP\\${userName}`,
      CompanyCode: t.companyCode,
      DepartmentExternalId: t.departmentExternalId,
      TypologyExternalId: t.typologyExternalId,
      ...extra,
    },
  });
  assert.equal(res.status, 201, res.text);
  return res.body.Id;
}

const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);

test('the agent’s exact sequence over one expired user, one blocked sign-in and one unblock request; a second tenant sees none of it', async () => {
  const agentA = agent(await appWith(a, ['AdBlockerAgent']));
  const agentB = agent(await appWith(b, ['AdBlockerAgent']));

  // The tenant's history, through the API: two users whose access ended were blocked by an earlier run;
  // then one of them came back (an unblock request), and the other tried to sign in (a blocked sign-in).
  const locked = await userOf(a, 'locked', { IsActive: false });
  const returning = await userOf(a, 'returning', { IsActive: false });
  await server.request('PATCH', `/api/users/${locked}`, {
    headers: appHeaders(a),
    json: { Password: { value: PASSWORD }, IsActive: { value: true }, ExpirationDate: { value: yesterday() } },
  });
  const earlier = await agentA.usersToBlock();
  assert.deepEqual(earlier.map((u: { UserName: string }) => u.UserName).sort(), ['locked', 'returning']);
  for (const u of earlier) await agentA.block(u.Oid, null);
  const patched = await server.request('PATCH', `/api/users/${returning}`, { headers: appHeaders(a), json: { IsActive: { value: true } } });
  assert.equal(patched.status, 200, patched.text);
  const signIn = await server.request('POST', '/api/auth/token', { headers: { 'x-apptenant': a.tenantId }, json: { UserName: 'locked', Password: PASSWORD } });
  assert.equal(signIn.status, 401, signIn.text);
  assert.match(signIn.body.detail, /Active Directory/);
  const expired = await userOf(a, 'expired', { ExpirationDate: yesterday() });
  await userOf(a, 'current', {}); // active, not expired: nothing to do
  const [sealed] = await sql('select password_sealed from ad_blocked_login_requests where tenant_id = $1', [a.tenantId]);
  assert.match(sealed.password_sealed, /^enc:v1:/);
  assert.ok(!sealed.password_sealed.includes(PASSWORD));

  assert.deepEqual(
    (await rowsOf(a, 'DE-UsersToBlock')).map((r) => [r.Oid, r.UserName, r.AdUserName]),
    [[expired, 'expired', 'CORP\\expired']],
  );
  const [toUnblock] = await rowsOf(a, 'DE-UsersToUnblock');
  assert.equal(toUnblock.UserId, returning);
  assert.equal(toUnblock.RequestId, null, 'no request until the agent asks');
  const [expiredBefore] = await rowsOf(a, 'DE-Users', [['UserId', '=', expired]]);

  // RunBlockingTaskAsync
  const usersToBlock = await agentA.usersToBlock();
  assert.deepEqual(usersToBlock, [{ Oid: expired, UserName: 'expired', AdUserName: 'CORP\\expired' }]);
  await agentA.block(usersToBlock[0].Oid, '2027-06-30T00:00:00');
  assert.deepEqual(await rowsOf(a, 'DE-UsersToBlock'), []);
  const [expiredAfter] = await rowsOf(a, 'DE-Users', [['UserId', '=', expired]]);
  assert.ok(new Date(expiredAfter.ModifiedOn) > new Date(expiredBefore.ModifiedOn), 'the block shows in DE-Users');

  // RunScheduledTaskAsync: ProcessBlockedLoginRequestsAsync
  const blocked = await agentA.blockedLoginRequests();
  assert.equal(blocked.length, 1);
  assert.equal(blocked[0].AdUserName, 'CORP\\locked');
  assert.equal(blocked[0].Password, PASSWORD);
  assert.deepEqual(await agentA.blockedLoginRequests(), [], 'a password is answered once');
  assert.equal((await sql('select password_sealed from ad_blocked_login_requests where id = $1', [blocked[0].Id]))[0].password_sealed, null);
  await agentA.answerBlockedLogin(blocked[0].Id, true, '');
  assert.equal((await sql('select count(*)::int as n from ad_blocked_login_requests where tenant_id = $1', [a.tenantId]))[0].n, 0, 'deleted when answered');
  const [verdict] = await sql(`select action_type, detail from events where tenant_id = $1 and document_id = $2 and detail->>'LoginType' = 'ActiveDirectory'`, [
    a.tenantId,
    locked,
  ]);
  assert.equal(verdict.action_type, 'LoginSucceeded');
  assert.ok(!JSON.stringify(verdict.detail).includes(PASSWORD));

  // ProcessUnblockUserRequestsAsync
  const unblocks = await agentA.unblockUserRequests();
  assert.equal(unblocks.length, 1);
  assert.equal(unblocks[0].AdUserName, 'CORP\\returning');
  assert.equal(unblocks[0].AccountExpirationDate, null, 'the block recorded no AD expiry for this one');
  const [asked] = await rowsOf(a, 'DE-UsersToUnblock');
  assert.equal(asked.RequestId, unblocks[0].Id);
  await agentA.answerUnblock(unblocks[0].Id, true, '');
  assert.deepEqual(await rowsOf(a, 'DE-UsersToUnblock'), []);
  assert.deepEqual(await agentA.unblockUserRequests(), []);

  // UpdateTaskRuntimeAsync
  const run = await agentA.taskRuntime();
  assert.ok(Date.now() - Date.parse(run.LastRunOnUtc) < 60_000);
  assert.equal((await sql('select count(*)::int as n from ad_blocker_runs where tenant_id = $1', [a.tenantId]))[0].n, 1);

  // The second tenant's agent sees none of it, and cannot answer the first tenant's requests.
  assert.deepEqual(await agentB.usersToBlock(), []);
  assert.deepEqual(await agentB.blockedLoginRequests(), []);
  assert.deepEqual(await agentB.unblockUserRequests(), []);
  assert.deepEqual(await rowsOf(b, 'DE-UsersToBlock'), []);
  assert.deepEqual(await rowsOf(b, 'DE-UsersToUnblock'), []);
  const foreign = await server.request('PUT', '/api/unblockuserrequests', {
    headers: await appWith(b, ['AdBlockerAgent']),
    json: { Id: unblocks[0].Id, RequestResult: false, RequestResultMessage: 'x' },
  });
  assert.equal(foreign.status, 404, foreign.text);
  const blockForeign = await server.request('POST', '/api/blockedloginrequests/block', {
    headers: await appWith(b, ['AdBlockerAgent']),
    json: { Oid: locked },
  });
  assert.equal(blockForeign.status, 404, blockForeign.text);

  // The agent's new expiry was recorded for the restore; the password was never logged.
  assert.equal(
    (await sql('select ad_account_expiration_date from users where id = $1', [expired]))[0].ad_account_expiration_date.toISOString(),
    '2027-06-30T00:00:00.000Z',
  );
  // The process logger (workers, at debug here) never sees it; the HTTP request line holds no body (app.ts).
  assert.ok(!logged.join('').includes(PASSWORD), 'the password is never logged');
});

test('a held sign-in is gone after 15 minutes; at most 5 wait per user', async () => {
  const agentA = agent(await appWith(a, ['AdBlockerAgent']));
  for (let i = 0; i < 7; i++) {
    const res = await server.request('POST', '/api/auth/token', {
      headers: { 'x-apptenant': a.tenantId },
      json: { UserName: 'locked', Password: `guess ${i}` },
    });
    assert.equal(res.status, 401);
  }
  assert.equal((await sql('select count(*)::int as n from ad_blocked_login_requests where tenant_id = $1', [a.tenantId]))[0].n, 5);
  await sql(`update ad_blocked_login_requests set created_on_utc = now() - interval '16 minutes' where tenant_id = $1`, [a.tenantId]);
  assert.deepEqual(await agentA.blockedLoginRequests(), []);
  assert.equal((await sql('select count(*)::int as n from ad_blocked_login_requests where tenant_id = $1', [a.tenantId]))[0].n, 0);
});

test('every route needs the role AdBlockerAgent (or Administrator)', async () => {
  const none = await appWith(a, []);
  for (const [method, path, json] of [
    ['GET', '/api/blockedloginrequests/userstoblock', undefined],
    ['POST', '/api/blockedloginrequests/block', { Oid: a.userId, AccountExpirationDate: null }],
    ['GET', '/api/blockedloginrequests', undefined],
    ['PUT', '/api/blockedloginrequests', { Id: a.userId, RequestResult: true, RequestResultMessage: '' }],
    ['GET', '/api/unblockuserrequests', undefined],
    ['PUT', '/api/unblockuserrequests', { Id: a.userId, RequestResult: true, RequestResultMessage: '' }],
    ['POST', '/api/blockedloginrequests/taskruntime', {}],
  ] as const) {
    const res = await server.request(method, path, { headers: none, json });
    assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
    assert.ok(JSON.stringify(res.body).includes('AdBlockerAgent'), res.text);
  }
  // The Postman collection's "Users To Block" / "Users To Unblock" with their empty query values.
  const admin = appHeaders(a);
  const listed = await server.request('GET', '/api/blockedloginrequests/userstoblock?countryName=&companyName&companyId=&countryId=', { headers: admin });
  assert.equal(listed.status, 200, listed.text);
  const scoped = await server.request('GET', `/api/unblockuserrequests?countryName=&countryId&companyName&companyId=${a.companyId}`, { headers: admin });
  assert.equal(scoped.status, 200, scoped.text);
});
