// Writes an export to a file in the schedule's format. csv and ndjson are the Data Extraction streams
// as they are; json wraps the NDJSON rows in the API's envelope ({"data":[…],"totalCount":n}); xlsx
// reads the NDJSON rows and writes typed cells. Every path streams with backpressure.
import type { Readable } from 'node:stream';
import type { CatalogueColumn } from '../extraction/definition.ts';
import { ndjsonLines, xlsxFromNdjson } from '../extraction/xlsx.ts';
import type { ExportStore } from '../platform/export-store.ts';
import type { ScheduleFormat } from './service.ts';

export interface WrittenFile {
  rows: number;
  bytes: number;
}

async function* jsonEnvelope(stream: Readable, counter: { rows: number }): AsyncGenerator<string> {
  yield '{"data":[';
  let batch = '';
  for await (const line of ndjsonLines(stream)) {
    batch += counter.rows++ === 0 ? `\n${line}` : `,\n${line}`;
    if (batch.length >= 64 * 1024) {
      yield batch;
      batch = '';
    }
  }
  yield `${batch}\n],"totalCount":${counter.rows}}\n`;
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
 * Streams `stream` (CSV for csv, NDJSON for the others) in `format` to `key` of the export store, which
 * publishes it once complete. `rowCount` is the export's own count (csv, ndjson), read once the stream has ended.
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
  let source: AsyncIterable<string | Buffer>;
  if (format === 'json') source = jsonEnvelope(stream, counter);
  else if (format === 'xlsx') source = xlsxFromNdjson(name, columns, stream, counter);
  else source = stream;
  await store.put(key, counted(source, total), signal);
  const rows = format === 'csv' || format === 'ndjson' ? (rowCount() ?? counter.rows) : counter.rows;
  return { rows, bytes: total.bytes };
}
