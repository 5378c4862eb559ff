// Background work an operator can see: a receiver answering 500 moves the webhook metrics and leaves one
// structured warn line per failed attempt (error on give-up, warn on deactivation), a failed scheduled run
// logs and counts, and /health/ready reports each component, turning 503 when the outbox falls behind.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { createSubscription, DELIVERABLE_TYPE, type Receiver, raiseEvent, startReceiver, waitForHistory } from './webhooks-helpers.ts';

// Attempts 300 ms (±20%) apart span well over ATRIUM_WEBHOOK_DISABLE_AFTER (1 s), so the subscription is set inactive on the way.
const ATTEMPTS = 8;
const READY_MAX_BACKLOG_AGE_MS = 1500;

let server: TestServer;
let tenant: TenantCredentials;
let h: Record<string, string>;
let receiver: Receiver;
let owner: pg.Client;
/** Every line the process logger wrote, parsed. */
const lines: Record<string, any>[] = [];
const rawLog: string[] = [];

before(async () => {
  server = await startTestServer(
    {
      LOG_LEVEL: 'warn',
      ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ATRIUM_WEBHOOK_RETRY_SCHEDULE: ['0s', ...Array(ATTEMPTS - 1).fill('300ms')].join(','),
      ATRIUM_WEBHOOK_DISABLE_AFTER: '1s',
      ATRIUM_READY_MAX_BACKLOG_AGE: `${READY_MAX_BACKLOG_AGE_MS}ms`,
    },
    {
      logDestination: {
        write(chunk: string) {
          rawLog.push(chunk);
          for (const line of chunk.split('\n')) if (line) lines.push(JSON.parse(line));
        },
      },
    },
  );
  tenant = await server.createTenant('Observed Agency', { demoData: true, scale: 0.02 });
  h = appHeaders(tenant);
  receiver = await startReceiver();
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
});

after(async () => {
  await owner?.end();
  await receiver?.close();
  await server?.close();
});

/** Sum of the samples of one metric whose labels include `labels`; 0 when none. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = m[2] ?? '';
    if (Object.entries(labels).every(([k, v]) => have.includes(`${k}="${v}"`))) sum += Number(m[3]);
  }
  return sum;
}

async function scrape(): Promise<string> {
  const res = await server.request('GET', '/metrics');
  assert.equal(res.status, 200);
  return res.text;
}

describe('webhook deliveries to a receiver answering 500', () => {
  let sub: any;
  let beforeText: string;
  let afterText: string;

  before(async () => {
    beforeText = await scrape();
    receiver.answer = () => ({ status: 500, body: 'receiver down' });
    sub = await createSubscription(server, h, { Url: receiver.url, ActionType: 'Ping', DocumentType: DELIVERABLE_TYPE });
    receiver.secret = sub.secret;
    await raiseEvent(server, h, 'Ping');
    await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Failed');
    // The metrics move when the attempt ends; give the recorder its moment too (the deactivation is recorded).
    for (let i = 0; i < 50 && !lines.some((l) => l.msg?.includes('set inactive')); i++) await sleep(50);
    afterText = await scrape();
  });

  test('the delivery metrics move: attempts by outcome and status class, durations, dispatch lag, deactivation', () => {
    const moved = (name: string, labels: Record<string, string> = {}) => sample(afterText, name, labels) - sample(beforeText, name, labels);
    assert.equal(moved('atrium_webhook_deliveries_total', { outcome: 'retrying', status_class: '5xx' }), ATTEMPTS - 1);
    assert.equal(moved('atrium_webhook_deliveries_total', { outcome: 'failed', status_class: '5xx' }), 1);
    assert.equal(moved('atrium_webhook_deliveries_total', { outcome: 'succeeded' }), 0);
    assert.equal(moved('atrium_webhook_attempt_duration_seconds_count'), ATTEMPTS);
    assert.ok(moved('atrium_webhook_attempt_duration_seconds_sum') > 0);
    assert.ok(moved('atrium_outbox_dispatch_lag_seconds_count') >= 1, 'the event was dispatched');
    assert.equal(moved('atrium_webhook_subscriptions_deactivated_total'), 1);
  });

  test('scrape-time gauges: backlogs, worker parts, database pools; no tenant label anywhere', () => {
    for (const backlog of ['outbox', 'webhookInvocationsDue']) {
      assert.match(afterText, new RegExp(`^atrium_backlog_items\\{backlog="${backlog}"\\} \\d+$`, 'm'));
      assert.match(afterText, new RegExp(`^atrium_backlog_oldest_age_seconds\\{backlog="${backlog}"\\} [\\d.e+-]+$`, 'm'));
    }
    assert.equal(sample(afterText, 'atrium_worker_up', { component: 'webhookDispatcher' }), 1);
    assert.equal(sample(afterText, 'atrium_worker_up', { component: 'pgboss' }), 1);
    assert.match(afterText, /^atrium_db_pool_connections\{pool="tenant",state="waiting"\} \d+$/m);
    assert.match(afterText, /^atrium_db_pool_connections\{pool="owner",state="in_use"\} \d+$/m);
    for (const name of ['atrium_schedule_runs_total', 'atrium_schedule_run_duration_seconds', 'atrium_exports_in_flight']) {
      assert.match(afterText, new RegExp(`^# HELP ${name} `, 'm'));
    }
    assert.doesNotMatch(afterText, /tenant(_id)?="/);
    assert.ok(!afterText.includes(tenant.tenantId));
  });

  test('one warn line per failed attempt, an error line on give-up, a warn line on deactivation; no secret', () => {
    const mine = lines.filter((l) => l.subscription === sub.id);
    const retried = mine.filter((l) => l.msg === 'webhook delivery attempt failed; it will be retried');
    assert.equal(retried.length, ATTEMPTS - 1);
    for (const l of retried) {
      assert.equal(l.level, 40);
      assert.equal(l.component, 'webhooks');
      assert.equal(l.tenant, tenant.tenantId);
      assert.equal(l.statusCode, 500);
      assert.equal(l.reason, 'answered 500');
      assert.equal(l.host, `127.0.0.1:${receiver.port}`);
      assert.ok(l.nextAttemptOnUtc);
    }
    assert.deepEqual(
      retried.map((l) => l.attempt),
      Array.from({ length: ATTEMPTS - 1 }, (_, i) => i + 1),
    );
    const gaveUp = mine.filter((l) => l.msg.includes('giving up'));
    assert.equal(gaveUp.length, 1);
    assert.equal(gaveUp[0].level, 50);
    assert.equal(gaveUp[0].attempt, ATTEMPTS);
    const deactivated = mine.filter((l) => l.msg === 'webhook subscription set inactive: every delivery has failed');
    assert.equal(deactivated.length, 1);
    assert.equal(deactivated[0].level, 40);
    assert.equal(deactivated[0].tenant, tenant.tenantId);
    assert.ok(deactivated[0].reason);
    const all = rawLog.join('');
    for (const secret of [sub.secret, tenant.appSecret, 'receiver down']) assert.ok(!all.includes(secret), `the log shows ${secret}`);
  });
});

test('a failed scheduled run logs one warn line and counts as failed', async () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const app = await server.request('POST', `/admin/tenants/${tenant.tenantId}/apps`, {
    headers: admin,
    json: { name: 'short-lived', roles: ['ScheduleWrite', 'DataExtractionRead'] },
  });
  assert.equal(app.status, 201, app.text);
  const ah = appHeaders({ tenantId: tenant.tenantId, appId: app.body.appId, appSecret: app.body.appSecret });
  const base = '/api/v3/analytics/schedules';
  const created = await server.request('POST', base, {
    headers: ah,
    json: { Name: 'orphan', Query: 'DE-Jobs', Format: 'csv', CronExpression: '5 0 * * *' },
  });
  assert.equal(created.status, 201, created.text);
  assert.equal((await server.request('DELETE', `/admin/tenants/${tenant.tenantId}/apps/${app.body.appId}`, { headers: admin })).status, 200);
  const before = sample(await scrape(), 'atrium_schedule_runs_total', { outcome: 'failed' });
  const run = await server.request('POST', `${base}/${created.body.id}/run?wait=20`, { headers: h });
  assert.equal(run.status, 200, run.text);
  assert.equal(run.body.status, 'Failed');
  assert.equal(sample(await scrape(), 'atrium_schedule_runs_total', { outcome: 'failed' }) - before, 1);
  const line = lines.find((l) => l.msg === 'scheduled run failed' && l.run === run.body.id);
  assert.ok(line, 'a warn line for the failed run');
  assert.equal(line.level, 40);
  assert.equal(line.component, 'schedules');
  assert.equal(line.tenant, tenant.tenantId);
  assert.equal(line.schedule, created.body.id);
  assert.match(line.reason, /revoked/);
  await server.request('DELETE', `${base}/${created.body.id}`, { headers: h });
});

describe('/health/ready', () => {
  test('reports every component, with the backlogs', async () => {
    const res = await server.request('GET', '/health/ready');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.checks, { database: 'ok', migrations: 'ok', jobs: 'ok', webhookDispatcher: 'ok', backlog: 'ok' });
    for (const name of ['outbox', 'webhookInvocationsDue']) {
      assert.equal(typeof res.body.backlog[name].count, 'number');
      assert.equal(typeof res.body.backlog[name].oldestAgeSeconds, 'number');
    }
  });

  test('503 while the outbox waits longer than ATRIUM_READY_MAX_BACKLOG_AGE, 200 once it is dispatched', async () => {
    // Holding the dispatch cursor's row stops every dispatcher (they skip a locked cursor) without stopping its loop.
    const holder = new pg.Client({ connectionString: server.databaseUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('select * from webhook_dispatch_cursor where id = 1 for update');
      await raiseEvent(server, h, 'Ping');
      await sleep(READY_MAX_BACKLOG_AGE_MS + 500);
      const behind = await server.request('GET', '/health/ready');
      assert.equal(behind.status, 503, behind.text);
      assert.equal(behind.body.status, 'unavailable');
      assert.match(behind.body.checks.backlog, /^behind: outbox oldest \d+ s \(limit 2 s, ATRIUM_READY_MAX_BACKLOG_AGE\)$/);
      assert.equal(behind.body.checks.webhookDispatcher, 'ok', 'the dispatcher itself still runs');
      assert.ok(behind.body.backlog.outbox.count >= 1);
      assert.ok(behind.body.backlog.outbox.oldestAgeSeconds * 1000 > READY_MAX_BACKLOG_AGE_MS);
      const metrics = await scrape();
      assert.ok(sample(metrics, 'atrium_backlog_items', { backlog: 'outbox' }) >= 1);
      assert.ok(sample(metrics, 'atrium_backlog_oldest_age_seconds', { backlog: 'outbox' }) * 1000 > READY_MAX_BACKLOG_AGE_MS);
    } finally {
      await holder.query('rollback');
      await holder.end();
    }
    let ready = await server.request('GET', '/health/ready');
    for (let i = 0; i < 100 && ready.status !== 200; i++) {
      await sleep(50);
      ready = await server.request('GET', '/health/ready');
    }
    assert.equal(ready.status, 200, ready.text);
    assert.equal(ready.body.backlog.outbox.count, 0);
  });
});
