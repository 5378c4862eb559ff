// Writes an export to a file in the schedule's format. csv, ndjson and json (the API's envelope,
// {"data":[…],"totalCount":n}) are the Data Extraction streams as they are; xlsx reads the NDJSON rows
// and writes typed cells. Every path streams with backpressure.
import type { Readable } from 'node:stream';
import type { CatalogueColumn } from '../extraction/service.ts';
import { xlsxFromNdjson } from '../extraction/service.ts';
import type { ExportStore } from '../platform/export-store.ts';
import type { ScheduleFormat } from './service.ts';

export interface WrittenFile {
  rows: number;
  bytes: number;
}

/** Counts bytes on their way to the file. */
async function* counted(source: AsyncIterable<string | Buffer>, total: { bytes: number }): AsyncGenerator<Buffer> {
  for await (const chunk of source) {
    const buf = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    total.bytes += buf.length;
    yield buf;
  }
}

/**
 * Streams `stream` (the export in `format`, NDJSON for xlsx) to `key` of the export store, which publishes
 * it once complete. `rowCount` is the export's own count, read once the stream has ended.
 */
export async function writeExportFile(
  store: ExportStore,
  key: string,
  format: ScheduleFormat,
  name: string,
  columns: CatalogueColumn[],
  stream: Readable,
  rowCount: () => number | null,
  signal: AbortSignal,
): Promise<WrittenFile> {
  const counter = { rows: 0 };
  const total = { bytes: 0 };
  const source: AsyncIterable<string | Buffer> = format === 'xlsx' ? xlsxFromNdjson(name, columns, stream, counter) : stream;
  await store.put(key, counted(source, total), signal);
  const rows = format === 'xlsx' ? counter.rows : (rowCount() ?? counter.rows);
  return { rows, bytes: total.bytes };
}
