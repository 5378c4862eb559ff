// Custom Tables API ({base_url}/api/v3): tables, rows, permissions, export and import. HTTP only:
// TypeBox schemas and thin handlers over the services; every route takes an access token.
import { once } from 'node:events';
import { PassThrough, type Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type TSchema, Type } from 'typebox';
import type { RoleName } from '../platform/auth/roles.ts';
import type { AppContext } from '../platform/context.ts';
import { HttpProblem } from '../platform/errors.ts';
import type { App } from '../platform/http/app.ts';
import { named } from '../platform/http/openapi.ts';
import { describeTable, dropTable, ensureTable, listTables, setDefinition, summarize, type TableDef } from './catalogue.ts';
import { deleteRows, readColumnValue, readRow, readRows, writeRows } from './rows.ts';
import { importTable, openExport, writeExport } from './transfer.ts';

const tags = ['Custom Tables API'];
const config = { auth: 'token' as const };
// Every route needs CustomTablesRead or CustomTablesSave (issue 26, item 11); a table's own Read and Save roles narrow it further.
const READ: RoleName[] = ['CustomTablesRead'];
const SAVE: RoleName[] = ['CustomTablesSave'];
const NAME_PATTERN = '^[A-Za-z][A-Za-z0-9_]{0,62}$';

const TableParams = Type.Object({
  tableName: Type.String({ pattern: NAME_PATTERN, description: 'Letters, digits and underscores, starting with a letter; case-insensitive' }),
});
const Count = Type.String({ pattern: '^[0-9]{1,9}$' });
const DataTypeId = Type.Integer({ minimum: 0, maximum: 12, description: 'ColumnDataType: 0 Boolean ... 12 VarBinary' });
const Length = Type.Optional(Type.Union([Type.Integer(), Type.Null()], { description: 'Length of a VarcharOther column' }));

const ColumnOut = Type.Object({ ColumnName: Type.String(), ColumnDataTypeId: Type.Integer(), Length: Type.Optional(Type.Integer()) });
const tableFields = {
  Id: Type.String({ format: 'uuid' }),
  TableName: Type.String(),
  KeyColumnName: Type.String(),
  KeyDataTypeId: Type.Integer(),
  KeyLength: Type.Optional(Type.Integer()),
  Columns: Type.Array(ColumnOut),
  ReadRoles: Type.Array(Type.String()),
  SaveRoles: Type.Array(Type.String()),
  CreatedOn: Type.String({ format: 'date-time' }),
  ModifiedOn: Type.String({ format: 'date-time' }),
};
const TableSummary = named('CustomTableSummary', Type.Object(tableFields));
const TableSchema = named('CustomTable', Type.Object({ ...tableFields, RowCount: Type.Integer() }));
const CreateResult = named('CustomTableCreated', Type.Object({ ...tableFields, Created: Type.Boolean(), AddedColumns: Type.Array(Type.String()) }));

const CreateBody = named(
  'CustomTableCreateBody',
  Type.Object(
    {
      KeyColumnName: Type.String(),
      KeyDataTypeId: DataTypeId,
      KeyLength: Length,
      Columns: Type.Optional(
        Type.Array(Type.Object({ ColumnName: Type.String(), ColumnDataTypeId: DataTypeId, Length }, { additionalProperties: false }), { maxItems: 1000 }),
      ),
    },
    { additionalProperties: false },
  ),
);

const KeyValue = Type.Union([Type.String(), Type.Number(), Type.Boolean()]);
const RowModel = named(
  'CustomTableRowModel',
  Type.Object(
    {
      KeyColumnName: Type.Optional(Type.String()),
      KeyValue,
      KeyDataTypeId: Type.Optional(DataTypeId),
      Columns: Type.Optional(Type.Array(Type.Object({ ColumnName: Type.String(), Value: Type.Unknown() }, { additionalProperties: false }))),
    },
    { additionalProperties: false },
  ),
);
const OperationType = Type.Union([Type.Integer(), Type.String()], { description: 'A number or its name' });
const WriteBody = named(
  'CustomTableWriteBody',
  Type.Object(
    {
      OperationType,
      UpdateModel: Type.Optional(RowModel),
      UpdateManyModel: Type.Optional(Type.Array(RowModel)),
      UpsertManyModel: Type.Optional(Type.Array(RowModel)),
    },
    { additionalProperties: false },
  ),
);
const DeleteBody = named(
  'CustomTableDeleteBody',
  Type.Object(
    {
      OperationType,
      DeleteModel: Type.Optional(Type.Object({ KeyColumnName: Type.Optional(Type.String()), KeyValue }, { additionalProperties: false })),
      DeleteManyModel: Type.Optional(
        Type.Object({ KeyColumnName: Type.Optional(Type.String()), KeyValues: Type.Array(KeyValue) }, { additionalProperties: false }),
      ),
    },
    { additionalProperties: false },
  ),
);
const RowObject = named(
  'CustomTableRow',
  Type.Object({
    TableName: Type.String(),
    KeyValue: Type.String(),
    KeyColumnName: Type.String(),
    KeyDataTypeId: Type.Integer(),
    Columns: Type.Array(Type.Object({ ColumnName: Type.String(), ColumnDataTypeId: Type.Integer(), Value: Type.Unknown() })),
  }),
);
const toInt = (s: string | undefined): number | undefined => (s === undefined ? undefined : Number(s));

export async function customTablesRoutes(app: App, ctx: AppContext): Promise<void> {
  const route = <S extends Record<string, TSchema | Record<number, TSchema>>>(operationId: string, summary: string, extra: S, roles?: RoleName[]) => ({
    config: roles ? { ...config, roles } : config,
    schema: { tags, operationId, summary, ...extra },
  });

  app.get(
    '/api/v3/custom-tables',
    route('customTables_list', 'List the custom tables the caller may read', { response: { 200: Type.Array(TableSummary) } }, READ),
    async (request) => request.readTenant((trx, p) => listTables(trx, p)),
  );

  app.get(
    '/api/v3/custom-tables/:tableName',
    route('customTables_describe', 'Table schema and columns, with the row count', { params: TableParams, response: { 200: TableSchema } }, READ),
    async (request) => request.readTenant((trx, p) => describeTable(trx, p, request.params.tableName)),
  );

  app.post(
    '/api/v3/custom-tables/:tableName',
    route(
      'customTables_create',
      'Create the table; if it exists, add the new columns',
      {
        params: TableParams,
        body: CreateBody,
        response: { 200: CreateResult, 201: CreateResult },
      },
      SAVE,
    ),
    async (request, reply) => {
      const r = await request.writeTenant((trx, p) => ensureTable(trx, p, request.params.tableName, request.body));
      reply.code(r.created ? 201 : 200);
      return { ...summarize(r.table), Created: r.created, AddedColumns: r.addedColumns };
    },
  );

  app.delete(
    '/api/v3/custom-tables/:tableName',
    route(
      'customTables_drop',
      'Drop the entire table',
      {
        params: TableParams,
        response: { 200: Type.Object({ TableName: Type.String(), Id: Type.String(), Dropped: Type.Boolean() }) },
      },
      SAVE,
    ),
    async (request) => request.writeTenant((trx, p) => dropTable(trx, p, request.params.tableName)),
  );

  app.get(
    '/api/v3/custom-tables/:tableName/rows/values',
    route(
      'customTables_listRows',
      'All rows with column values, ordered by key',
      {
        params: TableParams,
        querystring: Type.Object({ skip: Type.Optional(Count), take: Type.Optional(Type.String({ pattern: '^(10000|[1-9][0-9]{0,3})$' })) }),
        response: { 200: Type.Array(RowObject) },
      },
      READ,
    ),
    async (request) =>
      request.readTenant((trx, p) => readRows(trx, p, request.params.tableName, { skip: toInt(request.query.skip), take: toInt(request.query.take) })),
  );

  app.get(
    '/api/v3/custom-tables/:tableName/row',
    route(
      'customTables_getRow',
      'A single row by key',
      {
        params: TableParams,
        querystring: Type.Object({ keyValue: Type.String() }),
        response: { 200: RowObject },
      },
      READ,
    ),
    async (request) => request.readTenant((trx, p) => readRow(trx, p, request.params.tableName, request.query.keyValue)),
  );

  app.get(
    '/api/v3/custom-tables/:tableName/rows/columnValue',
    route(
      'customTables_getColumnValue',
      'One column value of a row',
      {
        params: TableParams,
        querystring: Type.Object({ keyValue: Type.String(), columnName: Type.String({ pattern: NAME_PATTERN }) }),
        response: {
          200: Type.Object({
            TableName: Type.String(),
            KeyValue: Type.String(),
            ColumnName: Type.String(),
            ColumnDataTypeId: Type.Integer(),
            Value: Type.Unknown(),
          }),
        },
      },
      READ,
    ),
    async (request) => request.readTenant((trx, p) => readColumnValue(trx, p, request.params.tableName, request.query.keyValue, request.query.columnName)),
  );

  app.put(
    '/api/v3/custom-tables/:tableName/rows',
    route(
      'customTables_writeRows',
      'Insert or update rows: Update (0), UpdateMany (1), UpsertMany (2)',
      {
        params: TableParams,
        body: WriteBody,
        response: {
          200: Type.Object({
            TableName: Type.String(),
            OperationType: Type.String(),
            RowCount: Type.Integer(),
            Inserted: Type.Integer(),
            Updated: Type.Integer(),
          }),
        },
      },
      SAVE,
    ),
    async (request) => request.writeTenant((trx, p) => writeRows(trx, p, request.params.tableName, request.body, request.url)),
  );

  app.delete(
    '/api/v3/custom-tables/:tableName/rows',
    route(
      'customTables_deleteRows',
      'Delete rows: Delete (0), DeleteAll (1), DeleteMany (2)',
      {
        params: TableParams,
        body: DeleteBody,
        response: { 200: Type.Object({ TableName: Type.String(), OperationType: Type.String(), Deleted: Type.Integer() }) },
      },
      SAVE,
    ),
    async (request) => request.writeTenant((trx, p) => deleteRows(trx, p, request.params.tableName, request.body, request.url)),
  );

  app.put(
    '/api/v3/custom-table-definitions/:id',
    route(
      'customTableDefinitions_setRoles',
      'Set the Read and Save roles of a table',
      {
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        body: Type.Object(
          { ReadRoles: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })), SaveRoles: Type.Optional(Type.Array(Type.String(), { maxItems: 100 })) },
          { additionalProperties: false },
        ),
        response: { 200: TableSummary },
      },
      ['Administrator'],
    ),
    async (request) => request.writeTenant((trx, p) => setDefinition(trx, p, request.params.id, request.body)),
  );

  app.get(
    '/api/v3/custom-tables/:tableName/export',
    route(
      'customTables_export',
      'Export the table (schema and every row) as a JSON file',
      {
        params: TableParams,
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'The export file: the table schema and its rows, streamed' }) },
      },
      READ,
    ),
    async (request, reply) => {
      const out = new PassThrough();
      let sending = false;
      const opened = new Promise<TableDef>((resolve, reject) => {
        request
          .readTenant(async (trx, p) => {
            const t = await openExport(trx, p, request.params.tableName);
            sending = true;
            resolve(t);
            await writeExport(trx, t, (text) => writeTo(out, text));
          })
          .then(
            () => out.end(),
            (err) => {
              // Before the headers the error is the answer; after them the client sees a cut-off download.
              if (sending) out.destroy(err);
              else reject(err);
            },
          );
      });
      const t = await opened;
      reply.header('content-disposition', `attachment; filename="${t.name}.json"`).type('application/json; charset=utf-8');
      return reply.send(out);
    },
  );

  // The import body is read as a stream (never buffered whole), so this route gets its own body parser.
  await app.register(async (plain) => {
    const sub = plain.withTypeProvider<TypeBoxTypeProvider>();
    sub.removeAllContentTypeParsers();
    sub.addContentTypeParser('*', (_request, payload, done) => done(null, payload));
    sub.put(
      '/api/v3/custom-tables/:tableName/import',
      route(
        'customTables_import',
        'Import a table from an export file: create it if needed and upsert every row, atomically',
        {
          params: TableParams,
          response: {
            200: Type.Object({
              TableName: Type.String(),
              Created: Type.Boolean(),
              AddedColumns: Type.Array(Type.String()),
              RowCount: Type.Integer(),
              Inserted: Type.Integer(),
              Updated: Type.Integer(),
            }),
          },
        },
        SAVE,
      ),
      async (request) => {
        const body = (request.body ?? null) as Readable | null;
        const { customTableImportLimitBytes: maxBytes, customTableImportRowLimitBytes: maxRowChars } = ctx.config;
        const declared = Number(request.headers['content-length']);
        if (declared > maxBytes) throw tooLarge(maxBytes);
        // The body stream is read once, so a conflict cannot be retried here.
        return request.writeTenant((trx, p) => importTable(trx, p, request.params.tableName, decode(body, maxBytes), request.url, { maxRowChars }), {
          retry: false,
        });
      },
    );
  });
}

const tooLarge = (maxBytes: number): HttpProblem =>
  new HttpProblem(413, `The import file is larger than ${maxBytes} bytes (ATRIUM_CUSTOM_TABLE_IMPORT_LIMIT_BYTES); nothing was imported.`);

/** The body as text, refused (413) once it passes `maxBytes`, whatever Content-Length claimed. */
async function* decode(body: Readable | null, maxBytes: number): AsyncIterable<string> {
  if (!body) return;
  const decoder = new StringDecoder('utf8');
  let bytes = 0;
  // Iterated by hand: leaving a for-await would destroy the request, and with it the socket the 413 goes out on.
  const chunks = body[Symbol.asyncIterator]();
  for (;;) {
    const next = await chunks.next();
    if (next.done) break;
    bytes += (next.value as Buffer).length;
    if (bytes > maxBytes) throw tooLarge(maxBytes);
    yield decoder.write(next.value as Buffer);
  }
  yield decoder.end();
}

/** Writes with backpressure; rejects when the client has gone away, which rolls the export's transaction back. */
async function writeTo(out: PassThrough, text: string): Promise<void> {
  if (out.destroyed) throw new Error('The export client went away.');
  if (out.write(text)) return;
  const ac = new AbortController();
  await Promise.race([once(out, 'drain', { signal: ac.signal }), once(out, 'close', { signal: ac.signal })]).finally(() => ac.abort());
  if (out.destroyed) throw new Error('The export client went away.');
}
