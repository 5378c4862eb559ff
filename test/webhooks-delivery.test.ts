// Webhook delivery end to end: a real receiver on loopback verifies each request with the
// standardwebhooks library. Filters, retries, Retry-After, give-up, deactivation, resend, test events,
// limits of the HTTP client, history paging and exactly-once dispatch.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { WebhookWorker } from '../src/webhooks/delivery/worker.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { createSubscription, DELIVERABLE_TYPE, history, type Receiver, raiseEvent, startReceiver, USER_TYPE, waitForHistory } from './webhooks-helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let h: Record<string, string>;
let receiver: Receiver;
let owner: pg.Client;
const TIMEOUT_MS = 1500;

before(async () => {
  server = await startTestServer({
    ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ATRIUM_WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms',
    ATRIUM_WEBHOOK_TIMEOUT: `${TIMEOUT_MS}ms`,
  });
  tenant = await server.createTenant('Webhook Delivery Agency', { demoData: true, scale: 0.05 });
  h = appHeaders(tenant);
  receiver = await startReceiver();
  owner = new pg.Client({ connectionString: server.databaseUrl });
  await owner.connect();
});
after(async () => {
  await owner.end();
  await receiver.close();
  await server.close();
});
beforeEach(async () => {
  // One subscription listens at a time: the others are switched off between tests.
  await owner.query('update webhook_subscriptions set active = false');
  receiver.received.length = 0;
  receiver.answer = () => ({ status: 200, body: 'ok' });
});

async function subscribe(body: Record<string, unknown>): Promise<any> {
  const sub = await createSubscription(server, h, { Url: receiver.url, ActionType: 'Ping', DocumentType: DELIVERABLE_TYPE, ...body });
  receiver.secret = sub.secret;
  return sub;
}

describe('delivery', () => {
  test('a change through the Integration API reaches the receiver, signed and verifiable', async () => {
    const sub = await subscribe({ ActionType: 'Created', DocumentType: USER_TYPE });
    const created = await server.request('POST', '/api/users', {
      headers: h,
      json: {
        UserName: 'webhook.user',
        Name: 'Webhook User',
        ExternalId: 'EXT-WEBHOOK-1',
        CompanyCode: tenant.companyCode,
        DepartmentExternalId: tenant.departmentExternalId,
        TypologyExternalId: tenant.typologyExternalId,
        IsActive: true,
      },
    });
    assert.equal(created.status, 201, created.text);
    // Created events of the demo tenant's setup that the dispatcher had not passed yet (another test file's long
    // transaction holds the cluster's horizon back) may reach the new subscription first: take this user's.
    const until = Date.now() + 20_000;
    let got = receiver.received.find((r) => r.payload?.document?.id === created.body.Id);
    while (!got && Date.now() < until) {
      await receiver.waitFor(receiver.received.length + 1, Math.max(1, until - Date.now())).catch(() => {});
      got = receiver.received.find((r) => r.payload?.document?.id === created.body.Id);
    }
    assert.ok(got, `no delivery for the created user among ${receiver.received.length}`);
    assert.equal(got.verified, true, got.verifyError ?? '');
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['x-webhook-secret'], sub.secret, 'the platform header keeps existing receivers working');
    const p = got.payload;
    assert.equal(p.action, 'created');
    assert.equal(p.actionType, 'Created');
    assert.equal(p.document.type, USER_TYPE);
    assert.equal(p.document.id, created.body.Id);
    assert.match(p.document.url, new RegExp(`/api/users/${created.body.Id}$`));
    assert.equal(p.tenantId, tenant.tenantId);
    assert.equal(p.subscriptionId, sub.id);
    assert.ok(Date.parse(p.occurredOnUtc));
    assert.equal(typeof p.detail, 'object');
    const items = await waitForHistory(server, h, sub.id, (list) => list.some((i) => i.documentId === created.body.Id && i.status === 'Succeeded'));
    const inv = items.find((i) => i.documentId === created.body.Id);
    assert.equal(inv.webhookId, got.headers['webhook-id']);
    assert.equal(inv.eventId, p.id);
    assert.equal(inv.documentId, created.body.Id);
    assert.equal(inv.attempts.length, 1);
    assert.equal(inv.attempts[0].statusCode, 200);
    assert.equal(inv.attempts[0].responseBody, 'ok');
    assert.equal(inv.nextAttemptOnUtc, null);
  });

  test('a plain-text Secret signs with its UTF-8 bytes (the libraries raw format)', async () => {
    await subscribe({ Secret: 'sécret partagé' });
    await raiseEvent(server, h, 'Ping');
    const [got] = await receiver.waitFor(1);
    assert.equal(got.verified, true, got.verifyError ?? '');
  });

  test('inactive subscriptions, other action types and other document types do not fire', async () => {
    const inactive = await subscribe({ Active: false });
    const other = await subscribe({ ActionType: 'Pong' });
    const otherType = await subscribe({ DocumentType: USER_TYPE });
    const listening = await subscribe({});
    await raiseEvent(server, h, 'Ping');
    await receiver.waitFor(1);
    await sleep(400);
    assert.equal(receiver.received.length, 1);
    assert.equal(receiver.received[0].payload.subscriptionId, listening.id);
    for (const s of [inactive, other, otherType]) assert.deepEqual(await history(server, h, s.id), []);
  });
});

describe('filters end to end', () => {
  test('And, Or, BusinessObjectTypeName and {{SystemPreference/Key}} decide which events fire', async () => {
    // The demo data's system preference Webhooks/WatchedField is "Channel".
    const pref = await owner.query(`select value from system_preferences where tenant_id = $1 and name = 'Webhooks' and key = 'WatchedField'`, [
      tenant.tenantId,
    ]);
    assert.equal(pref.rows[0]?.value, 'Channel');
    await subscribe({
      ActionType: 'UserFieldValueUpdated',
      BusinessObjectTypeName: 'Retainer',
      DetailFilters: [
        { groupCondition: 'And', jsonPathExpression: 'ColumnName', condition: 'Equal', value: '{{Webhooks/WatchedField}}' },
        { groupCondition: 'Or', jsonPathExpression: '$.Value.Name', condition: 'Contains', value: 'web' },
        { groupCondition: 'Or', jsonPathExpression: '$.Value.Name', condition: 'Equal', value: 'print' },
      ],
    });
    const raise = (detail: Record<string, unknown>, bot = 'Retainer') =>
      raiseEvent(server, h, 'UserFieldValueUpdated', detail, { businessObjectTypeName: bot });
    const yes1 = await raise({ ColumnName: 'channel', Value: { Name: 'Web Shop' }, Tag: 1 });
    await raise({ ColumnName: 'Budget', Value: { Name: 'Web Shop' }, Tag: 2 }); // And fails
    await raise({ ColumnName: 'Channel', Value: { Name: 'Radio' }, Tag: 3 }); // no Or passes
    const yes2 = await raise({ ColumnName: 'Channel', Value: { Name: 'PRINT' }, Tag: 4 });
    await raise({ ColumnName: 'Channel', Value: { Name: 'Web' }, Tag: 5 }, 'Project'); // other business object type
    await receiver.waitFor(2);
    await sleep(400);
    assert.deepEqual(receiver.received.map((r) => r.payload.detail.Tag).sort(), [1, 4]);
    assert.deepEqual(receiver.received.map((r) => r.payload.id).sort(), [yes1.id, yes2.id].sort());
    // The preference is read when the event is matched: changing it changes what fires.
    await owner.query(`update system_preferences set value = 'Budget' where tenant_id = $1 and name = 'Webhooks' and key = 'WatchedField'`, [tenant.tenantId]);
    await raise({ ColumnName: 'Budget', Value: { Name: 'web' }, Tag: 6 });
    await receiver.waitFor(3);
    assert.equal(receiver.received[2].payload.detail.Tag, 6);
    await owner.query(`update system_preferences set value = 'Channel' where tenant_id = $1 and name = 'Webhooks' and key = 'WatchedField'`, [tenant.tenantId]);
  });
});

describe('retries', () => {
  test('a failed attempt is retried with the same webhook-id until it succeeds', async () => {
    const sub = await subscribe({});
    receiver.answer = (_r, i) => (i === 0 ? { status: 500, body: 'boom' } : { status: 204 });
    await raiseEvent(server, h, 'Ping');
    const [first, second] = await receiver.waitFor(2);
    assert.equal(first.headers['webhook-id'], second.headers['webhook-id']);
    assert.ok(first.verified && second.verified);
    const [inv] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Succeeded');
    assert.deepEqual(
      inv.attempts.map((a: any) => [a.attempt, a.statusCode, a.responseBody]),
      [
        [1, 500, 'boom'],
        [2, 204, ''],
      ],
    );
  });

  test('network errors and timeouts are retried and recorded', async () => {
    const sub = await subscribe({});
    receiver.answer = (_r, i) => (i === 0 ? { delayMs: TIMEOUT_MS + 1000 } : { status: 200 });
    await raiseEvent(server, h, 'Ping');
    const [inv] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Succeeded');
    assert.equal(inv.attempts.length, 2);
    assert.match(inv.attempts[0].error, /timed out/);
    assert.equal(inv.attempts[0].statusCode, null);
    const dead = await subscribe({ Url: 'http://127.0.0.1:1/nothing-listens' });
    await raiseEvent(server, h, 'Ping');
    const [failed] = await waitForHistory(server, h, dead.id, (items) => items[0]?.status === 'Failed');
    assert.equal(failed.attempts.length, 3);
    assert.match(failed.attempts[0].error, /ECONNREFUSED/);
  });

  test('Retry-After on 429/503 is honoured within twice the scheduled delay', async () => {
    const sub = await subscribe({});
    receiver.answer = () => ({ status: 503, headers: { 'retry-after': '3600' } });
    await raiseEvent(server, h, 'Ping');
    const [retrying] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Retrying' && items[0].attempts.length === 1);
    const a = retrying.attempts[0];
    const delay = Date.parse(retrying.nextAttemptOnUtc) - (Date.parse(a.startedOnUtc) + a.durationMs);
    assert.ok(delay >= 390 && delay <= 450, `next attempt after ${delay} ms: 2 x 200 ms, not 3600 s nor 200 ms ± 20%`);
    receiver.answer = () => ({ status: 429, headers: { 'retry-after': '0' } });
    const [done] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Failed');
    assert.equal(done.attempts.length, 3);
  });

  test('after the last attempt the invocation is Failed', async () => {
    const sub = await subscribe({});
    receiver.answer = () => ({ status: 400, body: 'no' });
    await raiseEvent(server, h, 'Ping');
    const [inv] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Failed');
    assert.equal(inv.attempts.length, 3, 'the schedule 0s,200ms,200ms is three attempts');
    assert.equal(inv.nextAttemptOnUtc, null);
    await sleep(500);
    assert.equal(receiver.received.length, 3);
  });

  test('a subscription whose deliveries have all failed for 5 days is set inactive, and that is recorded', async () => {
    const sub = await subscribe({});
    receiver.answer = () => ({ status: 500 });
    await owner.query(`update webhook_subscriptions set failing_since = now() - interval '5 days 1 minute' where id = $1`, [sub.id]);
    await raiseEvent(server, h, 'Ping');
    await waitForHistory(server, h, sub.id, (items) => items[0]?.attempts.length >= 1);
    const got = await server.request('GET', `/api/webhook-subscriptions/${sub.id}`, { headers: h });
    assert.equal(got.body.active, false);
    const events = await owner.query(`select action_type, document_type, detail from events where document_id = $1`, [sub.id]);
    assert.equal(events.rows.length, 1);
    assert.equal(events.rows[0].action_type, 'Updated');
    assert.equal(events.rows[0].document_type, 'Skill.Module.BusinessObjects.WebhookSubscription');
    assert.equal(events.rows[0].detail.Active, false);
    // A success closes the failure window.
    const healthy = await subscribe({});
    await owner.query(`update webhook_subscriptions set failing_since = now() - interval '1 day' where id = $1`, [healthy.id]);
    receiver.answer = () => ({ status: 200 });
    await raiseEvent(server, h, 'Ping');
    await waitForHistory(server, h, healthy.id, (items) => items[0]?.status === 'Succeeded');
    const row = await owner.query('select failing_since, active from webhook_subscriptions where id = $1', [healthy.id]);
    assert.equal(row.rows[0].failing_since, null);
    assert.equal(row.rows[0].active, true);
  });
});

describe('resend and test events', () => {
  test('resend delivers a failed invocation again with the same webhook-id', async () => {
    const sub = await subscribe({});
    receiver.answer = () => ({ status: 500 });
    await raiseEvent(server, h, 'Ping');
    const [failed] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Failed');
    receiver.answer = () => ({ status: 200 });
    const res = await server.request('POST', `/api/webhook-subscriptions/${sub.id}/invocations/${failed.id}/resend`, { headers: h });
    assert.equal(res.status, 202, res.text);
    const [inv] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Succeeded');
    assert.equal(inv.attempts.length, 4);
    assert.equal(receiver.received.at(-1)?.headers['webhook-id'], failed.webhookId);
    assert.ok(receiver.received.at(-1)?.verified);
    const unknown = await server.request('POST', `/api/webhook-subscriptions/${sub.id}/invocations/${crypto.randomUUID()}/resend`, { headers: h });
    assert.equal(unknown.status, 404);
  });

  test('POST …/test sends a signed test event', async () => {
    const sub = await subscribe({ Active: false });
    const res = await server.request('POST', `/api/webhook-subscriptions/${sub.id}/test`, { headers: h });
    assert.equal(res.status, 202, res.text);
    const [got] = await receiver.waitFor(1);
    assert.equal(got.verified, true);
    assert.equal(got.payload.action, 'test');
    assert.equal(got.payload.subscriptionId, sub.id);
    assert.equal(got.headers['webhook-id'], res.body.webhookId);
    const [inv] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Succeeded');
    assert.equal(inv.kind, 'test');
    assert.equal(inv.eventId, null);
  });
});

describe('the HTTP client', () => {
  test('redirects are not followed and answers are kept up to 4 KB', async () => {
    const sub = await subscribe({});
    receiver.answer = (r) => (r.path === '/hook' ? { status: 302, headers: { location: `http://127.0.0.1:${receiver.port}/elsewhere` } } : { status: 200 });
    await raiseEvent(server, h, 'Ping');
    const [inv] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Failed');
    assert.deepEqual(
      inv.attempts.map((a: any) => a.statusCode),
      [302, 302, 302],
    );
    assert.ok(receiver.received.every((r) => r.path === '/hook'));
    const big = await subscribe({});
    receiver.answer = () => ({ status: 200, body: 'x'.repeat(20_000) });
    await raiseEvent(server, h, 'Ping');
    const [ok] = await waitForHistory(server, h, big.id, (items) => items[0]?.status === 'Succeeded');
    assert.equal(ok.attempts[0].responseBody.length, 4096);
  });

  test('the legacy X-Webhook-Secret header can be switched off', async () => {
    const other = await startTestServer({
      ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ATRIUM_WEBHOOK_LEGACY_SECRET_HEADER: 'false',
    });
    try {
      const t = await other.createTenant('No Legacy Header');
      const sub = await createSubscription(other, appHeaders(t), { Url: receiver.url, ActionType: 'Ping', DocumentType: DELIVERABLE_TYPE });
      receiver.secret = sub.secret;
      await raiseEvent(other, appHeaders(t), 'Ping');
      const [got] = await receiver.waitFor(1);
      assert.equal(got.verified, true);
      assert.equal(got.headers['x-webhook-secret'], undefined);
    } finally {
      await other.close();
    }
  });
});

describe('invocation history', () => {
  test('pages newest first with continuation tokens, each invocation exactly once', async () => {
    const sub = await subscribe({});
    for (let i = 0; i < 23; i++) await raiseEvent(server, h, 'Ping', { N: i });
    await waitForHistory(server, h, sub.id, (items) => items.length === 23 && items.every((i) => i.status === 'Succeeded'));
    const seen: any[] = [];
    let path = `/api/webhook-subscriptions/${sub.id}/invocation-history?take=5`;
    for (let page = 0; page < 10; page++) {
      const res = await server.request('GET', path, { headers: h });
      assert.equal(res.status, 200, `${path}: ${res.text}`);
      seen.push(...res.body);
      const token = res.headers.get('x-continuation-token');
      if (!token) break;
      assert.match(res.headers.get('link') ?? '', /rel="next"/);
      const next = /<([^>]+)>/.exec(res.headers.get('link') ?? '')?.[1] ?? '';
      assert.ok(next.includes(encodeURIComponent(token)) || next.includes(token));
      path = next;
    }
    assert.equal(seen.length, 23);
    assert.equal(new Set(seen.map((i) => i.id)).size, 23);
    const events = await owner.query(`select id from events where action_type = 'Ping' and detail ? 'N' order by seq desc limit 23`);
    assert.deepEqual(
      seen.map((i) => i.eventId),
      events.rows.map((r) => r.id),
      'newest first',
    );

    const first = await server.request('GET', `/api/webhook-subscriptions/${sub.id}/invocation-history?take=5`, { headers: h });
    const token = first.headers.get('x-continuation-token') ?? '';
    // Change one fully-used character (the one before last), always to a different one.
    const tampered = token.slice(0, -2) + (token.at(-2) === 'A' ? 'B' : 'A') + token.slice(-1);
    const bad = await server.request('GET', `/api/webhook-subscriptions/${sub.id}/invocation-history?continuationToken=${encodeURIComponent(tampered)}`, {
      headers: h,
    });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.errors[0].path, '/querystring/continuationToken');
    const other = await subscribe({ Active: false });
    const foreign = await server.request('GET', `/api/webhook-subscriptions/${other.id}/invocation-history?continuationToken=${encodeURIComponent(token)}`, {
      headers: h,
    });
    assert.equal(foreign.status, 400);
    assert.equal((await server.request('GET', `/api/webhook-subscriptions/${sub.id}/invocation-history?take=1001`, { headers: h })).status, 400);
    assert.equal((await server.request('GET', `/api/webhook-subscriptions/${sub.id}/invocation-history?take=0`, { headers: h })).status, 400);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    assert.deepEqual(await history(server, h, sub.id, `?fromDateUtc=${future}`), []);
    assert.equal((await history(server, h, sub.id, `?toDateUtc=${future}&take=1000`)).length, 23);
    assert.equal((await history(server, h, sub.id)).length, 23, 'take defaults to 100');
  });
});

describe('the dispatcher', () => {
  test('several workers dispatch each (event, subscription) exactly once', async () => {
    const sub = await subscribe({});
    const config = { ...server.runtime.ctx.config, webhookConcurrency: 8 };
    const extra = [0, 1, 2].map(() => new WebhookWorker({ connectionString: server.databaseUrl, box: server.runtime.ctx.box, config }));
    for (const w of extra) w.start();
    try {
      await Promise.all(Array.from({ length: 60 }, (_, i) => raiseEvent(server, h, 'Ping', { N: i })));
      await waitForHistory(server, h, sub.id, (items) => items.length === 60 && items.every((i) => i.status === 'Succeeded'));
      const counts = await owner.query('select event_id, count(*)::int as n from webhook_invocations where subscription_id = $1 group by event_id', [sub.id]);
      assert.equal(counts.rows.length, 60);
      assert.ok(counts.rows.every((r) => r.n === 1));
    } finally {
      await Promise.all(extra.map((w) => w.stop()));
    }
  });

  test('a large transaction of events is dispatched whole, across batches, in outbox order', async () => {
    const sub = await subscribe({});
    await owner.query('begin');
    await owner.query(
      `insert into events (tenant_id, action_type, document_type, document_id, detail)
       select $1, 'Ping', $2, gen_random_uuid(), jsonb_build_object('Bulk', g) from generate_series(1, 1500) g`,
      [tenant.tenantId, DELIVERABLE_TYPE],
    );
    await owner.query('commit');
    const until = Date.now() + 60_000;
    let counts = { invocations: 0, succeeded: 0 };
    while (Date.now() < until) {
      const r = await owner.query(
        `select count(*)::int as invocations, count(*) filter (where status = 'Succeeded')::int as succeeded from webhook_invocations where subscription_id = $1`,
        [sub.id],
      );
      counts = r.rows[0];
      if (counts.succeeded === 1500) break;
      await sleep(100);
    }
    assert.deepEqual(counts, { invocations: 1500, succeeded: 1500 });
    assert.equal(new Set(receiver.received.map((r) => r.payload.detail.Bulk)).size, 1500);
  });

  test('an event whose transaction commits after later events is not skipped', async () => {
    const sub = await subscribe({});
    const slow = new pg.Client({ connectionString: server.databaseUrl });
    await slow.connect();
    try {
      await slow.query('begin');
      await slow.query(
        `insert into events (tenant_id, action_type, document_type, document_id, detail) values ($1, 'Ping', $2, gen_random_uuid(), '{"Late":true}')`,
        [tenant.tenantId, DELIVERABLE_TYPE],
      );
      await raiseEvent(server, h, 'Ping', { Late: false });
      await sleep(300);
      await slow.query('commit');
    } finally {
      await slow.end();
    }
    await receiver.waitFor(2);
    assert.deepEqual(receiver.received.map((r) => r.payload.detail.Late).sort(), [false, true]);
    assert.equal((await history(server, h, sub.id)).length, 2);
  });
});
