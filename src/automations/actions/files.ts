// File actions: CreateCsv (rows → a CSV file object), CSVMap (a CSV → rows) and ApplyTemplate (Liquid).
// Liquid runs with no file system (include/render/layout find nothing), own properties only, and
// liquidjs's own parse, render-time and memory limits.
import { Liquid } from 'liquidjs';
import { type ActionCall, ActionError, type Handler } from '../engine.ts';
import { asText } from '../expressions.ts';
import { fileText, fileValue } from './file-value.ts';
import { jsonText } from './flow.ts';

/** Largest Liquid template parsed (liquidjs parseLimit, characters), at save and at run. */
export const TEMPLATE_MAX_CHARS = 256 * 1024;

function oneChar(call: ActionCall, name: string, fallback: string): string {
  const v = call.text(name);
  if (v === '') return fallback;
  if (v === '\\t' || v.toLowerCase() === 'tab') return '\t';
  if (v.length !== 1) throw new ActionError(`${name} must be one character`);
  return v;
}

/** CreateCsv: `data` (a list of objects or of lists), `dataColumns` (names, or {name, value} with an expression per row as ['#Item']). */
const createCsv: Handler = async (call) => {
  const data = call.get('data');
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
  const name = call.text('fileName') || 'data.csv';
  return { output: fileValue(name, 'text/csv', Buffer.from(lines.length ? `${lines.join('\r\n')}\r\n` : '', 'utf8')) };
};

/** RFC 4180 parsing with a chosen delimiter and quote; a stray quote inside an unquoted cell is kept as text. */
export function parseCsv(text: string, delimiter = ',', quote = '"'): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cellText = '';
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  let quoted = false;
  let any = false;
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === quote) {
        if (text[i + 1] === quote) {
          cellText += quote;
          i++;
        } else quoted = false;
      } else cellText += c;
      continue;
    }
    if (c === quote && cellText === '') {
      quoted = true;
      any = true;
    } else if (c === delimiter) {
      row.push(cellText);
      cellText = '';
      any = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(cellText);
      if (any || row.length > 1 || row[0] !== '') rows.push(row);
      row = [];
      cellText = '';
      any = false;
    } else {
      cellText += c;
      any = true;
    }
  }
  if (quoted) throw new ActionError('the CSV ends inside a quoted cell');
  if (any || cellText !== '' || row.length > 0) {
    row.push(cellText);
    rows.push(row);
  }
  return rows;
}

/** CSVMap: `data` (text or a file object) parsed; with a header record, rows become objects named by it. */
const csvMap: Handler = async (call) => {
  const rows = parseCsv(fileText(call.get('data')), oneChar(call, 'delimiter', ','), oneChar(call, 'quote', '"'));
  const max = call.run.services.config.automationMaxLoopIterations * 10;
  if (rows.length > max) throw new ActionError(`the CSV has ${rows.length} rows; the limit is ${max}`);
  if (!call.bool('hasHeaderRecord', true)) return { output: rows };
  const [head, ...body] = rows;
  if (!head) return { output: [] };
  const names = head.map((h) => h.trim());
  return { output: body.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i] ?? '']))) };
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

/**
 * ApplyTemplate: the Liquid template `data` rendered with the model `body` (the platform's fields; a JSON
 * text model is parsed); output the text. (Atrium's older `template` + `data` model is rewritten to these.)
 */
const applyTemplate: Handler = async (call) => {
  const older = call.raw('template') !== undefined;
  const source = asText(older ? call.raw('template') : call.raw('data'));
  call.input.template = source;
  const model = (older ? (call.get('data') ?? call.get('body')) : jsonText(call.get('body'))) ?? {};
  try {
    // renderLimit: ATRIUM_AUTOMATION_TEMPLATE_TIMEOUT; memoryLimit: what liquidjs counts of the strings and
    // lists it makes, at most the action's output limit.
    const text = await liquid.parseAndRender(source, model && typeof model === 'object' ? (model as object) : { value: model }, {
      renderLimit: call.run.services.config.automationTemplateTimeoutMs,
      memoryLimit: Math.min(16 * 1024 * 1024, call.run.services.config.automationMaxOutputBytes),
    });
    return { output: text };
  } catch (err) {
    throw new ActionError(`template: ${(err as Error).message.split('\n')[0]}`);
  }
};

export const FILE_HANDLERS: Record<string, Handler> = { CreateCsv: createCsv, CSVMap: csvMap, ApplyTemplate: applyTemplate };
