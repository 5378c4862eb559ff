// Automation actions through HTTP against a receiver on loopback: Rest (every bodyMediaType, secrets masked,
// nextOnError), OAuth2Authentication, Liquid, lists, loops, reduce, sub-workflows, another automation, merge,
// JSON validation, a named query and Download.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type AutomationsSetup, done, type Received, start, startAutomationsServer } from './automations-helpers.ts';
import type { TestServer } from './helpers.ts';

let t: AutomationsSetup;
let server: TestServer;
let h: Record<string, string>;
let receiverUrl: string;
let received: Received[];
const create = (definition: Record<string, unknown>) => t.create(definition);
const runNow = (id: string, input: unknown = null) => t.runNow(id, input);

before(async () => {
  t = await startAutomationsServer();
  ({ server, h, receiverUrl, received } = t);
});

after(async () => {
  await t?.close();
});

describe('HTTP and templates', () => {
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
