// CSV (RFC 4180) and NDJSON exports of a named query, read only as fast as the client reads, so
// memory stays flat at any row count: both through COPY (./copy-csv.ts, ./copy-ndjson.ts); NDJSON of
// fields named longer than an identifier may be from a server-side cursor.
import { Readable } from 'node:stream';
import type { CompiledQuery, RawBuilder } from 'kysely';
import type pg from 'pg';
import QueryStream from 'pg-query-stream';
import { type DatabaseHandle, tenantBinding } from '../platform/db/database.ts';
import { exportsInFlight } from '../platform/metrics.ts';
import { type CsvOptions, EXPORT_HIGH_WATER_MARK, type ExportSource, openCopyCsv } from './copy-csv.ts';
import { ndjsonByCopy, openCopyNdjson } from './copy-ndjson.ts';
import type { CatalogueColumn, ColumnType } from './definition.ts';

export type ExportFormat = 'csv' | 'ndjson';

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

const BATCH_ROWS = 1000;
// Values arrive as PostgreSQL's text; formatting them straight from text avoids parsing and re-printing.
const RAW_TYPES = { getTypeParser: () => (v: string) => v };

export interface OpenedExport {
  stream: Readable;
  /** The data rows written (header not counted), once the stream has ended; null before. */
  rowCount: () => number | null;
}

/**
 * Starts the export in its own tenant-bound transaction and waits for its first chunk, so a query
 * that fails early (bad input, the time limit) still answers a problem; after that, a failure cuts
 * the stream short. A stream that is not read to its end (the client went away) destroys the connection.
 */
export async function openExport(
  db: DatabaseHandle,
  tenantId: string,
  deadline: number,
  query: RawBuilder<unknown>,
  columns: CatalogueColumn[],
  format: ExportFormat,
  csv: CsvOptions = {},
): Promise<OpenedExport> {
  const client = await db.pool.connect();
  // In flight from the connection's checkout to its release: the export holds that connection throughout.
  exportsInFlight.inc({ format });
  let released = false;
  const release = (destroy: boolean) => {
    if (released) return;
    released = true;
    exportsInFlight.dec({ format });
    client.release(destroy);
  };
  let source: ExportSource | undefined;
  let first: IteratorResult<Buffer | string>;
  try {
    // standard_conforming_strings: the CSV path inlines parameters into COPY and reads '…' as plain literals.
    await client.query(
      `begin; ${tenantBinding(tenantId, deadline)}; set local timezone = 'UTC'; set local datestyle = 'ISO, YMD'; set local standard_conforming_strings = on`,
    );
    source =
      format === 'csv'
        ? await openCopyCsv(client, db.kysely, query, columns, csv)
        : ndjsonByCopy(columns)
          ? await openCopyNdjson(client, db.kysely, query, columns)
          : openCursorNdjson(client, query.compile(db.kysely), columns);
    first = await source.chunks.next();
  } catch (err) {
    source?.stop();
    release(true);
    throw err;
  }
  const chunks = source;
  let rowCount: number | null = null;
  async function* rest(): AsyncGenerator<Buffer | string> {
    let done = false;
    try {
      if (!first.done) yield first.value;
      for (;;) {
        const next = await chunks.chunks.next();
        if (next.done) break;
        yield next.value;
      }
      // After COMMIT the COPY's command tag has surely been read (pg answers queries in order).
      await client.query('commit');
      rowCount = chunks.rows();
      done = true;
    } finally {
      if (done) release(false);
      else {
        // The client went away or the query failed mid-stream: drop the connection (PostgreSQL rolls back).
        chunks.stop();
        release(true);
      }
    }
  }
  return { stream: Readable.from(rest(), { objectMode: false, highWaterMark: EXPORT_HIGH_WATER_MARK }), rowCount: () => rowCount };
}

/** NDJSON from a server-side cursor, in batches of BATCH_ROWS. */
function openCursorNdjson(client: pg.PoolClient, compiled: CompiledQuery, columns: CatalogueColumn[]): ExportSource {
  const stream = client.query(new QueryStream(compiled.sql, compiled.parameters as unknown[], { batchSize: BATCH_ROWS, rowMode: 'array', types: RAW_TYPES }));
  const counter = { rows: 0 };
  return { chunks: ndjsonChunks(stream, columns, counter), rows: () => counter.rows, stop: () => stream.destroy() };
}

/**
 * One chunk per cursor batch, read from the stream's cursor directly: no per-row promise or buffer, so
 * rows die young and the heap stays small. The cursor answers fewer rows than asked once it is done.
 */
async function* ndjsonChunks(stream: QueryStream, columns: CatalogueColumn[], counter: { rows: number }): AsyncGenerator<string> {
  const cursor = stream.cursor as { read: (n: number, cb: (err: Error | undefined, rows: (string | null)[][]) => void) => void };
  const formatters = columns.map((c) => jsonFormatter(c.type));
  const keys = columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`);
  for (;;) {
    const rows = await new Promise<(string | null)[][]>((resolve, reject) => cursor.read(BATCH_ROWS, (err, r) => (err ? reject(err) : resolve(r))));
    let out = '';
    for (const row of rows) {
      let line = '';
      for (let i = 0; i < formatters.length; i++) {
        const v = row[i];
        line += keys[i] + (v === null ? 'null' : formatters[i](v));
      }
      out += `${columns.length ? line : '{'}}\n`;
    }
    counter.rows += rows.length;
    if (out) yield out;
    if (rows.length < BATCH_ROWS) return;
  }
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

/** numeric(12,4) prints '1.5000'; the JSON pages answer 1.5, so NDJSON drops the trailing zeros too. */
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
