// The authorization server's HTTP face: its metadata (RFC 8414), registration, the authorization
// endpoint (which sends the user to the console's sign-in and consent page), the token and revocation
// endpoints (form-encoded, OAuth errors as RFC 6749 says), and the two API calls the consent page makes
// as the signed-in user. HTTP only; oauth.ts does the rest.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { AppContext } from '../platform/context.ts';
import { HttpProblem } from '../platform/errors.ts';
import type { App } from '../platform/http/app.ts';
import { requestOrigin } from '../platform/http/public-address.ts';
import { RateLimiter } from '../platform/http/rate-limit.ts';
import { nullable } from '../platform/http/schemas.ts';
import { requirePrincipal } from '../platform/http/tenant-seam.ts';
import {
  type AuthorizationRequest,
  type CheckedRequest,
  checkAuthorizationRequest,
  exchangeCode,
  issueCode,
  OAuthError,
  redirectBack,
  refreshTokens,
  registerClient,
  revokeToken,
} from './oauth.ts';
import { SCOPE_READ, SCOPE_WRITE, SCOPES } from './tokens.ts';

const SCOPE_TEXT: Record<string, string> = {
  [SCOPE_READ]: 'Read the named queries you may read (timesheets, jobs, projects…) and the documents your roles show, as you.',
  [SCOPE_WRITE]: 'Log time, comment on documents, move documents between stages and create jobs, as you.',
};
/** Client registrations per minute from one address (they cost a row each). */
/** What the consent page shows: the client asking, the tenant and user it would act for, and the scopes it asks. */
const ConsentDescription = Type.Object({
  client: Type.Object({ id: Type.String(), name: Type.String(), uri: nullable(Type.String()), redirectUri: Type.String() }),
  tenant: Type.Object({ id: Type.String(), name: Type.String(), slug: Type.String() }),
  user: Type.Object({ id: Type.String(), userName: Type.String(), roles: Type.Array(Type.String()) }),
  resource: Type.String(),
  scopes: Type.Array(Type.Object({ name: Type.String(), description: Type.String() })),
});
const ConsentDecision = Type.Object({
  redirectTo: Type.String({ description: 'Where the browser goes next: the client with a code, or with access_denied.' }),
});

const REGISTRATIONS_PER_MINUTE = 30;
const MAX_FORM_BYTES = 16 * 1024;

const AuthorizationQuery = Type.Object(
  {
    response_type: Type.Optional(Type.String({ maxLength: 50 })),
    client_id: Type.Optional(Type.String({ maxLength: 100 })),
    redirect_uri: Type.Optional(Type.String({ maxLength: 2000 })),
    code_challenge: Type.Optional(Type.String({ maxLength: 200 })),
    code_challenge_method: Type.Optional(Type.String({ maxLength: 20 })),
    state: Type.Optional(Type.String({ maxLength: 1000 })),
    scope: Type.Optional(Type.String({ maxLength: 200 })),
    resource: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: true },
);

function sendOAuthError(reply: FastifyReply, err: OAuthError) {
  return reply.code(err.status).header('cache-control', 'no-store').send({ error: err.error, error_description: err.message });
}

export async function oauthRoutes(app: App, ctx: AppContext): Promise<void> {
  const registrations = new RateLimiter(REGISTRATIONS_PER_MINUTE, ctx.db.pool);
  const issuerOf = (request: FastifyRequest) => requestOrigin(request);
  /** The MCP endpoints of this server: `{origin}/mcp` and `{origin}/t/{slug}/mcp`. */
  const ownResource = (request: FastifyRequest) => (resource: string) => {
    const origin = issuerOf(request);
    if (resource === `${origin}/mcp`) return { slug: null };
    const m = /^\/t\/([a-z0-9-]{1,63})\/mcp$/.exec(resource.startsWith(origin) ? resource.slice(origin.length) : '');
    return m ? { slug: m[1] } : null;
  };

  const doc = (operationId: string, summary: string) => ({ tags: ['OAuth (MCP)'], operationId, summary });
  app.get(
    '/.well-known/oauth-authorization-server',
    { schema: doc('oauth_metadata', 'Authorization server metadata (RFC 8414)'), config: { auth: 'none' } },
    async (request) => {
      const issuer = issuerOf(request);
      return {
        issuer,
        authorization_endpoint: `${issuer}/oauth/authorize`,
        token_endpoint: `${issuer}/oauth/token`,
        registration_endpoint: `${issuer}/oauth/register`,
        revocation_endpoint: `${issuer}/oauth/revoke`,
        scopes_supported: [...SCOPES],
        response_types_supported: ['code'],
        response_modes_supported: ['query'],
        grant_types_supported: ['authorization_code', 'refresh_token'],
        token_endpoint_auth_methods_supported: ['none'],
        revocation_endpoint_auth_methods_supported: ['none'],
        code_challenge_methods_supported: ['S256'],
        authorization_response_iss_parameter_supported: true,
        client_id_metadata_document_supported: false,
        service_documentation: `${issuer}/docs`,
      };
    },
  );

  // Form bodies (the token and revocation endpoints) are parsed only here, not across the API.
  await app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: MAX_FORM_BYTES }, (_req, body, done) => {
      const form: Record<string, string> = {};
      for (const [k, v] of new URLSearchParams(body as string)) if (!(k in form)) form[k] = v;
      done(null, form);
    });
    const formOf = (request: FastifyRequest): Record<string, string | undefined> => {
      const b = request.body;
      if (!b || typeof b !== 'object' || Array.isArray(b)) return {};
      return Object.fromEntries(Object.entries(b).map(([k, v]) => [k, typeof v === 'string' ? v : undefined]));
    };

    scope.post(
      '/oauth/register',
      { schema: doc('oauth_register', 'Dynamic client registration (RFC 7591): public clients with PKCE'), config: { auth: 'none' } },
      async (request, reply) => {
        const wait = await registrations.take(`oauth-register:${request.ip}`);
        if (wait > 0) throw new HttpProblem(429, `Too many registrations; retry after ${wait} seconds.`, { headers: { 'retry-after': String(wait) } });
        try {
          const client = await registerClient(ctx, request.body);
          return reply.code(201).header('cache-control', 'no-store').send(client);
        } catch (err) {
          if (err instanceof OAuthError) return sendOAuthError(reply, err);
          throw err;
        }
      },
    );

    scope.post(
      '/oauth/token',
      { schema: doc('oauth_token', 'Token endpoint (form): authorization_code with PKCE S256, refresh_token (rotated)'), config: { auth: 'none' } },
      async (request, reply) => {
        const form = formOf(request);
        try {
          const answer =
            form.grant_type === 'authorization_code'
              ? await exchangeCode(ctx, form)
              : form.grant_type === 'refresh_token'
                ? await refreshTokens(ctx, form)
                : (() => {
                    throw new OAuthError(400, 'unsupported_grant_type', 'grant_type must be authorization_code or refresh_token.');
                  })();
          return reply.header('cache-control', 'no-store').header('pragma', 'no-cache').send(answer);
        } catch (err) {
          if (err instanceof OAuthError) return sendOAuthError(reply, err);
          throw err;
        }
      },
    );

    scope.post(
      '/oauth/revoke',
      { schema: doc('oauth_revoke', 'Token revocation (RFC 7009); a refresh token ends its grant'), config: { auth: 'none' } },
      async (request, reply) => {
        await revokeToken(ctx, formOf(request));
        return reply.header('cache-control', 'no-store').send({});
      },
    );
  });

  // The authorization endpoint checks what it can before anyone signs in, then hands over to the console.
  app.get(
    '/oauth/authorize',
    {
      schema: {
        ...doc('oauth_authorize', 'Authorization endpoint: checks the request, then sends the browser to the console’s sign-in and consent page'),
        querystring: AuthorizationQuery,
      },
      config: { auth: 'none' },
    },
    async (request, reply) => {
      const q = request.query as AuthorizationRequest;
      let checked: CheckedRequest;
      try {
        checked = await checkAuthorizationRequest(ctx, q, ownResource(request));
      } catch (err) {
        if (!(err instanceof OAuthError)) throw err;
        if ((err as OAuthError & { redirectable?: boolean }).redirectable === false) throw new HttpProblem(400, `${err.error}: ${err.message}`);
        const client = q.redirect_uri as string;
        return reply.redirect(redirectBack(client, { error: err.error, error_description: err.message, state: q.state }, issuerOf(request)), 302);
      }
      const query = new URLSearchParams(request.query as Record<string, string>).toString();
      const base = checked.slug ? `/t/${checked.slug}` : '';
      return reply.header('cache-control', 'no-store').redirect(`${base}/console/oauth/consent?${query}`, 302);
    },
  );

  // The consent page, as the signed-in user: what is asked, then the decision.
  const consentConfig = { auth: 'token' as const };
  const signedInUser = (request: FastifyRequest) => {
    const p = requirePrincipal(request);
    if (!p.userId || !p.userName || p.via !== 'token' || p.appId) throw new HttpProblem(403, 'Only a signed-in user may allow an MCP client.');
    return { ...p, userId: p.userId, userName: p.userName };
  };
  const checkFor = async (request: FastifyRequest, q: AuthorizationRequest): Promise<CheckedRequest> => {
    try {
      const checked = await checkAuthorizationRequest(ctx, q, ownResource(request));
      const p = signedInUser(request);
      if (checked.slug && (await ctx.auth.tenantIdForSlug(checked.slug)) !== p.tenantId) {
        throw new HttpProblem(409, `This client asks for the tenant "${checked.slug}": sign in to that tenant.`);
      }
      return checked;
    } catch (err) {
      if (err instanceof OAuthError) throw new HttpProblem(400, `${err.error}: ${err.message}`);
      throw err;
    }
  };

  app.get(
    '/api/v3/mcp/oauth/authorization',
    {
      config: consentConfig,
      schema: {
        tags: ['MCP'],
        operationId: 'mcpOAuth_describe',
        summary: 'What an MCP client asks for (the console’s consent page): client, tenant, user and scopes',
        querystring: AuthorizationQuery,
        response: { 200: ConsentDescription },
      },
    },
    async (request) => {
      const checked = await checkFor(request, request.query as AuthorizationRequest);
      const p = signedInUser(request);
      const tenant = await request.readTenant((trx) => trx.selectFrom('tenants').select(['name', 'slug']).executeTakeFirstOrThrow());
      return {
        client: { id: checked.client.id, name: checked.client.client_name, uri: checked.client.client_uri, redirectUri: checked.redirectUri },
        tenant: { id: p.tenantId, name: tenant.name, slug: tenant.slug },
        user: { id: p.userId, userName: p.userName, roles: [...p.roles] },
        resource: checked.resource,
        scopes: checked.scopes.map((s) => ({ name: s, description: SCOPE_TEXT[s] })),
      };
    },
  );

  app.post(
    '/api/v3/mcp/oauth/authorization',
    {
      config: consentConfig,
      schema: {
        tags: ['MCP'],
        operationId: 'mcpOAuth_decide',
        summary: 'Allow or deny an MCP client (the console’s consent page); answers where to send the browser',
        body: Type.Object({ request: AuthorizationQuery, allow: Type.Boolean() }, { additionalProperties: false }),
        response: { 200: ConsentDecision },
      },
    },
    async (request) => {
      const body = request.body as { request: AuthorizationRequest; allow: boolean };
      const checked = await checkFor(request, body.request);
      const p = signedInUser(request);
      const issuer = issuerOf(request);
      if (!body.allow)
        return {
          redirectTo: redirectBack(
            checked.redirectUri,
            { error: 'access_denied', error_description: 'The user denied the request.', state: checked.state },
            issuer,
          ),
        };
      const code = await request.writeTenant((trx) => issueCode(trx, p, checked));
      return { redirectTo: redirectBack(checked.redirectUri, { code, state: checked.state }, issuer) };
    },
  );
}
