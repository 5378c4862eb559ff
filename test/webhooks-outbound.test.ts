// Outbound address rules: loopback, private, link-local, metadata, multicast, reserved and unspecified
// addresses, this host's own addresses and IPv6 forms that embed a refused IPv4 are refused where the
// connection is made, and the refusal is recorded on the invocation.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { blockedReason, createOutboundAgent, embeddedIpv4, OutboundRefused } from '../src/platform/outbound.ts';
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

  test('refuses the reserved ranges', () => {
    const reserved: [string, RegExp][] = [
      ['192.0.2.10', /documentation/],
      ['198.51.100.7', /documentation/],
      ['203.0.113.255', /documentation/],
      ['198.18.0.1', /benchmarking/],
      ['198.19.255.254', /benchmarking/],
      ['100.64.0.1', /shared address space/],
      ['100.127.255.255', /shared address space/],
      ['240.0.0.1', /reserved/],
      ['2001:db8::1', /documentation/],
      ['3fff::1', /documentation/],
      ['2001:2::1', /benchmarking/],
      ['2001:10::1', /ORCHID/],
      ['2001:20::1', /ORCHIDv2/],
      ['5f00::1', /SRv6/],
      // Local-use NAT64 (RFC 8215) is never global, whatever IPv4 it carries and wherever in the prefix.
      ['64:ff9b:1::a9fe:a9fe', /local-use NAT64/],
      ['64:ff9b:1::808:808', /local-use NAT64/],
      ['64:ff9b:1:ffff:ffff:ffff:ffff:ffff', /local-use NAT64/],
    ];
    for (const [address, reason] of reserved) assert.match(blockedReason(address, []) ?? 'allowed', reason, address);
    for (const address of ['192.0.3.1', '198.51.101.1', '203.0.114.1', '198.20.0.1', '100.128.0.1', '100.63.255.255']) {
      assert.equal(blockedReason(address, []), null, address);
    }
  });

  test('refuses IPv6 that embeds a refused IPv4: compatible, mapped, translated, NAT64, 6to4 and Teredo', () => {
    const carriers: [string, string[], RegExp][] = [
      ['::127.0.0.1', ['127.0.0.1'], /loopback \(IPv4 127\.0\.0\.1 embedded in IPv6\)/],
      ['::7f00:1', ['127.0.0.1'], /loopback/],
      ['::10.0.0.1', ['10.0.0.1'], /private/],
      ['::ffff:169.254.169.254', ['169.254.169.254'], /metadata/],
      // IPv4-translated (::ffff:0:0/96).
      ['::ffff:0:a9fe:a9fe', ['169.254.169.254'], /metadata/],
      ['::ffff:0:7f00:1', ['127.0.0.1'], /loopback/],
      ['0:0:0:0:ffff:0:10.1.2.3', ['10.1.2.3'], /private/],
      ['64:ff9b::c0a8:101', ['192.168.1.1'], /private/],
      ['2002:7f00:1::', ['127.0.0.1'], /loopback/],
      ['2002:a9fe:a9fe::1', ['169.254.169.254'], /metadata/],
      ['2002:c633:6407:1::1', ['198.51.100.7'], /documentation/],
      // Teredo: server 65.54.227.120 in plain, client 192.0.2.45 inverted in the last 32 bits (RFC 4380's example).
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', ['65.54.227.120', '192.0.2.45'], /documentation/],
      ['2001:0:7f00:1:0:0:ffff:fffe', ['127.0.0.1', '0.0.0.1'], /loopback/],
    ];
    for (const [address, v4, reason] of carriers) {
      assert.deepEqual(embeddedIpv4(address), v4, address);
      assert.match(blockedReason(address, []) ?? 'allowed', reason, address);
    }
    // The same forms carrying a public IPv4 are public.
    for (const address of ['2002:808:808::1', '2001:0:808:808::f7f7:f7f7', '::ffff:8.8.8.8', '::ffff:0:808:808', '64:ff9b::808:808']) {
      assert.equal(blockedReason(address, []), null, address);
    }
  });

  test("refuses this host's own addresses, whatever range they are in", () => {
    assert.match(blockedReason('93.184.216.34', ['93.184.216.34']) ?? 'allowed', /this host's own/);
    assert.match(blockedReason('2606:4700::1', ['2606:4700:0:0:0:0:0:1']) ?? 'allowed', /this host's own/);
    assert.match(blockedReason('::ffff:93.184.216.34', ['93.184.216.34']) ?? 'allowed', /this host's own/);
    assert.equal(blockedReason('93.184.216.35', ['93.184.216.34']), null);
    // By default the list is read from the interfaces of the machine running this test.
    const own = Object.values(os.networkInterfaces()).flatMap((list) => (list ?? []).filter((i) => !i.internal).map((i) => i.address));
    for (const address of own) assert.notEqual(blockedReason(address), null, address);
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

describe('each refusal is recorded on its invocation', () => {
  let server: TestServer;
  let ownListener: http.Server | null = null;
  const reached: string[] = [];
  before(async () => {
    server = await startTestServer({ ATRIUM_WEBHOOK_RETRY_SCHEDULE: '0s,200ms,200ms' });
  });
  after(async () => {
    if (ownListener) await new Promise((resolve) => ownListener?.close(resolve));
    await server.close();
  });

  test('own interface, IPv4-compatible, 6to4, Teredo, NAT64 and reserved addresses: refused, recorded, never reached', async () => {
    const tenant = await server.createTenant('Address Guard Agency');
    const h = appHeaders(tenant);
    // A listener on this machine's own non-loopback address, as a service bound there would be.
    const ownAddress = Object.values(os.networkInterfaces())
      .flatMap((list) => list ?? [])
      .find((i) => !i.internal && i.family === 'IPv4')?.address;
    const targets: [string, RegExp][] = [
      ['http://[::127.0.0.1]:9/hook', /loopback \(IPv4 127\.0\.0\.1 embedded in IPv6\)/],
      ['http://[2002:7f00:1::1]:9/hook', /loopback \(IPv4 127\.0\.0\.1 embedded in IPv6\)/],
      ['http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook', /documentation\) \(IPv4 192\.0\.2\.45 embedded in IPv6\)/],
      ['http://[64:ff9b::a00:1]/hook', /private \(IPv4 10\.0\.0\.1 embedded in IPv6\)/],
      ['http://198.51.100.7/hook', /reserved \(documentation\)/],
      ['http://203.0.113.9/hook', /reserved \(documentation\)/],
      ['http://198.18.0.1/hook', /benchmarking/],
      ['http://100.64.0.1/hook', /shared address space/],
      ['http://240.0.0.1/hook', /reserved or broadcast/],
    ];
    if (ownAddress) {
      ownListener = http.createServer((req, res) => {
        reached.push(req.url ?? '');
        res.end('ok');
      });
      await new Promise<void>((resolve) => ownListener?.listen(0, ownAddress, resolve));
      targets.push([`http://${ownAddress}:${(ownListener.address() as AddressInfo).port}/hook`, /this host's own address/]);
    }
    const owner = new pg.Client({ connectionString: server.databaseUrl });
    await owner.connect();
    const subs: { id: string; url: string; reason: RegExp }[] = [];
    try {
      for (const [url, reason] of targets) {
        // Refused when given as the subscription's URL...
        const direct = await server.request('POST', '/api/webhook-subscriptions', {
          headers: h,
          json: { Name: 'Hook', Active: true, Url: url, ActionType: 'Ping', DocumentType: DELIVERABLE_TYPE },
        });
        assert.equal(direct.status, 400, `${url}: ${direct.text}`);
        // ...and at delivery time, when a URL already stored points there.
        const sub = await createSubscription(server, h, { Url: 'https://hooks.example.com/in', ActionType: 'Ping', DocumentType: DELIVERABLE_TYPE });
        await owner.query('update webhook_subscriptions set url = $1 where id = $2', [url, sub.id]);
        subs.push({ id: sub.id, url, reason });
      }
    } finally {
      await owner.end();
    }
    await raiseEvent(server, h, 'Ping');
    for (const sub of subs) {
      const [inv] = await waitForHistory(server, h, sub.id, (items) => items[0]?.status === 'Failed');
      assert.equal(inv.attempts.length, 1, `${sub.url}: a refusal is final`);
      assert.match(inv.attempts[0].error, /refused to connect/, sub.url);
      assert.match(inv.attempts[0].error, sub.reason, sub.url);
    }
    assert.deepEqual(reached, [], 'nothing reached the listener on our own address');
  });
});
