// The event catalogue (GET /api/v3/webhook-events), example payloads (…/example: the tenant's own
// newest event, else one built from the catalogue; never another tenant's) and send-example, delivered
// to a real receiver and verified with the standardwebhooks library.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { EVENTS } from '../src/platform/events/catalogue.ts';
import { ADMIN_TOKEN, appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { createSubscription, DELIVERABLE_TYPE, type Receiver, raiseEvent, startReceiver, USER_TYPE, waitForHistory } from './webhooks-helpers.ts';

let server: TestServer;
let receiver: Receiver;
let a: Record<string, string>;
let b: Record<string, string>;
let tenantA: Awaited<ReturnType<TestServer['createTenant']>>;

before(async () => {
  server = await startTestServer({ ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', ATRIUM_WEBHOOK_RETRY_SCHEDULE: '0s,1s' });
  tenantA = await server.createTenant('Catalogue Agency');
  a = appHeaders(tenantA);
  b = appHeaders(await server.createTenant('Other Agency'));
  receiver = await startReceiver();
});
after(async () => {
  await receiver?.close();
  await server?.close();
});

test('the catalogue lists every event with its detail fields and the tenant’s document types', async () => {
  const res = await server.request('GET', '/api/v3/webhook-events', { headers: a });
  assert.equal(res.status, 200, res.text);
  assert.deepEqual(
    res.body.events.map((e: { actionType: string }) => e.actionType),
    EVENTS.map((e) => e.actionType),
  );
  const stage = res.body.events.find((e: { actionType: string }) => e.actionType === 'StageUpdated');
  assert.ok(stage.detailFields.includes('ToWorkflowStageName'));
  assert.equal(res.body.events.find((e: { actionType: string }) => e.actionType === 'Created').detailFields, 'dynamic');
  const lookup = await server.request('GET', '/api/v3/document-types/lookup', { headers: a });
  assert.deepEqual(
    res.body.documentTypes.map((t: { fullName: string }) => t.fullName),
    lookup.body.map((t: { fullName: string }) => t.fullName),
  );
});

test('an example is built from the catalogue until the tenant has such an event, then it is the newest real one; never another tenant’s', async () => {
  const ask = (headers: Record<string, string>, q: string) => server.request('GET', `/api/v3/webhook-events/example?${q}`, { headers });
  const built = await ask(a, `documentType=${DELIVERABLE_TYPE}&actionType=StageUpdated`);
  assert.equal(built.status, 200, built.text);
  assert.equal(built.body.source, 'catalogue');
  assert.equal(built.body.payload.actionType, 'StageUpdated');
  assert.equal(built.body.payload.document.type, DELIVERABLE_TYPE);
  assert.deepEqual(Object.keys(built.body.payload.detail), EVENTS.find((e) => e.actionType === 'StageUpdated')?.detailFields);

  // Tenant B's event is not A's example.
  await raiseEvent(server, b, 'StageUpdated', { ToWorkflowStageName: 'Secret of B' });
  assert.equal((await ask(a, `documentType=${DELIVERABLE_TYPE}&actionType=StageUpdated`)).body.source, 'catalogue');

  const raised = await raiseEvent(server, a, 'StageUpdated', { ToWorkflowStageName: 'Approved', WorkflowName: 'Jobs' });
  const real = await ask(a, `documentType=Deliverable&actionType=stageupdated`);
  assert.equal(real.status, 200);
  assert.equal(real.body.source, 'event');
  assert.equal(real.body.payload.id, raised.id);
  assert.equal(real.body.payload.document.id, raised.documentId);
  assert.deepEqual(real.body.payload.detail, { ToWorkflowStageName: 'Approved', WorkflowName: 'Jobs' });
  assert.equal(real.body.payload.tenantId, tenantA.tenantId);

  const unknown = await ask(a, 'documentType=NoSuchType');
  assert.equal(unknown.status, 400);
  assert.equal(unknown.body.errors[0].path, '/querystring/documentType');
  assert.equal((await ask(a, 'actionType=Created')).status, 400, 'documentType is required');
});

test('send-example delivers the example as a signed test, verified by standardwebhooks with the subscription’s secret', async () => {
  const sub = await createSubscription(server, a, { ActionType: 'StageUpdated', DocumentType: DELIVERABLE_TYPE, Url: receiver.url });
  receiver.secret = sub.secret;
  const sent = await server.request('POST', `/api/webhook-subscriptions/${sub.id}/send-example`, { headers: a });
  assert.equal(sent.status, 202, sent.text);
  assert.equal(sent.body.source, 'event');
  // The dispatcher matches subscriptions when it dispatches, behind the outbox: a real StageUpdated the test
  // before raised may still reach the new subscription first. The test delivery is the one with action "test".
  const isTest = (r: { payload: unknown }) => (r.payload as { action?: string } | null)?.action === 'test';
  for (let n = 1; !receiver.received.some(isTest); n++) await receiver.waitFor(n);
  const got = receiver.received.find(isTest) as (typeof receiver.received)[number] & { payload: Record<string, unknown> };
  assert.ok(got.verified, got.verifyError ?? '');
  assert.equal(got.payload.action, 'test');
  assert.equal(got.payload.actionType, 'StageUpdated');
  assert.equal(got.payload.subscriptionId, sub.id);
  assert.deepEqual(got.payload.detail, { ToWorkflowStageName: 'Approved', WorkflowName: 'Jobs' });
  assert.notEqual(got.payload.id, sent.body.invocationId);
  const items = await waitForHistory(server, a, sub.id, (h) => h.some((i) => i.kind === 'test' && i.status === 'Succeeded'));
  assert.equal(items.filter((i) => i.kind === 'test').length, 1, 'one test invocation');

  // Roles: reading the catalogue needs a webhook role; sending needs WebhookSubscriptionWrite.
  const reader = await server.request('POST', `/admin/tenants/${tenantA.tenantId}/users`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    json: { userName: 'hook-reader', password: 'password-123', roles: ['WebhookSubscriptionGet'] },
  });
  assert.equal(reader.status, 201, reader.text);
  const asReader = { ...a, 'x-appuser': reader.body.userId };
  assert.equal((await server.request('GET', '/api/v3/webhook-events', { headers: asReader })).status, 200);
  assert.equal((await server.request('POST', `/api/webhook-subscriptions/${sub.id}/send-example`, { headers: asReader })).status, 403);
  const nobody = await server.request('POST', `/admin/tenants/${tenantA.tenantId}/users`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    json: { userName: 'no-hooks', password: 'password-123', roles: ['DataExtractionRead'] },
  });
  assert.equal((await server.request('GET', '/api/v3/webhook-events', { headers: { ...a, 'x-appuser': nobody.body.userId } })).status, 403);

  const other = await createSubscription(server, a, { ActionType: 'Created', DocumentType: USER_TYPE, Url: receiver.url });
  const built = await server.request('POST', `/api/webhook-subscriptions/${other.id}/send-example`, { headers: a });
  assert.equal(built.status, 202);
  // A tenant's own user was created when the tenant was: a real Created event of a User.
  assert.ok(['event', 'catalogue'].includes(built.body.source));
  assert.equal((await server.request('POST', `/api/webhook-subscriptions/${crypto.randomUUID()}/send-example`, { headers: a })).status, 404);
});
