// The queryBuilder of a dynamic-execute body as a schema: the Data Extraction routes and scheduled
// extraction (whose schedules carry one) validate it with the same shape.
import { Type } from 'typebox';
import { named } from '../../platform/http/openapi.ts';
import { MAX_PAGE_SIZE } from './query-builder.ts';

export const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);
export const QueryBuilder = named(
  'QueryBuilder',
  Type.Object(
    {
      skip: Type.Optional(Type.Integer({ minimum: 0, description: 'Rows to skip (paging).' })),
      take: Type.Optional(Type.Integer({ minimum: 0, description: `Rows to return; at most ${MAX_PAGE_SIZE} for JSON (omitted: up to ${MAX_PAGE_SIZE}).` })),
      orderBy: Type.Optional(
        Type.Array(
          Type.Object(
            { field: Type.String(), direction: Type.Optional(Type.String({ pattern: '^(?i:asc|desc)$', description: 'asc (default) or desc' })) },
            { additionalProperties: false },
          ),
          { maxItems: 100 },
        ),
      ),
      fields: Type.Optional(Type.Array(Type.String(), { maxItems: 2000, description: 'Keys to answer, in this order.' })),
      filters: Type.Optional(Type.Array(Type.Unknown(), { description: 'DevExtreme filter: [field, op, value] joined by "and" / "or"; ["!", expr] negates.' })),
    },
    { additionalProperties: false },
  ),
);

/** A dynamic-execute body: what the route validates and what a schedule stored (checked again when it runs). */
export const ExecuteBodySchema = Type.Object(
  {
    queryBuilder: Type.Optional(Type.Union([QueryBuilder, Type.Null()])),
    parameters: Type.Optional(Type.Union([Type.Record(Type.String(), Scalar), Type.Null()])),
  },
  { additionalProperties: false },
);
