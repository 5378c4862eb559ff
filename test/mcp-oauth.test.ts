// The MCP server's OAuth 2.1 end to end with the SDK's client-side auth: discovery from the 401,
// dynamic registration, authorization code with PKCE through the console's consent API as a signed-in
// user, tokens bound to the resource, refresh with rotation (and a reused refresh token ending the grant),
// revocation, denial, and the refusals: another resource, another tenant, a wrong verifier, a used code.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { ADMIN_TOKEN, startTestServer, type TestServer } from './helpers.ts';

let server: TestServer;
let tenant: Awaited<ReturnType<TestServer['createTenant']>>;
let other: Awaited<ReturnType<TestServer['createTenant']>>;
const PASSWORD = 'a-long-password-123';
const REDIRECT = 'http://127.0.0.1:9/callback';

/** The SDK's OAuthClientProvider, kept in memory; the "browser" is the test. */
class MemoryProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  get redirectUrl() {
    return REDIRECT;
  }
  get clientMetadata() {
    return {
      client_name: 'Test Assistant',
      redirect_uris: [REDIRECT],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(c: OAuthClientInformationMixed) {
    this.client = c;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(t: OAuthTokens) {
    this.saved = t;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(v: string) {
    this.verifier = v;
  }
  codeVerifier() {
    return this.verifier;
  }
}

async function userLogin(t: typeof tenant, roles: string[]): Promise<{ accessToken: string; userId: string }> {
  const userName = `u${Math.random().toString(36).slice(2, 10)}`;
  const created = await server.request('POST', `/admin/tenants/${t.tenantId}/users`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    json: { userName, password: PASSWORD, name: userName, roles },
  });
  assert.equal(created.status, 201, created.text);
  const login = await server.request('POST', '/api/auth/token', { headers: { 'x-apptenant': t.tenantId }, json: { UserName: userName, Password: PASSWORD } });
  assert.equal(login.status, 200, login.text);
  return { accessToken: login.body.accessToken, userId: created.body.userId };
}

/** Connecting without a token: the SDK discovers, registers and sends the browser to the authorization URL. */
async function startFlow(provider: MemoryProvider, mcpUrl: string): Promise<{ consentQuery: string; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider });
  await assert.rejects(new Client({ name: 't', version: '1' }).connect(transport), /nauthorized/);
  assert.ok(provider.authorizationUrl, 'the SDK asked to open the authorization URL');
  const res = await fetch(provider.authorizationUrl, { redirect: 'manual' });
  assert.equal(res.status, 302);
  const location = res.headers.get('location') ?? '';
  assert.match(location, /\/console\/oauth\/consent\?/);
  return { consentQuery: location.slice(location.indexOf('?')), transport };
}

/** The consent page's two calls as the signed-in user; answers the redirect back to the client. */
async function consent(query: string, userToken: string, allow: boolean, tenantId: string): Promise<{ described: any; redirectTo: URL }> {
  const headers = { authorization: `Bearer ${userToken}`, 'x-apptenant': tenantId };
  const described = await server.request('GET', `/api/v3/mcp/oauth/authorization${query}`, { headers });
  assert.equal(described.status, 200, described.text);
  const request = Object.fromEntries(new URLSearchParams(query));
  const decided = await server.request('POST', '/api/v3/mcp/oauth/authorization', { headers, json: { request, allow } });
  assert.equal(decided.status, 200, decided.text);
  return { described: described.body, redirectTo: new URL(decided.body.redirectTo) };
}

async function connected(provider: MemoryProvider, mcpUrl: string): Promise<Client> {
  const client = new Client({ name: 't', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { authProvider: provider }));
  return client;
}

const tokenForm = (form: Record<string, string>) =>
  fetch(`${server.baseUrl}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) });

before(async () => {
  server = await startTestServer();
  tenant = await server.createTenant('OAuth Agency');
  other = await server.createTenant('Elsewhere Agency');
});
after(() => server?.close());

test('discovery, registration, PKCE and consent; the token works at its resource and nowhere else; refresh rotates; a reused refresh token ends the grant', async () => {
  const mcpUrl = `${server.baseUrl}/t/${tenant.slug}/mcp`;
  const provider = new MemoryProvider();
  const { consentQuery, transport } = await startFlow(provider, mcpUrl);
  assert.ok(provider.client?.client_id.startsWith('mcp-'), 'registered dynamically');
  const params = new URLSearchParams(consentQuery);
  assert.equal(params.get('code_challenge_method'), 'S256');
  assert.equal(params.get('resource'), mcpUrl);
  const user = await userLogin(tenant, ['JobRead', 'DataExtractionRead']);
  const { described, redirectTo } = await consent(consentQuery, user.accessToken, true, tenant.tenantId);
  assert.equal(described.client.name, 'Test Assistant');
  assert.equal(described.tenant.name, 'OAuth Agency');
  assert.deepEqual(
    described.scopes.map((s: any) => s.name),
    ['mcp:read', 'mcp:write'],
  );
  assert.equal(redirectTo.origin + redirectTo.pathname, REDIRECT);
  assert.equal(redirectTo.searchParams.get('state'), params.get('state'));
  assert.equal(redirectTo.searchParams.get('iss'), server.baseUrl);
  const code = redirectTo.searchParams.get('code') ?? '';
  await transport.finishAuth(code);
  const first = provider.saved as OAuthTokens;
  assert.match(first.access_token, /^atrium-mcp\./);
  assert.ok(first.refresh_token);

  const client = await connected(provider, mcpUrl);
  assert.ok((await client.listTools()).tools.some((t) => t.name === 'de_jobs'));
  await client.close();

  // The code is single use; and the token is refused by the rest of the API and at another resource.
  const again = await tokenForm({ grant_type: 'authorization_code', code, code_verifier: provider.verifier, client_id: provider.client?.client_id ?? '' });
  assert.equal(again.status, 400);
  assert.equal((await again.json()).error, 'invalid_grant');
  const onApi = await server.request('GET', '/api/v3/analytics/named-queries', {
    headers: { authorization: `Bearer ${first.access_token}`, 'x-apptenant': tenant.tenantId },
  });
  assert.equal(onApi.status, 401);
  const atRoot = await server.request('POST', '/mcp', { headers: { authorization: `Bearer ${first.access_token}` }, json: {} });
  assert.equal(atRoot.status, 401, 'a token for /t/{slug}/mcp is refused at /mcp');
  assert.match(atRoot.text, /another resource/);

  // Refresh with the SDK: new tokens, the old refresh token spent.
  assert.equal(await auth(provider, { serverUrl: mcpUrl }), 'AUTHORIZED');
  const second = provider.saved as OAuthTokens;
  assert.notEqual(second.access_token, first.access_token);
  assert.notEqual(second.refresh_token, first.refresh_token);
  const refreshed = await connected(provider, mcpUrl);
  await refreshed.ping();
  await refreshed.close();
  const reuse = await tokenForm({ grant_type: 'refresh_token', refresh_token: first.refresh_token ?? '', client_id: provider.client?.client_id ?? '' });
  assert.equal(reuse.status, 400);
  const afterReuse = await server.request('POST', `/t/${tenant.slug}/mcp`, { headers: { authorization: `Bearer ${second.access_token}` }, json: {} });
  assert.equal(afterReuse.status, 401, 'a reused refresh token revokes the whole grant');
});

test('revocation: a revoked refresh token ends its grant; the access token is refused from the next request', async () => {
  const mcpUrl = `${server.baseUrl}/mcp`;
  const provider = new MemoryProvider();
  const { consentQuery, transport } = await startFlow(provider, mcpUrl);
  const user = await userLogin(tenant, []);
  const { redirectTo } = await consent(consentQuery, user.accessToken, true, tenant.tenantId);
  await transport.finishAuth(redirectTo.searchParams.get('code') ?? '');
  const tokens = provider.saved as OAuthTokens;
  const client = await connected(provider, mcpUrl);
  await client.ping();
  const revoked = await fetch(`${server.baseUrl}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: tokens.refresh_token ?? '', token_type_hint: 'refresh_token', client_id: provider.client?.client_id ?? '' }),
  });
  assert.equal(revoked.status, 200);
  await assert.rejects(client.ping(), /401|nauthorized|invalid/i);
  const refresh = await tokenForm({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token ?? '', client_id: provider.client?.client_id ?? '' });
  assert.equal(refresh.status, 400);
});

test('refusals: denial, a wrong verifier, a resource that is not ours, a user of another tenant, an unregistered redirect', async () => {
  const mcpUrl = `${server.baseUrl}/t/${tenant.slug}/mcp`;
  const provider = new MemoryProvider();
  const { consentQuery } = await startFlow(provider, mcpUrl);
  const user = await userLogin(tenant, []);
  const denied = await consent(consentQuery, user.accessToken, false, tenant.tenantId);
  assert.equal(denied.redirectTo.searchParams.get('error'), 'access_denied');

  const { redirectTo } = await consent(consentQuery, user.accessToken, true, tenant.tenantId);
  const wrong = await tokenForm({
    grant_type: 'authorization_code',
    code: redirectTo.searchParams.get('code') ?? '',
    code_verifier: 'x'.repeat(43),
    client_id: provider.client?.client_id ?? '',
  });
  assert.equal(wrong.status, 400);
  assert.match((await wrong.json()).error_description, /code_verifier/);

  // Another tenant's user cannot allow a request for this tenant's address.
  const stranger = await userLogin(other, ['Administrator']);
  const crossed = await server.request('GET', `/api/v3/mcp/oauth/authorization${consentQuery}`, {
    headers: { authorization: `Bearer ${stranger.accessToken}`, 'x-apptenant': other.tenantId },
  });
  assert.equal(crossed.status, 409);
  // An app (not a signed-in user) cannot consent.
  const asApp = await server.request('POST', '/api/v3/mcp/oauth/authorization', {
    headers: { 'x-apptenant': tenant.tenantId, 'x-appid': tenant.appId, 'x-appsecret': tenant.appSecret },
    json: { request: Object.fromEntries(new URLSearchParams(consentQuery)), allow: true },
  });
  assert.equal(asApp.status, 401);
  const q = new URLSearchParams(consentQuery);
  q.set('resource', 'https://elsewhere.invalid/mcp');
  const foreign = await fetch(`${server.baseUrl}/oauth/authorize?${q}`, { redirect: 'manual' });
  assert.equal(foreign.status, 302);
  assert.equal(new URL(foreign.headers.get('location') ?? '').searchParams.get('error'), 'invalid_target');
  q.set('redirect_uri', 'https://attacker.invalid/cb');
  const unregistered = await fetch(`${server.baseUrl}/oauth/authorize?${q}`, { redirect: 'manual' });
  assert.equal(unregistered.status, 400, 'never redirected to a URI the client did not register');
  const noPkce = new URLSearchParams(consentQuery);
  noPkce.delete('code_challenge');
  const plain = await fetch(`${server.baseUrl}/oauth/authorize?${noPkce}`, { redirect: 'manual' });
  assert.equal(new URL(plain.headers.get('location') ?? '').searchParams.get('error'), 'invalid_request');
  const badRegistration = await server.request('POST', '/oauth/register', { json: { redirect_uris: ['javascript:alert(1)'] } });
  assert.equal(badRegistration.status, 400);
  assert.equal(badRegistration.body.error, 'invalid_redirect_uri');
});

test('metadata: protected resource (path-aware) and authorization server', async () => {
  const prm = await server.request('GET', `/.well-known/oauth-protected-resource/t/${tenant.slug}/mcp`);
  assert.equal(prm.status, 200);
  assert.equal(prm.body.resource, `${server.baseUrl}/t/${tenant.slug}/mcp`);
  assert.deepEqual(prm.body.authorization_servers, [server.baseUrl]);
  const as = await server.request('GET', '/.well-known/oauth-authorization-server');
  assert.equal(as.body.issuer, server.baseUrl);
  assert.deepEqual(as.body.code_challenge_methods_supported, ['S256']);
  assert.ok(as.body.registration_endpoint && as.body.revocation_endpoint);
});
