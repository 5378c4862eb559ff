// Outbound address rules: loopback, private, link-local, metadata, multicast and unspecified addresses
// are refused where the connection is made, and the refusal is recorded on the invocation.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { blockedReason, createOutboundAgent, OutboundRefused } from '../src/webhooks/outbound.ts';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';
import { createSubscription, DELIVERABLE_TYPE, type Receiver, raiseEvent, startReceiver, waitForHistory } from './webhooks-helpers.ts';

describe('blockedReason', () => {
  test('refuses every non-public range, in IPv4, IPv6 and IPv4 inside IPv6', () => {
    const blocked: [string, RegExp][] = [
      ['127.0.0.1', /loopback/],
      ['127.255.0.9', /loopback/],
      ['::1', /loopback/],
      ['::ffff:127.0.0.1', /loopback/],
      ['::ffff:7f00:1', /loopback/],
      ['10.1.2.3', /private/],
      ['172.20.0.1', /private/],
      ['192.168.1.1', /private/],
      ['100.100.100.200', /private/],
      ['fc00::1', /private/],
      ['fd00:ec2::254', /metadata/],
      ['169.254.169.254', /metadata/],
      ['168.63.129.16', /metadata/],
      ['fe80::1', /link-local/],
      ['224.0.0.251', /multicast/],
      ['ff02::1', /multicast/],
      ['0.0.0.0', /unspecified/],
      ['::', /unspecified/],
      ['255.255.255.255', /broadcast/],
    ];
    for (const [address, reason] of blocked) assert.match(blockedReason(address) ?? 'allowed', reason, address);
    for (const address of ['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8', '172.32.0.1', '11.0.0.1']) {
      assert.equal(blockedReason(address), null, address);
    }
  });
});

describe('the delivery client', () => {
  let receiver: Receiver;
  before(async () => {
    receiver = await startReceiver();
  });
  after(() => receiver.close());

  test('a name that resolves to loopback is refused before any byte is sent; literals too', async () => {
    const agent = createOutboundAgent({ allowPrivate: false, connections: 2, connectTimeoutMs: 2000 });
    try {
      for (const origin of [`http://localhost:${receiver.port}`, `http://127.0.0.1:${receiver.port}`, `http://[::ffff:127.0.0.1]:${receiver.port}`]) {
        await assert.rejects(agent.request({ origin, path: '/hook', method: 'POST', body: '{}' }), (err: Error) => {
          const inner = err instanceof OutboundRefused ? err : ((err as { cause?: Error }).cause ?? err);
          assert.ok(inner instanceof OutboundRefused || /refused to connect/.test(String(inner)), `${origin}: ${err}`);
          return true;
        });
      }
      assert.equal(receiver.received.length, 0);
    } finally {
      await agent.close();
    }
    const open = createOutboundAgent({ allowPrivate: true, connections: 2, connectTimeoutMs: 2000 });
    try {
      const res = await open.request({ origin: `http://localhost:${receiver.port}`, path: '/hook', method: 'POST', body: '{}' });
      assert.equal(res.statusCode, 200);
      await res.body.text();
    } finally {
      await open.close();
    }
  });
});

describe('end to end without ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS', () => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    server = await startTestServer({ ATRIUM_WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms' });
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    await server.close();
  });

  test('a URL whose name now resolves to a private address is refused, recorded and not retried', async () => {
    const tenant = await server.createTenant('Outbound Agency');
    const h = appHeaders(tenant);
    const sub = await createSubscription(server, h, { Url: 'https://hooks.example.com/in', ActionType: 'Ping', DocumentType: DELIVERABLE_TYPE });
    // What DNS rebinding would do: the name the subscription was validated with now points at loopback.
    const owner = new pg.Client({ connectionString: server.databaseUrl });
    await owner.connect();
    await owner.query('update webhook_subscriptions set url = $1 where id = $2', [`http://localhost:${receiver.port}/hook`, sub.id]);
    await owner.end();
    await raiseEvent(server, h, 'Ping');
    const [inv] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Failed');
    assert.equal(inv.attempts.length, 1, 'a refusal is final');
    assert.match(inv.attempts[0].error, /refused to connect to localhost .*loopback/);
    await sleep(300);
    assert.equal(receiver.received.length, 0);
  });
});
