// CSV (RFC 4180), NDJSON and JSON (the API's envelope) exports of a named query, read only as fast as the
// client reads, so memory stays flat at any row count: all through COPY (./copy-csv.ts, ./copy-ndjson.ts).
import { Readable } from 'node:stream';
import type { RawBuilder } from 'kysely';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { exportsInFlight } from '../../platform/metrics.ts';
import type { CatalogueColumn } from '../definition.ts';
import { type CsvOptions, openCopyCsv } from './copy-csv.ts';
import { openCopyJson } from './copy-ndjson.ts';
import { EXPORT_STAGE } from './copy-out.ts';
import { copyTransaction, type ExportSource } from './copy-statement.ts';

export type ExportFormat = 'csv' | 'ndjson' | 'json';

export const EXPORT_CONTENT_TYPES: Record<ExportFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  json: 'application/json; charset=utf-8',
};

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
    await client.query(copyTransaction(tenantId, deadline));
    source =
      format === 'csv'
        ? await openCopyCsv(client, db.kysely, query, columns, csv)
        : await openCopyJson(client, db.kysely, query, columns, { envelope: format === 'json' });
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
  const stream = Readable.from(rest(), EXPORT_STAGE);
  // A stream destroyed before its first read (the client went away while the export started: the response is
  // never piped) ends the generator without running it, so its `finally` never releases the connection, which
  // then stays idle in its transaction for good. Released here too (release is once only).
  stream.once('close', () => {
    if (released) return;
    chunks.stop();
    release(true);
  });
  return { stream, rowCount: () => rowCount };
}
