// CSV (RFC 4180) and NDJSON exports of a named query, streamed from a server-side cursor: rows are
// fetched in batches only as fast as the client reads them, so memory stays flat at any row count.
import { Readable } from 'node:stream';
import type { RawBuilder } from 'kysely';
import QueryStream from 'pg-query-stream';
import { type DatabaseHandle, tenantBinding } from '../platform/db/database.ts';
import type { CatalogueColumn, ColumnType } from './definition.ts';

export type ExportFormat = 'csv' | 'ndjson';

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

const BATCH_ROWS = 1000;
// Values arrive as PostgreSQL's text; formatting them straight from text avoids parsing and re-printing.
const RAW_TYPES = { getTypeParser: () => (v: string) => v };

/**
 * Starts the export and waits for its first batch, so a query that fails early (bad input, the
 * time limit) still answers a problem; after that, a failure cuts the stream short.
 */
export async function openExport(
  db: DatabaseHandle,
  tenantId: string,
  deadline: number,
  query: RawBuilder<unknown>,
  columns: CatalogueColumn[],
  format: ExportFormat,
): Promise<Readable> {
  const compiled = query.compile(db.kysely);
  const client = await db.pool.connect();
  let released = false;
  const release = (destroy: boolean) => {
    if (released) return;
    released = true;
    client.release(destroy);
  };
  try {
    await client.query(`begin; ${tenantBinding(tenantId, deadline)}; set local timezone = 'UTC'; set local datestyle = 'ISO, YMD'`);
  } catch (err) {
    release(true);
    throw err;
  }
  const stream = client.query(new QueryStream(compiled.sql, compiled.parameters as unknown[], { batchSize: BATCH_ROWS, rowMode: 'array', types: RAW_TYPES }));
  const chunks = format === 'csv' ? csvChunks(stream, columns) : ndjsonChunks(stream, columns);
  const finish = async () => {
    try {
      await client.query('commit');
      release(false);
    } catch {
      release(true);
    }
  };
  let first: IteratorResult<string>;
  try {
    first = await chunks.next();
  } catch (err) {
    stream.destroy();
    release(true);
    throw err;
  }
  async function* rest(): AsyncGenerator<string> {
    let done = false;
    try {
      if (!first.done) yield first.value;
      for (;;) {
        const next = await chunks.next();
        if (next.done) break;
        yield next.value;
      }
      done = true;
    } finally {
      if (done) await finish();
      else {
        // The client went away or the query failed mid-stream: drop the connection (PostgreSQL rolls back).
        stream.destroy();
        release(true);
      }
    }
  }
  return Readable.from(rest(), { objectMode: false });
}

/**
 * One chunk per cursor batch, read from the stream's cursor directly: no per-row promise or buffer, so
 * rows die young and the heap stays small. The cursor answers fewer rows than asked once it is done.
 */
async function* batched(stream: QueryStream, header: string, line: (row: (string | null)[]) => string): AsyncGenerator<string> {
  const cursor = stream.cursor as { read: (n: number, cb: (err: Error | undefined, rows: (string | null)[][]) => void) => void };
  let out = header;
  for (;;) {
    const rows = await new Promise<(string | null)[][]>((resolve, reject) => cursor.read(BATCH_ROWS, (err, r) => (err ? reject(err) : resolve(r))));
    for (const row of rows) out += line(row);
    if (out) yield out;
    out = '';
    if (rows.length < BATCH_ROWS) return;
  }
}

function csvChunks(stream: QueryStream, columns: CatalogueColumn[]): AsyncGenerator<string> {
  const formatters = columns.map((c) => csvFormatter(c.type));
  const header = `${columns.map((c) => csvText(c.name)).join(',')}\r\n`;
  return batched(stream, header, (row) => {
    let out = '';
    for (let i = 0; i < formatters.length; i++) {
      if (i > 0) out += ',';
      const v = row[i];
      if (v !== null) out += formatters[i](v);
    }
    return `${out}\r\n`;
  });
}

function ndjsonChunks(stream: QueryStream, columns: CatalogueColumn[]): AsyncGenerator<string> {
  const formatters = columns.map((c) => jsonFormatter(c.type));
  const keys = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`);
  return batched(stream, '', (row) => {
    let out = '';
    for (let i = 0; i < formatters.length; i++) {
      const v = row[i];
      out += keys[i] + (v === null ? 'null' : formatters[i](v));
    }
    return `${columns.length ? out : '{'}}\n`;
  });
}

/** RFC 4180: quote a field holding a comma, quote, CR or LF, doubling the quotes. */
function csvText(v: string): string {
  return /[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

function csvFormatter(type: ColumnType): (v: string) => string {
  if (type === 'boolean') return (v) => (v === 't' ? 'true' : 'false');
  if (type === 'datetime') return isoInstant;
  if (type === 'decimal') return decimalText;
  if (type === 'integer' || type === 'date' || type === 'guid') return (v) => v;
  return csvText;
}

function jsonFormatter(type: ColumnType): (v: string) => string {
  switch (type) {
    case 'boolean':
      return (v) => (v === 't' ? 'true' : 'false');
    case 'decimal':
      return (v) => (v === 'NaN' || v.endsWith('Infinity') ? 'null' : decimalText(v));
    case 'integer':
      return (v) => v;
    case 'datetime':
      return (v) => `"${isoInstant(v)}"`;
    case 'date':
    case 'guid':
      return (v) => `"${v}"`;
    case 'object':
      // jsonb arrives as JSON text; anything else (base64 of a VarBinary) as a string.
      return (v) => (v.startsWith('{') || v.startsWith('[') ? v : JSON.stringify(v));
    default:
      return (v) => JSON.stringify(v);
  }
}

/** numeric(12,4) prints '1.5000'; the JSON pages answer 1.5, so every format drops the trailing zeros. */
function decimalText(v: string): string {
  if (!v.includes('.') || v.includes('e') || v.includes('E')) return v;
  let end = v.length;
  while (v.charCodeAt(end - 1) === 48) end--;
  if (v.charCodeAt(end - 1) === 46) end--;
  return end === v.length ? v : v.slice(0, end);
}

/** '2024-03-31 14:30:05.123456+00' (timezone UTC) -> '2024-03-31T14:30:05.123Z', as the JSON pages print it. */
export function isoInstant(v: string): string {
  if (v.length < 22 || v[10] !== ' ' || !v.endsWith('+00')) return v; // infinity, BC dates: as PostgreSQL wrote them
  const fraction = v.length > 22 ? `${v.slice(20, v.length - 3)}000`.slice(0, 3) : '000';
  return `${v.slice(0, 10)}T${v.slice(11, 19)}.${fraction}Z`;
}
