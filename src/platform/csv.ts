// One CSV reader, on csv-parse: the records of a file as arrays of cells, read in slices so a large file
// never stalls the event loop, each record bounded before it is kept, and a file that cannot be read
// failing with the line where the parser stopped. The user feed reads its HR files with it.
import { Readable } from 'node:stream';
import { setImmediate } from 'node:timers/promises';
import { type CsvError, parse } from 'csv-parse';

export interface CsvReadOptions {
  /** The largest record in bytes; a larger one fails the file (csv-parse's max_record_size). */
  maxRecordBytes: number;
  /** The field delimiter; default: detectDelimiter. */
  delimiter?: string;
  /** The quote character; default ". */
  quote?: string;
}

/** A file that is not readable CSV: `message` says why and where, in words for the one who sent it. */
export class CsvReadError extends Error {}

/** Read in slices: the parser yields to the event loop between them. */
const SLICE = 64 * 1024;

/** Records parsed between two turns of the event loop (a few milliseconds of work). */
const YIELD_EVERY = 200;

/**
 * The records of `bytes` (a UTF-8 BOM skipped, quotes relaxed, rows of any length), one at a time. Throws
 * CsvReadError for a broken quote or an oversized record. `recordsRead` in the error's words is what the
 * caller has taken so far.
 */
export async function* csvRecords(bytes: Buffer, options: CsvReadOptions): AsyncGenerator<string[]> {
  const parser = parse({
    bom: true,
    delimiter: options.delimiter ?? detectDelimiter(bytes, options.maxRecordBytes),
    quote: options.quote ?? '"',
    relax_column_count: true,
    relax_quotes: true,
    max_record_size: options.maxRecordBytes,
  });
  const source = Readable.from(
    (function* () {
      for (let i = 0; i < bytes.length; i += SLICE) yield bytes.subarray(i, i + SLICE);
    })(),
  );
  source.pipe(parser);
  let read = 0;
  try {
    let sinceTurn = 0;
    for await (const cells of parser as AsyncIterable<string[]>) {
      // The stream alone hands records over in microtasks: give the event loop a turn every few hundred.
      if (++sinceTurn >= YIELD_EVERY) {
        sinceTurn = 0;
        await setImmediate();
      }
      read++;
      yield cells;
    }
  } catch (err) {
    if (err instanceof CsvReadError || !isCsvError(err)) throw err;
    throw new CsvReadError(csvProblem(err, read, options.maxRecordBytes));
  } finally {
    source.destroy();
    parser.destroy();
  }
}

const isCsvError = (err: unknown): err is CsvError => err instanceof Error && typeof (err as { code?: unknown }).code === 'string' && 'lines' in err;

/** The parser's error in words (the line where it stopped). */
function csvProblem(err: CsvError, recordsRead: number, maxRecordBytes: number): string {
  const where = typeof err.lines === 'number' ? `line ${err.lines}` : `after record ${recordsRead}`;
  switch (err.code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return `the CSV ends inside a quoted cell (a quote opened before ${where} is never closed)`;
    case 'CSV_MAX_RECORD_SIZE':
      return `a record at ${where} is larger than ${maxRecordBytes.toLocaleString('en-US')} bytes`;
    default:
      return `the CSV cannot be read at ${where}: ${err.message}`;
  }
}

/** Comma unless the first line holds semicolons and no commas (files saved by spreadsheet programs in some locales). */
export function detectDelimiter(bytes: Buffer, maxRecordBytes: number): string {
  const head = bytes.subarray(0, Math.min(bytes.length, maxRecordBytes)).toString('utf8');
  const first = head.slice(0, head.search(/\r?\n|$/));
  return !first.includes(',') && first.includes(';') ? ';' : ',';
}
