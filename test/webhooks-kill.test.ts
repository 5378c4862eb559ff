// At-least-once across a crash: a worker process killed (SIGKILL) while a slow receiver holds its
// delivery loses nothing; the restarted worker delivers it again under the same webhook-id, and
// events raised while no worker ran are delivered too.
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { appHeaders, spawnWorker, startTestServer, type TestServer } from './helpers.ts';
import { createSubscription, DELIVERABLE_TYPE, type Receiver, raiseEvent, startReceiver, waitForHistory } from './webhooks-helpers.ts';

let server: TestServer;
let receiver: Receiver;
const children = new Set<ChildProcess>();

before(async () => {
  // The API process only: deliveries are the spawned worker's.
  server = await startTestServer({ ATRIUM_ROLE: 'api', ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' });
  receiver = await startReceiver();
});
after(async () => {
  for (const child of children) child.kill('SIGKILL');
  await receiver.close();
  await server.close();
});

const startWorker = (): ChildProcess =>
  spawnWorker(server, children, {
    ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ATRIUM_WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms',
    // The lease of an attempt is the timeout plus 5 s: a short timeout keeps the test short.
    ATRIUM_WEBHOOK_TIMEOUT: '1s',
  });

test('killing the worker mid-delivery loses nothing; the retry carries the same webhook-id', async () => {
  const tenant = await server.createTenant('Crash Agency');
  const h = appHeaders(tenant);
  const sub = await createSubscription(server, h, { Url: receiver.url, ActionType: 'Ping', DocumentType: DELIVERABLE_TYPE });
  receiver.secret = sub.secret;
  receiver.answer = (_r, i) => (i === 0 ? { hold: true } : { status: 200 });

  const first = startWorker();
  await raiseEvent(server, h, 'Ping', { N: 1 });
  const [held] = await receiver.waitFor(1, 30_000);
  first.kill('SIGKILL');
  await new Promise((resolve) => first.once('exit', resolve));

  // Raised while no worker runs: still in the outbox, waiting.
  await raiseEvent(server, h, 'Ping', { N: 2 });
  await sleep(300);
  assert.equal(receiver.received.length, 1);

  startWorker();
  const items = await waitForHistory(server, h, sub.id, (list) => list.length === 2 && list.every((i) => i.status === 'Succeeded'), 40_000);
  const retried = receiver.received.filter((r) => r.headers['webhook-id'] === held.headers['webhook-id']);
  assert.equal(retried.length, 2, 'the held delivery was delivered again under the same webhook-id');
  assert.ok(retried.every((r) => r.verified));
  assert.deepEqual(receiver.received.map((r) => r.payload.detail.N).sort(), [1, 1, 2]);
  const n1 = items.find((i) => receiver.received.find((r) => r.payload.id === i.eventId)?.payload.detail.N === 1);
  assert.equal(n1.attempts.length, 1, 'the killed attempt left no record; the one that finished did');
});
