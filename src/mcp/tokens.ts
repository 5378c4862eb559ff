// MCP tokens (decision 0049): opaque bearer tokens `atrium-mcp.{tenantId}.{secret}` kept as SHA-256 hashes,
// each bound to one tenant, one user, one resource (the MCP endpoint URL) and its scopes. OAuth access and
// refresh tokens and an Administrator's personal access tokens share the table; none of them is a JWT of
// the API's kind, so the rest of the API (AuthService.verifyAccessToken) never accepts one.

import { randomToken, sha256 } from '../platform/auth/hashing.ts';
import type { Principal } from '../platform/auth/principal.ts';
import type { AppContext } from '../platform/context.ts';
import { isUuid, type Trx } from '../platform/db/database.ts';
import { badRequest, HttpProblem, notFound, unauthorized } from '../platform/errors.ts';

export const TOKEN_PREFIX = 'atrium-mcp';
export const SCOPE_READ = 'mcp:read';
export const SCOPE_WRITE = 'mcp:write';
export const SCOPES = [SCOPE_READ, SCOPE_WRITE] as const;

/** Who an MCP request acts as: the user (current roles), the scopes granted, and the grant a session is bound to. */
export interface McpCaller {
  principal: Principal;
  scopes: ReadonlySet<string>;
  /** The OAuth grant (stable across refreshes) or the personal token's id: a session belongs to one. */
  grantId: string;
  clientId: string | null;
}

export type TokenKind = 'access' | 'refresh' | 'personal';

const MAX_TOKEN_LENGTH = 200;

export function parseToken(token: string): { tenantId: string; secret: string } | null {
  if (token.length > MAX_TOKEN_LENGTH) return null;
  const [prefix, tenantId, secret, extra] = token.split('.');
  if (prefix !== TOKEN_PREFIX || extra !== undefined || !isUuid(tenantId) || !secret || !/^[\w-]{20,}$/.test(secret)) return null;
  return { tenantId: tenantId.toLowerCase(), secret };
}

/** A new token's text and the hash stored for it. */
export function newToken(tenantId: string): { token: string; hash: string } {
  const secret = randomToken(32);
  return { token: `${TOKEN_PREFIX}.${tenantId}.${secret}`, hash: sha256(secret) };
}

/** Scopes as a set, refusing unknown ones (the empty request means every scope). */
export function readScopes(scope: string | undefined | null, path = 'scope'): string[] {
  const asked = (scope ?? '').split(' ').filter(Boolean);
  if (asked.length === 0) return [...SCOPES];
  const unknown = asked.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (unknown.length) throw badRequest(`Unknown scope ${unknown.join(', ')}; the scopes are ${SCOPES.join(' and ')}.`, [{ path, message: 'unknown scope' }]);
  return [...new Set(asked)];
}

/**
 * The caller of an MCP request: the token must be an access or personal token of a live user, not
 * expired or revoked, issued for exactly this resource, and of the tenant the request names (if it names one).
 */
export async function verifyMcpToken(ctx: AppContext, token: string, resource: string, addressedTenantId: string | null): Promise<McpCaller> {
  const parsed = parseToken(token);
  if (!parsed) throw unauthorized('The bearer token is not an Atrium MCP token.');
  if (addressedTenantId && addressedTenantId !== parsed.tenantId) throw unauthorized('The token is for another tenant.');
  const row = await ctx.db.readAsTenant(parsed.tenantId, (db) =>
    db
      .selectFrom('mcp_tokens')
      .select(['id', 'kind', 'user_id', 'resource', 'scope', 'expires_on_utc', 'revoked_on_utc', 'grant_id', 'client_id'])
      .where('token_hash', '=', sha256(parsed.secret))
      .executeTakeFirst(),
  );
  if (!row || row.kind === 'refresh' || row.revoked_on_utc || (row.expires_on_utc && row.expires_on_utc.getTime() < Date.now())) {
    throw unauthorized('The token is unknown, expired or revoked.');
  }
  if (row.resource !== resource) throw unauthorized(`The token was issued for another resource (${row.resource}), not ${resource}.`);
  const principal = await ctx.auth.actAsUser(
    { tenantId: parsed.tenantId, appId: null, userId: null, userName: null, roles: new Set(), via: 'token' },
    row.user_id,
  );
  return { principal, scopes: new Set(row.scope.split(' ')), grantId: row.grant_id ?? row.id, clientId: row.client_id };
}

export interface PersonalTokenInput {
  name: string;
  userId: string;
  scopes: string[];
  expiresInDays: number | null;
  resource: string;
}

export interface PersonalTokenView {
  Id: string;
  Name: string;
  UserId: string;
  Scopes: string[];
  Resource: string;
  ExpiresOn: string | null;
  CreatedOn: string;
  CreatedById: string | null;
  RevokedOn: string | null;
}

const viewOf = (r: {
  id: string;
  name: string | null;
  user_id: string;
  scope: string;
  resource: string;
  expires_on_utc: Date | null;
  created_on_utc: Date;
  created_by_id: string | null;
  revoked_on_utc: Date | null;
}): PersonalTokenView => ({
  Id: r.id,
  Name: r.name ?? '',
  UserId: r.user_id,
  Scopes: r.scope.split(' '),
  Resource: r.resource,
  ExpiresOn: r.expires_on_utc?.toISOString() ?? null,
  CreatedOn: r.created_on_utc.toISOString(),
  CreatedById: r.created_by_id,
  RevokedOn: r.revoked_on_utc?.toISOString() ?? null,
});

const PERSONAL_COLUMNS = ['id', 'name', 'user_id', 'scope', 'resource', 'expires_on_utc', 'created_on_utc', 'created_by_id', 'revoked_on_utc'] as const;
/** Live personal tokens a tenant may hold: creating more is refused (a hostile Administrator cannot grow the table without end). */
export const MAX_PERSONAL_TOKENS = 1000;

export async function createPersonalToken(trx: Trx, actor: Principal, input: PersonalTokenInput): Promise<PersonalTokenView & { Token: string }> {
  const user = await trx.selectFrom('users').select(['id', 'is_active']).where('id', '=', input.userId).executeTakeFirst();
  if (!user?.is_active)
    throw new HttpProblem(422, 'UserId is not an active user of this tenant.', { errors: [{ path: '/body/UserId', message: 'no such user' }] });
  const { count } = await trx
    .selectFrom('mcp_tokens')
    .select((eb) => eb.fn.countAll<string>().as('count'))
    .where('kind', '=', 'personal')
    .where('revoked_on_utc', 'is', null)
    .executeTakeFirstOrThrow();
  if (Number(count) >= MAX_PERSONAL_TOKENS)
    throw new HttpProblem(409, `The tenant holds ${MAX_PERSONAL_TOKENS} live personal access tokens; revoke some first.`);
  const { token, hash } = newToken(actor.tenantId);
  const row = await trx
    .insertInto('mcp_tokens')
    .values({
      tenant_id: actor.tenantId,
      token_hash: hash,
      kind: 'personal',
      user_id: input.userId,
      resource: input.resource,
      scope: input.scopes.join(' '),
      name: input.name,
      created_by_id: actor.userId,
      expires_on_utc: input.expiresInDays === null ? null : new Date(Date.now() + input.expiresInDays * 86_400_000),
    })
    .returning(PERSONAL_COLUMNS)
    .executeTakeFirstOrThrow();
  return { ...viewOf(row), Token: token };
}

export async function listPersonalTokens(trx: Trx, skip: number, take: number): Promise<PersonalTokenView[]> {
  const rows = await trx
    .selectFrom('mcp_tokens')
    .select(PERSONAL_COLUMNS)
    .where('kind', '=', 'personal')
    .orderBy('created_on_utc', 'desc')
    .orderBy('id')
    .offset(skip)
    .limit(take)
    .execute();
  return rows.map(viewOf);
}

export async function revokePersonalToken(trx: Trx, id: string): Promise<void> {
  const row = await trx
    .updateTable('mcp_tokens')
    .set({ revoked_on_utc: new Date() })
    .where('id', '=', id)
    .where('kind', '=', 'personal')
    .where('revoked_on_utc', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!row) throw notFound(`No live personal access token ${id}.`);
}
