// Automations through HTTP: definitions validated with paths, versions and roles, the execute URL answering
// with the Result, run now and the run log, Rest with isApiCall creating a user through the Integration API,
// limits that stop runaway runs, and expressions that cannot reach the process.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AutomationsSetup, done, start, startAutomationsServer } from './automations-helpers.ts';
import { ADMIN_TOKEN, appHeaders, type TestServer } from './helpers.ts';

let t: AutomationsSetup;
let server: TestServer;
let tenant: AutomationsSetup['tenant'];
let h: Record<string, string>;
const create = (definition: Record<string, unknown>) => t.create(definition);
const runNow = (id: string, input: unknown = null) => t.runNow(id, input);

before(async () => {
  t = await startAutomationsServer();
  ({ server, tenant, h } = t);
});

after(async () => {
  await t?.close();
});

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
