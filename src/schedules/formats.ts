// Writes an export to a file in the schedule's format. csv and ndjson are the Data Extraction streams
// as they are; json wraps the NDJSON rows in the API's envelope ({"data":[…],"totalCount":n}); xlsx
// reads the NDJSON rows and writes typed cells. Every path streams with backpressure.
import type { Readable } from 'node:stream';
import type { CatalogueColumn, ColumnType } from '../extraction/definition.ts';
import type { ExportStore } from '../platform/export-store.ts';
import type { ScheduleFormat } from './service.ts';
import { sheetNameOf, type XlsxCellType, xlsxChunks } from './xlsx.ts';

export interface WrittenFile {
  rows: number;
  bytes: number;
}

/** NDJSON lines of a stream, without their line feeds. */
async function* lines(stream: Readable): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of stream) {
    const text = rest + (typeof chunk === 'string' ? chunk : chunk.toString('utf8'));
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      yield text.slice(start, nl);
      start = nl + 1;
    }
    rest = text.slice(start);
  }
  if (rest) yield rest;
}

async function* jsonEnvelope(stream: Readable, counter: { rows: number }): AsyncGenerator<string> {
  yield '{"data":[';
  let batch = '';
  for await (const line of lines(stream)) {
    batch += counter.rows++ === 0 ? `\n${line}` : `,\n${line}`;
    if (batch.length >= 64 * 1024) {
      yield batch;
      batch = '';
    }
  }
  yield `${batch}\n],"totalCount":${counter.rows}}\n`;
}

const XLSX_TYPES: Record<ColumnType, XlsxCellType> = {
  string: 'string',
  guid: 'string',
  object: 'string',
  decimal: 'number',
  integer: 'number',
  boolean: 'boolean',
  date: 'date',
  datetime: 'datetime',
};

async function* xlsxRows(stream: Readable, columns: CatalogueColumn[], counter: { rows: number }): AsyncGenerator<unknown[]> {
  for await (const line of lines(stream)) {
    const row = JSON.parse(line) as Record<string, unknown>;
    counter.rows++;
    yield columns.map((c) => row[c.name]);
  }
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
  else if (format === 'xlsx')
    source = xlsxChunks(
      sheetNameOf(name),
      columns.map((c) => ({ name: c.name, type: XLSX_TYPES[c.type] })),
      xlsxRows(stream, columns, counter),
    );
  else source = stream;
  await store.put(key, counted(source, total), signal);
  const rows = format === 'csv' || format === 'ndjson' ? (rowCount() ?? counter.rows) : counter.rows;
  return { rows, bytes: total.bytes };
}
