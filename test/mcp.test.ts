// The MCP server with the SDK's own client over Streamable HTTP and personal access tokens: initialize
// (and older revisions negotiated), tools per user (narrow roles against an Administrator), a named-query
// tool against dynamic-execute as the same user, the cursor to the end, a write tool seen in DE-* and in
// its webhook event, cancellation of a long call, resources and prompts, and a second tenant that sees nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { type ClientApiFixture, clientApiFixture } from './client-api-helpers.ts';
import { appToken } from './custom-tables-helpers.ts';
import { appHeaders } from './helpers.ts';
import { mcpClient, personalToken } from './mcp-helpers.ts';
import { createSubscription, type Receiver, startReceiver } from './webhooks-helpers.ts';

let f: ClientApiFixture;
let receiver: Receiver;
let admin: { id: string; headers: Record<string, string> };
let narrow: { id: string; headers: Record<string, string> };
let adminToken: string;
let narrowToken: string;
let jobId: string;
const open: Client[] = [];

const connect = async (token: string, base = '') => {
  const { client } = await mcpClient(f.server, token, base);
  open.push(client);
  return client;
};

before(async () => {
  f = await clientApiFixture('MCP Agency', { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  const sub = await createSubscription(f.server, f.h, { Url: receiver.url, ActionType: 'TimeUpdated', DocumentType: 'Skill.Module.BusinessObjects.Timesheet' });
  receiver.secret = sub.secret;
  admin = await f.userWith(['Administrator']);
  // Narrow: only DataExtractionRead, the role the named-query tools need (as dynamic-execute does, decision 0043).
  narrow = await f.userWith(['DataExtractionRead']);
  const [{ id: departmentId }] = await f.sql('select id from departments where tenant_id = $1 limit 1', [f.tenant.tenantId]);
  const project = await f.send('POST', '/api/v3/projects', {
    OperationType: 0,
    CreateModel: { Name: 'Site', CompanyId: f.tenant.companyId, ClientId: f.clientId },
  });
  jobId = (await f.send('POST', '/api/v3/jobs', { OperationType: 0, CreateModel: { Name: 'Site build', ProjectId: project.Id, DepartmentId: departmentId } }))
    .Id;
  for (let i = 0; i < 7; i++) {
    await f.send('POST', '/api/v3/timesheets', {
      OperationType: 0,
      CreateModel: { UserId: admin.id, JobId: jobId, Date: `2026-11-0${i + 1}`, DurationMinutes: 30 + i * 15, Description: `Day ${i}`, Status: 'New' },
    });
  }
  // A custom table only an Administrator may read: a CT- tool for one, none for the other.
  const bearer = { 'x-accesstoken': await appToken(f.server, f.tenant) };
  const table = await f.send(
    'POST',
    '/api/v3/custom-tables/Budgets',
    { KeyColumnName: 'K', KeyDataTypeId: 3, Columns: [{ ColumnName: 'V', ColumnDataTypeId: 5 }] },
    bearer,
  );
  await f.send('PUT', `/api/v3/custom-table-definitions/${table.Id}`, { ReadRoles: ['Administrator'], SaveRoles: ['Administrator'] }, bearer);
  adminToken = (await personalToken(f.server, f.tenant, admin.id)).token;
  narrowToken = (await personalToken(f.server, f.tenant, narrow.id)).token;
});
after(async () => {
  for (const c of open) await c.close().catch(() => {});
  await receiver?.close();
  await f?.close();
});

const rowsOf = (result: any): Record<string, unknown>[] => result.structuredContent.rows;

describe('transport and authorization', () => {
  test('no token: 401 naming the protected-resource metadata; the API’s own tokens are refused, and MCP tokens by the API', async () => {
    const none = await f.server.request('POST', '/mcp', { json: { jsonrpc: '2.0', id: 1, method: 'ping' } });
    assert.equal(none.status, 401);
    assert.match(
      none.headers.get('www-authenticate') ?? '',
      /^Bearer .*resource_metadata="http:\/\/127\.0\.0\.1:\d+\/\.well-known\/oauth-protected-resource\/mcp"/,
    );
    const meta = await f.server.request('GET', '/.well-known/oauth-protected-resource/mcp');
    assert.equal(meta.status, 200);
    assert.equal(meta.body.resource, `${f.server.baseUrl}/mcp`);
    const login = await f.server.request('POST', '/api/auth/token', { headers: appHeaders(f.tenant) });
    const apiToken = await f.server.request('POST', '/mcp', { headers: { authorization: `Bearer ${login.body.accessToken}` }, json: {} });
    assert.equal(apiToken.status, 401, 'an API access token is not an MCP token');
    const onApi = await f.server.request('GET', '/api/v3/analytics/named-queries', {
      headers: { authorization: `Bearer ${adminToken}`, 'x-apptenant': f.tenant.tenantId },
    });
    assert.equal(onApi.status, 401, 'an MCP token is refused by the rest of the API');
    // Bound to its resource: a token for /mcp is refused at /t/{slug}/mcp.
    const elsewhere = await f.server.request('POST', `/t/${f.tenant.slug}/mcp`, { headers: { authorization: `Bearer ${adminToken}` }, json: {} });
    assert.equal(elsewhere.status, 401);
    assert.match(elsewhere.text, /another resource/);
  });

  test('initialize: the current revision, older ones negotiated; Mcp-Session-Id; ping', async () => {
    const client = await connect(adminToken);
    assert.equal(client.getServerVersion()?.name, 'atrium');
    assert.ok(client.getServerCapabilities()?.tools);
    assert.deepEqual(await client.ping(), {});
    for (const [asked, answered] of [
      ['2025-03-26', '2025-03-26'],
      ['2024-11-05', '2024-11-05'],
      ['1999-01-01', LATEST_PROTOCOL_VERSION],
    ]) {
      const res = await fetch(`${f.server.baseUrl}/mcp`, {
        method: 'POST',
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: asked, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      });
      assert.equal(res.status, 200);
      assert.ok(res.headers.get('mcp-session-id'));
      const text = await res.text();
      const message = JSON.parse(
        text
          .split('\n')
          .find((l) => l.startsWith('data: {'))
          ?.slice(6) ?? '{}',
      );
      assert.equal(message.result.protocolVersion, answered, asked);
      await fetch(`${f.server.baseUrl}/mcp`, {
        method: 'DELETE',
        headers: { authorization: `Bearer ${adminToken}`, 'mcp-session-id': res.headers.get('mcp-session-id') ?? '' },
      });
    }
  });

  test('a session belongs to its token’s user: another user’s token with its id is answered 404', async () => {
    const { transport } = await mcpClient(f.server, adminToken);
    const res = await f.server.request('POST', '/mcp', {
      headers: { authorization: `Bearer ${narrowToken}`, 'mcp-session-id': transport.sessionId ?? '', accept: 'application/json, text/event-stream' },
      json: { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    });
    assert.equal(res.status, 404);
    await transport.terminateSession();
    await transport.close();
  });

  test('a user holds at most 32 sessions: the 33rd closes the oldest, which is then answered 404', async () => {
    const pat = await personalToken(f.server, f.tenant, narrow.id);
    const headers = { authorization: `Bearer ${pat.token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const init = JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'n', version: '1' } },
    });
    const ids: string[] = [];
    for (let i = 0; i < 33; i++) {
      const res = await fetch(`${f.server.baseUrl}/mcp`, { method: 'POST', headers, body: init });
      await res.text();
      ids.push(res.headers.get('mcp-session-id') ?? '');
    }
    const ping = (id: string) =>
      fetch(`${f.server.baseUrl}/mcp`, {
        method: 'POST',
        headers: { ...headers, 'mcp-session-id': id },
        body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }),
      }).then(async (r) => [r.status, await r.text()] as const);
    assert.equal((await ping(ids[0]))[0], 404);
    assert.equal((await ping(ids[32]))[0], 200);
    for (const id of ids) await fetch(`${f.server.baseUrl}/mcp`, { method: 'DELETE', headers: { ...headers, 'mcp-session-id': id } }).then((r) => r.text());
  });

  test('a revoked personal access token is refused', async () => {
    const pat = await personalToken(f.server, f.tenant, admin.id);
    await connect(pat.token);
    const del = await f.server.request('DELETE', `/api/v3/mcp/personal-access-tokens/${pat.id}`, { headers: f.h });
    assert.equal(del.status, 204, del.text);
    await assert.rejects(connect(pat.token), /401|nauthorized/);
    const list = await f.server.request('GET', '/api/v3/mcp/personal-access-tokens', { headers: f.h });
    assert.ok(list.body.find((t: any) => t.Id === pat.id).RevokedOn);
    assert.ok(!JSON.stringify(list.body).includes(pat.token.split('.')[2]), 'the list never shows a token');
    const notAdmin = await f.server.request('POST', '/api/v3/mcp/personal-access-tokens', { headers: narrow.headers, json: { Name: 'mine' } });
    assert.equal(notAdmin.status, 403);
  });
});

describe('tools', () => {
  test('tools/list: every named query a user may read, with purpose and typed columns; CT- and create_job only for the Administrator', async () => {
    const adminTools = (await (await connect(adminToken)).listTools()).tools;
    const narrowTools = (await (await connect(narrowToken)).listTools()).tools;
    const names = (ts: typeof adminTools) => new Set(ts.map((t) => t.name));
    const timesheets = adminTools.find((t) => t.name === 'de_timesheets');
    assert.ok(timesheets, 'de_timesheets');
    assert.match(timesheets.description ?? '', /time sheet entries/i);
    assert.match(timesheets.description ?? '', /Hours \(decimal\)/);
    assert.match(timesheets.description ?? '', /Day \(datetime\)|Day \(date\)/);
    assert.equal(timesheets.annotations?.readOnlyHint, true);
    assert.equal((timesheets.inputSchema.properties as any).take.maximum, 500);
    assert.ok((timesheets.inputSchema.properties as any).parameters.properties.From);
    assert.ok(names(adminTools).has('ct_budgets'));
    assert.ok(!names(narrowTools).has('ct_budgets'), 'a custom table the user may not read is no tool of theirs');
    assert.ok(names(narrowTools).has('de_jobs'));
    assert.ok(names(adminTools).has('create_job') && !names(narrowTools).has('create_job'));
    for (const t of ['log_time', 'comment_on_document', 'move_document_to_stage']) assert.ok(names(narrowTools).has(t), t);
    const logTime = adminTools.find((t) => t.name === 'log_time');
    assert.deepEqual([logTime?.annotations?.readOnlyHint, logTime?.annotations?.destructiveHint, logTime?.annotations?.idempotentHint], [false, false, false]);
    assert.equal(adminTools.find((t) => t.name === 'move_document_to_stage')?.annotations?.destructiveHint, true);
    // A read-only token lists no write tool.
    const readOnly = await personalToken(f.server, f.tenant, admin.id, { scopes: ['mcp:read'] });
    const readTools = names((await (await connect(readOnly.token)).listTools()).tools);
    assert.ok(readTools.has('de_timesheets') && !readTools.has('log_time'));
    // Without DataExtractionRead a user has no named-query tool, as dynamic-execute answers them 403.
    const roleless = await f.userWith([]);
    const rolelessClient = await connect((await personalToken(f.server, f.tenant, roleless.id)).token);
    assert.ok(![...names((await rolelessClient.listTools()).tools)].some((n) => n.startsWith('de_') || n.startsWith('ct_')));
    await assert.rejects(rolelessClient.callTool({ name: 'de_jobs', arguments: {} }), /Unknown tool/);
  });

  test('a named-query tool answers the rows dynamic-execute answers the same user, page by page to the end of the cursor', async () => {
    const filters = ['Hours', '>', 0.6];
    const orderBy = [{ field: 'Day', direction: 'desc' }];
    for (const [user, token] of [
      [admin, adminToken],
      [narrow, narrowToken],
    ] as const) {
      const api = await f.server.request('POST', '/api/v3/analytics/named-query/DE-TimeSheets/dynamic-execute', {
        headers: user.headers,
        json: { queryBuilder: { filters, orderBy } },
      });
      assert.equal(api.status, 200, api.text);
      const client = await connect(token);
      let result: any = await client.callTool({ name: 'de_timesheets', arguments: { filters, orderBy, take: 3 } });
      assert.ok(!result.isError, JSON.stringify(result.content));
      const rows = [...rowsOf(result)];
      let pages = 1;
      while (result.structuredContent.nextCursor && pages < 20) {
        result = await client.callTool({ name: 'de_timesheets', arguments: { cursor: result.structuredContent.nextCursor } });
        rows.push(...rowsOf(result));
        pages++;
      }
      assert.deepEqual(rows, api.body.data);
      assert.equal(result.structuredContent.totalCount, api.body.totalCount);
      if (user === admin) {
        assert.equal(rows.length, 6, 'six of the seven entries are over 0.6 h');
        assert.equal(pages, 2);
        assert.match(result.content[0].text, /not instructions/);
      }
    }
  });

  test('bad input is a tool error with a message, never a crash', async () => {
    const client = await connect(adminToken);
    const tooMany: any = await client.callTool({ name: 'de_timesheets', arguments: { take: 501 } });
    assert.equal(tooMany.isError, true);
    assert.match(tooMany.content[0].text, /take/);
    const noField: any = await client.callTool({ name: 'de_timesheets', arguments: { filters: ['NoSuchField', '=', 1] } });
    assert.equal(noField.isError, true);
    assert.match(noField.content[0].text, /NoSuchField/);
    const badCursor: any = await client.callTool({ name: 'de_timesheets', arguments: { cursor: 'xyz' } });
    assert.equal(badCursor.isError, true);
    await assert.rejects(client.callTool({ name: 'de_nothing', arguments: {} }), /Unknown tool/);
    const badWrite: any = await client.callTool({ name: 'log_time', arguments: { JobId: 'not-a-guid', Date: '2026-11-01', DurationMinutes: 10 } });
    assert.equal(badWrite.isError, true);
    assert.match(badWrite.content[0].text, /JobId/);
  });

  test('log_time writes as the user: the entry is in DE-TimeSheets and its TimeUpdated event is delivered', async () => {
    const before = receiver.received.length;
    const client = await connect(narrowToken);
    const result: any = await client.callTool({
      name: 'log_time',
      arguments: { JobId: jobId, Date: '2026-11-20', DurationMinutes: 120, Description: 'Via MCP' },
    });
    assert.ok(!result.isError, JSON.stringify(result.content));
    const entry = result.structuredContent;
    assert.equal(entry.UserId, narrow.id, 'the time is the signed-in user’s');
    const rows = await f.rowsOf('DE-TimeSheets', ['TimesheetId', '=', entry.Id]);
    assert.equal(rows.length, 1);
    assert.equal(rows[0].Hours, 2);
    const got = await receiver.waitFor(before + 1);
    const event = got.find((r) => r.payload.documentId === entry.Id || r.payload.detail?.Id === entry.Id);
    assert.ok(event, 'TimeUpdated delivered for the entry');
    assert.equal(event.payload.actionType, 'TimeUpdated');
    // Another user's time needs Administrator, as in the API.
    const other: any = await client.callTool({ name: 'log_time', arguments: { JobId: jobId, Date: '2026-11-20', DurationMinutes: 10, UserId: admin.id } });
    assert.equal(other.isError, true);
    assert.match(other.content[0].text, /^403/);
  });

  test('create_job and comment_on_document run the Client API services as the user', async () => {
    const client = await connect(adminToken);
    const project = (await f.sql('select project_id from jobs where id = $1', [jobId]))[0].project_id;
    const created: any = await client.callTool({ name: 'create_job', arguments: { Name: 'Made by an assistant', ProjectId: project } });
    assert.ok(!created.isError, JSON.stringify(created.content));
    assert.equal((await f.rowsOf('DE-Jobs', ['JobId', '=', created.structuredContent.Id])).length, 1);
    const comment: any = await client.callTool({ name: 'comment_on_document', arguments: { DocumentTypeName: 'Job', DocumentId: jobId, Text: 'Looks good' } });
    assert.ok(!comment.isError, JSON.stringify(comment.content));
    assert.equal((await f.rowsOf('DE-Comments', ['DocumentId', '=', jobId])).length >= 1, true);
    const forbidden: any = await (await connect(narrowToken)).callTool({ name: 'create_job', arguments: { Name: 'Nope', ProjectId: project } });
    assert.equal(forbidden.isError, true, 'the narrow user may not create jobs (JobWrite)');
  });

  test('cancellation stops a long call and its statement; progress is reported while it runs', async () => {
    const client = await connect(adminToken);
    const locker = new pg.Client({ connectionString: f.server.databaseUrl });
    await locker.connect();
    const waiting = async () =>
      (await locker.query("select count(*)::int as n from pg_stat_activity where wait_event_type = 'Lock' and datname = current_database()")).rows[0]
        .n as number;
    try {
      await locker.query('begin');
      await locker.query('lock table timesheets in access exclusive mode');
      const controller = new AbortController();
      const progress: string[] = [];
      const call = client.callTool({ name: 'de_timesheets', arguments: { take: 5 } }, undefined, {
        signal: controller.signal,
        onprogress: (p) => progress.push(p.message ?? ''),
      });
      const rejected = assert.rejects(call);
      for (let i = 0; i < 100 && (await waiting()) === 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await waiting(), 1, 'the call waits on the lock');
      assert.deepEqual(progress, ['Running DE-TimeSheets']);
      controller.abort('changed my mind');
      await rejected;
      for (let i = 0; i < 100 && (await waiting()) > 0; i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal(await waiting(), 0, 'the statement was cancelled in PostgreSQL');
    } finally {
      await locker.query('rollback');
      await locker.end();
    }
    const after: any = await client.callTool({ name: 'de_timesheets', arguments: { take: 1 } });
    assert.ok(!after.isError, 'the session goes on');
  });
});

describe('resources and prompts', () => {
  test('the catalogue and documents as resources, read as the API reads them; prompts', async () => {
    const client = await connect(adminToken);
    const listed = await client.listResources();
    assert.ok(listed.resources.some((r) => r.uri === 'atrium://named-queries'));
    const templates = await client.listResourceTemplates();
    assert.ok(templates.resourceTemplates.some((t) => t.uriTemplate === 'atrium://jobs/{id}'));
    const catalogue = JSON.parse(((await client.readResource({ uri: 'atrium://named-queries' })).contents[0] as any).text);
    assert.ok(catalogue.some((q: any) => q.name === 'DE-TimeSheets'));
    const meta = JSON.parse(((await client.readResource({ uri: 'atrium://named-queries/DE-Jobs' })).contents[0] as any).text);
    assert.ok(meta.fields.some((x: any) => x.name === 'JobNumber'));
    const job = JSON.parse(((await client.readResource({ uri: `atrium://jobs/${jobId}` })).contents[0] as any).text);
    assert.equal(job.Id, jobId);
    await assert.rejects((await connect(narrowToken)).readResource({ uri: `atrium://jobs/${jobId}` }), /JobRead/);
    const prompts = await client.listPrompts();
    assert.deepEqual(prompts.prompts.map((p) => p.name).sort(), ['contract_budget_burn', 'overdue_jobs', 'utilisation_by_department']);
    const prompt = await client.getPrompt({ name: 'utilisation_by_department', arguments: { From: '2026-11-01', To: '2026-11-30' } });
    assert.match((prompt.messages[0].content as any).text, /de_timesheets/);
    await assert.rejects(client.getPrompt({ name: 'utilisation_by_department', arguments: { From: 'soon', To: '2026-11-30' } }), /date/);
  });
});

describe('tenant isolation', () => {
  test('a second tenant’s user sees nothing of the first', async () => {
    const other = await f.server.createTenant('Other Agency');
    const res = await f.server.request('POST', `/admin/tenants/${other.tenantId}/users`, {
      headers: { authorization: 'Bearer test-admin-token-0123456789' },
      json: { userName: 'other-admin', name: 'Other', roles: ['Administrator'] },
    });
    assert.equal(res.status, 201, res.text);
    const otherToken = (await personalToken(f.server, other, res.body.userId)).token;
    const client = await connect(otherToken);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    assert.ok(!tools.includes('ct_budgets'), 'the first tenant’s custom table is no tool of the second');
    const rows: any = await client.callTool({ name: 'de_timesheets', arguments: {} });
    assert.equal(rows.structuredContent.totalCount, 0);
    const jobs: any = await client.callTool({ name: 'de_jobs', arguments: { filters: ['JobId', '=', jobId] } });
    assert.equal(jobs.structuredContent.totalCount, 0);
    await assert.rejects(client.readResource({ uri: `atrium://jobs/${jobId}` }), /-32002|not|No/);
    // Its token at the first tenant's address is refused.
    const crossed = await f.server.request('POST', `/t/${f.tenant.slug}/mcp`, { headers: { authorization: `Bearer ${otherToken}` }, json: {} });
    assert.equal(crossed.status, 401);
  });
});
