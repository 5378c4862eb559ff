// The OpenAPI document as SDK generators want it: a stable operationId and a 2xx answer on every
// operation, shared shapes as named components.schemas, errors as application/problem+json and the
// security of every route declared. Route schemas stay plain TypeBox (validation and types untouched);
// a shape named with `named()` is replaced by a $ref wherever the generated document repeats it.
import type { RouteOptions } from 'fastify';
import type { TSchema } from 'typebox';
import type { AuthMode } from './app.ts';
import { withExamples } from './openapi-examples.ts';
import { ProblemSchema } from './problem.ts';
import { rolesOf } from './tenant-seam.ts';

const ERROR_STATUSES = ['400', '401', '403', '404', '409', '413', '415', '422', '429', '500', '504'];
const COMPONENTS = '#/components/schemas/';
const PROBLEM_DESCRIPTION = 'Problem details (RFC 9457)';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Answers shown in the document only, for a route whose answers are written as they are (not serialized by a schema). */
    documentedResponses?: Record<string, unknown>;
  }
}

const registry = new Map<string, { schema: TSchema; json: string }>();

/** Names a shared shape: it becomes components.schemas[name] and every copy of it in the document a $ref. */
export function named<T extends TSchema>(name: string, schema: T): T {
  const json = JSON.stringify(schema);
  const known = registry.get(name);
  if (known && known.json !== json) throw new Error(`Two different schemas are named ${name} in the OpenAPI document.`);
  registry.set(name, { schema, json });
  return schema;
}

const { $id: _problemId, ...problemSchema } = ProblemSchema as typeof ProblemSchema & { $id?: string };
named('Problem', problemSchema as TSchema);

/** components for @fastify/swagger; `schemas` is read when the document is built, after every route has named its shapes. */
export const openApiComponents = {
  securitySchemes: {
    AppTenant: { type: 'apiKey', in: 'header', name: 'X-AppTenant', description: 'Tenant id or slug (or the base path /t/{slug}, or the host)' },
    AppId: { type: 'apiKey', in: 'header', name: 'X-AppId' },
    AppSecret: { type: 'apiKey', in: 'header', name: 'X-AppSecret' },
    AccessToken: { type: 'apiKey', in: 'header', name: 'X-AccessToken' },
    Bearer: { type: 'http', scheme: 'bearer', description: 'An access token of POST /api/auth/token (or, for /admin, ATRIUM_ADMIN_TOKEN)' },
    ScimToken: { type: 'http', scheme: 'bearer', description: 'A SCIM token of the tenant (POST /api/v3/scim/tokens), for /scim/v2' },
    Basic: { type: 'http', scheme: 'basic', description: 'OData feed: user <tenantId>:<appId> (or <slug>:<appId>), password the app secret' },
  },
  get schemas(): Record<string, TSchema> {
    return Object.fromEntries([...registry].map(([name, { schema }]) => [name, schema]));
  },
};

type Security = Record<string, string[]>[];

/** What a route's auth mode means in the document; the OData feed authenticates itself with Basic or a bearer token. */
export function securityOf(auth: AuthMode, url: string): Security {
  if (url.startsWith('/odata')) return [{ Basic: [] }, { Bearer: [] }];
  const app = { AppTenant: [], AppId: [], AppSecret: [] };
  if (auth === 'app') return [app];
  if (auth === 'token') return [{ AccessToken: [] }, { Bearer: [] }];
  if (auth === 'appOrToken') return [app, { AccessToken: [] }, { Bearer: [] }];
  if (auth === 'admin') return [{ Bearer: [] }];
  if (auth === 'scim') return [{ ScimToken: [] }];
  return [];
}

/**
 * A route without its own operationId gets one from its method and URL, e.g. GET /api/users/:id ->
 * get_usersById: deterministic, so a generated client keeps its method names across releases.
 */
export function derivedOperationId(method: string, url: string): string {
  const words = url
    .split('/')
    .filter((s) => s && !/^(api|v\d+)$/.test(s))
    .map((s) => (s.startsWith(':') ? `by-${s.slice(1)}` : s.replace(/^\$/, '')))
    .flatMap((s) => s.split(/[^A-Za-z0-9]+/))
    .filter(Boolean);
  const camel = words.map((w, i) => (i === 0 ? w[0].toLowerCase() : w[0].toUpperCase()) + w.slice(1)).join('');
  return `${method.toLowerCase()}_${camel || 'root'}`;
}

/** Completes a route's schema for the document: operationId, a 2xx answer, problem+json errors, security. */
export function documentRoute(route: RouteOptions, auth: AuthMode): void {
  const url = route.url ?? '';
  const method = (Array.isArray(route.method) ? route.method[0] : route.method) as string;
  const schema = (route.schema ?? {}) as Record<string, unknown>;
  const response = { ...((schema.response as Record<string, unknown>) ?? {}) };
  const documented = Object.keys(route.config?.documentedResponses ?? {});
  if (![...documented, ...Object.keys(response)].some((s) => s.startsWith('2'))) response['200'] = { description: 'Success' };
  for (const status of ERROR_STATUSES) {
    if (!(status in response)) response[status] = { description: PROBLEM_DESCRIPTION, content: { 'application/problem+json': { schema: problemSchema } } };
  }
  route.schema = {
    ...schema,
    description: (schema.description as string | undefined) ?? describedOperation(schema.summary as string | undefined, method, url, auth, rolesOf(route)),
    operationId: (schema.operationId as string | undefined) ?? derivedOperationId(method, url),
    response,
    security: securityOf(auth, url),
  };
}

const AUTH_TEXT: Record<AuthMode, string> = {
  none: 'No authentication.',
  app: 'Authenticated by the app headers (X-AppTenant, X-AppId, X-AppSecret).',
  token: 'Authenticated by an access token (X-AccessToken or Authorization: Bearer).',
  appOrToken: 'Authenticated by the app headers or an access token.',
  admin: 'Operator API: Authorization: Bearer ATRIUM_ADMIN_TOKEN.',
  scim: 'SCIM: Authorization: Bearer with a SCIM token of the tenant (POST /api/v3/scim/tokens).',
};

/** An operation without a description of its own: its summary, how it authenticates and the roles it needs. */
export function describedOperation(summary: string | undefined, method: string, url: string, auth: AuthMode, roles: readonly string[]): string {
  const what = summary ? `${summary.replace(/\.$/, '')}.` : `${method} ${url}.`;
  const needs = roles.length ? ` Needs one of the roles ${roles.join(', ')}.` : '';
  return `${what} ${AUTH_TEXT[auth]}${needs} Errors are problem+json (RFC 9457).`;
}

/** @fastify/swagger's transform: a route's documentedResponses join its schema's answers in the document. */
export function withDocumentedResponses({ schema, url, route }: { schema: object; url: string; route: RouteOptions }): { schema: object; url: string } {
  const documented = route.config?.documentedResponses;
  if (!documented) return { schema, url };
  const { response, ...rest } = schema as { response?: Record<string, unknown> };
  return { schema: { ...rest, response: { ...documented, ...response } }, url };
}

/**
 * @fastify/swagger's transformObject: every subtree equal to a named component becomes a $ref to it, and
 * the problem answer every operation repeats is one components.responses.Problem.
 */
export function referenceComponents<T extends { paths?: object; components?: { schemas?: Record<string, unknown> } }>({
  openapiObject,
}: {
  openapiObject: T;
}): T {
  const schemas = openapiObject.components?.schemas ?? {};
  const byJson = new Map(Object.entries(schemas).map(([name, s]) => [JSON.stringify(s), name]));
  const replace = (node: unknown, self?: string): unknown => {
    if (Array.isArray(node)) return node.map((n) => replace(n));
    if (node === null || typeof node !== 'object') return node;
    const name = byJson.get(JSON.stringify(node));
    if (name && name !== self) return { $ref: `${COMPONENTS}${name}` };
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, replace(v)]));
  };
  const problem = { description: PROBLEM_DESCRIPTION, content: { 'application/problem+json': { schema: { $ref: `${COMPONENTS}Problem` } } } };
  const problemJson = JSON.stringify(problem);
  const paths = replace(openapiObject.paths ?? {}) as Record<string, Record<string, { responses?: Record<string, unknown> }>>;
  for (const item of Object.values(paths)) {
    for (const op of Object.values(item)) {
      for (const [status, answer] of Object.entries(op.responses ?? {})) {
        if (JSON.stringify(answer) === problemJson) (op.responses as Record<string, unknown>)[status] = { $ref: '#/components/responses/Problem' };
      }
    }
  }
  const components = {
    ...openapiObject.components,
    schemas: Object.fromEntries(Object.entries(schemas).map(([n, s]) => [n, replace(s, n)])),
    responses: { Problem: problem },
  };
  return withExamples({ ...(replace({ ...openapiObject, paths: undefined, components: undefined }) as T), paths, components });
}
