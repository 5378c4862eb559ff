// The MCP server against the ecosystem's own tools, run as child processes on loopback: the Inspector's
// command-line client lists the tools and calls one, and the official conformance suite runs the server
// scenarios that apply to a server of this kind (docs/mcp.md says which, and why the others do not).
// Neither tool sends an Authorization header of its own, so a loopback proxy adds the personal access
// token and forwards to the server under the server's own Host (the resource the token is bound to).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { ADMIN_TOKEN, startTestServer, type TestServer } from './helpers.ts';
import { personalToken } from './mcp-helpers.ts';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '..');
const INSPECTOR = path.join(ROOT, 'node_modules/@modelcontextprotocol/inspector-cli/build/index.js');
const CONFORMANCE = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/** The server scenarios that apply to Atrium (docs/mcp.md lists the others with the reason). */
export const APPLICABLE_SCENARIOS = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'prompts-list',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

let server: TestServer;
let token: string;
let proxy: http.Server;
let proxyUrl: string;

before(async () => {
  server = await startTestServer();
  const tenant = await server.createTenant('Conformance Agency');
  const user = await server.request('POST', `/admin/tenants/${tenant.tenantId}/users`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    json: { userName: 'assistant', name: 'Assistant', roles: ['Administrator'] },
  });
  token = (await personalToken(server, tenant, user.body.userId)).token;
  const target = new URL(server.baseUrl);
  proxy = http.createServer((req, res) => {
    const headers = { ...req.headers, host: target.host, authorization: `Bearer ${token}` };
    // The suite's DNS-rebinding scenario sends a foreign Host: keep it, so the server sees what was sent.
    if (req.headers.host && !req.headers.host.startsWith('127.0.0.1') && !req.headers.host.startsWith('localhost')) headers.host = req.headers.host;
    const upstream = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
});
after(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.close();
});

test('the MCP Inspector CLI lists the tools and calls one', async () => {
  const auth = `Authorization: Bearer ${token}`;
  const listed = await run(process.execPath, [INSPECTOR, `${server.baseUrl}/mcp`, '--transport', 'http', '--header', auth, '--method', 'tools/list'], {
    timeout: 60_000,
    cwd: path.dirname(INSPECTOR),
  });
  const tools = JSON.parse(listed.stdout).tools as { name: string }[];
  assert.ok(tools.some((t) => t.name === 'de_departments'));
  assert.ok(tools.some((t) => t.name === 'log_time'));
  const called = await run(
    process.execPath,
    [
      INSPECTOR,
      `${server.baseUrl}/mcp`,
      '--transport',
      'http',
      '--header',
      auth,
      '--method',
      'tools/call',
      '--tool-name',
      'de_departments',
      '--tool-arg',
      'take=2',
    ],
    // The CLI finds its own package.json relative to the working directory.
    { timeout: 60_000, cwd: path.dirname(INSPECTOR) },
  );
  const result = JSON.parse(called.stdout);
  assert.ok(!result.isError, called.stdout);
  assert.equal(result.structuredContent.query, 'DE-Departments');
  assert.ok(result.structuredContent.returned <= 2);
  assert.ok(result.structuredContent.totalCount >= 1, 'a new tenant has its default department');
});

for (const scenario of APPLICABLE_SCENARIOS) {
  test(`conformance: ${scenario}`, async () => {
    const out = await run(process.execPath, [CONFORMANCE, 'server', '--url', proxyUrl, '--scenario', scenario], { timeout: 120_000 }).catch((err) => err);
    const text = `${out.stdout ?? ''}${out.stderr ?? ''}`;
    assert.equal(out.code ?? 0, 0, text.slice(-3000));
  });
}
