// Automations through HTTP: definitions validated with paths, versions, the execute URL answering with the
// Result, run now, the run log (secrets masked), Rest with isApiCall creating a user through the Integration
// API, Rest to an outside receiver, Liquid, limits that stop runaway runs, and expressions that cannot reach the process.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let h: Record<string, string>;
let receiver: Server;
let receiverUrl: string;
const received: { headers: Record<string, unknown>; body: string }[] = [];

before(async () => {
  server = await startTestServer({
    ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ATRIUM_AUTOMATION_MAX_STEPS: '200',
    ATRIUM_AUTOMATION_MAX_LOOP_ITERATIONS: '50',
    ATRIUM_AUTOMATION_MAX_OUTPUT_BYTES: '100000',
    ATRIUM_AUTOMATION_RUN_TIMEOUT: '2s',
  });
  tenant = await server.createTenant('Automations Agency');
  h = appHeaders(tenant);
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.url === '/token') {
        received.push({ headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"tok-123456","token_type":"Bearer","expires_in":3600}');
        return;
      }
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"report":true}');
        return;
      }
      received.push({ headers: req.headers, body });
      let echo: unknown = body;
      try {
        echo = body ? JSON.parse(body) : null;
      } catch {}
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, echo }));
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

after(async () => {
  await new Promise((resolve) => receiver.close(resolve));
  await server.close();
});

async function create(definition: Record<string, unknown>): Promise<any> {
  const res = await server.request('POST', '/api/v3/automations', { headers: h, json: definition });
  assert.equal(res.status, 201, res.text);
  return res.body;
}

async function runNow(id: string, input: unknown = null): Promise<any> {
  const res = await server.request('POST', `/api/v3/automations/${id}/run`, { headers: h, json: { input } });
  assert.equal(res.status, 200, res.text);
  return res.body;
}

const start = (next: string) => ({ name: 'Start', type: 'Start', next });
const done = (body: unknown = null, statusCode = 200) => ({ name: 'Done', type: 'Result', httpResponse: { statusCode, body } });

describe('definitions', () => {
  test('every rule is checked on save, each error with its JSON path', async () => {
    const res = await server.request('POST', '/api/v3/automations', {
      headers: h,
      json: {
        name: 'Broken',
        actions: [
          { name: 'Start', type: 'Start', next: 'Nowhere' },
          { name: 'Start2', type: 'Start', next: 'Call' },
          { name: 'Call', type: 'Rest', method: 'GET', next: 'Call2' },
          { name: 'Call', type: 'Frobnicate' },
          { name: 'Call2', type: 'SetParameter', value: "{{['Call']$.Content | NoSuchPipe}}", next: 'Spin' },
          { name: 'Spin', type: 'SetParameter', value: "{{['Ghost']$.x}}", next: 'Spin2' },
          { name: 'Spin2', type: 'SetParameter', value: 1, next: 'Spin' },
          { name: 'End', type: 'Result', next: 'Start' },
          { name: 'Choose', type: 'Case', nextActions: [{ value: 'a', name: 'Missing' }] },
        ],
        scheduler: { unit: 0, periodicity: 'Fortnights' },
      },
    });
    assert.equal(res.status, 400, res.text);
    const byPath = new Map<string, string[]>();
    for (const e of res.body.errors) byPath.set(e.path, [...(byPath.get(e.path) ?? []), e.message]);
    const has = (path: string, pattern: RegExp) =>
      assert.ok(
        byPath.get(path)?.some((m) => pattern.test(m)),
        `${path} ${pattern}: ${JSON.stringify(res.body.errors)}`,
      );
    has('/actions/0/next', /names no action.*Nowhere/);
    has('/actions', /exactly one Start action \(it has 2\)/);
    has('/actions/2/url', /required for a Rest action/);
    has('/actions/3/name', /names another action too/);
    has('/actions/3/type', /unknown action type "Frobnicate"/);
    has('/actions/4/value', /does not parse.*unknown pipe "NoSuchPipe"/);
    has('/actions/5/value', /reads \['Ghost'\]/);
    has('/actions/5', /cycle with no way out/);
    has('/actions/7/next', /Result ends the workflow/);
    has('/actions/8/nextActions/0/name', /Missing/);
    has('/scheduler/unit', /at least 1/);
    has('/scheduler/periodicity', /Minutes, Hours, Days, Weeks, Months/);
    const noResult = await server.request('POST', '/api/v3/automations', { headers: h, json: { name: 'x', actions: [{ name: 'S', type: 'Start' }] } });
    assert.equal(noResult.status, 400);
    assert.ok(noResult.body.errors.some((e: any) => e.path === '/actions' && /at least one Result/.test(e.message)));
  });

  test('create, list, get, update (a new version each time), delete; roles apply', async () => {
    const a = await create({ name: 'Versioned', active: true, logLevelType: 'Info', actions: [start('Done'), done('v1')] });
    assert.equal(a.version, 1);
    assert.equal(a.requiresAuthentication, false);
    assert.equal((await runNow(a.id)).version, 1);
    const put = await server.request('PUT', `/api/v3/automations/${a.id}`, { headers: h, json: { name: 'Versioned', actions: [start('Done'), done('v2')] } });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.body.version, 2);
    const second = await runNow(a.id);
    assert.equal(second.version, 2);
    assert.equal(second.result.body, 'v2');
    const list = await server.request('GET', '/api/v3/automations', { headers: h });
    assert.ok(list.body.some((x: any) => x.id === a.id && x.version === 2));
    const runs = await server.request('GET', `/api/v3/automations/${a.id}/runs`, { headers: h });
    assert.deepEqual(
      runs.body.map((r: any) => r.version),
      [2, 1],
    );
    // An app with only the reading role reads but cannot delete.
    const reader = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      json: { name: 'reader', roles: ['AutomationGet'] },
    });
    assert.equal(reader.status, 201, reader.text);
    const rh = appHeaders({ tenantId: tenant.tenantId, appId: reader.body.appId, appSecret: reader.body.appSecret });
    assert.equal((await server.request('GET', `/api/v3/automations/${a.id}`, { headers: rh })).status, 200);
    const refused = await server.request('DELETE', `/api/v3/automations/${a.id}`, { headers: rh });
    assert.equal(refused.status, 403);
    assert.match(refused.body.detail, /AutomationDelete/);
    assert.equal((await server.request('DELETE', `/api/v3/automations/${a.id}`, { headers: h })).status, 204);
    assert.equal((await server.request('GET', `/api/v3/automations/${a.id}`, { headers: h })).status, 404);
  });
});

describe('execute URL and run log', () => {
  test('a POST to the execute URL answers with the Result; the run log shows each action', async () => {
    const a = await create({
      name: 'Greeter',
      actions: [
        start('Shape'),
        {
          name: 'Shape',
          type: 'Map',
          body: {
            greeting: "Hello {{['#HttpRequest']$.Body.name | ToUpperCase}}",
            total: "{{['#HttpRequest']$.Body.items | Sum('n')}}",
            big: "{{['#HttpRequest']$.Body.items[?(@.n > 1)].sku}}",
          },
          next: 'Route',
        },
        {
          name: 'Route',
          type: 'Case',
          value: "{{['#HttpRequest']$.Query.mode}}",
          nextActions: [
            { value: 'short', name: 'Short' },
            { default: true, name: 'Long' },
          ],
        },
        { name: 'Short', type: 'Result', httpResponse: { statusCode: 200, body: "{{['Shape']$.greeting}}" } },
        {
          name: 'Long',
          type: 'Result',
          httpResponse: {
            statusCode: 201,
            headers: { 'x-total': "{{['Shape']$.total}}" },
            body: { shape: "{{['Shape']}}", method: "{{['#HttpRequest']$.Method}}" },
          },
        },
      ],
    });
    const body = {
      name: 'ada',
      items: [
        { sku: 'a', n: 1 },
        { sku: 'b', n: 2 },
      ],
    };
    const res = await server.request('POST', `/api/integration-workflows/${a.id}/execute`, { json: body });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.headers.get('x-total'), '3');
    assert.deepEqual(res.body, { shape: { greeting: 'Hello ADA', total: 3, big: ['b'] }, method: 'POST' });
    const short = await server.request('POST', `/api/tenants/${tenant.tenantId}/integration-workflows/${a.id}/execute?mode=short`, { json: body });
    assert.equal(short.status, 200);
    assert.equal(short.text, 'Hello ADA');

    const runs = await server.request('GET', `/api/v3/automations/${a.id}/runs`, { headers: h });
    assert.equal(runs.body.length, 2);
    assert.ok(runs.body.every((r: any) => r.trigger === 'http' && r.status === 'Succeeded'));
    const run = await server.request('GET', `/api/v3/automations/${a.id}/runs/${runs.body[1].id}`, { headers: h });
    assert.deepEqual(
      run.body.actions.map((x: any) => [x.name, x.type, x.next]),
      [
        ['Start', 'Start', 'Shape'],
        ['Shape', 'Map', 'Route'],
        ['Route', 'Case', 'Long'],
        ['Long', 'Result', null],
      ],
    );
    assert.deepEqual(run.body.actions[1].output, { greeting: 'Hello ADA', total: 3, big: ['b'] });
    assert.ok(run.body.actions.every((x: any) => typeof x.durationMs === 'number' && x.startedOnUtc));
  });

  test('requiresAuthentication: the app headers or a token are required', async () => {
    const a = await create({ name: 'Guarded', requiresAuthentication: true, actions: [start('Done'), done({ ok: true })] });
    assert.equal((await server.request('POST', `/api/integration-workflows/${a.id}/execute`, { json: {} })).status, 401);
    const ok = await server.request('POST', `/api/integration-workflows/${a.id}/execute`, { headers: h, json: {} });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, { ok: true });
    assert.equal((await server.request('POST', `/api/integration-workflows/${crypto.randomUUID()}/execute`, { json: {} })).status, 404);
  });

  test('Rest with isApiCall creates a user through the Integration API, as the saving app', async () => {
    const a = await create({
      name: 'Provision',
      actions: [
        start('CreateUser'),
        {
          name: 'CreateUser',
          type: 'Rest',
          method: 'POST',
          url: '/api/users',
          isApiCall: true,
          ensureSuccessStatusCode: true,
          bodyMediaType: 'Json',
          body: {
            UserName: "{{['#HttpRequest']$.Body.login}}",
            Name: 'Made By Automation',
            ExternalId: "{{['#HttpRequest']$.Body.id}}",
            IsActive: true,
            CompanyCode: "{{['#HttpRequest']$.Body.company}}",
            DepartmentExternalId: "{{['#HttpRequest']$.Body.department}}",
            TypologyExternalId: "{{['#HttpRequest']$.Body.typology}}",
          },
          next: 'Done',
        },
        { name: 'Done', type: 'Result', httpResponse: { statusCode: "{{['CreateUser']$.StatusCode}}", body: { id: "{{['CreateUser']$.Content.Id}}" } } },
      ],
    });
    const run = await runNow(a.id, {
      login: 'auto.user',
      id: 'AUTO-1',
      company: tenant.companyCode,
      department: tenant.departmentExternalId,
      typology: tenant.typologyExternalId,
    });
    assert.equal(run.status, 'Succeeded', JSON.stringify(run));
    assert.equal(run.result.statusCode, 201);
    const user = await server.request('GET', '/api/users/external?externalId=AUTO-1', { headers: h });
    assert.equal(user.status, 200, user.text);
    assert.equal(user.body.Id, run.result.body.id);
    assert.equal(user.body.UserName, 'auto.user');
    // The app's secret went out as a header; the log does not show it.
    assert.ok(!JSON.stringify(run).includes(tenant.appSecret));
    // isApiCall stays on the API: a URL elsewhere is refused.
    const outside = await create({
      name: 'Escape',
      actions: [start('Call'), { name: 'Call', type: 'Rest', method: 'GET', url: '//example.com/x', isApiCall: true, next: 'Done' }, done()],
    });
    const failed = await runNow(outside.id);
    assert.equal(failed.status, 'Failed');
    assert.match(failed.error, /with isApiCall, url is a path/);
  });

  test('Rest to a receiver; secrets are masked in the log; nextOnError takes failures', async () => {
    await server.request('PUT', '/api/configuration-keys/PARTNER-API', { headers: h, json: { url: receiverUrl, apiPassword: 'hunter2-secret' } });
    const a = await create({
      name: 'Partner',
      actions: [
        start('Cfg'),
        { name: 'Cfg', type: 'ConfigurationKeys', value: 'PARTNER-API', next: 'Call' },
        {
          name: 'Call',
          type: 'Rest',
          method: 'POST',
          url: "{{['Cfg']$.url}}/hook",
          requestHeaders: [{ name: 'Authorization', value: "Bearer {{['Cfg']$.apiPassword}}" }],
          body: { password: "{{['Cfg']$.apiPassword}}", note: "key is {{['Cfg']$.apiPassword}}" },
          next: 'Fail',
        },
        { name: 'Fail', type: 'Rest', method: 'GET', url: 'http://127.0.0.1:1/nothing', ensureSuccessStatusCode: true, next: 'Done', nextOnError: 'Recover' },
        { name: 'Recover', type: 'SetParameter', value: "{{['Fail']$.Error}}", next: 'Done' },
        done("{{['Call']$.Content.echo.note}}"),
      ],
    });
    const run = await runNow(a.id);
    assert.equal(run.status, 'Succeeded', JSON.stringify(run));
    assert.equal(received.at(-1)?.headers.authorization, 'Bearer hunter2-secret');
    const text = JSON.stringify(run.actions);
    assert.ok(!text.includes('hunter2-secret'), text);
    assert.match(text, /\*\*\*\*\*\*\*\*/);
    assert.equal(run.actions.find((x: any) => x.name === 'Fail').error !== undefined, true);
    assert.ok(run.actions.some((x: any) => x.name === 'Recover'));
  });

  test('ApplyTemplate renders Liquid and cannot read files', async () => {
    const a = await create({
      name: 'Letter',
      actions: [
        start('Render'),
        {
          name: 'Render',
          type: 'ApplyTemplate',
          template: 'Dear {{ name | upcase }}, {% for i in items %}[{{ i.sku }}]{% endfor %} total {{ items | map: "n" | sum }}',
          data: "{{['#HttpRequest']$.Body}}",
          next: 'Done',
        },
        done("{{['Render']}}"),
      ],
    });
    const run = await runNow(a.id, {
      name: 'ada',
      items: [
        { sku: 'a', n: 1 },
        { sku: 'b', n: 2 },
      ],
    });
    assert.equal(run.status, 'Succeeded', JSON.stringify(run));
    assert.equal(run.result.body, 'Dear ADA, [a][b] total 3');
    const sneaky = await create({
      name: 'Sneaky',
      actions: [
        start('Render'),
        { name: 'Render', type: 'ApplyTemplate', template: "{% include '/etc/passwd' %}{{ x.constructor }}", next: 'Done' },
        done("{{['Render']}}"),
      ],
    });
    const failed = await runNow(sneaky.id, {});
    assert.equal(failed.status, 'Failed');
    assert.ok(!JSON.stringify(failed).includes('root:'));
  });
});

describe('limits and safety', () => {
  test('a runaway cycle stops at the step limit, a large loop at the iteration limit, Await at the run timeout, output at its size', async () => {
    const spin = await create({
      name: 'Spin',
      actions: [
        start('Count'),
        { name: 'Count', type: 'SetParameter', value: 1, next: 'Again' },
        {
          name: 'Again',
          type: 'Case',
          value: 'x',
          nextActions: [
            { value: 'stop', name: 'Done' },
            { default: true, name: 'Count' },
          ],
        },
        done(),
      ],
    });
    const r1 = await runNow(spin.id);
    assert.equal(r1.status, 'Failed');
    assert.match(r1.error, /limit of 200 actions/);

    const loop = await create({
      name: 'Big loop',
      subWorkflows: [{ name: 'each', actions: [start('Out'), { name: 'Out', type: 'Result', httpResponse: { body: "{{['#Item']}}" } }] }],
      actions: [start('Each'), { name: 'Each', type: 'Loop', body: "{{['#HttpRequest']$.Body}}", subWorkflow: 'each', next: 'Done' }, done("{{['Each']}}")],
    });
    const small = await runNow(loop.id, [1, 2, 3]);
    assert.equal(small.status, 'Succeeded', JSON.stringify(small));
    assert.deepEqual(small.result.body, [1, 2, 3]);
    const big = await runNow(
      loop.id,
      Array.from({ length: 51 }, (_, i) => i),
    );
    assert.equal(big.status, 'Failed');
    assert.match(big.error, /iterate 51 times; the limit is 50/);

    const slow = await create({ name: 'Slow', actions: [start('Wait'), { name: 'Wait', type: 'Await', duration: '1m', next: 'Done' }, done()] });
    const r3 = await runNow(slow.id);
    assert.equal(r3.status, 'Failed');
    assert.match(r3.error, /time limit/);

    const huge = await create({
      name: 'Huge',
      actions: [start('Blow'), { name: 'Blow', type: 'SetParameter', value: "{{['#HttpRequest']$.Body}}", next: 'Done' }, done()],
    });
    const r4 = await runNow(huge.id, 'x'.repeat(200_000));
    assert.equal(r4.status, 'Failed');
    assert.match(r4.error, /bytes of output; the limit is 100000/);
  });

  test('no expression reaches the process: prototypes, environment and other tenants stay out of reach', async () => {
    const bad = await server.request('POST', '/api/v3/automations', {
      headers: h,
      json: { name: 'Evil', actions: [start('Done'), { name: 'Done', type: 'Result', httpResponse: { body: '{{process.env}}' } }] },
    });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.errors.some((e: any) => e.path === '/actions/1/httpResponse/body' && /unknown function "process"/.test(e.message)));
    const probe = await create({
      name: 'Probe',
      actions: [
        start('Done'),
        {
          name: 'Done',
          type: 'Result',
          httpResponse: {
            body: {
              ctor: "{{['#HttpRequest']$.Body.constructor}}",
              proto: "{{['#HttpRequest']$.Body.__proto__}}",
              deep: "{{['#HttpRequest']$..constructor}}",
              filter: "{{['#HttpRequest']$.Body.list[?(@.constructor)]}}",
              text: "{{['#HttpRequest']$.Body.toString | ToJsonString}}",
            },
          },
        },
      ],
    });
    const res = await server.request('POST', `/api/integration-workflows/${probe.id}/execute`, { json: { list: [{ a: 1 }] } });
    assert.equal(res.status, 200, res.text);
    // Inherited properties do not exist for JSONPath: the values are absent, not functions.
    assert.deepEqual(res.body, { deep: [], filter: [], text: 'null' });
    // Another tenant's automation is not reachable through this tenant's address, nor its configuration keys.
    const other = await server.createTenant('Other Agency');
    const cross = await server.request('POST', `/api/tenants/${other.tenantId}/integration-workflows/${probe.id}/execute`, { json: {} });
    assert.equal(cross.status, 404);
  });
});

describe('more actions', () => {
  test('lists, loops, reduce, sub-workflows, another automation, merge, validation, named query, download', async () => {
    const target = await create({
      name: 'Doubler',
      actions: [
        start('Done'),
        {
          name: 'Done',
          type: 'Result',
          httpResponse: { statusCode: 202, body: { doubled: "{{['#HttpRequest']$.Body.n | AddDecimal(['#HttpRequest']$.Body.n)}}" } },
        },
      ],
    });
    const a = await create({
      name: 'Kitchen sink',
      subWorkflows: [
        {
          name: 'collect',
          actions: [
            start('Note'),
            { name: 'Note', type: 'AddToList', list: 'Seen', value: "{{['#Item']$.sku | ToUpperCase}}", next: 'Out' },
            { name: 'Out', type: 'Result', httpResponse: { body: "{{['#Index']}}" } },
          ],
        },
        {
          name: 'add',
          actions: [start('Sum'), { name: 'Sum', type: 'Result', httpResponse: { body: "{{['#Accumulator'] | AddDecimal(['#Item']$.n)}}" } }],
        },
        { name: 'wrap', actions: [start('W'), { name: 'W', type: 'Result', httpResponse: { body: { wrapped: "{{['#Input']}}" } } }] },
      ],
      actions: [
        start('Seen'),
        { name: 'Seen', type: 'CreateList', next: 'Each' },
        { name: 'Each', type: 'Loop', body: "{{['#HttpRequest']$.Body.items}}", subWorkflow: 'collect', next: 'Total' },
        { name: 'Total', type: 'Reduce', body: "{{['#HttpRequest']$.Body.items}}", subWorkflow: 'add', initialValue: 0, next: 'Pairs' },
        { name: 'Pairs', type: 'MapFromObject', body: { a: 1, b: 2 }, next: 'Both' },
        { name: 'Both', type: 'Merge', body: [{ x: 1, y: 1 }, { y: 2 }], next: 'Wrap' },
        { name: 'Wrap', type: 'ExecuteSubWorkflow', subWorkflow: 'wrap', body: "{{['Total']}}", next: 'Other' },
        { name: 'Other', type: 'ExecuteIntegrationWorkflow', targetWorkflowId: target.id, body: { n: 21 }, next: 'Check' },
        { name: 'Check', type: 'ValidateJson', body: { id: 'x' }, schema: { type: 'object', required: ['id', 'name'] }, next: 'Jobs', nextOnError: 'Jobs' },
        { name: 'Jobs', type: 'AnalyticsNamedQuery', namedQuery: 'DE-Jobs', body: { queryBuilder: { skip: 0, take: 5 } }, next: 'Fetch' },
        { name: 'Fetch', type: 'Download', url: `${receiverUrl}/report.json`, next: 'Done' },
        done({
          seen: "{{['Seen']}}",
          indexes: "{{['Each']}}",
          total: "{{['Total']}}",
          pairs: "{{['Pairs']}}",
          both: "{{['Both']}}",
          wrap: "{{['Wrap']}}",
          other: "{{['Other']}}",
          invalid: "{{['Check']$.Error}}",
          jobs: "{{['Jobs']$.value | ToJsonString | IsNullOrEmpty}}",
          file: "{{['Fetch']$.fileName}}",
        }),
      ],
    });
    const run = await runNow(a.id, {
      items: [
        { sku: 'a', n: 1 },
        { sku: 'b', n: 2 },
        { sku: 'c', n: 3 },
      ],
    });
    assert.equal(run.status, 'Succeeded', JSON.stringify(run));
    const b = run.result.body;
    assert.deepEqual(b.seen, ['A', 'B', 'C']);
    assert.deepEqual(b.indexes, [0, 1, 2]);
    assert.equal(b.total, 6);
    assert.deepEqual(b.pairs, [
      { Key: 'a', Value: 1 },
      { Key: 'b', Value: 2 },
    ]);
    assert.deepEqual(b.both, { x: 1, y: 2 });
    assert.deepEqual(b.wrap, { wrapped: 6 });
    assert.deepEqual(b.other, { statusCode: 202, headers: {}, body: { doubled: 42 } });
    assert.match(b.invalid, /name/);
    assert.equal(b.jobs, false);
    assert.equal(b.file, 'report.json');
    // Sub-workflow actions are in the log under their workflow's name.
    assert.ok(run.actions.some((x: any) => x.workflow === 'collect' && x.name === 'Note'));
  });

  test('OAuth2Authentication gets a token that a later Rest sends; the token is masked in the log', async () => {
    const a = await create({
      name: 'OAuth',
      actions: [
        start('Token'),
        { name: 'Token', type: 'OAuth2Authentication', url: `${receiverUrl}/token`, clientId: 'cid', clientSecret: 'csecret-1', scope: 'crm', next: 'Push' },
        {
          name: 'Push',
          type: 'Rest',
          method: 'POST',
          url: `${receiverUrl}/push`,
          requestHeaders: [{ name: 'Authorization', value: "{{['Token']$.Authorization}}" }],
          body: { a: 1 },
          next: 'Done',
        },
        done(),
      ],
    });
    const before = received.length;
    const run = await runNow(a.id);
    assert.equal(run.status, 'Succeeded', JSON.stringify(run));
    const [token, push] = received.slice(before);
    assert.equal(token.body, 'grant_type=client_credentials&client_id=cid&client_secret=csecret-1&scope=crm');
    assert.equal(push.headers.authorization, 'Bearer tok-123456');
    const log = JSON.stringify(run.actions);
    assert.ok(!log.includes('tok-123456') && !log.includes('csecret-1'), log);
  });

  test('Rest sends every bodyMediaType', async () => {
    const a = await create({
      name: 'Bodies',
      actions: [
        start('Csv'),
        { name: 'Csv', type: 'CreateCsv', data: [{ a: 1 }], fileName: 'a.csv', next: 'Form' },
        {
          name: 'Form',
          type: 'Rest',
          method: 'POST',
          url: `${receiverUrl}/form`,
          bodyMediaType: 'UrlEncodedFormData',
          bodyFormData: [
            { name: 'q', value: 'a b' },
            { name: 'n', value: 2 },
          ],
          next: 'Multi',
        },
        {
          name: 'Multi',
          type: 'Rest',
          method: 'POST',
          url: `${receiverUrl}/multi`,
          bodyMediaType: 'MultipartFormData',
          bodyFormData: [
            { name: 'note', value: 'hi' },
            { name: 'file', value: "{{['Csv']}}" },
          ],
          next: 'Raw',
        },
        {
          name: 'Raw',
          type: 'Rest',
          method: 'PUT',
          url: `${receiverUrl}/raw`,
          bodyMediaType: 'Raw',
          body: 'plain text',
          requestHeaders: [{ name: 'Content-Type', value: 'text/x-custom' }],
          next: 'File',
        },
        { name: 'File', type: 'Rest', method: 'POST', url: `${receiverUrl}/file`, bodyMediaType: 'File', body: "{{['Csv']}}", next: 'Done' },
        done(),
      ],
    });
    const before = received.length;
    const run = await runNow(a.id);
    assert.equal(run.status, 'Succeeded', JSON.stringify(run));
    const [form, multi, raw, file] = received.slice(before);
    assert.equal(form.headers['content-type'], 'application/x-www-form-urlencoded');
    assert.equal(form.body, 'q=a+b&n=2');
    assert.match(String(multi.headers['content-type']), /^multipart\/form-data; boundary=/);
    assert.match(multi.body, /name="note"\r\n\r\nhi/);
    assert.match(multi.body, /name="file"; filename="a.csv"\r\nContent-Type: text\/csv\r\n\r\na\r\n1\r\n/);
    assert.equal(raw.headers['content-type'], 'text/x-custom');
    assert.equal(raw.body, 'plain text');
    assert.equal(file.headers['content-type'], 'text/csv');
    assert.equal(file.body, 'a\r\n1\r\n');
  });
});
