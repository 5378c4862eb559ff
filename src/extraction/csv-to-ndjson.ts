// NDJSON from COPY's CSV (decision 0035): PostgreSQL prints each row as CSV (its cheapest output, the same
// formatting as the CSV export), and this transform rewrites the bytes as one JSON object per line. Printing
// the JSON in PostgreSQL (row_to_json) cost it 2.3x the CPU of the CSV and made the export PostgreSQL-bound.
// In COPY's CSV a NULL is an empty unquoted field and an empty string is "", so nulls survive.
import { Transform, type TransformCallback } from 'node:stream';
import type { CatalogueColumn } from './definition.ts';

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const BACKSLASH = 0x5c;
const HEX = '0123456789abcdef';
// JSON's short escapes of control characters, as JSON.stringify (and PostgreSQL's escape_json) write them.
const SHORT: Record<number, number> = { 8: 0x62, 9: 0x74, 10: 0x6e, 12: 0x66, 13: 0x72 };

/** How a field's CSV text becomes JSON: as a bare token (number, boolean), embedded JSON, or a string. */
type Kind = 'token' | 'object' | 'string';
const kindOf = (c: CatalogueColumn): Kind =>
  c.type === 'decimal' || c.type === 'integer' || c.type === 'boolean' ? 'token' : c.type === 'object' ? 'object' : 'string';

/** NaN, Infinity or -Infinity (a number field starts with a digit, a minus and a digit, t or f otherwise). */
const nonFinite = (input: Buffer, from: number): boolean => input[from] === 0x4e || input[from] === 0x49 || (input[from] === 0x2d && input[from + 1] === 0x49);

export class CsvToNdjson extends Transform {
  readonly #kinds: Kind[];
  readonly #keys: Buffer[];
  #carry: Buffer | null = null;
  #out = Buffer.allocUnsafe(0);
  #at = 0;

  constructor(columns: CatalogueColumn[], options: { highWaterMark?: number } = {}) {
    super(options);
    this.#kinds = columns.map(kindOf);
    this.#keys = columns.map((c, i) => Buffer.from(`${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`));
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const input = this.#carry ? Buffer.concat([this.#carry, chunk]) : chunk;
    this.#out = Buffer.allocUnsafe(input.length * 2 + 4096);
    this.#at = 0;
    let line = 0;
    for (;;) {
      const next = this.#line(input, line);
      if (next === -1) break;
      line = next;
    }
    this.#carry = line < input.length ? input.subarray(line) : null;
    done(null, this.#at > 0 ? this.#out.subarray(0, this.#at) : undefined);
  }

  override _flush(done: TransformCallback): void {
    done(this.#carry ? new Error('NDJSON export: COPY ended inside a row') : null);
  }

  #room(n: number): void {
    if (this.#at + n <= this.#out.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(this.#out.length * 2, this.#at + n));
    this.#out.copy(bigger, 0, 0, this.#at);
    this.#out = bigger;
  }

  /** Writes the JSON of the CSV line starting at `from`; answers where the next line starts, or -1 if incomplete. */
  #line(input: Buffer, from: number): number {
    const start = this.#at;
    let i = from;
    const n = input.length;
    if (i >= n) return -1;
    for (let c = 0; c < this.#kinds.length; c++) {
      const key = this.#keys[c];
      this.#room(key.length);
      this.#at += key.copy(this.#out, this.#at);
      let end: number;
      if (input[i] === QUOTE) {
        // Quoted: runs to a quote not followed by another quote.
        end = i + 1;
        for (;;) {
          end = input.indexOf(QUOTE, end);
          if (end === -1 || end + 1 >= n) {
            this.#at = start;
            return -1;
          }
          if (input[end + 1] === QUOTE) end += 2;
          else break;
        }
        this.#quoted(input, i + 1, end, this.#kinds[c]);
        i = end + 1;
      } else {
        end = i;
        while (end < n && input[end] !== COMMA && input[end] !== LF) end++;
        if (end >= n) {
          this.#at = start;
          return -1;
        }
        this.#bare(input, i, end, this.#kinds[c]);
        i = end;
      }
      // Then the delimiter: a comma between fields, a line feed after the last.
      i++;
    }
    if (this.#kinds.length === 0) {
      if (input[i] !== LF) return -1;
      this.#room(1);
      this.#out[this.#at++] = 0x7b; // {
      i++;
    }
    this.#room(2);
    this.#out[this.#at++] = 0x7d; // }
    this.#out[this.#at++] = LF;
    return i;
  }

  #bare(input: Buffer, from: number, end: number, kind: Kind): void {
    if (end === from || (kind === 'token' && nonFinite(input, from))) {
      this.#room(4);
      this.#at += this.#out.write('null', this.#at, 'latin1');
    } else if (kind === 'token' || (kind === 'object' && (input[from] === 0x7b || input[from] === 0x5b))) {
      this.#room(end - from);
      this.#at += input.copy(this.#out, this.#at, from, end);
    } else this.#string(input, from, end, false);
  }

  #quoted(input: Buffer, from: number, end: number, kind: Kind): void {
    if (kind === 'object' && (input[from] === 0x7b || input[from] === 0x5b)) {
      // Embedded JSON: only the CSV's doubled quotes are undone.
      this.#room(end - from);
      for (let i = from; i < end; i++) {
        this.#out[this.#at++] = input[i];
        if (input[i] === QUOTE) i++;
      }
    } else this.#string(input, from, end, true);
  }

  /** A JSON string of the field's bytes (UTF-8 passes as it is), undoing the CSV's doubled quotes when quoted. */
  #string(input: Buffer, from: number, end: number, quoted: boolean): void {
    this.#room((end - from) * 6 + 2);
    const out = this.#out;
    let at = this.#at;
    out[at++] = QUOTE;
    let run = from;
    for (let i = from; i < end; i++) {
      const b = input[i];
      if (b >= 0x20 && b !== QUOTE && b !== BACKSLASH) continue;
      at += input.copy(out, at, run, i);
      out[at++] = BACKSLASH;
      if (b === QUOTE) {
        out[at++] = QUOTE;
        if (quoted) i++;
      } else if (b === BACKSLASH) out[at++] = BACKSLASH;
      else if (SHORT[b] !== undefined) out[at++] = SHORT[b];
      else {
        out[at++] = 0x75; // u
        out[at++] = 0x30;
        out[at++] = 0x30;
        out[at++] = HEX.charCodeAt(b >> 4);
        out[at++] = HEX.charCodeAt(b & 15);
      }
      run = i + 1;
    }
    at += input.copy(out, at, run, end);
    out[at++] = QUOTE;
    this.#at = at;
  }
}
