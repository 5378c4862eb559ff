// Definitions in the platform's published format (the fact sheet, ../shared/spec/automations-platform.md),
// written as it shows them — `actionType`, the platform's field names, `['X'].path` without `$` — saved and run
// through the HTTP API with the outcome the sheet states: one test per flow and data action type at least.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventBody } from '../src/automations/worker.ts';
import { type AutomationsSetup, startAutomationsServer } from './automations-helpers.ts';
import type { TestServer } from './helpers.ts';

let t: AutomationsSetup;
let server: TestServer;
let h: Record<string, string>;

before(async () => {
  t = await startAutomationsServer();
  ({ server, h } = t);
});

after(async () => {
  await t?.close();
});

const Start = (next: string) => ({ actionType: 'Start', name: 'Start', next });
const Result = (body: unknown, statusCode = 200) => ({
  actionType: 'Result',
  name: 'Result',
  httpResponse: { statusCode, headers: { 'content-type': 'application/json' }, body },
});

/** Saves the workflow, runs it with `body` as the request body, answers the run (status Succeeded asserted). */
async function run(definition: Record<string, unknown>, body: unknown = null, ok = true) {
  const a = await t.create({ active: true, logLevelType: 'Info', requiresAuthentication: false, ...definition });
  const r = await t.runNow(a.id, body);
  if (ok) assert.equal(r.status, 'Succeeded', JSON.stringify(r));
  return r;
}

describe('definition and save rules', () => {
  test('actionType in any case, subWorkflow (singular) at the top level, SetParameter and list names readable', async () => {
    const r = await run(
      {
        name: 'Save rules',
        subWorkflow: [{ name: 'Sub', actions: [Start('Result'), Result("{{['RunStamp']}}")] }],
        actions: [
          Start('SetStamp'),
          { actionType: 'SetParameter', name: 'SetStamp', parameterName: 'RunStamp', value: 'stamp-1', next: 'MakeList' },
          { actionType: 'createList', name: 'MakeList', listName: 'Codes', listValues: ['a', 'b', 'c'], next: 'Drop' },
          { actionType: 'removeFromList', name: 'Drop', listName: 'Codes', RemoveValues: ['b'], next: 'Call' },
          { actionType: 'ExecuteSubWorkflow', name: 'Call', subWorkflow: 'Sub', next: 'Result' },
          Result({ stamp: "{{['RunStamp']}}", codes: "{{['Codes']}}", sub: "{{['Call']}}" }),
        ],
      },
      null,
    );
    assert.deepEqual(r.result.body, { stamp: 'stamp-1', codes: ['a', 'c'], sub: 'stamp-1' });
  });

  test('errors name the platform fields with their JSON paths; a Case without a default saves', async () => {
    const res = await server.request('POST', '/api/v3/automations', {
      headers: h,
      json: {
        name: 'Broken',
        actions: [
          Start('Map'),
          { actionType: 'Map', name: 'Map', next: 'Merge' },
          { actionType: 'Merge', name: 'Merge', payload: '{}', next: 'Reduce' },
          { actionType: 'Reduce', name: 'Reduce', data: "{{['Map']}}", GroupBy: ['a'], Operation: 'COUNT', OperationResult: 'n', next: 'Check' },
          { actionType: 'ValidateJson', name: 'Check', payload: '{}', next: 'Param' },
          { actionType: 'RemoveFromList', name: 'Param', listName: 'Codes', next: 'Result' },
          Result(null),
        ],
        scheduler: { unit: 1, periodicity: 'Hours', startDateUtc: '0001-01-01T00:00:00Z', userId: '00000000-0000-0000-0000-000000000000', isActive: true },
      },
    });
    assert.equal(res.status, 400, res.text);
    const has = (path: string, pattern: RegExp) =>
      assert.ok(
        res.body.errors.some((e: any) => e.path === path && pattern.test(e.message)),
        `${path} ${pattern}: ${JSON.stringify(res.body.errors)}`,
      );
    has('/actions/1/values', /required for a Map action/);
    has('/actions/2/values', /required for a Merge action/);
    has('/actions/3/Operation', /SUM, MIN, MAX, AVG, NONE/);
    has('/actions/4/requiredProperties', /required/);
    has('/actions/5/RemoveValues', /required for a RemoveFromList action/);
    has('/scheduler/startDateUtc', /default/);
    has('/scheduler/userId', /empty GUID/);
    const noDefault = await t.create({
      name: 'No default',
      actions: [
        Start('Route'),
        { actionType: 'Case', name: 'Route', test: "{{['#HttpRequest'].Body.kind}}", nextActions: [{ default: false, value: 'a', name: 'Result' }] },
        Result('a'),
      ],
      scheduler: { unit: 6, periodicity: 'Hours', startDateUtc: '2026-01-05T02:00:00Z', isActive: true, notification: { email: 'ops@example.com' } },
    });
    assert.deepEqual(noDefault.scheduler.notification, { email: 'ops@example.com' });
    const miss = await t.runNow(noDefault.id, { kind: 'b' });
    assert.equal(miss.status, 'Failed');
    assert.match(miss.error, /no branch matches "b"/);
  });
});

describe('flow', () => {
  test('Start and Result: #HttpRequest.Body read with and without $, the answer shaped by httpResponse', async () => {
    const a = await t.create({
      name: 'Echo',
      actions: [
        Start('Result'),
        {
          actionType: 'Result',
          name: 'Result',
          httpResponse: { statusCode: 201, headers: {}, body: "Project {{['#HttpRequest'].Body.Name}} ({{['#HttpRequest']$.Body.Id}})" },
        },
      ],
    });
    const res = await server.request('POST', `/api/integration-workflows/${a.id}/execute`, { headers: h, json: { Name: 'Apollo', Id: 7 } });
    assert.equal(res.status, 201, res.text);
    assert.equal(res.text, 'Project Apollo (7)');
  });

  test('Case reads test; the branch whose value matches, else the default', async () => {
    const def = {
      name: 'Case',
      actions: [
        Start('CheckStatus'),
        {
          actionType: 'Case',
          name: 'CheckStatus',
          test: "{{['#HttpRequest'].Body.status}}",
          nextActions: [
            { default: false, value: '200', name: 'Ok' },
            { default: true, value: '', name: 'NotOk' },
          ],
        },
        { actionType: 'Result', name: 'Ok', httpResponse: { statusCode: 200, body: 'ok' } },
        { actionType: 'Result', name: 'NotOk', httpResponse: { statusCode: 200, body: 'not ok' } },
      ],
    };
    const a = await t.create(def);
    assert.equal((await t.runNow(a.id, { status: 200 })).result.body, 'ok');
    assert.equal((await t.runNow(a.id, { status: 500 })).result.body, 'not ok');
  });

  test('Loop runs the sub-workflow per element, read as [#<subWorkflowName>] (and #Item)', async () => {
    const r = await run(
      {
        name: 'Loop',
        actions: [
          Start('LoopUsers'),
          { actionType: 'Loop', name: 'LoopUsers', body: "{{['#HttpRequest'].Body.users}}", subWorkflow: 'ImportFileData', next: 'Result' },
          Result("{{['LoopUsers']}}"),
        ],
        subWorkflows: [
          {
            name: 'ImportFileData',
            actions: [
              Start('ImportUser'),
              { actionType: 'SetParameter', name: 'ImportUser', parameterName: 'LastUser', value: "{{['#ImportFileData'].username}}", next: 'Result' },
              {
                actionType: 'Result',
                name: 'Result',
                httpResponse: { statusCode: 200, body: "User {{['#ImportFileData'].username}} imported ({{['#Item'].username | ToUpperCase}})" },
              },
            ],
          },
        ],
      },
      { users: [{ username: 'ada' }, { username: 'grace' }] },
    );
    assert.deepEqual(r.result.body, ['User ada imported (ADA)', 'User grace imported (GRACE)']);
  });

  test('Reduce groups by GroupBy and aggregates OperationResult with each Operation and InnerArrayStrategy', async () => {
    const data = [
      { Client: 'A', Year: 2024, Hours: 10, Rates: [5, 1, 9] },
      { Client: 'A', Year: 2024, Hours: 30, Rates: [2] },
      { Client: 'B', Year: 2024, Hours: 5, Rates: [] },
      { Client: 'A', Year: 2025, Hours: 7, Rates: [3, 'x', null] },
    ];
    const reduce = (name: string, op: string, prop: string, inner?: string) => ({
      actionType: 'Reduce',
      name,
      data: "{{['#HttpRequest'].Body.data}}",
      GroupBy: ['Client', 'Year'],
      Operation: op,
      OperationResult: prop,
      ...(inner ? { InnerArrayStrategy: inner } : {}),
    });
    const r = await run(
      {
        name: 'Reduce',
        actions: [
          Start('Sum'),
          { ...reduce('Sum', 'SUM', 'Hours'), next: 'Avg' },
          { ...reduce('Avg', 'AVG', 'Hours'), next: 'First' },
          { ...reduce('First', 'NONE', 'Hours'), next: 'MaxRate' },
          { ...reduce('MaxRate', 'MAX', 'Rates', 'MAX'), next: 'MinRate' },
          { ...reduce('MinRate', 'MIN', 'Rates', 'MIN'), next: 'Result' },
          Result({ sum: "{{['Sum']}}", avg: "{{['Avg']}}", first: "{{['First']}}", maxRate: "{{['MaxRate']}}", minRate: "{{['MinRate']}}" }),
        ],
      },
      { data },
    );
    const b = r.result.body;
    assert.deepEqual(b.sum, [
      { Client: 'A', Year: 2024, Hours: 40 },
      { Client: 'B', Year: 2024, Hours: 5 },
      { Client: 'A', Year: 2025, Hours: 7 },
    ]);
    assert.deepEqual(
      b.avg.map((g: any) => g.Hours),
      [20, 5, 7],
    );
    assert.deepEqual(
      b.first.map((g: any) => g.Hours),
      [10, 5, 7],
    );
    assert.deepEqual(
      b.maxRate.map((g: any) => g.Rates),
      [9, null, 3],
    );
    assert.deepEqual(
      b.minRate.map((g: any) => g.Rates),
      [1, null, 3],
    );
  });

  test('Await pauses for its duration, then goes on', async () => {
    const r = await run({
      name: 'Await',
      actions: [Start('Pause'), { actionType: 'Await', name: 'Pause', duration: '500ms', next: 'Result' }, Result('after')],
    });
    const pause = r.actions.find((x: any) => x.name === 'Pause');
    assert.ok(pause.durationMs >= 450, JSON.stringify(pause));
    assert.equal(r.result.body, 'after');
  });

  test('ExecuteSubWorkflow hands the sub-workflow its body (JSON text) and takes back its Result', async () => {
    const r = await run({
      name: 'Sub',
      subWorkflows: [
        {
          name: 'Greet',
          actions: [Start('Result'), { actionType: 'Result', name: 'Result', httpResponse: { statusCode: 200, body: "Hello {{['#Greet'].name}}" } }],
        },
      ],
      actions: [
        Start('CallGreet'),
        { actionType: 'ExecuteSubWorkflow', name: 'CallGreet', subWorkflow: 'Greet', body: '{"name": "Ada"}', next: 'Result' },
        Result("{{['CallGreet']}}"),
      ],
    });
    assert.equal(r.result.body, 'Hello Ada');
  });

  test('ExecuteIntegrationWorkflow runs another workflow by id with body as its request body', async () => {
    const target = await t.create({ name: 'Target', actions: [Start('Result'), Result("{{['#HttpRequest'].Body.n | AddDecimal(1)}}")] });
    const r = await run({
      name: 'Caller',
      actions: [
        Start('RunOther'),
        { actionType: 'ExecuteIntegrationWorkflow', name: 'RunOther', targetWorkflowId: target.id, body: '{"n": 41}', next: 'Result' },
        Result("{{['RunOther'].body}}"),
      ],
    });
    assert.equal(r.result.body, 42);
  });

  test('EnqueueBackgroundWork queues runs that go on in the background, one at a time per sessionId', async () => {
    const before = t.received.length;
    const target = await t.create({
      name: 'Background target',
      actions: [
        Start('Pause'),
        { actionType: 'Await', name: 'Pause', duration: "{{['#HttpRequest'].Body.pause}}", next: 'Tell' },
        { actionType: 'Rest', name: 'Tell', method: 'POST', url: `${t.receiverUrl}/background`, body: "{{['#HttpRequest'].Body}}", next: 'Result' },
        Result(null),
      ],
    });
    const r = await run({
      name: 'Enqueue',
      actions: [
        Start('First'),
        {
          actionType: 'EnqueueBackgroundWork',
          name: 'First',
          targetWorkflowId: target.id,
          body: '{"n": 1, "pause": "1s"}',
          sessionId: 'client-42',
          next: 'Second',
        },
        {
          actionType: 'EnqueueBackgroundWork',
          name: 'Second',
          targetWorkflowId: target.id,
          body: '{"n": 2, "pause": "1ms"}',
          sessionId: 'client-42',
          next: 'Later',
        },
        { actionType: 'EnqueueBackgroundWork', name: 'Later', targetWorkflowId: target.id, body: '{"n": 3, "pause": "1ms"}', wait: '00:00:04', next: 'Result' },
        Result("{{['First'].JobId | IsNullOrEmpty}}"),
      ],
    });
    assert.equal(r.result.body, false);
    const deadline = Date.now() + 20_000;
    while (t.received.length - before < 3 && Date.now() < deadline) await new Promise((res) => setTimeout(res, 100));
    const got = t.received.slice(before).map((x) => JSON.parse(x.body).n);
    // The second run of the session waited for the first (which paused longer); the delayed one came last.
    assert.deepEqual(got, [1, 2, 3]);
    // Each background run is recorded once it ends, with the trigger `workflow`.
    let list: any[] = [];
    while (Date.now() < deadline) {
      const runs = await server.request('GET', `/api/v3/automations/${target.id}/runs`, { headers: h });
      assert.equal(runs.status, 200, runs.text);
      list = runs.body.value ?? runs.body;
      if (list.length >= 3) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(list.length >= 3 && list.every((x: any) => x.trigger === 'workflow'), JSON.stringify(list));
  });

  test('ClearContext drops the entries listValues names, or every entry with clearAll', async () => {
    const r = await run({
      name: 'Clear',
      actions: [
        Start('Keep'),
        { actionType: 'SetParameter', name: 'Keep', parameterName: 'Keep', value: 1, next: 'Drop' },
        { actionType: 'SetParameter', name: 'Drop', parameterName: 'Drop', value: 2, next: 'Clear' },
        { actionType: 'ClearContext', name: 'Clear', listValues: ['Drop'], clearAll: false, next: 'Result' },
        Result({ keep: "{{['Keep']}}", cleared: "{{['Clear'].Cleared}}" }),
      ],
    });
    assert.deepEqual(r.result.body, { keep: 1, cleared: ['Drop'] });
    const gone = await run(
      {
        name: 'Clear read',
        actions: [
          Start('Drop'),
          { actionType: 'SetParameter', name: 'Drop', parameterName: 'Drop', value: 2, next: 'Clear' },
          { actionType: 'ClearContext', name: 'Clear', clearAll: true, next: 'Result' },
          Result("{{['Drop']}}"),
        ],
      },
      null,
      false,
    );
    assert.equal(gone.status, 'Failed');
    assert.match(gone.error, /\['Drop'\] has no value/);
  });
});

describe('data', () => {
  test('Map builds an object of values, read at the root and under Content', async () => {
    const r = await run(
      {
        name: 'Map',
        actions: [
          Start('MapCompany'),
          {
            actionType: 'Map',
            name: 'MapCompany',
            values: { name: "{{['#HttpRequest'].Body.Name}}", firstJob: "{{['#HttpRequest']$.Body.Jobs[:1] | ToJsonString | ToJson}}" },
            next: 'Result',
          },
          Result({ all: "{{['MapCompany']}}", name: "{{['MapCompany'].name}}", content: "{{['MapCompany'].Content.name}}" }),
        ],
      },
      { Name: 'Acme', Jobs: [{ Id: 1 }, { Id: 2 }] },
    );
    assert.deepEqual(r.result.body, { all: { name: 'Acme', firstJob: [{ Id: 1 }] }, name: 'Acme', content: 'Acme' });
  });

  test('MapFromObject renames by the data template over body', async () => {
    const r = await run({
      name: 'MapFromObject',
      actions: [
        Start('Rename'),
        {
          actionType: 'MapFromObject',
          name: 'Rename',
          data: '{"name": "firstName", "years": "age"}',
          body: '{"firstName": "John", "lastName": "Doe", "age": "30"}',
          next: 'Result',
        },
        Result("{{['Rename']}}"),
      ],
    });
    assert.deepEqual(r.result.body, { name: 'John', years: '30' });
  });

  test('Merge sets values on the payload', async () => {
    const r = await run(
      {
        name: 'Merge',
        actions: [
          Start('Update'),
          {
            actionType: 'Merge',
            name: 'Update',
            payload: "{{['#HttpRequest'].Body}}",
            values: { status: 'Closed', by: "{{['#HttpRequest'].Body.owner | ToUpperCase}}" },
            next: 'Result',
          },
          Result("{{['Update']}}"),
        ],
      },
      { id: 9, status: 'Open', owner: 'ada' },
    );
    assert.deepEqual(r.result.body, { id: 9, status: 'Closed', owner: 'ada', by: 'ADA' });
  });

  test('ConvertFromJsonDataTable turns columns and rows into typed records', async () => {
    const r = await run({
      name: 'DataTable',
      actions: [
        Start('Convert'),
        {
          actionType: 'ConvertFromJsonDataTable',
          name: 'Convert',
          columns: [
            { name: 'timestamp', type: 'datetime' },
            { name: 'tenant', type: 'string' },
            { name: 'count', type: 'long' },
            { name: 'ok', type: 'bool' },
            { name: 'ratio', type: 'real' },
            { name: 'extra', type: 'dynamic' },
          ],
          rows: [
            ['2024-09-18T18:30:00Z', 'playground', '12', 'true', 0.5, '{"a":1}'],
            ['2024-09-19T00:00:00Z', 'dev', 3, false, '1.25', null],
          ],
          next: 'Result',
        },
        Result("{{['Convert']}}"),
      ],
    });
    assert.deepEqual(r.result.body, [
      { timestamp: '2024-09-18T18:30:00.000Z', tenant: 'playground', count: 12, ok: true, ratio: 0.5, extra: { a: 1 } },
      { timestamp: '2024-09-19T00:00:00.000Z', tenant: 'dev', count: 3, ok: false, ratio: 1.25, extra: null },
    ]);
  });

  test('ValidateJson: all required properties present goes to next; missing, null or empty goes to nextOnError with the errors', async () => {
    const def = {
      name: 'Validate',
      actions: [
        Start('JsonValidation'),
        {
          actionType: 'ValidateJson',
          name: 'JsonValidation',
          payload: "{{['#HttpRequest'].Body}}",
          requiredProperties: ['name', 'email', 'tags'],
          next: 'Valid',
          nextOnError: 'Invalid',
        },
        { actionType: 'Result', name: 'Valid', httpResponse: { statusCode: 200, body: 'valid' } },
        { actionType: 'Result', name: 'Invalid', httpResponse: { statusCode: 400, body: "{{['JsonValidation']}}" } },
      ],
    };
    const a = await t.create(def);
    assert.equal((await t.runNow(a.id, { name: 'Ada', email: 'ada@example.com', tags: ['x'] })).result.body, 'valid');
    const bad = await t.runNow(a.id, { name: 'Ada', email: '', tags: [] });
    assert.equal(bad.result.statusCode, 400);
    assert.deepEqual(bad.result.body, [
      { property: 'email', message: 'is empty' },
      { property: 'tags', message: 'is empty' },
    ]);
  });

  test('SetParameter is global: set in a sub-workflow, read in the main one and in later sub-workflows', async () => {
    const r = await run({
      name: 'Params',
      subWorkflows: [
        { name: 'Set', actions: [Start('P'), { actionType: 'SetParameter', name: 'P', parameterName: 'FromSub', value: 'sub', next: 'Result' }, Result(null)] },
      ],
      actions: [
        Start('MyParameter'),
        { actionType: 'SetParameter', name: 'MyParameter', parameterName: 'MyParameter', value: '{{NewDateUtc(Today) | AddDays(-1)}}', next: 'Call' },
        { actionType: 'ExecuteSubWorkflow', name: 'Call', subWorkflow: 'Set', next: 'Result' },
        Result({ day: "{{['MyParameter']}}", sub: "{{['FromSub']}}", empty: '{{EmptyGuid}}' }),
      ],
    });
    const today = new Date();
    const yesterday = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate()) - 86_400_000).toISOString();
    assert.deepEqual(r.result.body, { day: yesterday, sub: 'sub', empty: '00000000-0000-0000-0000-000000000000' });
  });

  test('ConfigurationKeys answers the key object; its secrets are masked in the run result and log', async () => {
    await server.request('PUT', '/api/configuration-keys/GRAPH', {
      headers: h,
      json: { TenantId: 't-1', ClientId: 'c-1', ClientSecret: 'graph-secret-77', apiUrl: 'https://graph.invalid' },
    });
    const r = await run({
      name: 'Keys',
      actions: [
        Start('GetConfig'),
        { actionType: 'ConfigurationKeys', name: 'GetConfig', value: 'GRAPH', next: 'Result' },
        Result({
          all: "{{['GetConfig']}}",
          url: "{{['GetConfig'].apiUrl}}",
          secret: "{{['GetConfig'].ClientSecret}}",
          text: "s={{['GetConfig'].ClientSecret}}",
        }),
      ],
    });
    assert.equal(r.result.body.url, 'https://graph.invalid');
    assert.equal(r.result.body.all.ClientId, 'c-1');
    const text = JSON.stringify(r);
    assert.ok(!text.includes('graph-secret-77'), text);
  });

  test('AnalyticsNamedQuery answers the page as an object: $.totalCount and $.data[0] work', async () => {
    const r = await run({
      name: 'Named query',
      actions: [
        Start('Query'),
        { actionType: 'AnalyticsNamedQuery', name: 'Query', namedQuery: 'DE-Jobs', body: '{"queryBuilder": {"skip": 0, "take": 2}}', next: 'Result' },
        Result({ count: "{{['Query']$.totalCount}}", rows: "{{['Query']$.data | ToJsonString | ToJson}}", first: "{{['Query']$.data[0]}}" }),
      ],
    });
    assert.equal(typeof r.result.body.count, 'number');
    assert.ok(Array.isArray(r.result.body.rows) && r.result.body.rows.length <= 2);
    if (r.result.body.count > 0) assert.equal(typeof r.result.body.first, 'object');
  });

  test('CreateList, AddToList (distinct, ignoreEmpty) and RemoveFromList by listName; list names read in any case', async () => {
    const r = await run({
      name: 'Lists',
      actions: [
        Start('CreateList'),
        { actionType: 'CreateList', name: 'CreateList', listName: 'Mylist', listValues: ['a', '', 'b'], distinct: true, ignoreEmpty: true, next: 'AddToList' },
        {
          actionType: 'AddToList',
          name: 'AddToList',
          listName: 'Mylist',
          listValues: ['b', 'c', null, "{{['#HttpRequest'].Method}}"],
          distinct: true,
          ignoreEmpty: true,
          next: 'RemoveFromList',
        },
        { actionType: 'removeFromList', name: 'RemoveFromList', listName: 'Mylist', RemoveValues: ['a'], next: 'Result' },
        Result({ list: "{{['MyList']}}", added: "{{['AddToList']}}" }),
      ],
    });
    assert.deepEqual(r.result.body, { list: ['b', 'c', 'POST'], added: { List: 'Mylist', Count: 4 } });
  });
});

describe('expressions', () => {
  test('pipes ToLowerCamelCase, ToUpperCamelCase, Join on text; JSONPath script expression; #ImportFile', async () => {
    const r = await run(
      {
        name: 'Expressions',
        actions: [
          Start('Result'),
          Result({
            lower: "{{['#HttpRequest'].Body.title | ToLowerCamelCase}}",
            upper: "{{['#HttpRequest'].Body.title | ToUpperCamelCase}}",
            joined: "{{['#HttpRequest'].Body.code | Join('-01')}}",
            joinedList: "{{['#HttpRequest'].Body.tags | Join(';')}}",
            last: "{{['#HttpRequest']$.Body.client[(@.length-1)].Name}}",
            file: "{{['#ImportFile']}}",
          }),
        ],
      },
      { title: 'first name', code: 'INV', tags: ['a', 'b'], client: [{ Name: 'A' }, { Name: 'B' }], fileName: 'Users.csv' },
    );
    assert.deepEqual(r.result.body, { lower: 'firstName', upper: 'FirstName', joined: 'INV-01', joinedList: 'a;b', last: 'B', file: 'Users.csv' });
  });
});

describe('requests and sandbox', () => {
  test('#HttpRequest Query and Headers values are lists of strings (text where a text is wanted)', async () => {
    const a = await t.create({
      name: 'Request',
      actions: [
        Start('Route'),
        {
          actionType: 'Case',
          name: 'Route',
          test: "{{['#HttpRequest'].Query.mode}}",
          nextActions: [
            { default: false, value: 'short', name: 'Result' },
            { default: true, value: '', name: 'Other' },
          ],
        },
        Result({
          tenant: "{{['#HttpRequest'].Query.TenantName}}",
          first: "{{['#HttpRequest'].Query.TenantName[0]}}",
          tags: "{{['#HttpRequest'].Query.tag}}",
          accept: "{{['#HttpRequest'].Headers.Accept}}",
          text: "mode={{['#HttpRequest'].Query.mode}}",
        }),
        { actionType: 'Result', name: 'Other', httpResponse: { statusCode: 500 } },
      ],
    });
    const res = await server.request('POST', `/api/integration-workflows/${a.id}/execute?TenantName=playground-dev&mode=short&tag=a&tag=b`, {
      headers: { ...h, accept: 'application/json' },
      json: {},
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { tenant: ['playground-dev'], first: 'playground-dev', tags: ['a', 'b'], accept: ['application/json'], text: 'mode=short' });
  });

  test("an event's Body carries the document's id and fields beside Atrium's envelope", () => {
    const envelope = {
      id: 'evt-1',
      action: 'created',
      actionType: 'Created',
      document: { type: 'Skill.Module.BusinessObjects.Project', id: 'p-7', url: 'https://atrium.invalid/api/projects/p-7' },
      businessObjectTypeName: 'Project',
      detail: { Name: 'Apollo', action: 'ignored: the envelope keeps its own' },
      tenantId: 't-1',
      occurredOnUtc: '2026-11-26T10:00:00.000Z',
      subscriptionId: 's-1',
    };
    const body = eventBody(envelope) as Record<string, unknown>;
    assert.equal(body.Id, 'p-7');
    assert.equal(body.Name, 'Apollo');
    assert.equal(body.id, 'evt-1');
    assert.equal(body.action, 'created');
    assert.deepEqual(body.document, envelope.document);
    assert.deepEqual(body.detail, envelope.detail);
  });

  test('values nesting too deep are refused: a request body at the API, an action output with a clear run error', async () => {
    const a = await t.create({
      name: 'Deep',
      actions: [
        Start('Deep'),
        { actionType: 'SetParameter', name: 'Deep', parameterName: 'Deep', value: `{{'${'['.repeat(150)}${']'.repeat(150)}' | ToJson}}`, next: 'Result' },
        Result("{{['Deep']}}"),
      ],
    });
    let body: unknown = { x: 1 };
    for (let i = 0; i < 500; i++) body = { a: body };
    const refused = await server.request('POST', `/api/v3/automations/${a.id}/run`, { headers: h, json: { input: body } });
    assert.equal(refused.status, 400, refused.text);
    const r = await t.runNow(a.id, null);
    assert.equal(r.status, 'Failed');
    assert.match(r.error, /action "Deep" produced a value nesting deeper than 100 levels/);
  });
});
