// OpenTelemetry tracing end to end (decision 0048): a loopback OTLP/HTTP receiver takes the spans the server
// exports (OTLP JSON); one request that creates a user, with a webhook subscription and an IsAutomation
// subscription on user creation, yields one trace holding the HTTP span, its transaction and statements, the
// dispatch, the delivery attempt (whose POST carries the trace's id to the receiver) and the automation run
// with its actions (whose Rest call carries it too). An incoming traceparent is continued, logs carry
// traceId/spanId, and a problem answer's traceId is the trace's id.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TenantCredentials } from '../src/tenancy/service.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { createSubscription, type Receiver, startReceiver, USER_TYPE, waitForHistory } from './webhooks-helpers.ts';

interface ExportedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
  service: string;
}

const spans: ExportedSpan[] = [];
let exports = 0;
const lines: Record<string, any>[] = [];
let otlp: http.Server;
let server: TestServer;
let tenant: TenantCredentials;
let h: Record<string, string>;
let receiver: Receiver;

/** OTLP JSON AnyValue -> a plain value. */
function plain(v: Record<string, unknown>): unknown {
  if ('stringValue' in v) return v.stringValue;
  if ('intValue' in v) return Number(v.intValue);
  if ('doubleValue' in v) return v.doubleValue;
  if ('boolValue' in v) return v.boolValue;
  return JSON.stringify(v);
}

/** OTLP's JSON encoding carries ids as hex strings (the protobuf JSON mapping's exception for trace and span ids). */
function collect(body: any): void {
  for (const rs of body.resourceSpans ?? []) {
    const service = String(plain(rs.resource.attributes.find((a: any) => a.key === 'service.name').value));
    for (const ss of rs.scopeSpans ?? [])
      for (const s of ss.spans ?? []) {
        const attributes: Record<string, unknown> = {};
        for (const a of s.attributes ?? []) attributes[a.key] = plain(a.value);
        spans.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, kind: s.kind, attributes, service });
      }
  }
}

before(async () => {
  otlp = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      assert.equal(req.url, '/v1/traces');
      assert.match(String(req.headers['content-type']), /application\/json/);
      collect(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      exports++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => otlp.listen(0, '127.0.0.1', resolve));
  receiver = await startReceiver();
  server = await startTestServer(
    {
      LOG_LEVEL: 'info',
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(otlp.address() as AddressInfo).port}`,
      OTEL_SERVICE_NAME: 'atrium-under-test',
      ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      ATRIUM_WEBHOOK_RETRY_SCHEDULE: '0s',
    },
    {
      logDestination: {
        write(chunk: string) {
          for (const line of chunk.split('\n')) if (line) lines.push(JSON.parse(line));
        },
      },
    },
  );
  tenant = await server.createTenant('Traced Agency');
  h = appHeaders(tenant);
});

after(async () => {
  await server?.close();
  await receiver?.close();
  await new Promise((resolve) => otlp?.close(resolve));
});

/** Waits until the exported spans satisfy `done` (the batch processor exports every second). */
async function spansUntil(done: () => boolean, what: string): Promise<void> {
  const until = Date.now() + 20_000;
  while (!done()) {
    if (Date.now() > until) throw new Error(`no ${what} among ${spans.length} exported spans: ${[...new Set(spans.map((s) => s.name))].join(', ')}`);
    await sleep(50);
  }
}

test('one trace from the request through the transaction and dispatch to the delivery attempt and the automation run', { timeout: 90_000 }, async () => {
  const forwarded: http.IncomingHttpHeaders[] = [];
  const target = http.createServer((req, res) => {
    forwarded.push(req.headers);
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}'));
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  try {
    const hook = await createSubscription(server, h, { ActionType: 'Created', DocumentType: USER_TYPE, Url: receiver.url });
    receiver.secret = hook.secret;
    const automation = await server.request('POST', '/api/v3/automations', {
      headers: h,
      json: {
        name: 'On new user',
        actions: [
          { name: 'Start', type: 'Start', next: 'Pick' },
          { name: 'Pick', type: 'Map', body: { who: "{{['#HttpRequest']$.Body.Detail.UserName}}" }, next: 'Forward' },
          {
            name: 'Forward',
            type: 'Rest',
            method: 'POST',
            url: `http://127.0.0.1:${(target.address() as AddressInfo).port}/forward`,
            body: "{{['Pick']}}",
            next: 'Done',
          },
          { name: 'Done', type: 'Result', httpResponse: { statusCode: 200, body: { ok: true } } },
        ],
      },
    });
    assert.equal(automation.status, 201, automation.text);
    const runner = await createSubscription(server, h, {
      ActionType: 'Created',
      DocumentType: USER_TYPE,
      IsAutomation: true,
      AutomationId: automation.body.id,
    });

    const created = await server.request('POST', '/api/v3/users', {
      headers: h,
      json: { OperationType: 0, CreateModel: { UserName: 'traced.user', Name: 'Traced User' } },
    });
    assert.equal(created.status, 201, created.text);
    await receiver.waitFor(1);
    // The invocation of this user's event: the tenant's bootstrap Administrator's Created event may be dispatched
    // after the subscriptions exist (a busy dispatcher), and then it runs the automation too.
    const mine = (list: any[]) => list.find((i) => i.documentId === created.body.Id);
    const ran = await waitForHistory(server, h, runner.id, (list) => mine(list) !== undefined && mine(list).status !== 'Pending');
    assert.equal(mine(ran).status, 'Succeeded', JSON.stringify(ran));

    await spansUntil(() => spans.some((s) => s.name === 'POST /api/v3/users'), 'HTTP span of the request');
    const httpSpan = spans.find((s) => s.name === 'POST /api/v3/users') as ExportedSpan;
    const traceId = httpSpan.traceId;
    const inTrace = () => spans.filter((s) => s.traceId === traceId);
    await spansUntil(
      () => ['webhook delivery attempt', 'automation run', 'automation action Rest', 'automation action Map'].every((n) => inTrace().some((s) => s.name === n)),
      'delivery attempt and automation run in the trace',
    );
    const trace = inTrace();
    const byId = new Map(trace.map((s) => [s.spanId, s]));
    const one = (name: string) => {
      const found = trace.filter((s) => s.name === name);
      assert.equal(found.length, 1, `${name}: ${found.length} spans`);
      return found[0];
    };
    const parentOf = (s: ExportedSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);

    // The HTTP span: a SERVER span named by the route template, with status and tenant, and no secret anywhere.
    assert.equal(httpSpan.kind, 2);
    assert.equal(httpSpan.attributes['http.route'], '/api/v3/users');
    assert.equal(httpSpan.attributes['http.response.status_code'], 201);
    assert.equal(httpSpan.attributes['atrium.tenant.id'], tenant.tenantId);
    assert.equal(httpSpan.service, 'atrium-under-test');
    const everything = JSON.stringify(spans);
    assert.ok(!everything.includes(tenant.appSecret), 'the app secret appears in no span');

    // Its transaction, and statements without literal values.
    const transaction = trace.find((s) => s.name === 'db transaction' && s.parentSpanId === httpSpan.spanId);
    assert.ok(transaction, 'a transaction span under the HTTP span');
    const statements = trace.filter((s) => s.parentSpanId === transaction.spanId && s.attributes['db.system.name'] === 'postgresql');
    assert.ok(statements.length >= 2, `statements under the transaction: ${statements.length}`);
    const texts = statements.map((s) => String(s.attributes['db.query.text']));
    assert.ok(
      texts.some((t) => /^insert into "users"/i.test(t) || /insert into users/i.test(t)),
      texts.join('\n'),
    );
    for (const t of texts) {
      assert.ok(!t.includes(tenant.tenantId), `a statement's text names the tenant id: ${t}`);
      assert.ok(!t.includes('traced.user'), `a statement's text carries a value: ${t}`);
    }

    // The dispatch continues the transaction that appended the event; the attempt and the run continue the dispatch.
    const dispatch = one('webhook dispatch');
    assert.equal(parentOf(dispatch)?.spanId, transaction.spanId);
    assert.equal(dispatch.attributes['atrium.event.action_type'], 'Created');
    const attempt = one('webhook delivery attempt');
    assert.equal(attempt.parentSpanId, dispatch.spanId);
    assert.equal(attempt.attributes['http.response.status_code'], 200);
    assert.equal(attempt.attributes['server.address'], `127.0.0.1:${receiver.port}`);
    const run = one('automation run');
    assert.equal(run.parentSpanId, dispatch.spanId);
    assert.equal(run.attributes['atrium.automation.id'], automation.body.id);
    assert.equal(run.attributes['atrium.automation.status'], 'Succeeded');
    for (const name of ['automation action Map', 'automation action Rest', 'automation action Result']) assert.equal(one(name).parentSpanId, run.spanId, name);

    // What left the process carries the trace: the webhook POST names the attempt's span, the Rest call the action's.
    // (Only this request's: the bootstrap Administrator's event may have been delivered and run too, in its own trace.)
    const delivery = receiver.received.find((r) => String(r.headers.traceparent).includes(traceId));
    assert.equal(delivery?.headers.traceparent, `00-${traceId}-${attempt.spanId}-01`);
    assert.equal(delivery?.verified, true);
    const mineForwarded = forwarded.filter((f) => String(f.traceparent).includes(traceId));
    assert.equal(mineForwarded.length, 1);
    assert.equal(mineForwarded[0].traceparent, `00-${traceId}-${one('automation action Rest').spanId}-01`);

    // The request's log line carries the trace.
    const logged = lines.find((l) => l.msg === 'request' && l.route === '/api/v3/users');
    assert.equal(logged?.traceId, traceId);
    assert.equal(logged?.spanId, httpSpan.spanId);
  } finally {
    target.closeAllConnections();
    await new Promise((resolve) => target.close(resolve));
  }
});

test('an incoming traceparent and tracestate are continued; a problem answer names the trace', { timeout: 30_000 }, async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const parent = '00f067aa0ba902b7';
  const res = await server.request('GET', '/api/webhook-subscriptions/not-a-uuid', {
    headers: { ...h, traceparent: `00-${traceId}-${parent}-01`, tracestate: 'vendor=abc' },
  });
  assert.equal(res.status, 400, res.text);
  assert.equal(res.body.traceId, traceId);
  await spansUntil(() => spans.some((s) => s.traceId === traceId && s.kind === 2), 'span of the continued trace');
  const span = spans.find((s) => s.traceId === traceId && s.kind === 2) as ExportedSpan;
  assert.equal(span.parentSpanId, parent);
  assert.equal(span.attributes['http.response.status_code'], 400);
  assert.equal(span.name, 'GET /api/webhook-subscriptions/:id');

  // An unsampled parent is honoured (parentbased_always_on): nothing of that trace is exported.
  const quiet = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
  const before = exports;
  assert.equal((await server.request('GET', '/api/v3/users', { headers: { ...h, traceparent: `00-${quiet}-${parent}-00` } })).status, 200);
  await server.request('GET', '/health/live');
  await spansUntil(() => exports > before, 'export after the unsampled request');
  assert.ok(!spans.some((s) => s.traceId === quiet));
});
