// Export and import of a whole custom table as one JSON file: the schema, then every row. Export reads
// through a server-side cursor and writes the JSON piece by piece; import reads the file incrementally and
// upserts in batches inside one transaction, so neither holds the table in memory and an import is atomic.
import { sql } from 'kysely';
import type { Principal } from '../platform/auth/principal.ts';
import type { Trx } from '../platform/db/database.ts';
import { badRequest } from '../platform/errors.ts';
import { fullTypeName } from '../platform/events/catalogue.ts';
import { appendEvent } from '../platform/events/outbox.ts';
import { assertMay, ensureTable, ROW_DOCUMENT, requireTable, summarize, TABLE_DOCUMENT, type TableDef, type TableSpec, tableRef } from './catalogue.ts';
import { toJson } from './column-types.ts';
import { JsonStreamError, type RowsDocumentEvent, RowsDocumentParser } from './json-stream.ts';
import { type PreparedRow, Problems, prepareRow, upsertPrepared } from './rows.ts';

export const EXPORT_FORMAT = 'atrium.custom-table';
const FETCH_SIZE = 1000;
const IMPORT_BATCH = 2000;
/** A batch is written once it holds this many characters of row text, whatever its row count. */
const IMPORT_BATCH_CHARS = 8 * 1024 * 1024;
/** Rows read before the header that defines the table (a file whose Columns come last) are held up to these bounds. */
const MAX_WAITING_ROWS = IMPORT_BATCH;
const MAX_WAITING_CHARS = IMPORT_BATCH_CHARS;

export interface ImportLimits {
  /** Largest member or row of the file, in characters of its JSON text. */
  maxRowChars: number;
}

/** Checks the table exists and may be read; call before sending headers. */
export async function openExport(trx: Trx, p: Principal, tableName: string): Promise<TableDef> {
  const t = await requireTable(trx, tableName, 'share');
  assertMay(p, t, 'read');
  return t;
}

/** Writes the export document of an opened table; `write` resolves when the consumer wants more. */
export async function writeExport(trx: Trx, t: TableDef, write: (text: string) => Promise<void>): Promise<number> {
  const s = summarize(t);
  const header = {
    Format: EXPORT_FORMAT,
    Version: 1,
    TableName: s.TableName,
    KeyColumnName: s.KeyColumnName,
    KeyDataTypeId: s.KeyDataTypeId,
    ...(s.KeyLength !== undefined ? { KeyLength: s.KeyLength } : {}),
    Columns: s.Columns,
    ExportedOnUtc: new Date().toISOString(),
  };
  await write(`${JSON.stringify(header).slice(0, -1)},"Rows":[`);
  const cols = [t.key, ...t.columns];
  const cursor = sql.id(`ct_export_${t.physical.slice(3, 15)}`);
  await sql`declare ${cursor} no scroll cursor for select ${sql.join(cols.map((c) => sql.id(c.physical)))} from ${tableRef(t)} order by ${sql.id(t.key.physical)}`.execute(
    trx,
  );
  let n = 0;
  for (;;) {
    const res = await sql<Record<string, unknown>>`fetch forward ${sql.raw(String(FETCH_SIZE))} from ${cursor}`.execute(trx);
    if (res.rows.length === 0) break;
    let text = '';
    for (const r of res.rows) {
      const o: Record<string, unknown> = {};
      for (const c of cols) o[c.name] = toJson(c, r[c.physical]);
      text += `${n === 0 ? '\n' : ',\n'}${JSON.stringify(o)}`;
      n++;
    }
    await write(text);
  }
  await sql`close ${cursor}`.execute(trx);
  await write('\n]}\n');
  return n;
}

export interface ImportResult {
  TableName: string;
  Created: boolean;
  AddedColumns: string[];
  RowCount: number;
  Inserted: number;
  Updated: number;
}

function specFrom(header: Record<string, unknown>): TableSpec | null {
  if (!('KeyColumnName' in header && 'KeyDataTypeId' in header && 'Columns' in header)) return null;
  const cols = header.Columns;
  if (!Array.isArray(cols) || cols.some((c) => typeof c !== 'object' || c === null || Array.isArray(c))) {
    throw badRequest('Columns of the import file must be an array of {ColumnName, ColumnDataTypeId} objects.', [
      { path: '/body/Columns', message: 'must be an array of objects' },
    ]);
  }
  return {
    KeyColumnName: header.KeyColumnName as string,
    KeyDataTypeId: header.KeyDataTypeId as number,
    KeyLength: header.KeyLength as number | undefined,
    Columns: cols as TableSpec['Columns'],
  };
}

/**
 * Imports an export document into `tableName` (the name in the path wins over the file's TableName):
 * creates the table or adds missing columns, then upserts every row; any bad row rejects the whole import.
 */
export async function importTable(
  trx: Trx,
  p: Principal,
  tableName: string,
  input: AsyncIterable<string>,
  url: string,
  limits: ImportLimits,
): Promise<ImportResult> {
  const parser = new RowsDocumentParser(limits.maxRowChars);
  const header: Record<string, unknown> = {};
  let table: TableDef | null = null;
  let created = false;
  let added: string[] = [];
  let waiting: { index: number; value: unknown; chars: number }[] = [];
  let waitingChars = 0;
  let batch: PreparedRow[] = [];
  let batchChars = 0;
  let rowCount = 0;
  let inserted = 0;
  let updated = 0;

  const ensure = async (): Promise<TableDef> => {
    if (table) return table;
    if (header.Format !== undefined && header.Format !== EXPORT_FORMAT) {
      throw badRequest(`The file is not a custom-table export (Format ${JSON.stringify(header.Format)}).`, [
        { path: '/body/Format', message: `must be ${EXPORT_FORMAT}` },
      ]);
    }
    const spec = specFrom(header);
    if (!spec) {
      throw badRequest('The import file needs KeyColumnName, KeyDataTypeId and Columns.', [
        { path: '/body', message: 'KeyColumnName, KeyDataTypeId and Columns are required' },
      ]);
    }
    const r = await ensureTable(trx, p, tableName, spec);
    assertMay(p, r.table, 'save');
    created = r.created;
    added = r.addedColumns;
    table = r.table;
    return table;
  };

  const flush = async () => {
    if (batch.length === 0) return;
    const r = await upsertPrepared(trx, table!, batch);
    inserted += r.inserted;
    updated += r.updated;
    batch = [];
    batchChars = 0;
  };

  const take = async (index: number, value: unknown, chars: number) => {
    const t = await ensure();
    const problems = new Problems();
    const path = `/body/Rows/${index}`;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      problems.add(path, `row ${index}: must be an object of column names and values`);
      problems.fail('The import');
      return;
    }
    let keyValue: unknown;
    let keyName = t.key.name;
    const cells: { name: string; value: unknown; namePath: string; valuePath: string }[] = [];
    for (const [name, v] of Object.entries(value)) {
      if (name.toLowerCase() === t.key.physical) {
        keyValue = v;
        keyName = name;
      } else cells.push({ name, value: v, namePath: `${path}/${name}`, valuePath: `${path}/${name}` });
    }
    const row = prepareRow(t, String(index), { value: keyValue, path: `${path}/${keyName}` }, cells, problems);
    problems.fail('The import');
    batch.push(row!);
    batchChars += chars;
    rowCount++;
    if (batch.length >= IMPORT_BATCH || batchChars >= IMPORT_BATCH_CHARS) await flush();
  };

  try {
    const events: RowsDocumentEvent[] = [];
    for await (const chunk of input) {
      parser.feed(chunk, events);
      for (const e of events) {
        if (e.kind === 'member') header[e.key] = e.value;
        else if (table || specFrom(header)) {
          for (const w of waiting) await take(w.index, w.value, w.chars);
          waiting = [];
          waitingChars = 0;
          await take(e.index, e.value, e.chars);
        } else {
          waiting.push({ index: e.index, value: e.value, chars: e.chars });
          waitingChars += e.chars;
          if (waiting.length > MAX_WAITING_ROWS || waitingChars > MAX_WAITING_CHARS) {
            throw badRequest(
              `The import file holds more than ${MAX_WAITING_ROWS} rows or ${MAX_WAITING_CHARS} characters of rows before KeyColumnName, KeyDataTypeId and Columns; put the table's definition first (as an export does).`,
              [{ path: '/body/Rows', message: 'comes before the table definition and is too large to hold' }],
            );
          }
        }
      }
      events.length = 0;
    }
    parser.end();
  } catch (err) {
    if (err instanceof JsonStreamError) throw badRequest(err.message, [{ path: '/body', message: err.message }]);
    throw err;
  }
  const t = await ensure();
  for (const w of waiting) await take(w.index, w.value, w.chars);
  await flush();
  await appendEvent(trx, {
    tenantId: p.tenantId,
    actionType: 'BatchExecuted',
    documentType: TABLE_DOCUMENT,
    documentId: t.id,
    userId: p.userId,
    detail: {
      DocumentType: fullTypeName(ROW_DOCUMENT),
      Url: url,
      TableName: t.name,
      OperationType: 'Import',
      RowCount: rowCount,
      Inserted: inserted,
      Updated: updated,
    },
  });
  return { TableName: t.name, Created: created, AddedColumns: added, RowCount: rowCount, Inserted: inserted, Updated: updated };
}
