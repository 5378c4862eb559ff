// Retention (docs/decisions/0018-retention.md): delivered events and settled invocations older than the
// retention go, with their attempts; what is still due, recent, not yet dispatched or inside a leased
// dispatch batch stays; deliveries go on while the sweep runs.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { loadConfig } from '../src/config.ts';
import type { Database } from '../src/platform/db/schema.ts';
import { dispatchOnce } from '../src/webhooks/delivery/dispatch.ts';
import { WebhookWorker } from '../src/webhooks/delivery/worker.ts';
import { sweepExpired } from '../src/webhooks/retention.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { createSubscription, DELIVERABLE_TYPE, history, type Receiver, raiseEvent, startReceiver, waitForHistory } from './webhooks-helpers.ts';

const DAY_MS = 86_400_000;
const RETENTION_MS = 30 * DAY_MS;

let server: TestServer;
let receiver: Receiver;
let pool: pg.Pool;
let db: Kysely<Database>;

before(async () => {
  // The API only: the tests start and stop the worker themselves, to leave events undispatched.
  server = await startTestServer({ ATRIUM_ROLE: 'api', ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
  // A failed attempt is retried in an hour: its invocation stays due (unsettled) through the test.
  receiver.answer = (req) => (req.payload?.actionType === 'Fail' ? { status: 500, body: 'no' } : { status: 200, body: 'ok' });
  pool = new pg.Pool({ connectionString: server.databaseUrl, max: 3 });
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
});
after(async () => {
  await db.destroy();
  await receiver.close();
  await server.close();
});

function worker(): WebhookWorker {
  const config = { ...server.runtime.ctx.config, webhookRetryScheduleMs: [0, 3_600_000] };
  return new WebhookWorker({ connectionString: server.databaseUrl, box: server.runtime.ctx.box, config });
}

const count = async (query: string, values: unknown[] = []) => (await pool.query(query, values)).rows[0].n as number;
const eventExists = async (id: string) => (await count('select count(*)::int as n from events where id = $1', [id])) === 1;

/** Ages events, and the invocations made from them (and the given test invocations), past the retention. */
async function age(eventIds: string[], invocationIds: string[] = []): Promise<void> {
  await pool.query(`update events set occurred_on_utc = now() - interval '40 days' where id = any($1::uuid[])`, [eventIds]);
  await pool.query(
    `update webhook_invocations set created_on_utc = now() - interval '40 days',
       completed_on_utc = case when completed_on_utc is not null then now() - interval '40 days' end
     where event_id = any($1::uuid[]) or id = any($2::uuid[])`,
    [eventIds, invocationIds],
  );
}

test('ATRIUM_EVENT_RETENTION: 30 days unless set, a duration', () => {
  assert.equal(loadConfig({}).eventRetentionMs, RETENTION_MS);
  assert.equal(loadConfig({ ATRIUM_EVENT_RETENTION: '7d' }).eventRetentionMs, 7 * DAY_MS);
  assert.throws(() => loadConfig({ ATRIUM_EVENT_RETENTION: 'a week' }), /ATRIUM_EVENT_RETENTION must be a duration/);
});

test('old settled history and delivered events go; due, recent, undispatched and leased ones stay', async () => {
  const tenant = await server.createTenant('Retention Agency');
  const h = appHeaders(tenant);
  const ok = await createSubscription(server, h, { Url: receiver.url, ActionType: 'Ok', DocumentType: DELIVERABLE_TYPE });
  const fail = await createSubscription(server, h, { Url: receiver.url, ActionType: 'Fail', DocumentType: DELIVERABLE_TYPE });
  receiver.secret = ok.secret;

  const w = worker();
  w.start();
  let delivered: string;
  let due: string;
  let unmatched: string;
  let recent: string;
  let testInvocation: string;
  try {
    delivered = (await raiseEvent(server, h, 'Ok')).id;
    due = (await raiseEvent(server, h, 'Fail')).id;
    unmatched = (await raiseEvent(server, h, 'Nobody')).id;
    recent = (await raiseEvent(server, h, 'Ok')).id;
    const res = await server.request('POST', `/api/webhook-subscriptions/${ok.id}/test`, { headers: h });
    assert.equal(res.status, 202, res.text);
    testInvocation = res.body.invocationId;
    await waitForHistory(server, h, ok.id, (items) => items.length === 3 && items.every((i) => i.status === 'Succeeded'));
    await waitForHistory(server, h, fail.id, (items) => items.length === 1 && items[0].status === 'Retrying');
  } finally {
    await w.stop();
  }

  // Leased: a dispatch batch (its worker busy or dead) over an event with an invocation and one without.
  const leased = (await raiseEvent(server, h, 'Ok')).id;
  const leasedUnmatched = (await raiseEvent(server, h, 'Nobody')).id;
  const options = {
    publicUrl: server.runtime.ctx.config.publicUrl,
    batchSize: 100,
    firstDelayMs: 0,
    leaseCount: 100,
    cutAtLeaseCount: false,
    leaseMs: 600_000,
  };
  const until = Date.now() + 20_000;
  let taken = 0;
  // Other test files share the cluster: the events become visible to the dispatcher once their older transactions end.
  while (taken < 2 && Date.now() < until) {
    taken += (await dispatchOnce(db, options)).events;
    if (taken < 2) await sleep(50);
  }
  assert.equal(taken, 2);
  // Not dispatched yet (no worker runs): beyond the dispatcher's cursor.
  const beyond = (await raiseEvent(server, h, 'Ok')).id;

  await age([delivered, due, unmatched, leased, leasedUnmatched, beyond], [testInvocation]);
  const attemptsBefore = await count('select count(*)::int as n from webhook_attempts where tenant_id = $1', [tenant.tenantId]);

  const swept = await sweepExpired(db, { retentionMs: RETENTION_MS });
  assert.ok(swept.complete);
  assert.equal(swept.events, 2, 'the delivered event and the one no subscription matched');
  assert.equal(swept.invocations, 2, 'the delivered invocation and the test invocation');
  assert.equal(swept.attempts, 2);
  assert.equal(await count('select count(*)::int as n from webhook_attempts where tenant_id = $1', [tenant.tenantId]), attemptsBefore - 2);

  assert.equal(await eventExists(delivered), false);
  assert.equal(await eventExists(unmatched), false);
  assert.equal(await eventExists(due), true, 'its invocation is due again');
  assert.equal(await eventExists(recent), true, 'within the retention');
  assert.equal(await eventExists(leased), true, 'inside the leased batch');
  assert.equal(await eventExists(leasedUnmatched), true, 'inside the leased batch, though it has no invocation');
  assert.equal(await eventExists(beyond), true, 'not dispatched yet');

  // The history shows what is left: the recent delivery and the leased batch's invocation (awaiting delivery).
  const okHistory = await history(server, h, ok.id);
  assert.deepEqual(okHistory.map((i) => i.eventId).sort(), [recent, leased].sort());
  assert.deepEqual(
    (await history(server, h, fail.id)).map((i) => [i.eventId, i.status]),
    [[due, 'Retrying']],
  );

  // The batch's worker died: its lease lapses, a worker takes its invocations, and the events it covered
  // go on the next sweep; the event beyond the cursor is dispatched and delivered, never lost.
  await pool.query(`update webhook_dispatch_batches set lease_until = now() - interval '1 second'`);
  const again = worker();
  again.start();
  try {
    await waitForHistory(server, h, ok.id, (items) => items.length === 3 && items.every((i) => i.status === 'Succeeded'));
  } finally {
    await again.stop();
  }
  await age([leased, leasedUnmatched, beyond]);
  const second = await sweepExpired(db, { retentionMs: RETENTION_MS });
  assert.equal(second.events, 3);
  assert.equal(second.invocations, 2);
  assert.deepEqual(
    (await history(server, h, ok.id)).map((i) => i.eventId),
    [recent],
  );
  assert.equal(await eventExists(due), true);
});

test('deliveries go on while the sweep deletes a large backlog', async () => {
  const tenant = await server.createTenant('Backlog Agency');
  const h = appHeaders(tenant);
  const sub = await createSubscription(server, h, { Url: receiver.url, ActionType: 'Live', DocumentType: DELIVERABLE_TYPE });
  receiver.secret = sub.secret;
  // 20,000 events of forty days ago that no subscription matches, committed before the worker starts.
  await pool.query(
    `insert into events (tenant_id, action_type, document_type, occurred_on_utc)
     select $1, 'Old', $2, now() - interval '40 days' from generate_series(1, 20000)`,
    [tenant.tenantId, DELIVERABLE_TYPE],
  );
  const w = worker();
  w.start();
  try {
    // The dispatcher passes the backlog (and this event after it) before the sweep starts.
    await raiseEvent(server, h, 'Live', { N: 0 });
    await waitForHistory(server, h, sub.id, (items) => items.length === 1 && items[0].status === 'Succeeded', 60_000);

    let raised = 0;
    const swept = await sweepExpired(db, {
      retentionMs: RETENTION_MS,
      batchSize: 1000,
      // Between two of the sweep's statements an event is raised and must be delivered before it goes on:
      // the sweep holds nothing that delivery waits for.
      onBatch: async (progress) => {
        if (progress.statements > 5) return;
        raised++;
        await raiseEvent(server, h, 'Live', { N: raised });
        await waitForHistory(server, h, sub.id, (items) => items.length === raised + 1 && items.every((i) => i.status === 'Succeeded'), 20_000);
      },
    });
    assert.ok(swept.complete);
    assert.equal(swept.events, 20_000);
    assert.ok(swept.statements > 20, `${swept.statements} statements of at most 1,000 events each`);
    assert.equal(raised, 5);
    assert.equal(await count(`select count(*)::int as n from events where tenant_id = $1 and action_type = 'Old'`, [tenant.tenantId]), 0);
    assert.equal(await count(`select count(*)::int as n from events where tenant_id = $1 and action_type = 'Live'`, [tenant.tenantId]), 6);
  } finally {
    await w.stop();
  }
});

test('the maintenance job runs the sweep with ATRIUM_EVENT_RETENTION', async () => {
  // A server of its own that works jobs (the worker and pg-boss), with a retention of an hour.
  const full = await startTestServer({ ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ATRIUM_EVENT_RETENTION: '1h' });
  const fullPool = new pg.Pool({ connectionString: full.databaseUrl, max: 1 });
  try {
    const tenant = await full.createTenant('Maintenance Agency');
    const h = appHeaders(tenant);
    const sub = await createSubscription(full, h, { Url: receiver.url, ActionType: 'Ok', DocumentType: DELIVERABLE_TYPE });
    const old = (await raiseEvent(full, h, 'Ok')).id;
    const recent = (await raiseEvent(full, h, 'Ok')).id;
    await waitForHistory(full, h, sub.id, (items) => items.length === 2 && items.every((i) => i.status === 'Succeeded'));
    await fullPool.query(`update events set occurred_on_utc = now() - interval '2 hours' where id = $1`, [old]);
    await fullPool.query(
      `update webhook_invocations set created_on_utc = now() - interval '2 hours', completed_on_utc = now() - interval '2 hours' where event_id = $1`,
      [old],
    );

    const exists = async (id: string) => (await fullPool.query('select count(*)::int as n from events where id = $1', [id])).rows[0].n === 1;
    await full.runtime.jobs.send('platform-maintenance', {});
    const until = Date.now() + 30_000;
    while ((await exists(old)) && Date.now() < until) await sleep(200);
    assert.equal(await exists(old), false, 'the old event is swept');
    assert.equal(await exists(recent), true, 'the recent one stays');
    assert.deepEqual(
      (await history(full, h, sub.id)).map((i) => i.eventId),
      [recent],
    );
  } finally {
    await fullPool.end();
    await full.close();
  }
});
