// The aggregate request of the Data Extraction API (decision 0054): HTTP only; aggregate.ts does the rest.
import { Type } from 'typebox';
import type { App } from '../platform/http/app.ts';
import { named } from '../platform/http/openapi.ts';
import { AGGREGATE_FUNCTIONS, aggregateNamedQuery, DEFAULT_GROUPS, INTERVALS, MAX_GROUP_BY, MAX_GROUPS, ORDERS } from './aggregate.ts';
import { TIMEOUT_ADVICE } from './service.ts';

const tags = ['Data Extraction API'];
const Scalar = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);
const NameParams = Type.Object({ NamedQuery: Type.String({ minLength: 1, maxLength: 200 }) });
const Aggregate = Type.Object(
  {
    function: Type.Union(
      AGGREGATE_FUNCTIONS.map((f) => Type.Literal(f)),
      { description: 'count (rows, or non-null values of field), or sum, avg, min, max of a numeric field' },
    ),
    field: Type.Optional(
      Type.Union([Type.String({ maxLength: 200 }), Type.Null()], { description: 'A numeric field (integer or decimal); count may omit it' }),
    ),
  },
  { additionalProperties: false },
);
export const AggregateBody = named(
  'AggregateBody',
  Type.Object(
    {
      queryBuilder: Type.Optional(
        Type.Union([
          Type.Object(
            { filters: Type.Optional(Type.Array(Type.Unknown(), { description: 'DevExtreme filter, as in dynamic-execute' })) },
            { additionalProperties: false },
          ),
          Type.Null(),
        ]),
      ),
      parameters: Type.Optional(Type.Union([Type.Record(Type.String(), Scalar), Type.Null()])),
      groupBy: Type.Optional(
        Type.Array(
          Type.Object(
            {
              field: Type.String({ maxLength: 200 }),
              interval: Type.Optional(
                Type.Union(
                  INTERVALS.map((i) => Type.Literal(i)),
                  { description: 'Date and datetime fields: group by day (default for datetime), ISO week (from Monday) or month; datetimes in UTC' },
                ),
              ),
            },
            { additionalProperties: false },
          ),
          { maxItems: MAX_GROUP_BY, description: 'None (one group: the whole set), one or two fields' },
        ),
      ),
      aggregate: Aggregate,
      order: Type.Optional(
        Type.Union(
          ORDERS.map((o) => Type.Literal(o)),
          { description: 'key (default: by the group keys), valueAsc or valueDesc' },
        ),
      ),
      take: Type.Optional(
        Type.Integer({ minimum: 0, maximum: MAX_GROUPS, description: `Groups to answer (default ${DEFAULT_GROUPS}); groupCount says how many there are` }),
      ),
    },
    { additionalProperties: false },
  ),
);
const AggregateAnswer = named(
  'AggregateAnswer',
  Type.Object({
    groupBy: Type.Array(Type.Object({ field: Type.String(), interval: Type.Optional(Type.String()) })),
    aggregate: Type.Object({ function: Type.String(), field: Type.Union([Type.String(), Type.Null()]) }),
    data: Type.Array(
      Type.Object({
        keys: Type.Array(Type.Unknown(), { description: 'The group keys, in the order of groupBy; a date interval as its first day, YYYY-MM-DD' }),
        value: Type.Union([Type.Number(), Type.Null()]),
        count: Type.Integer({ description: 'Rows in the group' }),
      }),
    ),
    groupCount: Type.Integer({ description: 'Groups in the whole filtered set' }),
    total: Type.Object(
      { value: Type.Union([Type.Number(), Type.Null()]), count: Type.Integer() },
      { description: 'The aggregate over the whole filtered set' },
    ),
  }),
);

export async function aggregateRoutes(app: App): Promise<void> {
  app.post(
    '/api/v3/analytics/named-query/:NamedQuery/aggregate',
    {
      schema: {
        tags,
        operationId: 'namedQueries_aggregate',
        summary: "Group a named query's filtered rows by one or two fields and aggregate a numeric field over the whole set",
        params: NameParams,
        body: AggregateBody,
        response: { 200: AggregateAnswer },
      },
      config: { timeoutAdvice: TIMEOUT_ADVICE, roles: ['DataExtractionRead'] },
    },
    async (request) => request.readTenant((trx, p) => aggregateNamedQuery(trx, p, request.params.NamedQuery, request.body), { replica: true }),
  );
}
