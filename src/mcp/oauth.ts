// Atrium as the OAuth 2.1 authorization server of its MCP endpoint (decision 0049): dynamic client
// registration (RFC 7591, public clients with PKCE), authorization codes issued on a signed-in user's
// consent, the token endpoint (authorization_code with S256 PKCE, refresh_token with rotation and reuse
// detection) and revocation (RFC 7009). Every token is bound to the resource (RFC 8707) it was asked for.
import { createHash, randomUUID } from 'node:crypto';
import { randomToken, sha256 } from '../platform/auth/hashing.ts';
import type { Principal } from '../platform/auth/principal.ts';
import type { AppContext } from '../platform/context.ts';
import { isUuid, type Trx } from '../platform/db/database.ts';
import { newToken, parseToken, readScopes } from './tokens.ts';

export const CODE_LIFETIME_MS = 10 * 60_000;
const MAX_REDIRECT_URIS = 10;
const MAX_URI_LENGTH = 2000;

/** An OAuth error answer (RFC 6749 §5.2): status, error code and description. */
export class OAuthError extends Error {
  readonly status: number;
  readonly error: string;
  constructor(status: number, error: string, description: string) {
    super(description);
    this.status = status;
    this.error = error;
  }
}

export interface RegisteredClient {
  client_id: string;
  client_id_issued_at: number;
  client_name: string;
  redirect_uris: string[];
  grant_types: string[];
  response_types: string[];
  token_endpoint_auth_method: 'none';
  client_uri?: string;
}

/** https anywhere, http only on loopback, or a native app's private scheme (RFC 8252); never a fragment. */
function redirectUriProblem(uri: unknown): string | null {
  if (typeof uri !== 'string' || !uri || uri.length > MAX_URI_LENGTH) return 'must be a URI of at most 2000 characters';
  if (!URL.canParse(uri)) return 'is not a URI';
  const u = new URL(uri);
  if (u.hash) return 'may not have a fragment';
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:') return ['localhost', '127.0.0.1', '[::1]'].includes(u.hostname) ? null : 'http is allowed on loopback only';
  if (/^(javascript|data|file|vbscript|blob|about):$/.test(u.protocol)) return `the scheme ${u.protocol} is not allowed`;
  return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+:$/.test(u.protocol) || /^[a-z][a-z0-9+.-]{2,}:$/.test(u.protocol) ? null : 'is not an allowed scheme';
}

export async function registerClient(ctx: AppContext, body: unknown): Promise<RegisteredClient> {
  const b = (body ?? {}) as Record<string, unknown>;
  const uris = b.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > MAX_REDIRECT_URIS) {
    throw new OAuthError(400, 'invalid_redirect_uri', `redirect_uris must list 1 to ${MAX_REDIRECT_URIS} URIs.`);
  }
  for (const [i, uri] of uris.entries()) {
    const problem = redirectUriProblem(uri);
    if (problem) throw new OAuthError(400, 'invalid_redirect_uri', `redirect_uris[${i}] ${problem}.`);
  }
  const text = (v: unknown, max: number): string | undefined => (typeof v === 'string' && v.length <= max ? v : undefined);
  const grants = Array.isArray(b.grant_types) ? b.grant_types : ['authorization_code'];
  if (grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token')) {
    throw new OAuthError(400, 'invalid_client_metadata', 'grant_types may be authorization_code and refresh_token.');
  }
  if (Array.isArray(b.response_types) && b.response_types.some((r) => r !== 'code'))
    throw new OAuthError(400, 'invalid_client_metadata', 'response_types may only be code.');
  const clientUri = text(b.client_uri, MAX_URI_LENGTH);
  const row = await ctx.db.kysely
    .insertInto('oauth_clients')
    .values({
      id: `mcp-${randomToken(18)}`,
      client_name: (text(b.client_name, 200) ?? 'MCP client').trim() || 'MCP client',
      redirect_uris: uris as string[],
      client_uri: clientUri && /^https?:\/\//.test(clientUri) ? clientUri : null,
      software_id: text(b.software_id, 200) ?? null,
      software_version: text(b.software_version, 100) ?? null,
    })
    .returning(['id', 'client_name', 'redirect_uris', 'client_uri', 'created_on_utc'])
    .executeTakeFirstOrThrow();
  return {
    client_id: row.id,
    client_id_issued_at: Math.floor(row.created_on_utc.getTime() / 1000),
    client_name: row.client_name,
    redirect_uris: row.redirect_uris,
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    ...(row.client_uri ? { client_uri: row.client_uri } : {}),
  };
}

export async function findClient(ctx: AppContext, clientId: unknown) {
  if (typeof clientId !== 'string' || !/^mcp-[\w-]{10,40}$/.test(clientId)) return undefined;
  return ctx.db.kysely.selectFrom('oauth_clients').select(['id', 'client_name', 'redirect_uris', 'client_uri']).where('id', '=', clientId).executeTakeFirst();
}

/** An authorization request as /oauth/authorize receives it (and the consent page sends it back). */
export interface AuthorizationRequest {
  response_type?: string;
  client_id?: string;
  redirect_uri?: string;
  code_challenge?: string;
  code_challenge_method?: string;
  state?: string;
  scope?: string;
  resource?: string;
}

export interface CheckedRequest {
  client: { id: string; client_name: string; client_uri: string | null };
  redirectUri: string;
  codeChallenge: string;
  state: string | undefined;
  scopes: string[];
  resource: string;
  /** The slug the resource's address names (/t/{slug}/mcp), if any: the tenant to sign in to. */
  slug: string | null;
}

/**
 * Checks a request against its client. Until the client and redirect URI are known to match, a problem
 * is shown to the user (redirectable false); after that it goes back to the client in the redirect.
 */
export async function checkAuthorizationRequest(
  ctx: AppContext,
  q: AuthorizationRequest,
  ownResource: (resource: string) => { slug: string | null } | null,
): Promise<CheckedRequest> {
  const client = await findClient(ctx, q.client_id);
  if (!client) throw Object.assign(new OAuthError(400, 'invalid_client', 'Unknown client_id: register the client first.'), { redirectable: false });
  const redirectUri = q.redirect_uri ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
  if (!redirectUri || !client.redirect_uris.includes(redirectUri)) {
    throw Object.assign(new OAuthError(400, 'invalid_request', 'redirect_uri is not one the client registered.'), { redirectable: false });
  }
  if (q.response_type !== 'code') throw new OAuthError(400, 'unsupported_response_type', 'response_type must be code.');
  if (q.code_challenge_method !== 'S256' || !q.code_challenge || !/^[\w-]{43,128}$/.test(q.code_challenge)) {
    throw new OAuthError(400, 'invalid_request', 'PKCE is required: code_challenge with code_challenge_method S256.');
  }
  if (q.state !== undefined && q.state.length > 1000) throw new OAuthError(400, 'invalid_request', 'state is longer than 1000 characters.');
  if (!q.resource) throw new OAuthError(400, 'invalid_target', 'resource is required: the MCP server URL the token is for.');
  const own = ownResource(q.resource);
  if (!own) throw new OAuthError(400, 'invalid_target', `${q.resource} is not an MCP endpoint of this server.`);
  let scopes: string[];
  try {
    scopes = readScopes(q.scope);
  } catch (err) {
    throw new OAuthError(400, 'invalid_scope', (err as Error).message);
  }
  return {
    client: { id: client.id, client_name: client.client_name, client_uri: client.client_uri },
    redirectUri,
    codeChallenge: q.code_challenge,
    state: q.state,
    scopes,
    resource: q.resource,
    slug: own.slug,
  };
}

/** The redirect back to the client with `params` (and the issuer, RFC 9207). */
export function redirectBack(redirectUri: string, params: Record<string, string | undefined>, issuer: string): string {
  const u = new URL(redirectUri);
  for (const [k, v] of Object.entries({ ...params, iss: issuer })) if (v !== undefined) u.searchParams.set(k, v);
  return u.toString();
}

/** The signed-in user allowed the request: a single-use code for ten minutes. */
export async function issueCode(trx: Trx, user: Principal, req: CheckedRequest): Promise<string> {
  const secret = randomToken(32);
  await trx
    .insertInto('oauth_codes')
    .values({
      tenant_id: user.tenantId,
      code_hash: sha256(secret),
      client_id: req.client.id,
      user_id: user.userId as string,
      redirect_uri: req.redirectUri,
      code_challenge: req.codeChallenge,
      resource: req.resource,
      scope: req.scopes.join(' '),
      expires_on_utc: new Date(Date.now() + CODE_LIFETIME_MS),
    })
    .execute();
  return `${user.tenantId}.${secret}`;
}

export interface TokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

async function issueTokens(
  ctx: AppContext,
  trx: Trx,
  grant: { tenantId: string; clientId: string; grantId: string; userId: string; resource: string; scope: string },
): Promise<TokenAnswer> {
  const access = newToken(grant.tenantId);
  const refresh = newToken(grant.tenantId);
  const common = {
    tenant_id: grant.tenantId,
    client_id: grant.clientId,
    grant_id: grant.grantId,
    user_id: grant.userId,
    resource: grant.resource,
    scope: grant.scope,
  };
  await trx
    .insertInto('mcp_tokens')
    .values([
      { ...common, token_hash: access.hash, kind: 'access', expires_on_utc: new Date(Date.now() + ctx.config.tokenLifetimeSeconds * 1000) },
      { ...common, token_hash: refresh.hash, kind: 'refresh', expires_on_utc: new Date(Date.now() + ctx.config.refreshTokenLifetimeSeconds * 1000) },
    ])
    .execute();
  return { access_token: access.token, token_type: 'Bearer', expires_in: ctx.config.tokenLifetimeSeconds, refresh_token: refresh.token, scope: grant.scope };
}

const s256 = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');
const invalidGrant = (why: string) => new OAuthError(400, 'invalid_grant', why);

export async function exchangeCode(ctx: AppContext, form: Record<string, string | undefined>): Promise<TokenAnswer> {
  const [tenantId, secret] = (form.code ?? '').split('.');
  if (!isUuid(tenantId) || !secret) throw invalidGrant('The code is not valid.');
  if (!form.code_verifier || !/^[\w.~-]{43,128}$/.test(form.code_verifier)) throw invalidGrant('code_verifier is missing or malformed.');
  const answer = await ctx.db.withTenant(tenantId, async (trx) => {
    const code = await trx
      .updateTable('oauth_codes')
      .set({ used_on_utc: new Date() })
      .where('code_hash', '=', sha256(secret))
      .where('used_on_utc', 'is', null)
      .returning(['client_id', 'user_id', 'redirect_uri', 'code_challenge', 'resource', 'scope', 'expires_on_utc'])
      .executeTakeFirst();
    if (!code || code.expires_on_utc.getTime() < Date.now()) return invalidGrant('The code is unknown, used or expired.');
    if (code.client_id !== form.client_id) return invalidGrant('The code was issued to another client.');
    if (form.redirect_uri !== undefined && form.redirect_uri !== code.redirect_uri)
      return invalidGrant('redirect_uri differs from the authorization request’s.');
    if (s256(form.code_verifier as string) !== code.code_challenge) return invalidGrant('code_verifier does not match the code_challenge.');
    if (form.resource !== undefined && form.resource !== code.resource)
      return new OAuthError(400, 'invalid_target', 'resource differs from the authorization request’s.');
    return issueTokens(ctx, trx, {
      tenantId,
      clientId: code.client_id,
      grantId: randomUUID(),
      userId: code.user_id,
      resource: code.resource,
      scope: code.scope,
    });
  });
  if (answer instanceof OAuthError) throw answer;
  return answer;
}

export async function refreshTokens(ctx: AppContext, form: Record<string, string | undefined>): Promise<TokenAnswer> {
  const parsed = parseToken(form.refresh_token ?? '');
  if (!parsed) throw invalidGrant('The refresh token is not valid.');
  const answer = await ctx.db.withTenant(parsed.tenantId, async (trx) => {
    const row = await trx
      .selectFrom('mcp_tokens')
      .select(['id', 'client_id', 'grant_id', 'user_id', 'resource', 'scope', 'expires_on_utc', 'used_on_utc', 'revoked_on_utc'])
      .where('token_hash', '=', sha256(parsed.secret))
      .where('kind', '=', 'refresh')
      .forUpdate()
      .executeTakeFirst();
    if (!row || row.client_id !== form.client_id) return invalidGrant('The refresh token is unknown or was issued to another client.');
    if (row.used_on_utc) {
      // Reuse of a rotated refresh token: someone holds a copy. The whole grant ends.
      await revokeGrant(trx, row.grant_id as string);
      return invalidGrant('The refresh token was already used; the grant is revoked.');
    }
    if (row.revoked_on_utc || (row.expires_on_utc && row.expires_on_utc.getTime() < Date.now()))
      return invalidGrant('The refresh token is expired or revoked.');
    if (form.resource !== undefined && form.resource !== row.resource) return new OAuthError(400, 'invalid_target', 'resource differs from the grant’s.');
    let scope = row.scope;
    if (form.scope) {
      const asked = form.scope.split(' ').filter(Boolean);
      const granted = new Set(row.scope.split(' '));
      if (asked.some((s) => !granted.has(s))) return new OAuthError(400, 'invalid_scope', 'A refresh may only narrow the scopes granted.');
      scope = [...new Set(asked)].join(' ');
    }
    const user = await trx.selectFrom('users').select('is_active').where('id', '=', row.user_id).executeTakeFirst();
    if (!user?.is_active) return invalidGrant('The user is inactive.');
    await trx.updateTable('mcp_tokens').set({ used_on_utc: new Date() }).where('id', '=', row.id).execute();
    return issueTokens(ctx, trx, {
      tenantId: parsed.tenantId,
      clientId: row.client_id as string,
      grantId: row.grant_id as string,
      userId: row.user_id,
      resource: row.resource,
      scope,
    });
  });
  if (answer instanceof OAuthError) throw answer;
  return answer;
}

async function revokeGrant(trx: Trx, grantId: string): Promise<void> {
  await trx.updateTable('mcp_tokens').set({ revoked_on_utc: new Date() }).where('grant_id', '=', grantId).where('revoked_on_utc', 'is', null).execute();
}

/**
 * RFC 7009: an access token ends alone; a refresh token ends its grant (every token of it). Unknown
 * tokens, and tokens of another client, are answered the same (200) and left as they are.
 */
export async function revokeToken(ctx: AppContext, form: Record<string, string | undefined>): Promise<void> {
  const parsed = parseToken(form.token ?? '');
  if (!parsed) return;
  await ctx.db.withTenant(parsed.tenantId, async (trx) => {
    const row = await trx
      .selectFrom('mcp_tokens')
      .select(['id', 'kind', 'client_id', 'grant_id'])
      .where('token_hash', '=', sha256(parsed.secret))
      .executeTakeFirst();
    if (!row || row.kind === 'personal' || row.client_id !== form.client_id) return;
    if (row.kind === 'refresh') await revokeGrant(trx, row.grant_id as string);
    else await trx.updateTable('mcp_tokens').set({ revoked_on_utc: new Date() }).where('id', '=', row.id).execute();
  });
}
