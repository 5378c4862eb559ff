// The Fastify app factory: schema-first routes (TypeBox), auth per route, problem+json errors,
// one log line per request, metrics, OpenAPI at /openapi.json and the reference at /docs.

import { randomUUID, timingSafeEqual } from 'node:crypto';
import type { BuildCompilerFromPool } from '@fastify/ajv-compiler';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController, type RouteOptions } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { AppContext } from '../context.ts';
import { HttpProblem, unauthorized } from '../errors.ts';
import { traceLogMixin } from '../tracing.ts';
import { boundedValidatorFactory } from './bounded-validation.ts';
import { keepPrincipal, keptPrincipal } from './connection-principal.ts';
import { sendProblem, toProblem } from './errors.ts';
import { sendJsonWithEtag } from './etag.ts';
import { recordExamples } from './example-recorder.ts';
import { clientErrorHandler, depthLimitedJsonParser, frameworkErrors, rejectUnsafeText } from './input-guard.ts';
import { Metrics } from './metrics.ts';
import { registerHttpNiceties } from './niceties.ts';
import { documentRoute, openApiComponents, referenceComponents, withDocumentedResponses } from './openapi.ts';
import { proxyTrust } from './public-address.ts';
import { RateLimiter } from './rate-limit.ts';
import { takeReadOnly } from './read-only.ts';
import { addressedTenant, basePathOf, hostSlugMatcher, namesOf, rewriteTenantPath } from './tenant-address.ts';
import { checkRoles, registerTenantSeam, rolesOf } from './tenant-seam.ts';
import { ignoredHeader, tolerateBody } from './tolerant-body.ts';
import { annotateRoute, annotateTenant, requestTraceIds, tracedServerFactory } from './tracing.ts';

/** How a route authenticates. `appOrToken` is the default for every /api route; `scim` takes only a SCIM bearer token. */
export type AuthMode = 'none' | 'app' | 'token' | 'appOrToken' | 'admin' | 'scim';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthMode;
    /** Advice appended to a 504, e.g. "narrow the query with filters and page it". */
    timeoutAdvice?: string;
    /**
     * Properties the resource's GET answers and this write does not take, each with the reason: sent back
     * (a client round-tripping what it read), they are left out and listed, with the reason, in
     * X-Read-Only-Properties rather than among the unknown ones (read-only.ts).
     */
    readOnly?: Readonly<Record<string, string>>;
  }
  interface FastifyInstance {
    routeList: RouteInfo[];
  }
  interface FastifyRequest {
    principal: Principal | null;
    deadline: number;
    /** The tenant the request names by X-AppTenant, base path or Host (checked to agree); null: none. */
    addressedTenantId: string | null;
  }
}

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  import('fastify').FastifyBaseLogger,
  TypeBoxTypeProvider
>;

export interface RouteInfo {
  method: string;
  url: string;
  auth: AuthMode;
  /** Static roles from `config.roles` (any one of them). */
  roles: readonly string[];
}

// Error lists bounded whatever the request holds (bounded-validation.ts). Query strings, path parameters and
// headers are text: `take=20` is coerced to the integer its schema asks for, `dryRun=true` to a boolean. Bodies
// are JSON and keep their types (a "1" is no number there).
const boundedValidators = boundedValidatorFactory() as unknown as BuildCompilerFromPool;

const coercingOutsideBody: BuildCompilerFromPool = (externalSchemas, options) => {
  const strict = boundedValidators(externalSchemas, options);
  const coercing = boundedValidators(externalSchemas, { ...options, customOptions: { ...options?.customOptions, coerceTypes: true } } as typeof options);
  return (route) => ((route as unknown as { httpPart?: string }).httpPart === 'body' ? strict(route) : coercing(route));
};

export async function buildApp(ctx: AppContext, registerSurfaces: (app: App) => Promise<void>): Promise<App> {
  const { config } = ctx;
  const trustedProxy = proxyTrust(config.trustProxy);
  const app = Fastify({
    // ATRIUM_TRUST_PROXY: request.protocol / host / ip honour X-Forwarded-* only from these peers.
    trustProxy: config.trustProxy === false ? false : (address: string) => trustedProxy(address),
    logger: {
      level: config.logLevel,
      redact: { paths: ['req.headers["x-appsecret"]', 'req.headers.authorization', 'req.headers["x-accesstoken"]'], censor: '[redacted]' },
      ...(config.tracing ? { mixin: traceLogMixin } : {}),
      ...(ctx.logDestination ? { stream: ctx.logDestination } : {}),
    },
    // Traced: each request runs inside its SERVER span (http/tracing.ts); untraced, Fastify makes its own server.
    ...(config.tracing ? { serverFactory: tracedServerFactory } : {}),
    // One line per request, written by our onResponse hook (with tenant and duration).
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimitBytes,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    },
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, allErrors: true } },
    schemaController: { compilersFactory: { buildValidator: coercingOutsideBody } },
    // Repeated slashes are one (the platform's Postman collection addresses `named-query//DE-Departments`).
    routerOptions: { ignoreTrailingSlash: true, ignoreDuplicateSlashes: true, caseSensitive: false },
    // `/t/{slug}/…` names the tenant and is then routed as `/…`, so every route answers under it.
    rewriteUrl: rewriteTenantPath,
    forceCloseConnections: 'idle',
    frameworkErrors,
    clientErrorHandler,
  }).withTypeProvider<TypeBoxTypeProvider>();

  const defaultJsonParser = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, depthLimitedJsonParser(defaultJsonParser));
  app.addHook('preValidation', rejectUnsafeText);

  const metrics = new Metrics(ctx);
  const limiter = new RateLimiter(config.rateLimitPerMinute, ctx.db.pool);
  const routes: RouteInfo[] = [];
  app.decorate('routeList', routes);
  app.decorateRequest('principal', null);
  app.decorateRequest('deadline', 0);
  app.decorateRequest('addressedTenantId', null);
  const hostSlug = hostSlugMatcher(config.tenantHostPattern);
  app.decorate('publicAddress', {
    trusted: trustedProxy,
    publicUrl: config.publicUrlExplicit ? config.publicUrl : null,
  });
  registerTenantSeam(app, ctx.db);

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Atrium',
        version: '0.1.0',
        description: 'Data Extraction, Integration, Custom Tables and Webhook APIs of an agency workflow platform. Errors are RFC 9457 problem+json.',
        // The API of a private deployment: its terms are the operator's.
        license: { name: 'Proprietary: the terms of the deployment operator', url: 'https://example.com/atrium/terms' },
      },
      components: openApiComponents as never,
    },
    transform: withDocumentedResponses as never,
    transformObject: referenceComponents as never,
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { deepLinking: true },
    transformSpecificationClone: false,
    transformSpecification: (document: Record<string, unknown>, request: FastifyRequest) =>
      withServer(document, request, config.publicUrlExplicit ? config.publicUrl : null),
  });
  await registerHttpNiceties(app, config);

  app.addHook('onRoute', (route: RouteOptions) => {
    const url = route.url ?? '';
    const isDocs = url.startsWith('/docs');
    const auth: AuthMode =
      (route.config as { auth?: AuthMode } | undefined)?.auth ?? (url.startsWith('/api') || url.startsWith('/odata') ? 'appOrToken' : 'none');
    route.config = { ...(route.config ?? {}), auth };
    if (isDocs) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) if (m !== 'HEAD') routes.push({ method: m, url, auth, roles: rolesOf(route) });
    documentRoute(route, auth);
  });

  app.addHook('onRequest', async (request, reply) => {
    request.deadline = Date.now() + config.requestTimeoutMs;
    reply.header('x-request-id', request.id);
    if (config.tracing) annotateRoute(request, request.routeOptions.url ?? 'unmatched');
    const auth = request.routeOptions.config.auth ?? 'none';
    if (auth !== 'admin') {
      const named = addressedTenant(namesOf(request, hostSlug), (slug) => ctx.auth.tenantIdForSlug(slug));
      request.addressedTenantId = typeof named === 'object' && named !== null ? await named : named;
    }
    if (auth === 'none') return;
    if (auth === 'admin') {
      const header = request.headers.authorization ?? '';
      const given = Buffer.from(header.replace(/^Bearer\s+/i, ''));
      const expected = Buffer.from(config.adminToken ?? '');
      if (!config.adminToken || given.length !== expected.length || !timingSafeEqual(given, expected)) throw unauthorized();
      return;
    }
    // App headers the connection sent before, verified under the current generation: the same principal.
    const h = request.headers;
    const credentials = usesAppHeaders(request, auth)
      ? { tenantId: request.addressedTenantId, appId: h['x-appid'], secret: h['x-appsecret'], appUser: h['x-appuser'] }
      : null;
    const socket = request.raw.socket;
    const kept = credentials ? keptPrincipal(socket, credentials, ctx.auth.generation, Date.now()) : null;
    let rateKey: string;
    if (kept) {
      request.principal = kept.principal;
      rateKey = kept.rateKey;
    } else {
      const generation = ctx.auth.generation;
      const p = await authenticate(ctx, request, auth);
      request.principal = p;
      rateKey = `${p.tenantId}:${p.appId ?? p.userId ?? (p.scimTokenId ? `scim:${p.scimTokenId}` : null)}`;
      if (credentials) keepPrincipal(socket, credentials, generation, p, rateKey);
    }
    if (config.tracing) annotateTenant(request, request.principal.tenantId);
    const taken = limiter.take(rateKey);
    const retryAfter = typeof taken === 'number' ? taken : await taken;
    if (retryAfter > 0) {
      throw new HttpProblem(429, `Too many requests; retry after ${retryAfter} seconds.`, { headers: { 'retry-after': String(retryAfter) } });
    }
    checkRoles(request);
  });

  // Platform bodies are read as the platform reads them (tolerant-body.ts); the operator API stays strict.
  app.addHook('preValidation', async (request, reply) => {
    const schema = request.routeOptions.schema?.body;
    if (!schema || request.body === null || typeof request.body !== 'object' || request.routeOptions.url?.startsWith('/admin')) return;
    const readOnly = request.routeOptions.config.readOnly;
    if (readOnly) {
      const listed = takeReadOnly(request.body, readOnly);
      if (listed.length) reply.header('x-read-only-properties', ignoredHeader(listed));
    }
    const { body, ignored } = tolerateBody(request.body, schema);
    request.body = body;
    if (ignored.length) reply.header('x-ignored-properties', ignoredHeader(ignored));
  });

  // A request that outlives its deadline answers 504 even if the handler is stuck outside the database.
  app.addHook('preHandler', async (request, reply) => {
    const timer = setTimeout(
      () => {
        if (!reply.sent) {
          sendProblem(reply, request, new HttpProblem(504, timeoutDetail(request, config.requestTimeoutMs)));
        }
      },
      Math.max(1, request.deadline - Date.now() + 1000),
    );
    timer.unref();
    reply.raw.once('close', () => clearTimeout(timer));
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    metrics.observe(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
    request.log.info(
      {
        method: request.method,
        url: request.url.split('?')[0],
        route,
        statusCode: reply.statusCode,
        tenantId: request.principal?.tenantId,
        durationMs: Math.round(reply.elapsedTime * 10) / 10,
        // onResponse runs when the socket is done, outside the request's context: its span is named here.
        ...(config.tracing ? requestTraceIds(request) : {}),
      },
      'request',
    );
  });

  if (config.recordExamplesDir) recordExamples(app, config.recordExamplesDir);

  app.setErrorHandler((error, request, reply) => sendProblem(reply, request, toProblem(error, request, timeoutDetail(request, config.requestTimeoutMs))));
  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, request, new HttpProblem(404, `No route ${request.method} ${request.originalUrl.split('?')[0]}.`)),
  );

  app.get('/metrics', { schema: { hide: true }, config: { auth: 'none' } }, async (_request, reply) => {
    reply.type(metrics.contentType);
    return metrics.render();
  });
  app.get('/openapi.json', { schema: { hide: true }, config: { auth: 'none' } }, async (request, reply) =>
    sendJsonWithEtag(request, reply, withServer(app.swagger(), request, config.publicUrlExplicit ? config.publicUrl : null)),
  );

  await registerSurfaces(app);
  return app;
}

/**
 * The document's server: ATRIUM_PUBLIC_URL when set (the address clients use), else "/" (the address the
 * document was fetched from); under a tenant base path the reference's "try it out" calls stay under it.
 */
function withServer<T extends object>(document: T, request: FastifyRequest, publicUrl: string | null): T {
  const base = basePathOf(request) ?? '';
  const url = `${publicUrl ?? ''}${base}` || '/';
  return { ...document, servers: [{ url, description: publicUrl ? 'This deployment (ATRIUM_PUBLIC_URL)' : 'This deployment' }] };
}

function timeoutDetail(request: FastifyRequest, limitMs: number): string {
  const advice = request.routeOptions.config.timeoutAdvice;
  return `The request did not finish within the ${limitMs / 1000}-second execution limit and was cancelled.${advice ? ` ${advice}` : ''}`;
}

/** Whether the request authenticates by app headers (X-AppId, X-AppSecret) under this mode, rather than by a token. */
function usesAppHeaders(request: FastifyRequest, mode: AuthMode): boolean {
  const h = request.headers;
  return mode === 'app' || (mode === 'appOrToken' && (h['x-appid'] !== undefined || h['x-appsecret'] !== undefined));
}

export async function authenticate(ctx: AppContext, request: FastifyRequest, mode: AuthMode): Promise<Principal> {
  const h = request.headers;
  const bearer = typeof h.authorization === 'string' && /^Bearer\s+/i.test(h.authorization) ? h.authorization.replace(/^Bearer\s+/i, '') : undefined;
  const token = (typeof h['x-accesstoken'] === 'string' ? h['x-accesstoken'] : undefined) ?? bearer;
  if (usesAppHeaders(request, mode)) {
    return ctx.auth.authenticateApp(request.addressedTenantId, h['x-appid'], h['x-appsecret'], h['x-appuser']);
  }
  if (!token) throw unauthorized();
  if (mode === 'scim') return ctx.auth.verifyScimToken(bearer ?? '', request.addressedTenantId);
  const principal = await ctx.auth.verifyAccessToken(token);
  // A token is for one tenant; a request that names another is refused like an unknown tenant.
  if (request.addressedTenantId && request.addressedTenantId !== principal.tenantId) throw unauthorized();
  return principal;
}

export type { FastifyReply, FastifyRequest };
