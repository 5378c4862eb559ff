// Rows of COPY's text format rewritten by the server (decision 0040): JSON lines (./json-lines.ts) and RFC 4180
// CSV (CsvRows below). PostgreSQL's text format is its cheapest: each value as its output function prints it,
// tab-separated, a backslash, \b \f \n \r \t and \v escaped with a backslash, \N for NULL, one line per row.
// A converter walks each row's bytes once into a reused scratch Buffer.
import { pipeline, Transform, type TransformCallback } from 'node:stream';
import type pg from 'pg';
import { CopyOut, EXPORT_STAGE } from './copy-out.ts';
import type { ExportSource } from './copy-statement.ts';

export const TAB = 9;
export const LF = 10;
const CR = 13;
const COMMA = 44;
export const QUOTE = 34;
export const BACKSLASH = 92;
/** What COPY's escape letter stands for (b f n r t v); any other escaped byte (a backslash) is itself. */
export const UNESCAPE = new Uint8Array(256).map((_, i) => i);
for (const [letter, byte] of [
  ['b', 8],
  ['f', 12],
  ['n', 10],
  ['r', 13],
  ['t', 9],
  ['v', 11],
] as const)
  UNESCAPE[letter.charCodeAt(0)] = byte;

/** \N alone is NULL; a backslash in the data is written \\, so \N never starts a longer field. */
export const isNull = (input: Buffer, i: number): boolean => input[i] === BACKSLASH && input[i + 1] === 78 && (input[i + 2] === TAB || input[i + 2] === LF);

/** The row walk shared by the converters: whole rows of the chunks given, a partial one carried over. */
export abstract class CopyTextRows {
  readonly #rowOverhead: number;
  readonly #byteExpansion: number;
  #carry: Buffer | null = null;
  #out = Buffer.allocUnsafeSlow(1 << 21);
  #at = 0;
  rows = 0;

  /** At most `rowOverhead` bytes a row adds besides its fields' bytes, each of which becomes at most `byteExpansion`. */
  constructor(rowOverhead: number, byteExpansion: number) {
    this.#rowOverhead = rowOverhead;
    this.#byteExpansion = byteExpansion;
  }

  /** Writes the row of `input` starting at `start` (it ends with LF) at `at` of `out`; answers the end. */
  protected abstract writeRow(input: Buffer, start: number, out: Buffer, at: number): number;

  /**
   * The converted bytes of the whole rows `chunk` completes; null when it ends none. Given `emit`, they are
   * handed to it instead, as views of the converter's own buffer that `emit` must consume before it returns
   * (no copy is made), and null is answered.
   */
  convert(chunk: Buffer, emit?: (view: Buffer) => void): Buffer | null {
    const parts: Buffer[] = [];
    const out = emit ?? ((view: Buffer) => parts.push(Buffer.from(view)));
    let start = 0;
    if (this.#carry) {
      // Only the carried row is joined, not the chunk: a chunk-sized copy each time would keep V8 collecting.
      const end = chunk.indexOf(LF);
      if (end === -1) {
        this.#carry = Buffer.concat([this.#carry, chunk]);
        return null;
      }
      const row = Buffer.concat([this.#carry, chunk.subarray(0, end + 1)]);
      this.#carry = null;
      this.#convertRow(row, 0, row.length - 1, out);
      start = end + 1;
    }
    while (start < chunk.length) {
      const end = chunk.indexOf(LF, start);
      if (end === -1) {
        this.#carry = Buffer.from(chunk.subarray(start));
        break;
      }
      this.#convertRow(chunk, start, end, out);
      start = end + 1;
    }
    if (this.#at > 0) out(this.#taken());
    return parts.length === 0 ? null : parts.length === 1 ? parts[0] : Buffer.concat(parts);
  }

  #convertRow(input: Buffer, start: number, end: number, out: (view: Buffer) => void): void {
    const worst = this.#rowOverhead + (end - start) * this.#byteExpansion;
    if (this.#at + worst > this.#out.length) {
      if (this.#at > 0) out(this.#taken());
      if (worst > this.#out.length) this.#out = Buffer.allocUnsafeSlow(worst * 2);
    }
    this.#at = this.writeRow(input, start, this.#out, this.#at);
    this.rows++;
  }

  /** Throws when the text ended inside a row (COPY ends every row with a line feed). */
  finish(): void {
    if (this.#carry) throw new Error(`COPY text ended inside a row (${this.#carry.length} bytes)`);
  }

  /** What was written so far, as a view (valid until the next write), and the buffer emptied. */
  #taken(): Buffer {
    const view = this.#out.subarray(0, this.#at);
    this.#at = 0;
    return view;
  }
}

/**
 * RFC 4180 rows, as PostgreSQL's COPY (FORMAT csv) writes them but ended with CR LF: NULL is an empty field, the
 * empty string `""`; a field holding a comma, a quote, CR or LF is quoted with its quotes doubled (and a lone
 * `\.` in a one-column row, as COPY does).
 */
export class CsvRows extends CopyTextRows {
  readonly #columns: number;

  constructor(columns: number) {
    // A field byte becomes at most two (a doubled quote); a row adds its quotes, separators and CR LF.
    super(3 * columns + 2, 2);
    this.#columns = columns;
  }

  protected writeRow(input: Buffer, start: number, out: Buffer, at: number): number {
    let o = at;
    let i = start;
    for (let col = 0; col < this.#columns; col++) {
      if (col > 0) out[o++] = COMMA;
      if (isNull(input, i)) {
        i += 3;
        continue;
      }
      // One pass: the field is written as it is read; the first byte that needs quotes (a comma, a quote, CR or
      // LF) moves what was written one byte right to open them. Most fields need none.
      const from = o;
      let quoted = false;
      for (;;) {
        let b = input[i++];
        // Most bytes (letters, digits, . - / :, UTF-8) need nothing: one test.
        if (b > COMMA && b !== BACKSLASH) {
          out[o++] = b;
          continue;
        }
        if (b === TAB || b === LF) break;
        // An escaped byte needs quotes when it is a line break (COPY escapes no quote); a plain one when it is a comma or a quote.
        const escaped = b === BACKSLASH;
        if (escaped) b = UNESCAPE[input[i++]];
        if (!quoted && (escaped ? b === LF || b === CR : b === COMMA || b === QUOTE)) {
          out.copyWithin(from + 1, from, o);
          out[from] = QUOTE;
          o++;
          quoted = true;
        }
        out[o++] = b;
        if (b === QUOTE && !escaped) out[o++] = QUOTE;
      }
      if (quoted) out[o++] = QUOTE;
      else if (o === from || (this.#columns === 1 && o === from + 2 && out[from] === BACKSLASH && out[from + 1] === 46)) {
        // The empty string (NULL is the empty field) and a lone \. (COPY's end marker) are quoted, as COPY does.
        out.copyWithin(from + 1, from, o);
        out[from] = QUOTE;
        o++;
        out[o++] = QUOTE;
      }
    }
    out[o++] = CR;
    out[o++] = LF;
    return o;
  }
}

/** A converter as a stream stage. */
class CopyTextStage extends Transform {
  readonly rows: CopyTextRows;

  constructor(rows: CopyTextRows) {
    super(EXPORT_STAGE);
    this.rows = rows;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    done(null, this.rows.convert(chunk) ?? undefined);
  }

  override _flush(done: TransformCallback): void {
    try {
      this.rows.finish();
      done();
    } catch (err) {
      done(err as Error);
    }
  }
}

/**
 * Runs `statement` (a COPY … TO STDOUT in text format, ./copy-out.ts) on `client` and converts its rows with
 * `rows`; `head` goes before the first row (with no rows, alone), `tail` after the last, given the row count.
 */
export function openCopyText(
  client: pg.PoolClient,
  statement: string,
  rows: CopyTextRows,
  frame: { head?: string; tail?: (rows: number) => string } = {},
): ExportSource {
  const copy = client.query(new CopyOut(statement) as unknown as pg.Submittable) as unknown as CopyOut;
  // pg reports a connection that ends mid-COPY by failing the query; once the export's reader is gone nothing
  // else listens, and an unheard 'error' would crash the process.
  copy.on('error', () => {});
  const stage = new CopyTextStage(rows);
  pipeline(copy, stage, () => {});
  const converted = stage[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let head = frame.head ? Buffer.from(frame.head) : null;
  let ended = false;
  const chunks: AsyncIterator<Buffer> = {
    next: async () => {
      if (ended) return { done: true, value: undefined };
      const next = await converted.next();
      let value: Buffer;
      if (!next.done) value = next.value;
      else {
        ended = true;
        if (!frame.tail && !head) return next;
        value = Buffer.from(frame.tail?.(rows.rows) ?? '');
      }
      if (head) {
        value = Buffer.concat([head, value]);
        head = null;
      }
      return { done: false, value };
    },
  };
  return {
    chunks,
    rows: () => copy.rowCount,
    stop: () => {
      stage.destroy();
      copy.destroy();
    },
  };
}
