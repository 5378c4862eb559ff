// Shared setup of the automations API tests: a server (private networks allowed, small limits), a tenant,
// a receiver on loopback that records what Rest actions send, and shorthands for definitions and runs.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { appHeaders, startTestServer, type TestServer } from './helpers.ts';

export interface Received {
  headers: Record<string, unknown>;
  body: string;
}

export interface AutomationsSetup {
  server: TestServer;
  tenant: Awaited<ReturnType<TestServer['createTenant']>>;
  h: Record<string, string>;
  receiverUrl: string;
  received: Received[];
  create: (definition: Record<string, unknown>) => Promise<any>;
  runNow: (id: string, input?: unknown) => Promise<any>;
  close: () => Promise<void>;
}

export const start = (next: string) => ({ name: 'Start', type: 'Start', next });
export const done = (body: unknown = null, statusCode = 200) => ({ name: 'Done', type: 'Result', httpResponse: { statusCode, body } });

/**
 * The receiver answers POST /token with an OAuth2 token, GET with a JSON report, and any other request with
 * {ok, echo} (the body parsed when it is JSON).
 */
export async function startAutomationsServer(): Promise<AutomationsSetup> {
  const server = await startTestServer({
    ATRIUM_WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
    ATRIUM_AUTOMATION_MAX_STEPS: '200',
    ATRIUM_AUTOMATION_MAX_LOOP_ITERATIONS: '50',
    ATRIUM_AUTOMATION_MAX_OUTPUT_BYTES: '100000',
    ATRIUM_AUTOMATION_RUN_TIMEOUT: '2s',
  });
  const tenant = await server.createTenant('Automations Agency');
  const h = appHeaders(tenant);
  const received: Received[] = [];
  const receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      if (req.url === '/token') {
        received.push({ headers: req.headers, body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"access_token":"tok-123456","token_type":"Bearer","expires_in":3600}');
        return;
      }
      if (req.method === 'GET') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"report":true}');
        return;
      }
      received.push({ headers: req.headers, body });
      let echo: unknown = body;
      try {
        echo = body ? JSON.parse(body) : null;
      } catch {}
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, echo }));
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
  return {
    server,
    tenant,
    h,
    receiverUrl,
    received,
    create: async (definition) => {
      const res = await server.request('POST', '/api/v3/automations', { headers: h, json: definition });
      assert.equal(res.status, 201, res.text);
      return res.body;
    },
    runNow: async (id, input = null) => {
      const res = await server.request('POST', `/api/v3/automations/${id}/run`, { headers: h, json: { input } });
      assert.equal(res.status, 200, res.text);
      return res.body;
    },
    close: async () => {
      await new Promise((resolve) => receiver.close(resolve));
      await server.close();
    },
  };
}
