// A streaming xlsx writer: one worksheet of SpreadsheetML inside a zip written entry by entry with
// Node's zlib (deflate, crc32), so a sheet of a million rows needs no more memory than one batch.
// Typed cells: numbers, booleans, dates and datetimes (UTC, as Excel serials with a date format),
// strings inline. Limits are Excel's: 1,048,576 rows, 32,767 characters a cell; the zip is not zip64,
// so the sheet's XML must stay under 4 GiB (a larger export fails and says to use csv).
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { CatalogueColumn, ColumnType } from '../definition.ts';

export type XlsxCellType = 'string' | 'number' | 'boolean' | 'date' | 'datetime';

export interface XlsxColumn {
  name: string;
  type: XlsxCellType;
}

/** Data rows a sheet holds below its header row. */
export const XLSX_MAX_ROWS = 1_048_575;
const MAX_CELL_TEXT = 32_767;
const MAX_ENTRY_BYTES = 0xffff_ffff;
const ROWS_PER_CHUNK = 500;

export class XlsxLimitError extends Error {}

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const NS_MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const NS_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const NS_PKG_REL = 'http://schemas.openxmlformats.org/package/2006/relationships';

const STATIC_PARTS = (sheetName: string): [string, string][] => [
  [
    '[Content_Types].xml',
    `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`,
  ],
  [
    '_rels/.rels',
    `${XML_HEAD}<Relationships xmlns="${NS_PKG_REL}"><Relationship Id="rId1" Type="${NS_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  ],
  [
    'xl/workbook.xml',
    `${XML_HEAD}<workbook xmlns="${NS_MAIN}" xmlns:r="${NS_REL}"><sheets><sheet name="${escapeXml(sheetName)}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  ],
  [
    'xl/_rels/workbook.xml.rels',
    `${XML_HEAD}<Relationships xmlns="${NS_PKG_REL}"><Relationship Id="rId1" Type="${NS_REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${NS_REL}/styles" Target="styles.xml"/></Relationships>`,
  ],
  // Styles: 0 default, 1 bold (header), 2 date, 3 datetime.
  [
    'xl/styles.xml',
    `${XML_HEAD}<styleSheet xmlns="${NS_MAIN}"><numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd"/><numFmt numFmtId="165" formatCode="yyyy\\-mm\\-dd\\ hh:mm:ss"/></numFmts><fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="4"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`,
  ],
];

/** Characters XML 1.0 cannot carry at all (control characters other than tab, LF, CR; lone surrogates). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point.
const INVALID_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function escapeXml(text: string): string {
  return text.replace(INVALID_XML, '').replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;'));
}

/** A, B, …, Z, AA, … */
export function columnLetters(index: number): string {
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const r = (n - 1) % 26;
    out = String.fromCharCode(65 + r) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

/** Sheet names: at most 31 characters, none of []:*?/\ . */
export function sheetNameOf(text: string): string {
  const cleaned = text.replace(/[[\]:*?/\\]/g, '_').slice(0, 31);
  return cleaned || 'Sheet1';
}

const EXCEL_EPOCH_DAYS = 25_569; // 1970-01-01 as an Excel serial (1900 date system)

function inlineString(ref: string, text: string, style = ''): string {
  const value = text.length > MAX_CELL_TEXT ? text.slice(0, MAX_CELL_TEXT) : text;
  const space = /^\s|\s$/.test(value) ? ' xml:space="preserve"' : '';
  return `<c r="${ref}" t="inlineStr"${style}><is><t${space}>${escapeXml(value)}</t></is></c>`;
}

function cell(ref: string, type: XlsxCellType, value: unknown): string {
  if (value === null || value === undefined) return '';
  switch (type) {
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? `<c r="${ref}"><v>${value}</v></c>` : inlineString(ref, String(value));
    case 'boolean':
      return typeof value === 'boolean' ? `<c r="${ref}" t="b"><v>${value ? 1 : 0}</v></c>` : inlineString(ref, String(value));
    case 'date':
    case 'datetime': {
      const ms = typeof value === 'string' ? Date.parse(type === 'date' && value.length === 10 ? `${value}T00:00:00Z` : value) : Number.NaN;
      if (!Number.isFinite(ms)) return inlineString(ref, String(value));
      return `<c r="${ref}" s="${type === 'date' ? 2 : 3}"><v>${ms / 86_400_000 + EXCEL_EPOCH_DAYS}</v></c>`;
    }
    default:
      return inlineString(ref, typeof value === 'string' ? value : JSON.stringify(value));
  }
}

interface Entry {
  name: Buffer;
  crc: number;
  compressed: number;
  size: number;
  offset: number;
}

/** DOS time and date of now, for the zip headers. */
function dosDateTime(d = new Date()): { time: number; date: number } {
  return {
    time: (d.getUTCHours() << 11) | (d.getUTCMinutes() << 5) | Math.floor(d.getUTCSeconds() / 2),
    date: ((d.getUTCFullYear() - 1980) << 9) | ((d.getUTCMonth() + 1) << 5) | d.getUTCDate(),
  };
}

const FLAGS = 0x0808; // bit 3: sizes in a data descriptor; bit 11: UTF-8 names

/**
 * The xlsx file as a sequence of Buffers; `rows` yields one array of values per data row, in the
 * columns' order. Strings of datetimes are ISO 8601; dates `yyyy-MM-dd`.
 */
export async function* xlsxChunks(sheetName: string, columns: XlsxColumn[], rows: AsyncIterable<unknown[]>): AsyncGenerator<Buffer> {
  const entries: Entry[] = [];
  let offset = 0;
  const { time, date } = dosDateTime();

  function localHeader(name: Buffer): Buffer {
    const h = Buffer.alloc(30);
    h.writeUInt32LE(0x04034b50, 0);
    h.writeUInt16LE(20, 4);
    h.writeUInt16LE(FLAGS, 6);
    h.writeUInt16LE(8, 8);
    h.writeUInt16LE(time, 10);
    h.writeUInt16LE(date, 12);
    h.writeUInt16LE(name.length, 26);
    return Buffer.concat([h, name]);
  }

  function descriptor(e: Entry): Buffer {
    const d = Buffer.alloc(16);
    d.writeUInt32LE(0x08074b50, 0);
    d.writeUInt32LE(e.crc >>> 0, 4);
    d.writeUInt32LE(e.compressed, 8);
    d.writeUInt32LE(e.size, 12);
    return d;
  }

  /** One deflated entry whose content comes from `parts` (strings), with backpressure on the deflater. */
  async function* entry(fileName: string, parts: AsyncIterable<string> | Iterable<string>): AsyncGenerator<Buffer> {
    const name = Buffer.from(fileName, 'utf8');
    const e: Entry = { name, crc: 0, compressed: 0, size: 0, offset };
    const head = localHeader(name);
    offset += head.length;
    yield head;
    const deflate = zlib.createDeflateRaw({ level: 6 });
    const out: Buffer[] = [];
    deflate.on('data', (b: Buffer) => {
      out.push(b);
      e.compressed += b.length;
    });
    const ended = once(deflate, 'end');
    for await (const part of parts) {
      const buf = Buffer.from(part, 'utf8');
      e.crc = zlib.crc32(buf, e.crc);
      e.size += buf.length;
      if (e.size > MAX_ENTRY_BYTES) throw new XlsxLimitError('The export is too large for an xlsx file (over 4 GiB of sheet data); use csv.');
      if (!deflate.write(buf)) await once(deflate, 'drain');
      if (out.length) yield* out.splice(0);
    }
    deflate.end();
    await ended;
    yield* out.splice(0);
    offset += e.compressed;
    const d = descriptor(e);
    offset += d.length;
    yield d;
    entries.push(e);
  }

  for (const [fileName, content] of STATIC_PARTS(sheetName)) yield* entry(fileName, [content]);
  yield* entry('xl/worksheets/sheet1.xml', sheetXml(columns, rows));

  // Central directory and its end record.
  const cdStart = offset;
  const records: Buffer[] = [];
  for (const e of entries) {
    const c = Buffer.alloc(46);
    c.writeUInt32LE(0x02014b50, 0);
    c.writeUInt16LE(20, 4);
    c.writeUInt16LE(20, 6);
    c.writeUInt16LE(FLAGS, 8);
    c.writeUInt16LE(8, 10);
    c.writeUInt16LE(time, 12);
    c.writeUInt16LE(date, 14);
    c.writeUInt32LE(e.crc >>> 0, 16);
    c.writeUInt32LE(e.compressed, 20);
    c.writeUInt32LE(e.size, 24);
    c.writeUInt16LE(e.name.length, 28);
    c.writeUInt32LE(e.offset, 42);
    records.push(c, e.name);
  }
  const cd = Buffer.concat(records);
  if (cdStart + cd.length > MAX_ENTRY_BYTES) throw new XlsxLimitError('The export is too large for an xlsx file (over 4 GiB); use csv.');
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(cdStart, 16);
  yield Buffer.concat([cd, end]);
}

/** The worksheet: a frozen, bold header row, then the data rows in chunks of ROWS_PER_CHUNK. */
async function* sheetXml(columns: XlsxColumn[], rows: AsyncIterable<unknown[]>): AsyncGenerator<string> {
  const letters = columns.map((_, i) => columnLetters(i));
  let out = `${XML_HEAD}<worksheet xmlns="${NS_MAIN}" xmlns:r="${NS_REL}"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><sheetData>`;
  out += `<row r="1">${columns.map((c, i) => inlineString(`${letters[i]}1`, c.name, ' s="1"')).join('')}</row>`;
  let r = 1;
  let inChunk = 0;
  for await (const values of rows) {
    r++;
    if (r - 1 > XLSX_MAX_ROWS)
      throw new XlsxLimitError(`The export has more than ${XLSX_MAX_ROWS.toLocaleString('en-US')} rows, the most an xlsx sheet holds; use csv.`);
    out += `<row r="${r}">`;
    for (let i = 0; i < columns.length; i++) out += cell(`${letters[i]}${r}`, columns[i].type, values[i]);
    out += '</row>';
    if (++inChunk === ROWS_PER_CHUNK) {
      yield out;
      out = '';
      inChunk = 0;
    }
  }
  yield `${out}</sheetData></worksheet>`;
}

/** NDJSON lines of a stream, without their line feeds. */
export async function* ndjsonLines(stream: Readable): AsyncGenerator<string> {
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

/**
 * An xlsx file of a Data Extraction NDJSON stream (`name` names the sheet): typed cells by the columns'
 * catalogue types. `counter.rows` counts the data rows written. Both the ad-hoc export
 * (Accept: the xlsx media type) and scheduled runs write their xlsx files through it.
 */
export function xlsxFromNdjson(name: string, columns: CatalogueColumn[], stream: Readable, counter: { rows: number }): AsyncGenerator<Buffer> {
  async function* rows(): AsyncGenerator<unknown[]> {
    for await (const line of ndjsonLines(stream)) {
      const row = JSON.parse(line) as Record<string, unknown>;
      counter.rows++;
      yield columns.map((c) => row[c.name]);
    }
  }
  return xlsxChunks(
    sheetNameOf(name),
    columns.map((c) => ({ name: c.name, type: XLSX_TYPES[c.type] })),
    rows(),
  );
}
