// Data Extraction API routes: dynamic-execute (JSON pages, or CSV / NDJSON streams by Accept), the
// list of named queries and each query's metadata. HTTP only; the service does the rest.
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import type { AppContext } from '../platform/context.ts';
import { acceptedEncoding, COMPRESS_THRESHOLD, compressAnswer } from '../platform/http/answer-encoding.ts';
import type { App } from '../platform/http/app.ts';
import { sendJsonWithEtag } from '../platform/http/etag.ts';
import { named } from '../platform/http/openapi.ts';
import { requirePrincipal } from '../platform/http/tenant-seam.ts';
import { aggregateRoutes } from './aggregate-routes.ts';
import type { CsvOptions } from './exports/copy-csv.ts';
import type { ExportFormat } from './exports/export.ts';
import { EXPORT_CONTENT_TYPES } from './exports/export.ts';
import { xlsxFromNdjson } from './exports/xlsx.ts';
import { odataRoutes } from './odata/routes.ts';
import { pageBudgetOf, pageRowsOf } from './pages/page-budget.ts';
import { ExecuteBodySchema } from './query/schema.ts';
import { describeNamedQuery, dynamicExecuteAnswer, exportPlanned, listNamedQueries, plan, TIMEOUT_ADVICE } from './service.ts';

const tags = ['Data Extraction API'];

const ExecuteBody = named('DynamicExecuteBody', ExecuteBodySchema);
const NameParams = Type.Object({ NamedQuery: Type.String({ minLength: 1, maxLength: 200 }) });
const Flag = (description: string) => Type.Optional(Type.Union([Type.Literal('true'), Type.Literal('false')], { description }));
// Spreadsheet options of the CSV export, as query options: the body stays the platform's own.
const ExportQuery = Type.Object({
  bom: Flag('CSV: start with a UTF-8 byte order mark so Excel reads accents (also Accept: text/csv; bom=present).'),
  excelSafe: Flag('CSV: prefix text cells starting with = + - @ (or tab, CR) with a single quote, against formula injection.'),
});
const PageSchema = named('DynamicExecutePage', Type.Object({ data: Type.Array(Type.Record(Type.String(), Type.Unknown())), totalCount: Type.Integer() }));
const NamedQuerySummary = named(
  'NamedQuerySummary',
  Type.Object({
    name: Type.String(),
    aliases: Type.Array(Type.String()),
    purpose: Type.String(),
    fieldCount: Type.Integer(),
    parameters: Type.Array(Type.String()),
  }),
);
const FieldMetadata = Type.Object({
  name: Type.String(),
  dataType: Type.String(),
  operations: Type.Immutable(Type.Array(Type.String())),
  defaultOperation: Type.String(),
});
const NamedQueryMetadata = named(
  'NamedQueryMetadata',
  Type.Object({
    name: Type.String(),
    aliases: Type.Array(Type.String()),
    purpose: Type.String(),
    key: Type.Array(Type.String()),
    parameters: Type.Array(Type.Object({ name: Type.String(), appliesTo: Type.Union([Type.String(), Type.Null()]) })),
    fields: Type.Array(FieldMetadata),
    filterFields: Type.Optional(Type.Array(FieldMetadata, { description: 'Count queries: the fields their filters and parameters address' })),
    maxPageSize: Type.Integer(),
  }),
);

/** `bom=present` as a parameter of the text/csv media range, or the bom query option. */
function csvOptions(accept: string | undefined, query: { bom?: string; excelSafe?: string }): CsvOptions {
  const csvRange = (accept ?? '').split(',').find((r) => /^\s*text\/csv\b/i.test(r)) ?? '';
  return { bom: query.bom === 'true' || /;\s*bom\s*=\s*"?present"?\s*(;|$)/i.test(csvRange), excelSafe: query.excelSafe === 'true' };
}

const XLSX_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

/** Accept: text/csv, application/x-ndjson or the xlsx media type streams; anything else answers JSON. */
function exportFormat(accept: string | undefined): ExportFormat | 'xlsx' | null {
  const a = (accept ?? '').toLowerCase();
  if (a.includes('text/csv')) return 'csv';
  if (a.includes(XLSX_TYPE)) return 'xlsx';
  if (a.includes('application/x-ndjson') || a.includes('application/ndjson')) return 'ndjson';
  return null;
}

export async function extractionRoutes(app: App, ctx: AppContext): Promise<void> {
  app.post(
    '/api/v3/analytics/named-query/:NamedQuery/dynamic-execute',
    {
      schema: {
        tags,
        operationId: 'namedQueries_dynamicExecute',
        summary: 'Run a named query with a query builder (Accept: text/csv, application/x-ndjson or the xlsx media type to stream every row)',
        params: NameParams,
        querystring: ExportQuery,
        body: Type.Optional(Type.Union([ExecuteBody, Type.Null()])),
        response: {
          200: {
            description: 'One page of rows as JSON, or every row as CSV, NDJSON or xlsx (by Accept)',
            content: {
              'application/json': { schema: PageSchema },
              'text/csv': { schema: Type.String() },
              'application/x-ndjson': { schema: Type.String({ description: 'One JSON object per line' }) },
              [XLSX_TYPE]: { schema: Type.String({ format: 'binary', description: 'One worksheet named after the query, typed cells' }) },
            },
          },
        },
      },
      config: { timeoutAdvice: TIMEOUT_ADVICE, roles: ['DataExtractionRead'] },
      // A call without a body (or with an empty one) asks for the first page of all fields.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const format = exportFormat(request.headers.accept);
      if (format) {
        const planned = await request.readTenant((trx, p) => plan(trx, p, request.params.NamedQuery, body, false));
        // The rows stream from a read replica when one is usable (decision 0028).
        // xlsx is written from the NDJSON rows (typed by the catalogue), as scheduled runs write it.
        const rowsFormat = format === 'xlsx' ? 'ndjson' : format;
        const { name, stream, columns } = await ctx.db.onReplica((db) =>
          exportPlanned(db, requirePrincipal(request).tenantId, planned, rowsFormat, request.deadline, csvOptions(request.headers.accept, request.query)),
        );
        reply
          .type(format === 'xlsx' ? XLSX_TYPE : EXPORT_CONTENT_TYPES[format])
          .header('content-disposition', `attachment; filename="${name.replace(/[^\w.-]/g, '_')}.${format}"`)
          .header('cache-control', 'no-store');
        if (format === 'xlsx') return reply.send(Readable.from(xlsxFromNdjson(name, columns, stream, { rows: 0 })) as never);
        return reply.send(stream as never);
      }
      // The page arrives as its JSON bytes (PostgreSQL prints the rows); sent as they are.
      // A paging client's pages read ahead are compressed while they wait, in the encoding it accepts (decision 0079).
      const encoding = request.headers['x-no-compression'] === undefined ? acceptedEncoding(request.headers['accept-encoding']) : undefined;
      const page = await pageBudgetOf(ctx).run(pageRowsOf(body), () =>
        request.readTenant((trx, p, db) => dynamicExecuteAnswer(trx, p, request.params.NamedQuery, body, db, encoding, { last: true }), { replica: true }),
      );
      reply.type('application/json; charset=utf-8');
      if (!encoding || (!page.encoded && page.body.length < COMPRESS_THRESHOLD)) return reply.send(page.body as never);
      // Compressed here as the plugin would (its encodings and levels), from the page's buffer as it is and on the
      // thread pool; the plugin's stream would copy the page first. An answer with a Content-Encoding passes it as it is.
      const bytes = page.encoded ? page.encoded.bytes : await compressAnswer([page.body], encoding);
      const vary = reply.getHeader('vary');
      reply.header('vary', vary ? `${vary}, accept-encoding` : 'accept-encoding').header('content-encoding', page.encoded?.encoding ?? encoding);
      return reply.send(bytes as never);
    },
  );

  app.get(
    '/api/v3/analytics/named-queries',
    {
      config: { roles: ['DataExtractionRead'] },
      schema: {
        tags,
        operationId: 'namedQueries_list',
        summary: 'The named queries: name, aliases, purpose, field count, parameters; then the readable custom tables as CT-{tableName}',
        response: { 200: Type.Array(NamedQuerySummary) },
      },
    },
    async (request) => request.readTenant((trx, p) => listNamedQueries(trx, p)),
  );

  app.get(
    '/api/v3/analytics/named-query/:NamedQuery/metadata',
    {
      config: { roles: ['DataExtractionRead'] },
      schema: {
        tags,
        operationId: 'namedQueries_metadata',
        summary: 'Fields of a named query with their data types and filter operations, its key and parameters',
        params: NameParams,
        response: { 200: NamedQueryMetadata },
      },
    },
    async (request, reply) => sendJsonWithEtag(request, reply, await request.readTenant((trx, p) => describeNamedQuery(trx, p, request.params.NamedQuery))),
  );

  await aggregateRoutes(app);
  await odataRoutes(app, ctx);
}
