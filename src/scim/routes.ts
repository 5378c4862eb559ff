// SCIM 2.0 service provider routes (RFC 7644) at /scim/v2 (and /t/{slug}/scim/v2), authenticated by a
// tenant's SCIM bearer token; and the tenant Administrator's routes for SCIM tokens and settings under
// /api/v3/scim. HTTP only: bodies are read and checked by the SCIM modules, whose errors (and every other
// failure) are answered in the SCIM error schema by this scope's error handler.
import { type TSchema, Type } from 'typebox';
import type { Principal } from '../platform/auth/principal.ts';
import type { AppContext } from '../platform/context.ts';
import type { Trx } from '../platform/db/database.ts';
import type { App, FastifyReply, FastifyRequest } from '../platform/http/app.ts';
import { IdempotencyHeaders, idempotent } from '../platform/http/idempotency.ts';
import { depthLimitedJsonParser } from '../platform/http/input-guard.ts';
import { named } from '../platform/http/openapi.ts';
import { requestBaseUrl } from '../platform/http/tenant-address.ts';
import { requirePrincipal } from '../platform/http/tenant-seam.ts';
import { type BulkOperation, type BulkResult, readBulk, runBulk } from './bulk.ts';
import { ERROR_SCHEMA, scimError, toScimError } from './errors.ts';
import { type AttrPath, type Filter, parseAttrPath, parseFilter } from './filter.ts';
import { createScimGroup, deleteScimGroup, getGroup, listGroups, patchScimGroup, replaceScimGroup, scimGroup } from './groups.ts';
import { type Doc, project, readAttributeList, scimUser } from './mapping.ts';
import { readPatchBody } from './patch.ts';
import { LIMITS, LIST_RESPONSE, resourceTypeDocuments, schemaDocuments, serviceProviderConfig } from './schemas.ts';
import { cachedSettings, createScimToken, effectiveSettings, listScimTokens, putSettings, revokeScimToken } from './settings.ts';
import { createUser, deleteUser, getUser, listUsers, patchScimUser, replaceUser, type Saved } from './users.ts';

export const SCIM_MEDIA_TYPE = 'application/scim+json';
const tags = ['SCIM 2.0'];

const ScimError = named(
  'ScimError',
  Type.Object({
    schemas: Type.Array(Type.String()),
    status: Type.String({ description: 'The HTTP status, as a string' }),
    scimType: Type.Optional(Type.String({ description: 'invalidFilter, invalidPath, invalidValue, invalidSyntax, mutability, uniqueness, noTarget, …' })),
    detail: Type.String(),
  }),
);
const errorAnswer = { description: `SCIM error (${ERROR_SCHEMA})`, content: { [SCIM_MEDIA_TYPE]: { schema: ScimError } } };
const ERROR_ANSWERS = Object.fromEntries(['400', '401', '403', '404', '409', '412', '413', '415', '422', '429', '500', '504'].map((s) => [s, errorAnswer]));
const Resource = Type.Object({}, { additionalProperties: true, description: 'A SCIM resource (see /scim/v2/Schemas)' });
const answers = (status: number, description: string) => ({ [status]: { description, content: { [SCIM_MEDIA_TYPE]: { schema: Resource } } } });
const scimConfig = (status: number, description: string) => ({ auth: 'scim' as const, documentedResponses: answers(status, description) });

const ListQuery = Type.Object(
  {
    filter: Type.Optional(Type.String({ description: 'A SCIM filter, e.g. userName eq "ana@example.com"' })),
    startIndex: Type.Optional(Type.String({ pattern: '^-?[0-9]{1,9}$', description: '1-based index of the first result' })),
    count: Type.Optional(Type.String({ pattern: '^-?[0-9]{1,9}$', description: `Results per page (at most ${LIMITS.maxResults})` })),
    sortBy: Type.Optional(Type.String({ maxLength: 200 })),
    sortOrder: Type.Optional(Type.String({ maxLength: 20, description: 'ascending or descending' })),
    attributes: Type.Optional(Type.String({ maxLength: 4000 })),
    excludedAttributes: Type.Optional(Type.String({ maxLength: 4000 })),
  },
  { additionalProperties: true },
);
const ProjectionQuery = Type.Object(
  { attributes: Type.Optional(Type.String({ maxLength: 4000 })), excludedAttributes: Type.Optional(Type.String({ maxLength: 4000 })) },
  { additionalProperties: true },
);
const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
const AnyBody = Type.Unsafe<unknown>({ description: 'A SCIM request body (application/scim+json or application/json)' });
const IfMatchHeaders = Type.Object({ 'if-match': Type.Optional(Type.String({ maxLength: 1000, description: 'A meta.version: 412 unless it is current' })) });

interface ListParams {
  filter: Filter | null;
  startIndex: number;
  count: number;
  sortBy: AttrPath | null;
  descending: boolean;
  attributes: string[] | null;
  excluded: string[] | null;
}

function intParam(value: string | undefined, name: string, fallback: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^-?[0-9]{1,9}$/.test(value)) throw scimError(400, 'invalidValue', `${name} must be an integer.`);
  return Number(value);
}

/** The list parameters of RFC 7644 §3.4.2 (query string or a /.search body), checked and bounded. */
function readListParams(q: Record<string, unknown>): ListParams {
  const s = (k: string): string | undefined => {
    const v = q[k];
    if (v === undefined || v === null) return undefined;
    if (typeof v === 'number') return String(v);
    if (Array.isArray(v) && (k === 'attributes' || k === 'excludedAttributes')) return v.join(',');
    if (typeof v !== 'string') throw scimError(400, 'invalidValue', `${k} must be a string.`);
    return v;
  };
  const filterText = s('filter');
  const sortByText = s('sortBy');
  const sortBy = sortByText ? parseAttrPath(sortByText) : null;
  if (sortByText && !sortBy) throw scimError(400, 'invalidValue', `sortBy "${sortByText}" is not an attribute path.`);
  const order = (s('sortOrder') ?? 'ascending').toLowerCase();
  if (order !== 'ascending' && order !== 'descending') throw scimError(400, 'invalidValue', 'sortOrder must be ascending or descending.');
  return {
    filter: filterText === undefined ? null : parseFilter(filterText),
    startIndex: Math.max(1, intParam(s('startIndex'), 'startIndex', 1)),
    count: Math.min(LIMITS.maxResults, Math.max(0, intParam(s('count'), 'count', LIMITS.maxResults))),
    sortBy,
    descending: order === 'descending',
    attributes: readAttributeList(s('attributes'), 'attributes'),
    excluded: readAttributeList(s('excludedAttributes'), 'excludedAttributes'),
  };
}

const wants = (p: { attributes: string[] | null; excluded: string[] | null }, attr: string): boolean => {
  const named = (list: string[]) => list.some((a) => (parseAttrPath(a)?.attr ?? '') === attr);
  if (p.attributes) return named(p.attributes);
  return !(p.excluded && named(p.excluded));
};

/** The answer as the handler returns it: a JSON string typed application/scim+json (Idempotency-Key stores it as is). */
function send(reply: FastifyReply, status: number, body: unknown, version?: string): never {
  if (version) reply.header('etag', version);
  reply.code(status).type(`${SCIM_MEDIA_TYPE}; charset=utf-8`);
  return JSON.stringify(body) as never;
}

const base = (request: FastifyRequest): string => `${requestBaseUrl(request)}/scim/v2`;
const ifMatch = (request: FastifyRequest): string | undefined => {
  const v = request.headers['if-match'];
  return typeof v === 'string' ? v : undefined;
};

export async function scimRoutes(app: App, ctx: AppContext): Promise<void> {
  await administrationRoutes(app, ctx);
  await app.register(
    async (scope) => {
      const parse = depthLimitedJsonParser(scope.getDefaultJsonParser('error', 'error'));
      scope.addContentTypeParser(SCIM_MEDIA_TYPE, { parseAs: 'string' }, parse);
      scope.setErrorHandler((error, request, reply) => {
        const e = toScimError(error, request);
        for (const [name, value] of Object.entries(e.headers)) reply.header(name, value);
        reply.send(send(reply, e.status, e.body));
      });
      scope.setNotFoundHandler((request, reply) => {
        reply.send(
          send(reply, 404, { schemas: [ERROR_SCHEMA], status: '404', detail: `No SCIM endpoint ${request.method} ${request.originalUrl.split('?')[0]}.` }),
        );
      });
      await serviceRoutes(scope as unknown as App, ctx);
    },
    { prefix: '/scim/v2' },
  );
}

async function serviceRoutes(app: App, ctx: AppContext): Promise<void> {
  /** A user write in one tenant transaction, then the logins of a deactivated user dropped from this process's caches. */
  const writeUser = async (request: FastifyRequest, fn: (trx: Trx, actor: Principal) => Promise<Saved>): Promise<Saved> => {
    const saved = await request.writeTenant(async (trx, actor) => fn(trx, { ...actor, userId: null }));
    if (saved.deactivated) ctx.auth.invalidateCaches();
    return saved;
  };
  const settingsOf = (trx: Trx, actor: Principal) => cachedSettings(trx, actor.tenantId);

  // Discovery ----------------------------------------------------------------------------------------
  const discovery = (path: string, summary: string, body: (b: string) => unknown) =>
    app.get(
      path,
      {
        config: scimConfig(200, summary),
        schema: { operationId: `scim${path.slice(1)}_${path === '/ServiceProviderConfig' ? 'get' : 'list'}`, tags, summary, response: ERROR_ANSWERS },
      },
      async (request, reply) => send(reply, 200, body(base(request))),
    );
  discovery('/ServiceProviderConfig', 'What this SCIM service supports and its limits', serviceProviderConfig);
  discovery('/ResourceTypes', 'The resource types: User (with the enterprise extension) and Group', (b) => listOf(resourceTypeDocuments(b)));
  discovery('/Schemas', 'The schemas and every attribute: what is kept, returned and accepted only', (b) => listOf(schemaDocuments(b)));
  app.get(
    '/ResourceTypes/:id',
    {
      config: scimConfig(200, 'One resource type'),
      schema: { operationId: 'scimResourceTypes_get', summary: 'One SCIM resource type', tags, params: IdParams, response: ERROR_ANSWERS },
    },
    async (request, reply) => {
      const found = resourceTypeDocuments(base(request)).find((r) => String(r.id).toLowerCase() === request.params.id.toLowerCase());
      if (!found) throw scimError(404, null, `No resource type ${request.params.id}.`);
      return send(reply, 200, found);
    },
  );
  app.get(
    '/Schemas/:id',
    {
      config: scimConfig(200, 'One schema'),
      schema: { operationId: 'scimSchemas_get', summary: 'One SCIM schema', tags, params: IdParams, response: ERROR_ANSWERS },
    },
    async (request, reply) => {
      const found = schemaDocuments(base(request)).find((r) => String(r.id).toLowerCase() === request.params.id.toLowerCase());
      if (!found) throw scimError(404, null, `No schema ${request.params.id}.`);
      return send(reply, 200, found);
    },
  );

  // Users ----------------------------------------------------------------------------------------------
  const listUsersAnswer = async (request: FastifyRequest, params: ListParams) => {
    const { rows, total } = await request.readTenant((trx) =>
      listUsers(trx, {
        filter: params.filter,
        sortBy: params.sortBy,
        descending: params.descending,
        startIndex: params.startIndex,
        count: params.count,
        withGroups: wants(params, 'groups'),
      }),
    );
    const b = base(request);
    return listResponse(
      rows.map((r) => project(scimUser(r, b), params.attributes, params.excluded)),
      total,
      params.startIndex,
    );
  };
  app.get(
    '/Users',
    {
      config: scimConfig(200, 'A ListResponse of Users'),
      schema: { operationId: 'scimUsers_list', tags, summary: 'List or filter Users', querystring: ListQuery, response: ERROR_ANSWERS },
    },
    async (request, reply) => send(reply, 200, await listUsersAnswer(request, readListParams(request.query as Record<string, unknown>))),
  );
  app.post(
    '/Users/.search',
    {
      bodyLimit: LIMITS.resourceMaxPayloadSize,
      config: scimConfig(200, 'A ListResponse of Users'),
      schema: {
        operationId: 'scimUsers_search',
        tags,
        summary: 'Search Users (the list parameters in a SearchRequest body)',
        body: AnyBody,
        response: ERROR_ANSWERS,
      },
    },
    async (request, reply) => send(reply, 200, await listUsersAnswer(request, readListParams(searchBody(request.body)))),
  );
  app.get(
    '/Users/:id',
    {
      config: scimConfig(200, 'The User'),
      schema: { operationId: 'scimUsers_get', tags, summary: 'Get a User', params: IdParams, querystring: ProjectionQuery, response: ERROR_ANSWERS },
    },
    async (request, reply) => {
      const q = request.query as Record<string, string | undefined>;
      const attributes = readAttributeList(q.attributes, 'attributes');
      const excluded = readAttributeList(q.excludedAttributes, 'excludedAttributes');
      const row = await request.readTenant((trx) => getUser(trx, request.params.id));
      return send(reply, 200, project(scimUser(row, base(request)), attributes, excluded), row.version);
    },
  );
  const userAnswer = (request: FastifyRequest, reply: FastifyReply, status: number, saved: Saved) => {
    const doc = scimUser(saved.row, base(request));
    if (status === 201) reply.header('location', (doc.meta as { location: string }).location);
    return send(reply, status, doc, saved.row.version);
  };
  app.post(
    '/Users',
    {
      bodyLimit: LIMITS.resourceMaxPayloadSize,
      config: scimConfig(201, 'The User created'),
      schema: {
        operationId: 'scimUsers_create',
        tags,
        summary: 'Create a User (through the Integration API)',
        description: 'A userName or externalId taken is 409 uniqueness. Honours Idempotency-Key.',
        headers: IdempotencyHeaders,
        body: AnyBody,
        response: ERROR_ANSWERS,
      },
    },
    idempotent(ctx, async (request: FastifyRequest, reply: FastifyReply) => {
      const saved = await writeUser(request, async (trx, actor) => createUser(trx, actor, await settingsOf(trx, actor), request.body));
      return userAnswer(request, reply, 201, saved);
    }),
  );
  app.put(
    '/Users/:id',
    {
      bodyLimit: LIMITS.resourceMaxPayloadSize,
      config: scimConfig(200, 'The User replaced'),
      schema: {
        operationId: 'scimUsers_replace',
        tags,
        summary: 'Replace a User',
        params: IdParams,
        headers: IfMatchHeaders,
        body: AnyBody,
        response: ERROR_ANSWERS,
      },
    },
    async (request, reply) => {
      const saved = await writeUser(request, async (trx, actor) =>
        replaceUser(trx, actor, await settingsOf(trx, actor), request.params.id, request.body, ifMatch(request)),
      );
      return userAnswer(request, reply, 200, saved);
    },
  );
  app.patch(
    '/Users/:id',
    {
      bodyLimit: LIMITS.resourceMaxPayloadSize,
      config: scimConfig(200, 'The User patched'),
      schema: {
        operationId: 'scimUsers_patch',
        tags,
        summary: 'Patch a User (add, replace, remove)',
        params: IdParams,
        headers: IfMatchHeaders,
        body: AnyBody,
        response: ERROR_ANSWERS,
      },
    },
    async (request, reply) => {
      const ops = readPatchBody(request.body);
      const saved = await writeUser(request, async (trx, actor) =>
        patchScimUser(trx, actor, await settingsOf(trx, actor), request.params.id, ops, ifMatch(request)),
      );
      return userAnswer(request, reply, 200, saved);
    },
  );
  app.delete(
    '/Users/:id',
    {
      config: { auth: 'scim', documentedResponses: { 204: { description: 'Deactivated (as the user feed deactivates) and gone from SCIM' } } },
      schema: {
        operationId: 'scimUsers_delete',
        tags,
        summary: 'Delete a User: deactivated in Atrium, 404 in SCIM from then on',
        params: IdParams,
        headers: IfMatchHeaders,
        response: ERROR_ANSWERS,
      },
    },
    async (request, reply) => {
      await writeUser(request, async (trx, actor) => deleteUser(trx, actor, await settingsOf(trx, actor), request.params.id, ifMatch(request)));
      return reply.code(204).send();
    },
  );

  // Groups (roles) ---------------------------------------------------------------------------------------
  app.get(
    '/Groups',
    {
      config: scimConfig(200, 'A ListResponse of Groups'),
      schema: { operationId: 'scimGroups_list', tags, summary: 'List or filter Groups (roles)', querystring: ListQuery, response: ERROR_ANSWERS },
    },
    async (request, reply) => {
      const params = readListParams(request.query as Record<string, unknown>);
      const { rows, total } = await request.readTenant((trx) => listGroups(trx, { ...params, withMembers: wants(params, 'members') }));
      const b = base(request);
      return send(
        reply,
        200,
        listResponse(
          rows.map((r) => project(scimGroup(r, b), params.attributes, params.excluded)),
          total,
          params.startIndex,
        ),
      );
    },
  );
  app.get(
    '/Groups/:id',
    {
      config: scimConfig(200, 'The Group'),
      schema: { operationId: 'scimGroups_get', tags, summary: 'Get a Group', params: IdParams, querystring: ProjectionQuery, response: ERROR_ANSWERS },
    },
    async (request, reply) => {
      const q = request.query as Record<string, string | undefined>;
      const row = await request.readTenant((trx) => getGroup(trx, request.params.id));
      const doc = project(
        scimGroup(row, base(request)),
        readAttributeList(q.attributes, 'attributes'),
        readAttributeList(q.excludedAttributes, 'excludedAttributes'),
      );
      return send(reply, 200, doc, row.version);
    },
  );
  const groupWrite = <T>(request: FastifyRequest, fn: (trx: Trx, actor: { tenantId: string; userId: null }) => Promise<T>): Promise<T> =>
    request.writeTenant(async (trx, p) => {
      const out = await fn(trx, { tenantId: p.tenantId, userId: null });
      return out;
    });
  const groupAnswer = (request: FastifyRequest, reply: FastifyReply, status: number, row: Awaited<ReturnType<typeof getGroup>>) => {
    ctx.auth.invalidateCaches(); // roles changed: cached user verifications carry roles
    const doc = scimGroup(row, base(request));
    if (status === 201) reply.header('location', (doc.meta as { location: string }).location);
    return send(reply, status, doc, row.version);
  };
  app.post(
    '/Groups',
    {
      bodyLimit: LIMITS.bulkMaxPayloadSize,
      config: scimConfig(201, 'The Group created'),
      schema: {
        operationId: 'scimGroups_create',
        tags,
        summary: 'Create a Group (a role)',
        headers: IdempotencyHeaders,
        body: AnyBody,
        response: ERROR_ANSWERS,
      },
    },
    idempotent(ctx, async (request: FastifyRequest, reply: FastifyReply) =>
      groupAnswer(request, reply, 201, await groupWrite(request, (trx, actor) => createScimGroup(trx, actor, request.body))),
    ),
  );
  app.put(
    '/Groups/:id',
    {
      bodyLimit: LIMITS.bulkMaxPayloadSize,
      config: scimConfig(200, 'The Group replaced'),
      schema: {
        operationId: 'scimGroups_replace',
        tags,
        summary: 'Replace a Group: its name and all its members',
        params: IdParams,
        headers: IfMatchHeaders,
        body: AnyBody,
        response: ERROR_ANSWERS,
      },
    },
    async (request, reply) =>
      groupAnswer(
        request,
        reply,
        200,
        await groupWrite(request, (trx, actor) => replaceScimGroup(trx, actor, request.params.id, request.body, ifMatch(request))),
      ),
  );
  app.patch(
    '/Groups/:id',
    {
      bodyLimit: LIMITS.bulkMaxPayloadSize,
      config: scimConfig(200, 'The Group patched'),
      schema: {
        operationId: 'scimGroups_patch',
        tags,
        summary: 'Patch a Group: add or remove members, rename',
        params: IdParams,
        headers: IfMatchHeaders,
        body: AnyBody,
        response: ERROR_ANSWERS,
      },
    },
    async (request, reply) => {
      const ops = readPatchBody(request.body);
      return groupAnswer(request, reply, 200, await groupWrite(request, (trx, actor) => patchScimGroup(trx, actor, request.params.id, ops, ifMatch(request))));
    },
  );
  app.delete(
    '/Groups/:id',
    {
      config: { auth: 'scim', documentedResponses: { 204: { description: 'Deleted (a role created by SCIM; built-in roles cannot be)' } } },
      schema: { operationId: 'scimGroups_delete', tags, summary: 'Delete a Group', params: IdParams, headers: IfMatchHeaders, response: ERROR_ANSWERS },
    },
    async (request, reply) => {
      await groupWrite(request, (trx, actor) => deleteScimGroup(trx, actor, request.params.id, ifMatch(request)));
      ctx.auth.invalidateCaches();
      return reply.code(204).send();
    },
  );

  // Bulk ---------------------------------------------------------------------------------------------------
  app.post(
    '/Bulk',
    {
      bodyLimit: LIMITS.bulkMaxPayloadSize,
      config: scimConfig(200, 'A BulkResponse'),
      schema: {
        operationId: 'scimBulk_run',
        tags,
        summary: 'Several operations in one request',
        description: `At most ${LIMITS.bulkMaxOperations} operations and ${LIMITS.bulkMaxPayloadSize} bytes; each operation is its own transaction; failOnErrors stops after that many errors.`,
        headers: IdempotencyHeaders,
        body: AnyBody,
        response: ERROR_ANSWERS,
      },
    },
    idempotent(ctx, async (request: FastifyRequest, reply: FastifyReply) => {
      const bulk = readBulk(request.body);
      const b = base(request);
      const run = async (op: BulkOperation): Promise<BulkResult> => {
        const [, type, id] = /^\/(Users|Groups)(?:\/(.+))?$/i.exec(op.path) ?? [];
        const users = type.toLowerCase() === 'users';
        if (users) {
          if (op.method === 'DELETE') {
            await writeUser(request, async (trx, actor) => deleteUser(trx, actor, await settingsOf(trx, actor), id, op.version ?? undefined));
            return { status: 204 };
          }
          const saved = await writeUser(request, async (trx, actor) => {
            const settings = await settingsOf(trx, actor);
            if (op.method === 'POST') return createUser(trx, actor, settings, op.data);
            if (op.method === 'PUT') return replaceUser(trx, actor, settings, id, op.data, op.version ?? undefined);
            return patchScimUser(trx, actor, settings, id, readPatchBody(op.data), op.version ?? undefined);
          });
          return { status: op.method === 'POST' ? 201 : 200, id: saved.row.id, location: `${b}/Users/${saved.row.id}`, version: saved.row.version };
        }
        if (op.method === 'DELETE') {
          await groupWrite(request, (trx, actor) => deleteScimGroup(trx, actor, id, op.version ?? undefined));
          return { status: 204 };
        }
        const row = await groupWrite(request, (trx, actor) => {
          if (op.method === 'POST') return createScimGroup(trx, actor, op.data);
          if (op.method === 'PUT') return replaceScimGroup(trx, actor, id, op.data, op.version ?? undefined);
          return patchScimGroup(trx, actor, id, readPatchBody(op.data), op.version ?? undefined);
        });
        return { status: op.method === 'POST' ? 201 : 200, id: row.id, location: `${b}/Groups/${row.id}`, version: row.version };
      };
      // Operations stop starting 3 s before the request's deadline, so the answer lists everything that ran.
      const response = await runBulk(
        bulk,
        run,
        (err) => {
          const e = toScimError(err, request);
          return { status: e.status, body: e.body };
        },
        request.deadline - 3000,
      );
      ctx.auth.invalidateCaches();
      return send(reply, 200, response);
    }),
  );
}

function listOf(resources: unknown[]): Doc {
  return { schemas: [LIST_RESPONSE], totalResults: resources.length, startIndex: 1, itemsPerPage: resources.length, Resources: resources };
}

function listResponse(resources: unknown[], total: number, startIndex: number): Doc {
  return { schemas: [LIST_RESPONSE], totalResults: total, startIndex, itemsPerPage: resources.length, Resources: resources };
}

function searchBody(body: unknown): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw scimError(400, 'invalidSyntax', 'The body must be a SearchRequest object.');
  return body as Record<string, unknown>;
}

// Administration (the tenant's Administrators, like /api/v3/apps) ------------------------------------------

const admin = { roles: ['Administrator'] as const };
const adminTags = ['SCIM administration'];
const TokenView = {
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  createdOnUtc: Type.String({ format: 'date-time' }),
  revokedOnUtc: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
};
const ScimToken = named('ScimToken', Type.Object(TokenView));
const ScimTokenCreated = named(
  'ScimTokenCreated',
  Type.Object({ ...TokenView, token: Type.String({ description: 'The bearer token; shown only in this answer' }) }),
);
const settingsProperties = {
  companyCode: Type.String({ minLength: 1, maxLength: 200, description: 'Company of a user without organization (default: the first company)' }),
  departmentExternalId: Type.String({ minLength: 1, maxLength: 4000, description: 'Department of a user without department (default: the first one)' }),
  typologyGroup: Type.String({ minLength: 1, maxLength: 200, description: 'Typology group of typologies created (created if missing)' }),
  typology: Type.String({ minLength: 1, maxLength: 200, description: 'Typology (external id or name; created in the department if missing)' }),
  typologyFromTitle: Type.Boolean({ description: 'title names the typology (the business title), as the feed’s resourceType' }),
  userType: Type.String({ minLength: 1, maxLength: 200, description: 'User type of a user whose userType is not sent' }),
  userTypes: Type.Record(Type.String({ maxLength: 200 }), Type.String({ minLength: 1, maxLength: 200 }), {
    maxProperties: 50,
    description: 'SCIM userType -> Atrium user type name',
  }),
  ssoUserName: Type.Union([Type.Literal('userName'), Type.Literal('none')], { description: 'SsoUserName is the userName, or left alone' }),
};
const ScimSettingsSchema = named('ScimSettings', Type.Object(settingsProperties));
const ScimSettingsBody = named(
  'ScimSettingsBody',
  Type.Object(Object.fromEntries(Object.entries(settingsProperties).map(([k, v]) => [k, Type.Optional(v as TSchema)])), { additionalProperties: false }),
);

async function administrationRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/v3/scim/tokens',
    {
      config: admin,
      schema: {
        tags: adminTags,
        operationId: 'scimTokens_create',
        summary: 'Create a SCIM bearer token; it is shown once',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
        response: { 201: ScimTokenCreated },
      },
    },
    async (request, reply) => {
      const p = requirePrincipal(request);
      const created = await request.writeTenant((trx) => createScimToken(trx, p.tenantId, request.body.name, p.userId));
      return reply.code(201).send(created);
    },
  );
  app.get(
    '/api/v3/scim/tokens',
    {
      config: admin,
      schema: {
        tags: adminTags,
        operationId: 'scimTokens_list',
        summary: 'The SCIM tokens (revoked ones too), never their secrets',
        response: { 200: Type.Array(ScimToken) },
      },
    },
    async (request) => request.readTenant((trx) => listScimTokens(trx)),
  );
  app.delete(
    '/api/v3/scim/tokens/:id',
    {
      config: admin,
      schema: {
        tags: adminTags,
        operationId: 'scimTokens_revoke',
        summary: 'Revoke a SCIM token (at once, in every process)',
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await request.writeTenant((trx) => revokeScimToken(trx, request.params.id.toLowerCase()));
      ctx.auth.invalidateCaches(); // this process at once; the others on the atrium_auth notification
      reply.code(204);
      return null;
    },
  );
  app.get(
    '/api/v3/scim/settings',
    {
      config: admin,
      schema: {
        tags: adminTags,
        operationId: 'scimSettings_get',
        summary: 'The SCIM settings in effect (defaults filled in)',
        response: { 200: ScimSettingsSchema },
      },
    },
    async (request) => request.readTenant((trx) => effectiveSettings(trx)),
  );
  app.put(
    '/api/v3/scim/settings',
    {
      config: admin,
      schema: {
        tags: adminTags,
        operationId: 'scimSettings_put',
        summary: 'Replace the SCIM settings; a setting not sent takes its default',
        description: 'Every reference is checked now (company, department, user types): 422 naming the setting otherwise.',
        body: ScimSettingsBody,
        response: { 200: ScimSettingsSchema },
      },
    },
    async (request) => {
      const p = requirePrincipal(request);
      return request.writeTenant((trx) => putSettings(trx, p.tenantId, p.userId, request.body as never));
    },
  );
}
