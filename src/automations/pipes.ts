// The pipes an expression chains with `|`, as the platform lists them. Each takes the value on its left
// and literal (or expression) arguments: `{{['A']$.Items | Join(', ')}}`, `{{['A']$.Date | AddDays(7)}}`.
// A pipe whose result can grow past its input (Split, Join, ToJsonString, ToBase64, UrlEncode) works out
// the result's size first and refuses it past `limit`, the bytes the action may still produce.
import { ExpressionError } from './jsonpath.ts';
import { Secret } from './secret.ts';
import { boundedJson, jsonBytes } from './size.ts';

export interface PipeSpec {
  min: number;
  max: number;
  fn: (input: unknown, args: unknown[], limit: number) => unknown;
}

/**
 * Lists of strings that read as their text joined with "," where a text is wanted (the platform's request
 * Query and Headers values, .NET StringValues): `{{['#HttpRequest'].Query.mode}}` in a text is `short`, and
 * `.Query.mode[0]` is `short` too. Everywhere else they are plain lists.
 */
const STRING_VALUES = new WeakSet<object>();
export function stringValues(list: string[]): string[] {
  STRING_VALUES.add(list);
  return list;
}
export const isStringValues = (v: unknown): v is string[] => Array.isArray(v) && STRING_VALUES.has(v);

const text = (v: unknown, limit = Number.MAX_SAFE_INTEGER): string => {
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (isStringValues(v)) return v.join(',');
  if (typeof v !== 'object' || v instanceof Secret) return String(v);
  const json = boundedJson(v, limit);
  if (json === null) throw tooLarge('the value as text', limit);
  return json;
};

const tooLarge = (what: string, limit: number) =>
  new ExpressionError(`${what} would pass the output limit of ${limit} bytes (ATRIUM_AUTOMATION_MAX_OUTPUT_BYTES)`, 0);

/** Split: the pieces counted before the list is made (each costs its text and a reference of 8 bytes). */
function split(v: unknown, sep: string, limit: number): string[] {
  const s = text(v, limit);
  let pieces = 1;
  if (sep === '') pieces = s.length;
  else for (let i = s.indexOf(sep); i >= 0 && pieces * 10 <= limit; i = s.indexOf(sep, i + sep.length)) pieces++;
  if (pieces * 10 + s.length > limit) throw tooLarge(`Split into ${pieces}${pieces * 10 > limit ? ' or more' : ''} pieces`, limit);
  return s.split(sep);
}

/** Join: on a list, its items with `sep` between them; on text, the text with `sep` appended (the platform's reading). */
function join(v: unknown, sep: string, limit: number, given: boolean): string {
  if (!Array.isArray(v)) {
    const s = text(v, limit);
    if (!given) return s;
    if (s.length + sep.length > limit) throw tooLarge('Join', limit);
    return s + sep;
  }
  let bytes = Math.max(0, v.length - 1) * sep.length;
  for (const item of v) {
    bytes += typeof item === 'string' ? item.length : jsonBytes(item, limit);
    if (bytes > limit) throw tooLarge(`Join of ${v.length} items`, limit);
  }
  return v.map((item) => text(item, limit)).join(sep);
}

function number(v: unknown, pipe: string): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  if (!Number.isFinite(n)) throw new ExpressionError(`${pipe}: "${text(v).slice(0, 50)}" is not a number`, 0);
  return n;
}

function date(v: unknown, pipe: string): Date {
  const d = v instanceof Date ? v : typeof v === 'string' || typeof v === 'number' ? new Date(v) : new Date(Number.NaN);
  if (Number.isNaN(d.getTime())) throw new ExpressionError(`${pipe}: "${text(v).slice(0, 50)}" is not a date`, 0);
  return d;
}

/** The numbers of a list; with a property name, that property of each item. */
function numbers(v: unknown, args: unknown[], pipe: string): number[] {
  if (!Array.isArray(v)) throw new ExpressionError(`${pipe} needs a list`, 0);
  const prop = args[0] === undefined ? null : text(args[0]);
  return v.map((item) =>
    number(prop === null ? item : item && typeof item === 'object' && Object.hasOwn(item, prop) ? (item as Record<string, unknown>)[prop] : undefined, pipe),
  );
}

const shift =
  (pipe: string, apply: (d: Date, n: number) => void): PipeSpec['fn'] =>
  (input, args) => {
    const d = new Date(date(input, pipe).getTime());
    apply(d, number(args[0], pipe));
    return d.toISOString();
  };

const decimals = (n: number) => Math.round(n * 1e10) / 1e10;

export const PIPES: Record<string, PipeSpec> = Object.assign(Object.create(null), {
  ToBase64: {
    min: 0,
    max: 0,
    fn: (v: unknown, _: unknown[], limit: number) => {
      const s = text(v, limit);
      if (Math.ceil(Buffer.byteLength(s) / 3) * 4 > limit) throw tooLarge('ToBase64', limit);
      return Buffer.from(s, 'utf8').toString('base64');
    },
  },
  FromBase64: { min: 0, max: 0, fn: (v: unknown) => Buffer.from(text(v), 'base64').toString('utf8') },
  UrlEncode: {
    min: 0,
    max: 0,
    fn: (v: unknown, _: unknown[], limit: number) => {
      const s = text(v, limit);
      // At most 3 UTF-8 bytes per UTF-16 unit, each written as %XX.
      if (s.length * 9 > limit) throw tooLarge('UrlEncode', limit);
      return encodeURIComponent(s);
    },
  },
  ToJsonString: {
    min: 0,
    max: 0,
    fn: (v: unknown, _: unknown[], limit: number) => {
      const json = boundedJson(v ?? null, limit);
      if (json === null) throw tooLarge('ToJsonString', limit);
      return json;
    },
  },
  ToJson: {
    min: 0,
    max: 0,
    fn: (v: unknown) => {
      if (typeof v !== 'string') return v;
      try {
        return JSON.parse(v);
      } catch {
        throw new ExpressionError('ToJson: the text is not JSON', 0);
      }
    },
  },
  ToDateUtc: { min: 0, max: 0, fn: (v: unknown) => date(v, 'ToDateUtc').toISOString() },
  FromUnixTimeSeconds: { min: 0, max: 0, fn: (v: unknown) => new Date(number(v, 'FromUnixTimeSeconds') * 1000).toISOString() },
  FromUnixTimeMilliSeconds: { min: 0, max: 0, fn: (v: unknown) => new Date(number(v, 'FromUnixTimeMilliSeconds')).toISOString() },
  IsNullOrEmpty: {
    min: 0,
    max: 0,
    fn: (v: unknown) => v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0),
  },
  Contains: {
    min: 1,
    max: 1,
    fn: (v: unknown, [x]: unknown[]) => (Array.isArray(v) ? v.some((item) => item === x || text(item) === text(x)) : text(v).includes(text(x))),
  },
  Join: {
    min: 0,
    max: 1,
    fn: (v: unknown, [sep]: unknown[], limit: number) => join(v, sep === undefined ? ',' : text(sep), limit, sep !== undefined),
  },
  Split: {
    min: 0,
    max: 1,
    fn: (v: unknown, [sep]: unknown[], limit: number) =>
      v === undefined || v === null || v === '' ? [] : split(v, sep === undefined ? ',' : text(sep), limit),
  },
  AddDecimal: { min: 1, max: 1, fn: (v: unknown, [n]: unknown[]) => decimals(number(v, 'AddDecimal') + number(n, 'AddDecimal')) },
  Sum: { min: 0, max: 1, fn: (v: unknown, args: unknown[]) => decimals(numbers(v, args, 'Sum').reduce((a, b) => a + b, 0)) },
  Min: {
    min: 0,
    max: 1,
    fn: (v: unknown, args: unknown[]) =>
      Array.isArray(v) && v.length === 0 ? null : numbers(v, args, 'Min').reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY),
  },
  Max: {
    min: 0,
    max: 1,
    fn: (v: unknown, args: unknown[]) =>
      Array.isArray(v) && v.length === 0 ? null : numbers(v, args, 'Max').reduce((a, b) => Math.max(a, b), Number.NEGATIVE_INFINITY),
  },
  Avg: {
    min: 0,
    max: 1,
    fn: (v: unknown, args: unknown[]) => {
      const ns = numbers(v, args, 'Avg');
      return ns.length === 0 ? null : decimals(ns.reduce((a, b) => a + b, 0) / ns.length);
    },
  },
  AddMonths: {
    min: 1,
    max: 1,
    // As .NET's AddMonths: the day is kept, or clamped to the target month's last day (31 Jan + 1 = 29 Feb).
    fn: shift('AddMonths', (d, n) => {
      const day = d.getUTCDate();
      d.setUTCDate(1);
      d.setUTCMonth(d.getUTCMonth() + n);
      d.setUTCDate(Math.min(day, new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 0)).getUTCDate()));
    }),
  },
  AddDays: { min: 1, max: 1, fn: shift('AddDays', (d, n) => d.setTime(d.getTime() + n * 86_400_000)) },
  AddHours: { min: 1, max: 1, fn: shift('AddHours', (d, n) => d.setTime(d.getTime() + n * 3_600_000)) },
  AddMinutes: { min: 1, max: 1, fn: shift('AddMinutes', (d, n) => d.setTime(d.getTime() + n * 60_000)) },
  RemoveLeading: {
    min: 1,
    max: 1,
    fn: (v: unknown, [x]: unknown[]) => {
      const s = text(v);
      const p = text(x);
      return p && s.startsWith(p) ? s.slice(p.length) : s;
    },
  },
  RemoveTrailing: {
    min: 1,
    max: 1,
    fn: (v: unknown, [x]: unknown[]) => {
      const s = text(v);
      const p = text(x);
      return p && s.endsWith(p) ? s.slice(0, s.length - p.length) : s;
    },
  },
  Trim: { min: 0, max: 0, fn: (v: unknown) => text(v).trim() },
  ToLowerCase: { min: 0, max: 0, fn: (v: unknown) => text(v).toLowerCase() },
  ToUpperCase: { min: 0, max: 0, fn: (v: unknown) => text(v).toUpperCase() },
  ToLowerCamelCase: { min: 0, max: 0, fn: (v: unknown) => camel(text(v), false) },
  ToUpperCamelCase: { min: 0, max: 0, fn: (v: unknown) => camel(text(v), true) },
});

/**
 * lowerCamelCase / UpperCamelCase: words are the runs of letters and digits (`first name`, `first_name`,
 * `first-name`); each word after the first (every word, upper) starts with a capital, the first word of
 * lowerCamelCase with a small letter; the rest of each word is kept (`HTTPRequest` → `hTTPRequest`).
 */
function camel(s: string, upper: boolean): string {
  const words = s.split(/[^\p{L}\p{N}]+/u).filter(Boolean);
  return words.map((w, i) => (i === 0 && !upper ? w[0].toLowerCase() : w[0].toUpperCase()) + w.slice(1)).join('');
}
