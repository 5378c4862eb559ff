// An incremental reader for one JSON shape: an object whose `Rows` member is a (possibly huge) array.
// It hands back every other member whole and every element of Rows one at a time, so an import of
// any size holds one row in memory, not the file. Elements and members are parsed with JSON.parse.

export type RowsDocumentEvent = { kind: 'member'; key: string; value: unknown } | { kind: 'row'; index: number; value: unknown; chars: number };

export class JsonStreamError extends Error {}

/** Default bound of one member or row, in characters of its JSON text (ATRIUM_CUSTOM_TABLE_IMPORT_ROW_LIMIT_BYTES). */
export const MAX_ITEM_CHARS = 16 * 1024 * 1024;
const ROWS_KEY = /^"Rows"\s*:\s*$/;

export class RowsDocumentParser {
  readonly #maxItemChars: number;
  #depth = 0;
  #inString = false;
  #escape = false;
  #inRows = false;
  #started = false;
  #done = false;
  #capturing = false;
  #pending = '';
  /** True after a member or element ended (a comma or a closer may follow); false right after a comma. */
  #itemEnded = false;
  #afterComma = false;
  #rowIndex = 0;
  #offset = 0;

  /** `maxItemChars`: a member or row longer than this is refused before more of it is kept. */
  constructor(maxItemChars = MAX_ITEM_CHARS) {
    this.#maxItemChars = maxItemChars;
  }

  get done(): boolean {
    return this.#done;
  }

  /** Feeds the next piece of text; events for every member or element completed in it go to `out`. */
  feed(chunk: string, out: RowsDocumentEvent[]): void {
    let start = this.#capturing ? 0 : -1;
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (this.#inString) {
        if (this.#escape) this.#escape = false;
        else if (c === 92) this.#escape = true;
        else if (c === 34) this.#inString = false;
        continue;
      }
      if (c === 32 || c === 10 || c === 13 || c === 9) continue;
      if (this.#done) throw this.#error('unexpected content after the end of the document', i);
      if (!this.#started) {
        if (c !== 123) throw this.#error('expected a JSON object', i);
        this.#started = true;
        this.#depth = 1;
        continue;
      }
      const level = this.#inRows ? 2 : 1;
      if (this.#depth === level) {
        const closer = this.#inRows ? 93 : 125;
        if (c === 44 || c === closer) {
          if (this.#capturing) {
            if (this.#pending.length + i - start > this.#maxItemChars) {
              throw this.#error(`one member or row is longer than ${this.#maxItemChars} characters (ATRIUM_CUSTOM_TABLE_IMPORT_ROW_LIMIT_BYTES)`, i);
            }
            this.#emit(this.#pending + chunk.slice(start, i), out, i);
            this.#capturing = false;
            this.#pending = '';
            start = -1;
            this.#itemEnded = true;
          }
          if (c === 44) {
            if (!this.#itemEnded) throw this.#error('unexpected comma', i);
            this.#itemEnded = false;
            this.#afterComma = true;
            continue;
          }
          if (this.#afterComma) throw this.#error('a comma is followed by no value', i);
          if (this.#inRows) {
            this.#inRows = false;
            this.#depth = 1;
            this.#itemEnded = true;
          } else {
            this.#depth = 0;
            this.#done = true;
          }
          continue;
        }
        if (!this.#capturing) {
          if (this.#itemEnded) throw this.#error('expected a comma', i);
          this.#capturing = true;
          this.#afterComma = false;
          start = i;
        }
        if (c === 91 && !this.#inRows && ROWS_KEY.test(this.#pending + chunk.slice(start, i))) {
          this.#inRows = true;
          this.#depth = 2;
          this.#capturing = false;
          this.#pending = '';
          start = -1;
          this.#itemEnded = false;
          continue;
        }
      }
      if (c === 123 || c === 91) this.#depth++;
      else if (c === 125 || c === 93) {
        this.#depth--;
        if (this.#depth < level) throw this.#error('mismatched bracket', i);
      } else if (c === 34) this.#inString = true;
    }
    if (this.#capturing) {
      this.#pending += chunk.slice(start);
      if (this.#pending.length > this.#maxItemChars) {
        throw this.#error(`one member or row is longer than ${this.#maxItemChars} characters (ATRIUM_CUSTOM_TABLE_IMPORT_ROW_LIMIT_BYTES)`, chunk.length);
      }
    }
    this.#offset += chunk.length;
  }

  /** Call at the end of the input. */
  end(): void {
    if (!this.#done) throw new JsonStreamError('The document ended before its closing brace.');
  }

  #emit(text: string, out: RowsDocumentEvent[], at: number): void {
    try {
      if (this.#inRows) {
        out.push({ kind: 'row', index: this.#rowIndex, value: JSON.parse(text), chars: text.length });
        this.#rowIndex++;
      } else {
        const member = JSON.parse(`{${text}}`) as Record<string, unknown>;
        const [key] = Object.keys(member);
        if (key === undefined) throw new SyntaxError('empty member');
        out.push({ kind: 'member', key, value: member[key] });
      }
    } catch (err) {
      const where = this.#inRows ? `Rows/${this.#rowIndex}` : 'a member of the document';
      throw this.#error(`${where} is not valid JSON (${(err as Error).message})`, at);
    }
  }

  #error(message: string, at: number): JsonStreamError {
    return new JsonStreamError(`Invalid import file at character ${this.#offset + at}: ${message}.`);
  }
}
