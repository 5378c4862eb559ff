// File actions: CreateCsv (rows → CSV text, kept as a file of the run), CSVMap and ReadFileData (a CSV →
// rows) and ApplyTemplate (Liquid).
// Liquid runs with no file system (include/render/layout find nothing), own properties only, and
// liquidjs's own parse, render-time and memory limits.
import { Liquid } from 'liquidjs';
import { CsvReadError, csvRecords } from '../../platform/csv.ts';
import { type ActionCall, ActionError, type Handler } from '../engine.ts';
import { asText } from '../expressions.ts';
import { fileTextOf, findFile, keepFile } from './run-files.ts';

/** Largest Liquid template parsed (liquidjs parseLimit, characters), at save and at run. */
export const TEMPLATE_MAX_CHARS = 256 * 1024;

function oneChar(call: ActionCall, name: string, fallback: string): string {
  const v = call.text(name);
  if (v === '') return fallback;
  if (v === '\\t' || v.toLowerCase() === 'tab') return '\t';
  if (v.length !== 1) throw new ActionError(`${name} must be one character`);
  return v;
}

/**
 * CreateCsv: `data` (a list of objects or of lists; a result holding the list under `Content` is read
 * there), `dataColumns` (names, or {name, value} with an expression per row as ['#Item']). The result is the
 * CSV text itself, as the platform hands it on (`{{['CreateCsv']$ | ToBase64}}` is the Base64 of the CSV);
 * the file is kept in the run under `fileName` (default `<action name>.csv`) for attachments and uploads.
 */
const createCsv: Handler = async (call) => {
  let data = call.get('data');
  if (data !== null && typeof data === 'object' && !Array.isArray(data) && Array.isArray((data as Record<string, unknown>).Content))
    data = (data as Record<string, unknown>).Content;
  if (!Array.isArray(data)) throw new ActionError('data must be a list of rows');
  const delimiter = oneChar(call, 'delimiter', ',');
  const quote = oneChar(call, 'quote', '"');
  const header = call.bool('hasHeaderRecord', true);
  const declared = call.get('dataColumns');
  let columns: string[];
  if (Array.isArray(declared) && declared.length > 0)
    columns = declared.map((c) => (c && typeof c === 'object' ? asText((c as any).name ?? (c as any).Name ?? (c as any).value) : asText(c)));
  else {
    const seen = new Set<string>();
    for (const row of data) if (row && typeof row === 'object' && !Array.isArray(row)) for (const k of Object.keys(row)) seen.add(k);
    columns = [...seen];
  }
  const needsQuote = (s: string) => s.includes(delimiter) || s.includes(quote) || s.includes('\n') || s.includes('\r');
  const cell = (v: unknown) => {
    const s = asText(v);
    return needsQuote(s) ? `${quote}${s.split(quote).join(quote + quote)}${quote}` : s;
  };
  const lines: string[] = [];
  if (header && columns.length) lines.push(columns.map(cell).join(delimiter));
  for (const row of data) {
    if (Array.isArray(row)) lines.push(row.map(cell).join(delimiter));
    else if (row && typeof row === 'object') lines.push(columns.map((c) => cell(Object.hasOwn(row, c) ? (row as any)[c] : '')).join(delimiter));
    else lines.push(cell(row));
  }
  const text = lines.length ? `${lines.join('\r\n')}\r\n` : '';
  keepFile(call, call.text('fileName') || `${String(call.action.name)}.csv`, 'text/csv', Buffer.from(text, 'utf8'));
  return { output: text };
};

/**
 * CSV text as rows of cells, read by the one CSV reader (platform/csv.ts) with a chosen delimiter and quote: a
 * UTF-8 BOM skipped, a stray quote inside an unquoted cell kept as text, blank lines skipped.
 */
export async function parseCsv(text: string, delimiter = ',', quote = '"'): Promise<string[][]> {
  const bytes = Buffer.from(text, 'utf8');
  const rows: string[][] = [];
  try {
    // The text is already bounded (a value or file of the run): no record can be larger than all of it.
    for await (const cells of csvRecords(bytes, { maxRecordBytes: bytes.length + 1, delimiter, quote })) {
      if (cells.length === 1 && cells[0] === '') continue;
      rows.push(cells);
    }
  } catch (err) {
    if (err instanceof CsvReadError) throw new ActionError(err.message);
    throw err;
  }
  return rows;
}

/** Rows a CSV may have, and columns a row may have (what CSVMap and ReadFileData parse). */
function boundRows(call: ActionCall, rows: string[][]): void {
  const max = call.run.services.config.automationMaxLoopIterations * 10;
  if (rows.length > max) throw new ActionError(`the CSV has ${rows.length} rows; the limit is ${max}`);
}

/** Rows as objects: named by the first row, or Field1, Field2, … when it holds no names. */
function rowsAsObjects(rows: string[][], namesInFirstRow: boolean): { columns: string[]; records: Record<string, string>[] } {
  if (!namesInFirstRow) {
    const width = rows.reduce((n, r) => Math.max(n, r.length), 0);
    const columns = Array.from({ length: width }, (_, i) => `Field${i + 1}`);
    return { columns, records: rows.map((r) => Object.fromEntries(columns.map((c, i) => [c, r[i] ?? '']))) };
  }
  const [head, ...body] = rows;
  if (!head) return { columns: [], records: [] };
  const columns = head.map((h) => h.trim());
  return { columns, records: body.map((r) => Object.fromEntries(columns.map((n, i) => [n, r[i] ?? '']))) };
}

/**
 * CSVMap: `data` (CSV text, or a file of the run) parsed into objects whose values are all text, read as
 * `$.Content`; `namesInFirstRow` true (the first row names the columns) or false (columns Field1, Field2, …);
 * `selectColumns` keeps those columns (names matched without regard to case; ignored without names);
 * `ignoreSaveToContext` keeps only the counts in the context, not the rows. Without `namesInFirstRow` (the
 * platform requires it) the action is Atrium's older CSVMap, unchanged: `hasHeaderRecord` (default true), the
 * rows themselves as the result, lists when there is no header.
 */
const csvMap: Handler = async (call) => {
  const rows = await parseCsv(fileTextOf(call.run, call.get('data')), oneChar(call, 'delimiter', ','), oneChar(call, 'quote', '"'));
  boundRows(call, rows);
  if (call.raw('namesInFirstRow') === undefined) {
    if (!call.bool('hasHeaderRecord', true)) return { output: rows };
    return { output: rowsAsObjects(rows, true).records };
  }
  const named = call.bool('namesInFirstRow', true);
  let { columns, records } = rowsAsObjects(rows, named);
  const select = call.get('selectColumns');
  if (named && Array.isArray(select) && select.length > 0) {
    const wanted = new Set(select.map((c) => asText(c).toLowerCase()));
    const kept = columns.filter((c) => wanted.has(c.toLowerCase()));
    columns = kept;
    records = records.map((r) => Object.fromEntries(kept.map((c) => [c, r[c]])));
  }
  const summary = { Count: records.length, Columns: columns };
  if (call.bool('ignoreSaveToContext')) return { output: summary };
  return { output: { Content: records, ...summary } };
};

/**
 * ReadFileData: the rows of a file of the run (`fileName`: SftpDownload's result, a path, a file name or an
 * action name), as the list a Loop iterates: a JSON file's list as it is, any other file as CSV whose first
 * row names the columns (`hasHeaderRecord: false` for Field1, Field2, …; `delimiter` default `,`).
 */
const readFileData: Handler = async (call) => {
  const given = call.get('fileName');
  const file = findFile(call.run, given);
  if (!file) throw new ActionError(`fileName names no file of this run: "${asText(given).slice(0, 200)}"`);
  const text = file.bytes.toString('utf8');
  if (/json/i.test(file.contentType) || /\.json$/i.test(file.fileName)) {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new ActionError(`${file.fileName} is not valid JSON`);
    }
    return { output: Array.isArray(value) ? value : [value] };
  }
  const rows = await parseCsv(text, oneChar(call, 'delimiter', ','), oneChar(call, 'quote', '"'));
  boundRows(call, rows);
  return { output: rowsAsObjects(rows, call.bool('hasHeaderRecord', true)).records };
};

const noFiles = {
  readFileSync: () => {
    throw new Error('templates cannot read files');
  },
  readFile: async () => {
    throw new Error('templates cannot read files');
  },
  existsSync: () => false,
  exists: async () => false,
  contains: () => false,
  resolve: (_root: string, file: string) => file,
  sep: '/',
};

const liquid = new Liquid({
  fs: noFiles as never,
  root: [],
  partials: [],
  layouts: [],
  relativeReference: false,
  ownPropertyOnly: true,
  parseLimit: TEMPLATE_MAX_CHARS,
  renderLimit: 1_000,
  memoryLimit: 16 * 1024 * 1024,
});

/** The model a template renders with: an object, or the JSON text of one (the platform writes `body` so). */
function templateModel(value: unknown): object {
  let v = value;
  if (typeof v === 'string') {
    if (v.trim() === '') return {};
    try {
      v = JSON.parse(v);
    } catch {
      throw new ActionError("body must be a JSON object (the template's model), or the JSON text of one");
    }
  }
  if (v === undefined || v === null) return {};
  return typeof v === 'object' ? (v as object) : { value: v };
}

/**
 * ApplyTemplate: the Liquid template `data` rendered with the model `body` (a JSON object or its text); the
 * result is the rendered text. The template is Liquid as written, never read as expressions. Atrium's older
 * shape (`template` with the model in `data` or `body`) still runs.
 */
const applyTemplate: Handler = async (call) => {
  const legacy = call.raw('template') !== undefined;
  const source = asText(legacy ? call.raw('template') : call.raw('data'));
  call.input[legacy ? 'template' : 'data'] = source;
  const model = templateModel(legacy ? (call.get('data') ?? call.get('body')) : call.get('body'));
  try {
    // renderLimit: ATRIUM_AUTOMATION_TEMPLATE_TIMEOUT; memoryLimit: what liquidjs counts of the strings and
    // lists it makes, at most the action's output limit.
    const text = await liquid.parseAndRender(source, model, {
      renderLimit: call.run.services.config.automationTemplateTimeoutMs,
      memoryLimit: Math.min(16 * 1024 * 1024, call.run.services.config.automationMaxOutputBytes),
    });
    return { output: text };
  } catch (err) {
    throw new ActionError(`template: ${(err as Error).message.split('\n')[0]}`);
  }
};

export const FILE_HANDLERS: Record<string, Handler> = { CreateCsv: createCsv, CSVMap: csvMap, ReadFileData: readFileData, ApplyTemplate: applyTemplate };
