// Dispatch batches: the invocations of a batch whose worker died go to the claim path and are delivered
// under their webhook-ids, except what the batch had settled; attempts follow their invocations when those
// are deleted (a statement trigger, since attempts have no foreign key).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import { appHeaders, startTestServer, type TestServer } from '../../../test/helpers.ts';
import { createSubscription, DELIVERABLE_TYPE, history, type Receiver, raiseEvent, startReceiver, waitForHistory } from '../../../test/webhooks-helpers.ts';
import type { Database } from '../../platform/db/schema.ts';
import { dispatchOnce } from './dispatch.ts';
import { WebhookWorker } from './worker.ts';

let server: TestServer;
let receiver: Receiver;
let pool: pg.Pool;
let db: Kysely<Database>;

before(async () => {
  // The API only: these tests run the dispatcher and the worker themselves.
  server = await startTestServer({ ATRIUM_ROLE: 'api', ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ATRIUM_WEBHOOK_TIMEOUT: '1s' });
  receiver = await startReceiver();
  pool = new pg.Pool({ connectionString: server.databaseUrl, max: 2 });
  db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
});
after(async () => {
  await db.destroy();
  await receiver.close();
  await server.close();
});

const count = async (query: string, values: unknown[]) => (await pool.query(query, values)).rows[0].n as number;

const dispatchOptions = () => ({
  publicUrl: server.runtime.ctx.config.publicUrl,
  batchSize: 100,
  firstDelayMs: 0,
  leaseCount: 100,
  cutAtLeaseCount: true,
  leaseMs: 60_000,
});

function worker(): WebhookWorker {
  const config = { ...server.runtime.ctx.config, webhookAllowPrivateNetworks: true, webhookRetryScheduleMs: [0, 200], webhookTimeoutMs: 1000 };
  return new WebhookWorker({ connectionString: server.databaseUrl, box: server.runtime.ctx.box, config });
}

test('a batch whose worker died goes to the claim path: delivered under the same ids, except what it had settled', async () => {
  const tenant = await server.createTenant('Batch Agency');
  const h = appHeaders(tenant);
  const sub = await createSubscription(server, h, { Url: receiver.url, ActionType: 'Ping', DocumentType: DELIVERABLE_TYPE });
  receiver.secret = sub.secret;
  receiver.received.length = 0;
  for (const n of [1, 2, 3]) await raiseEvent(server, h, 'Ping', { N: n });

  // A worker takes the three events as a batch, settles the first delivery and dies. (The events become
  // visible to the dispatcher once every older transaction of the cluster has ended: other test files share it.)
  // The events may become visible one by one (each in its own batch then): collect until all three are taken.
  const until = Date.now() + 20_000;
  const taken = { deliveries: [] as Awaited<ReturnType<typeof dispatchOnce>>['deliveries'] };
  while (taken.deliveries.length < 3 && Date.now() < until) {
    taken.deliveries.push(...(await dispatchOnce(db, dispatchOptions())).deliveries);
    if (taken.deliveries.length < 3) await sleep(50);
  }
  assert.equal(taken.deliveries.length, 3);
  const pending = await history(server, h, sub.id);
  assert.deepEqual(
    pending.map((i) => i.status),
    ['Pending', 'Pending', 'Pending'],
    'the invocations exist while their batch delivers them',
  );
  const [settled, ...lost] = taken.deliveries;
  await pool.query(`update webhook_invocations set status = 'Succeeded', attempt_count = 1 where id = $1`, [settled.id]);
  // Nothing renews the dead worker's lease: make it lapse now rather than in a minute.
  await pool.query(`update webhook_dispatch_batches set lease_until = now() - interval '1 second'`);

  const w = worker();
  w.start();
  try {
    const items = await waitForHistory(server, h, sub.id, (list) => list.length === 3 && list.every((i) => i.status === 'Succeeded'));
    await receiver.waitFor(2);
    await sleep(200);
    assert.deepEqual(receiver.received.map((r) => r.headers['webhook-id']).sort(), lost.map((d) => d.id).sort());
    assert.ok(receiver.received.every((r) => r.verified));
    assert.deepEqual(items.map((i) => i.id).sort(), taken.deliveries.map((d) => d.id).sort());
    assert.equal(await count('select count(*)::int as n from webhook_dispatch_batches', []), 0, 'the lapsed batch is gone');
  } finally {
    await w.stop();
  }
});

test('attempts go with their invocations: deleting a subscription or a tenant deletes them', async () => {
  const w = worker();
  w.start();
  try {
    const tenants = [await server.createTenant('Attempts One'), await server.createTenant('Attempts Two')];
    const subs: string[] = [];
    for (const tenant of tenants) {
      const h = appHeaders(tenant);
      const sub = await createSubscription(server, h, { Url: receiver.url, ActionType: 'Ping', DocumentType: DELIVERABLE_TYPE });
      subs.push(sub.id);
      await raiseEvent(server, h, 'Ping', { N: 1 });
      await waitForHistory(server, h, sub.id, (list) => list.length === 1 && list[0].status === 'Succeeded');
    }
    const attemptsOf = (tenantId: string) => count('select count(*)::int as n from webhook_attempts where tenant_id = $1', [tenantId]);
    assert.equal(await attemptsOf(tenants[0].tenantId), 1);
    assert.equal(await attemptsOf(tenants[1].tenantId), 1);

    // Through the API, as the tenant (row-level security applies), by cascade from the subscription.
    const res = await server.request('DELETE', `/api/webhook-subscriptions/${subs[0]}`, { headers: appHeaders(tenants[0]) });
    assert.equal(res.status, 200, res.text);
    assert.equal(await attemptsOf(tenants[0].tenantId), 0);

    // The owner deleting a tenant: cascades through subscriptions and invocations, with no tenant set.
    await pool.query('delete from tenants where id = $1', [tenants[1].tenantId]);
    assert.equal(await attemptsOf(tenants[1].tenantId), 0);
  } finally {
    await w.stop();
  }
});
