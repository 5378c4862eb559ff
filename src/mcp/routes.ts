// The MCP endpoint (Streamable HTTP at /mcp, and /t/{slug}/mcp for a tenant's own address), its
// protected-resource metadata (RFC 9728), and the personal access tokens an Administrator creates for
// headless clients. HTTP only: the SDK's transport speaks the protocol, server.ts answers it.

import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { isAdministrator } from '../platform/auth/principal.ts';
import type { AppContext } from '../platform/context.ts';
import { HttpProblem } from '../platform/errors.ts';
import type { App } from '../platform/http/app.ts';
import { named } from '../platform/http/openapi.ts';
import { requestOrigin } from '../platform/http/public-address.ts';
import { RateLimiter } from '../platform/http/rate-limit.ts';
import { Guid } from '../platform/http/schemas.ts';
import { basePathOf, requestBaseUrl } from '../platform/http/tenant-address.ts';
import { requirePrincipal } from '../platform/http/tenant-seam.ts';
import { oauthRoutes } from './oauth-routes.ts';
import { Sessions } from './sessions.ts';
import { createPersonalToken, listPersonalTokens, type McpCaller, readScopes, revokePersonalToken, SCOPES, verifyMcpToken } from './tokens.ts';

/** The MCP endpoint's URL as this request reached it: the resource its tokens must be issued for. */
export const resourceOf = (request: FastifyRequest): string => `${requestBaseUrl(request)}/mcp`;

/** RFC 9728's metadata URL for a resource: the well-known name inserted before the resource's path. */
export function resourceMetadataUrl(request: FastifyRequest): string {
  return `${requestOrigin(request)}/.well-known/oauth-protected-resource${basePathOf(request)}/mcp`;
}

function unauthorizedMcp(request: FastifyRequest, detail: string, error = 'invalid_token'): HttpProblem {
  return new HttpProblem(401, detail, {
    headers: {
      'www-authenticate': `Bearer error="${error}", error_description="${detail.replace(/["\\]/g, '')}", resource_metadata="${resourceMetadataUrl(request)}", scope="${SCOPES.join(' ')}"`,
    },
  });
}

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const hostnameOf = (url: string): string | null => (URL.canParse(url) ? new URL(url).hostname : null);

/**
 * The MCP specification's DNS-rebinding rule: a browser's Origin must be this server's own, one of
 * ATRIUM_CORS_ORIGINS, or (for a server reached on loopback) a loopback page.
 */
export function originAllowed(origin: string, own: string, corsOrigins: readonly string[]): boolean {
  if (origin === own || corsOrigins.includes(origin)) return true;
  const ownHost = hostnameOf(own);
  const originHost = hostnameOf(origin);
  return ownHost !== null && originHost !== null && LOOPBACK.has(ownHost) && LOOPBACK.has(originHost);
}

const jsonRpcError = (reply: FastifyReply, status: number, code: number, message: string) =>
  reply.code(status).type('application/json').send({ jsonrpc: '2.0', error: { code, message }, id: null });

const isInitialize = (body: unknown): boolean =>
  (Array.isArray(body) ? body : [body]).some((m) => m !== null && typeof m === 'object' && (m as { method?: unknown }).method === 'initialize');

export async function mcpRoutes(app: App, ctx: AppContext): Promise<void> {
  const sessions = new Sessions(ctx);
  const limiter = new RateLimiter(ctx.config.mcpRateLimitPerMinute, ctx.db.pool);
  // Before the server waits for its connections: an open SSE stream would otherwise hold the close.
  app.addHook('preClose', async () => sessions.closeAll());
  app.decorate('mcpSessions', sessions);

  async function authenticate(request: FastifyRequest): Promise<{ caller: McpCaller; token: string }> {
    const header = request.headers.authorization;
    const token = typeof header === 'string' && /^Bearer\s+/i.test(header) ? header.replace(/^Bearer\s+/i, '').trim() : '';
    if (!token) throw unauthorizedMcp(request, 'Sign in: this MCP server needs an OAuth access token or a personal access token.', 'invalid_request');
    try {
      return { caller: await verifyMcpToken(ctx, token, resourceOf(request), request.addressedTenantId), token };
    } catch (err) {
      if (err instanceof HttpProblem && err.status === 401) throw unauthorizedMcp(request, err.message);
      throw err;
    }
  }

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    // DNS rebinding: a browser page of another origin may not drive the endpoint.
    const origin = request.headers.origin;
    if (typeof origin === 'string' && !originAllowed(origin, requestOrigin(request), ctx.config.corsOrigins)) {
      throw new HttpProblem(403, `Origin ${origin} may not call this MCP server.`);
    }
    const { caller, token } = await authenticate(request);
    const retryAfter = await limiter.take(`mcp:${caller.principal.tenantId}:${caller.principal.userId}`);
    if (retryAfter > 0)
      throw new HttpProblem(429, `Too many MCP requests; retry after ${retryAfter} seconds.`, { headers: { 'retry-after': String(retryAfter) } });

    const sessionId = request.headers['mcp-session-id'];
    let transport: StreamableHTTPServerTransport | undefined;
    let opened: Awaited<ReturnType<Sessions['open']>> | undefined;
    if (typeof sessionId === 'string' && sessionId) {
      transport = sessions.get(sessionId, caller)?.transport;
      if (!transport) return jsonRpcError(reply, 404, -32001, 'Session not found: initialize a new one.');
    } else if (request.method === 'POST' && isInitialize(request.body)) {
      opened = await sessions.open(caller);
      transport = opened.transport;
    } else {
      return jsonRpcError(reply, 400, -32000, 'Bad Request: send Mcp-Session-Id, or initialize a session first.');
    }
    (request.raw as typeof request.raw & { auth?: unknown }).auth = {
      token,
      clientId: caller.clientId ?? `personal:${caller.grantId}`,
      scopes: [...caller.scopes],
      extra: { caller },
    };
    reply.hijack();
    try {
      await transport.handleRequest(request.raw, reply.raw, request.body);
    } finally {
      await opened?.discardUnlessOpened();
    }
  };
  // JSON-RPC messages are small: a megabyte bounds a body long before the API's general limit.
  const mcpSchema = (method: string, summary: string) => ({
    tags,
    operationId: `mcp_${method}`,
    summary,
    description:
      'The MCP endpoint (Streamable HTTP, docs/mcp.md); also at /t/{slug}/mcp. Authorization: Bearer with an MCP OAuth access token or a personal access token; without one, 401 with WWW-Authenticate naming the protected-resource metadata.',
  });
  for (const [method, summary] of [
    ['POST', 'Send JSON-RPC messages (initialize opens a session; answers JSON or an SSE stream)'],
    ['GET', 'Open the session’s SSE stream (Last-Event-ID resumes it)'],
    ['DELETE', 'End the session named by Mcp-Session-Id'],
  ] as const) {
    // JSON-RPC messages are small: a megabyte bounds a body long before the API's general limit.
    app.route({ method, url: '/mcp', bodyLimit: 1024 * 1024, schema: mcpSchema(method.toLowerCase(), summary), config: { auth: 'none' }, handler: handle });
  }

  // RFC 9728, path-aware (/.well-known/oauth-protected-resource/t/{slug}/mcp) and at the root.
  const metadata = async (request: FastifyRequest) => {
    const origin = requestOrigin(request);
    const slug = (request.params as { slug?: string }).slug;
    const named = request.url.split('?')[0].endsWith('/mcp');
    const resource = slug ? `${origin}/t/${slug.toLowerCase()}/mcp` : named ? `${origin}/mcp` : `${requestBaseUrl(request)}/mcp`;
    return {
      resource,
      authorization_servers: [origin],
      scopes_supported: [...SCOPES],
      bearer_methods_supported: ['header'],
      resource_name: 'Atrium MCP server',
      resource_documentation: `${origin}/docs`,
    };
  };
  for (const [url, id] of [
    ['/.well-known/oauth-protected-resource', 'root'],
    ['/.well-known/oauth-protected-resource/mcp', 'mcp'],
    ['/.well-known/oauth-protected-resource/t/:slug/mcp', 'tenantMcp'],
  ] as const) {
    app.get(
      url,
      {
        schema: {
          tags,
          operationId: `mcp_protectedResource${id[0].toUpperCase()}${id.slice(1)}`,
          summary: 'OAuth protected-resource metadata of the MCP endpoint (RFC 9728)',
          ...(id === 'tenantMcp' ? { params: Type.Object({ slug: Type.String({ pattern: '^[A-Za-z0-9-]{1,63}$' }) }) } : {}),
        },
        config: { auth: 'none' },
      },
      metadata,
    );
  }

  await oauthRoutes(app, ctx);
  await personalTokenRoutes(app);
}

const tags = ['MCP'];
const config = { roles: ['Administrator'] as const };
const PersonalToken = named(
  'McpPersonalAccessToken',
  Type.Object({
    Id: Guid,
    Name: Type.String(),
    UserId: Guid,
    Scopes: Type.Array(Type.String()),
    Resource: Type.String({ description: 'The MCP endpoint the token is for (it is refused anywhere else)' }),
    ExpiresOn: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    CreatedOn: Type.String({ format: 'date-time' }),
    CreatedById: Type.Union([Guid, Type.Null()]),
    RevokedOn: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  }),
);

async function personalTokenRoutes(app: App): Promise<void> {
  app.post(
    '/api/v3/mcp/personal-access-tokens',
    {
      config,
      schema: {
        tags,
        operationId: 'mcpPersonalAccessTokens_create',
        summary: 'Create a personal access token for a headless MCP client; the token is shown once',
        description:
          'The token acts as UserId (default: the acting user) with the user’s roles, on the MCP endpoint of the address this request used ' +
          '(/mcp, or /t/{slug}/mcp) and nowhere else. Scopes: mcp:read (named-query tools, resources), mcp:write (write tools); default both.',
        body: Type.Object(
          {
            Name: Type.String({ minLength: 1, maxLength: 200 }),
            UserId: Type.Optional(Guid),
            Scopes: Type.Optional(Type.Array(Type.Union(SCOPES.map((s) => Type.Literal(s))), { minItems: 1, maxItems: 2 })),
            ExpiresInDays: Type.Optional(Type.Union([Type.Integer({ minimum: 1, maximum: 3660 }), Type.Null()], { description: 'Default 90; null: never' })),
          },
          { additionalProperties: false },
        ),
        response: {
          201: named(
            'McpPersonalAccessTokenCreated',
            Type.Object({ ...PersonalToken.properties, Token: Type.String({ description: 'Shown only in this answer' }) }),
          ),
        },
      },
    },
    async (request, reply) => {
      const actor = requirePrincipal(request);
      const userId = request.body.UserId ?? actor.userId;
      if (!userId) throw new HttpProblem(400, 'UserId is required when no user is acting.', { errors: [{ path: '/body/UserId', message: 'is required' }] });
      if (!isAdministrator(actor)) throw new HttpProblem(403, 'Needs the role Administrator.');
      const created = await request.writeTenant((trx) =>
        createPersonalToken(trx, actor, {
          name: request.body.Name,
          userId,
          scopes: readScopes(request.body.Scopes?.join(' '), '/body/Scopes'),
          expiresInDays: request.body.ExpiresInDays === undefined ? 90 : request.body.ExpiresInDays,
          resource: resourceOf(request),
        }),
      );
      reply.code(201).header('cache-control', 'no-store');
      return created;
    },
  );
  app.get(
    '/api/v3/mcp/personal-access-tokens',
    {
      config,
      schema: {
        tags,
        operationId: 'mcpPersonalAccessTokens_list',
        summary: 'The tenant’s personal access tokens (never the tokens themselves), newest first',
        querystring: Type.Object({
          skip: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
          take: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
        }),
        response: { 200: Type.Array(PersonalToken) },
      },
    },
    async (request) => request.readTenant((trx) => listPersonalTokens(trx, request.query.skip ?? 0, request.query.take ?? 100)),
  );
  app.delete(
    '/api/v3/mcp/personal-access-tokens/:id',
    {
      config,
      schema: {
        tags,
        operationId: 'mcpPersonalAccessTokens_revoke',
        summary: 'Revoke a personal access token (its sessions are refused from the next request)',
        params: Type.Object({ id: Guid }),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await request.writeTenant((trx) => revokePersonalToken(trx, request.params.id));
      return reply.code(204).send(null);
    },
  );
}

declare module 'fastify' {
  interface FastifyInstance {
    mcpSessions: Sessions;
  }
}
