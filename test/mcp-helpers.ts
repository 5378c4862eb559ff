// Shared by the MCP tests: a personal access token for a user (created by the tenant's Administrator
// app through the API) and an SDK client connected over Streamable HTTP with it.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { appHeaders, type TestServer } from './helpers.ts';

type Tenant = Awaited<ReturnType<TestServer['createTenant']>>;

/** A personal access token acting as userId, for the MCP endpoint at `base` ('' or '/t/{slug}'). */
export async function personalToken(
  server: TestServer,
  tenant: Tenant,
  userId: string,
  opts: { base?: string; scopes?: string[] } = {},
): Promise<{ id: string; token: string; resource: string }> {
  const res = await server.request('POST', `${opts.base ?? ''}/api/v3/mcp/personal-access-tokens`, {
    headers: appHeaders(tenant),
    json: { Name: 'test client', UserId: userId, ...(opts.scopes ? { Scopes: opts.scopes } : {}) },
  });
  assert.equal(res.status, 201, res.text);
  return { id: res.body.Id, token: res.body.Token, resource: res.body.Resource };
}

/** An SDK client over Streamable HTTP at `${baseUrl}${base}/mcp` with the bearer token. */
export async function mcpClient(server: TestServer, token: string, base = ''): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(`${server.baseUrl}${base}/mcp`), {
    requestInit: { headers: { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'atrium-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}
