// Saved queries under /api/v3/saved-queries (decision 0054): list, create, get, update (rename, change, share)
// and delete. HTTP only; the service does the rest. They run named queries, so they need DataExtractionRead.
import { Type } from 'typebox';
import { QueryBuilder, Scalar } from '../extraction/service.ts';
import type { RoleName } from '../platform/auth/roles.ts';
import type { App } from '../platform/http/app.ts';
import { named } from '../platform/http/openapi.ts';
import { Guid, nullable } from '../platform/http/schemas.ts';
import { createSavedQuery, deleteSavedQuery, getSavedQuery, listSavedQueries, MAX_TAKE, updateSavedQuery } from './service.ts';

const tags = ['Saved queries'];
const config = { roles: ['DataExtractionRead'] as RoleName[] };
const Name = Type.String({ minLength: 1, maxLength: 200 });
const View = Type.Record(Type.String({ maxLength: 100 }), Type.Unknown(), {
  description:
    'How the console shows it: {"type": "table", "columns": […], "widths": {…}} or {"type": "chart", "chart": {…}}; at most 64 KB with the query builder and parameters',
  maxProperties: 50,
});
const Properties = {
  name: Name,
  query: Type.String({ minLength: 1, maxLength: 200, description: 'A named query of the catalogue (or an alias), or CT-{tableName}.' }),
  queryBuilder: Type.Optional(nullable(QueryBuilder)),
  parameters: Type.Optional(nullable(Type.Record(Type.String(), Scalar, { maxProperties: 50 }))),
  view: Type.Optional(nullable(View)),
  shared: Type.Optional(Type.Boolean({ description: 'Shared with every user of the tenant who may read named queries (default false: yours alone).' })),
};
const SavedQueryBody = named('SavedQueryBody', Type.Object(Properties, { additionalProperties: false }));
const SavedQueryPatch = named('SavedQueryPatch', Type.Partial(Type.Object(Properties, { additionalProperties: false })));
const SavedQuery = named(
  'SavedQuery',
  Type.Object({
    id: Guid,
    name: Type.String(),
    query: Type.String(),
    queryBuilder: Type.Record(Type.String(), Type.Unknown()),
    parameters: Type.Record(Type.String(), Type.Unknown()),
    view: Type.Record(Type.String(), Type.Unknown()),
    shared: Type.Boolean(),
    ownerUserId: Type.Union([Guid, Type.Null()]),
    mine: Type.Boolean({ description: 'The caller saved it, so may rename, change, share or delete it (an Administrator may too).' }),
    createdOnUtc: Type.String({ format: 'date-time' }),
    modifiedOnUtc: Type.String({ format: 'date-time' }),
  }),
);
const IdParams = Type.Object({ id: Guid });

export async function savedQueryRoutes(app: App): Promise<void> {
  app.get(
    '/api/v3/saved-queries',
    {
      config,
      schema: {
        tags,
        operationId: 'savedQueries_list',
        summary: 'Your saved queries and those shared with the tenant, by name',
        querystring: Type.Object({
          skip: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
          take: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_TAKE, description: `Default and maximum ${MAX_TAKE}` })),
        }),
        response: { 200: Type.Object({ data: Type.Array(SavedQuery), totalCount: Type.Integer() }) },
      },
    },
    async (request) => request.readTenant((trx, p) => listSavedQueries(trx, p, request.query.skip ?? 0, request.query.take ?? MAX_TAKE)),
  );
  app.post(
    '/api/v3/saved-queries',
    {
      config,
      schema: { tags, operationId: 'savedQueries_create', summary: 'Save a query (private until shared)', body: SavedQueryBody, response: { 201: SavedQuery } },
    },
    async (request, reply) => reply.code(201).send(await request.writeTenant((trx, p) => createSavedQuery(trx, p, request.body))),
  );
  app.get(
    '/api/v3/saved-queries/:id',
    { config, schema: { tags, operationId: 'savedQueries_get', summary: 'One saved query', params: IdParams, response: { 200: SavedQuery } } },
    async (request) => request.readTenant((trx, p) => getSavedQuery(trx, p, request.params.id)),
  );
  app.patch(
    '/api/v3/saved-queries/:id',
    {
      config,
      schema: {
        tags,
        operationId: 'savedQueries_update',
        summary: 'Rename, change or share a saved query (the properties given replace the stored ones); its owner or an Administrator',
        params: IdParams,
        body: SavedQueryPatch,
        response: { 200: SavedQuery },
      },
    },
    async (request) => request.writeTenant((trx, p) => updateSavedQuery(trx, p, request.params.id, request.body)),
  );
  app.delete(
    '/api/v3/saved-queries/:id',
    {
      config,
      schema: {
        tags,
        operationId: 'savedQueries_delete',
        summary: 'Delete a saved query; its owner or an Administrator',
        params: IdParams,
        response: { 204: Type.Null() },
      },
    },
    async (request, reply) => {
      await request.writeTenant((trx, p) => deleteSavedQuery(trx, p, request.params.id));
      reply.code(204);
      return null;
    },
  );
}
