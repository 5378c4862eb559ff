// Automation triggers with an API process and two worker processes on one database: a webhook subscription
// with IsAutomation runs its automation on a real event (the invocation history shows the run's status,
// the run log each action and the event id), and a scheduled automation runs once per fire time.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import { type Runtime, startServer } from '../src/server.ts';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { appHeaders, startTestServer, type TestServer, workerEnv } from './helpers.ts';
import { createSubscription, DELIVERABLE_TYPE, raiseEvent, waitForHistory } from './webhooks-helpers.ts';

let server: TestServer;
let tenant: TenantCredentials;
let h: Record<string, string>;
const workers: Runtime[] = [];
let owner: pg.Client;
let receiver: Server;
let receiverUrl: string;
const received: unknown[] = [];

before(async () => {
  const shared = { ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' };
  server = await startTestServer({ ATRIUM_ROLE: 'api', ...shared });
  for (let i = 0; i < 2; i++) workers.push(await startServer(loadConfig(workerEnv(server, shared)), () => {}));
  tenant = await server.createTenant('Trigger Agency');
  h = appHeaders(tenant);
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      received.push(JSON.parse(body));
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

after(async () => {
  await owner?.end();
  for (const w of workers) await w.close();
  await new Promise((resolve) => receiver?.close(resolve));
  await server?.close();
});

test('a subscription with IsAutomation runs its automation on each matching event', { timeout: 60_000 }, async () => {
  const created = await server.request('POST', '/api/v3/automations', {
    headers: h,
    json: {
      name: 'On deliverable update',
      actions: [
        { name: 'Start', type: 'Start', next: 'Pick' },
        {
          name: 'Pick',
          type: 'Map',
          body: {
            event: "{{['#HttpRequest']$.Body.ActionType}}",
            doc: "{{['#HttpRequest']$.Body.Document.Id}}",
            who: "{{['#HttpRequest']$.Body.Detail.Name}}",
          },
          next: 'Forward',
        },
        { name: 'Forward', type: 'Rest', method: 'POST', url: `${receiverUrl}/forward`, body: "{{['Pick']}}", ensureSuccessStatusCode: true, next: 'Done' },
        { name: 'Done', type: 'Result', httpResponse: { statusCode: 202, body: { forwarded: "{{['Pick']$.doc}}" } } },
      ],
    },
  });
  assert.equal(created.status, 201, created.text);
  const automation = created.body;
  const sub = await createSubscription(server, h, { ActionType: 'Updated', DocumentType: DELIVERABLE_TYPE, IsAutomation: true, AutomationId: automation.id });
  const event = await raiseEvent(server, h, 'Updated', { Name: 'Spring campaign' });
  const items = await waitForHistory(server, h, sub.id, (list) => list.length === 1 && list[0].status !== 'Pending');
  assert.equal(items[0].status, 'Succeeded', JSON.stringify(items));
  assert.equal(items[0].attempts.length, 1);
  assert.equal(items[0].attempts[0].statusCode, 202);
  const forwarded = received.at(-1) as Record<string, unknown>;
  assert.equal(forwarded.event, 'Updated');
  assert.equal(forwarded.who, 'Spring campaign');

  const runs = await server.request('GET', `/api/v3/automations/${automation.id}/runs`, { headers: h });
  assert.equal(runs.body.length, 1);
  assert.equal(runs.body[0].trigger, 'webhook');
  assert.equal(runs.body[0].eventId, items[0].eventId);
  assert.equal(runs.body[0].invocationId, items[0].id);
  const run = await server.request('GET', `/api/v3/automations/${automation.id}/runs/${runs.body[0].id}`, { headers: h });
  assert.deepEqual(
    run.body.actions.map((a: any) => a.name),
    ['Start', 'Pick', 'Forward', 'Done'],
  );
  // Start's output is the request the automation saw: a POST whose body is the event payload URL subscriptions get.
  assert.equal(run.body.actions[0].output.Method, 'POST');
  assert.equal(run.body.actions[0].output.Body.actionType, 'Updated');
  assert.equal(run.body.actions[1].output.doc, event.documentId);
  assert.equal(forwarded.doc, event.documentId);

  // A failing run fails the invocation, with the reason as the attempt's error.
  await server.request('PUT', `/api/v3/automations/${automation.id}`, {
    headers: h,
    json: { ...automation, actions: automation.actions.map((a: any) => (a.name === 'Forward' ? { ...a, url: 'http://127.0.0.1:1/closed' } : a)) },
  });
  await raiseEvent(server, h, 'Updated', { Name: 'Broken' });
  const after = await waitForHistory(server, h, sub.id, (list) => list.length === 2 && list[0].status !== 'Pending');
  assert.equal(after[0].status, 'Failed');
  assert.match(after[0].attempts[0].error, /Forward/);
});

test('a scheduled automation runs once per fire time with two workers', { timeout: 60_000 }, async () => {
  // Every minute from 58 s ago: the first fire time is two seconds away.
  const startDateUtc = new Date(Date.now() - 58_000).toISOString();
  const created = await server.request('POST', '/api/v3/automations', {
    headers: h,
    json: {
      name: 'Every minute',
      scheduler: { unit: 1, periodicity: 'Minutes', startDateUtc, userId: null, isActive: true },
      actions: [
        { name: 'Start', type: 'Start', next: 'Done' },
        { name: 'Done', type: 'Result', httpResponse: { statusCode: 200, body: "{{['#HttpRequest']$.Body.FireTimeUtc}}" } },
      ],
    },
  });
  assert.equal(created.status, 201, created.text);
  const id = created.body.id;
  const firstFire = new Date(Date.parse(startDateUtc) + 60_000).toISOString();
  assert.equal(created.body.nextRunUtc, firstFire);
  const runs = async () =>
    (
      await owner.query<{ fire_time_utc: Date; status: string; trigger: string; result: any }>(
        'select fire_time_utc, status, trigger, result from automation_runs where automation_id = $1 order by fire_time_utc',
        [id],
      )
    ).rows;
  const until = Date.now() + 20_000;
  while (Date.now() < until && !(await runs()).some((r) => r.status !== 'Running')) await sleep(200);
  // Both workers poll every second; give the slower one time to try too.
  await sleep(2500);
  let rows = await runs();
  assert.equal(rows.length, 1, JSON.stringify(rows));
  assert.equal(rows[0].fire_time_utc.toISOString(), firstFire);
  assert.equal(rows[0].trigger, 'schedule');
  assert.equal(rows[0].status, 'Succeeded');
  assert.equal(rows[0].result.body, firstFire);
  const next = await server.request('GET', `/api/v3/automations/${id}`, { headers: h });
  assert.equal(next.body.nextRunUtc, new Date(Date.parse(firstFire) + 60_000).toISOString());

  // The same fire time offered again (as a lost update would) still makes no second run.
  await owner.query('update automations set next_fire_utc = $2 where id = $1', [id, firstFire]);
  await sleep(2500);
  rows = await runs();
  assert.equal(rows.length, 1);
});
