// Input values of filters and parameters, converted to a column's data type (or refused with the
// reason), and the date formats the query builder accepts: ISO 8601, yyyy/MM/dd and MM/dd/yyyy.
import type { ColumnType } from '../definition.ts';

export interface DateValue {
  /** The calendar date as written, 'yyyy-mm-dd' (what a `date` column compares with). */
  date: string;
  /** The instant as ISO 8601 UTC; a value without an offset is UTC. */
  instant: string;
  /** Whether a time of day was given (a datetime compared with a bare date means that whole day). */
  hasTime: boolean;
}

const ISO = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?$/;
const YMD = /^(\d{4})\/(\d{1,2})\/(\d{1,2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?$/;
const MDY = /^(\d{1,2})\/(\d{1,2})\/(\d{4})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?)?$/;

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Parses a date input, or null when it is not one of the accepted formats or not a real date. */
export function parseDate(value: unknown): DateValue | null {
  if (typeof value !== 'string') return null;
  const s = value.trim();
  let y: number, mo: number, d: number, offset: string | undefined;
  const iso = ISO.exec(s);
  const ymd = iso ? null : YMD.exec(s);
  const mdy = iso || ymd ? null : MDY.exec(s);
  const m = iso ?? ymd ?? mdy;
  if (!m) return null;
  if (mdy) [mo, d, y] = [Number(m[1]), Number(m[2]), Number(m[3])];
  else [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (iso) offset = m[8];
  const time = [m[4], m[5], m[6], m[7]];
  const [hh, mi, ss, frac] = [Number(time[0] ?? 0), Number(time[1] ?? 0), Number(time[2] ?? 0), time[3]];
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || hh > 23 || mi > 59 || ss > 59) return null;
  const local = Date.UTC(y, mo - 1, d, hh, mi, ss, frac ? Math.floor(Number(`0${frac}`) * 1000) : 0);
  const check = new Date(local);
  if (check.getUTCDate() !== d || check.getUTCMonth() !== mo - 1) return null; // 2023-02-30
  let offsetMs = 0;
  if (offset && offset.toUpperCase() !== 'Z') {
    const om = /^([+-])(\d{2}):?(\d{2})?$/.exec(offset);
    if (!om || Number(om[2]) > 23 || Number(om[3] ?? 0) > 59) return null;
    offsetMs = (om[1] === '-' ? -1 : 1) * (Number(om[2]) * 60 + Number(om[3] ?? 0)) * 60_000;
  }
  return {
    date: `${pad(y, 4)}-${pad(mo)}-${pad(d)}`,
    instant: new Date(local - offsetMs).toISOString(),
    hasTime: time[0] !== undefined,
  };
}

/** The next calendar day of 'yyyy-mm-dd', as the UTC midnight instant. */
export function nextDayInstant(date: string): string {
  const t = Date.parse(`${date}T00:00:00Z`);
  return new Date(t + 86_400_000).toISOString();
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d{1,3})?$/;

export type Converted = { ok: true; value: unknown } | { ok: false; message: string };

const ok = (value: unknown): Converted => ({ ok: true, value });
const fail = (message: string): Converted => ({ ok: false, message });

/**
 * Converts one comparison value to what the SQL binds for a column of `type`: strings for text,
 * numbers as decimal strings (cast in SQL, so no float rounding), booleans, DateValues, lower-case uuids.
 */
export function convertValue(type: ColumnType, value: unknown, op: string): Converted {
  switch (type) {
    case 'string':
      if (typeof value === 'string') return ok(value);
      if (typeof value === 'number' || typeof value === 'boolean') return ok(String(value));
      return fail('must be a string');
    case 'guid':
      if (op === '=' || op === '<>') {
        return typeof value === 'string' && /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value.trim())
          ? ok(value.trim().toLowerCase())
          : fail('must be a GUID (xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx)');
      }
      return typeof value === 'string' ? ok(value) : fail('must be a string');
    case 'decimal':
    case 'integer': {
      if (typeof value === 'number' && Number.isFinite(value)) return ok(String(value));
      if (typeof value === 'string' && NUMBER.test(value.trim())) return ok(value.trim());
      return fail('must be a number');
    }
    case 'boolean':
      if (typeof value === 'boolean') return ok(value);
      if (value === 1 || value === 0) return ok(value === 1);
      if (typeof value === 'string' && /^(true|false|1|0)$/i.test(value.trim())) return ok(/^(true|1)$/i.test(value.trim()));
      return fail('must be true or false');
    case 'date':
    case 'datetime': {
      const d = parseDate(value);
      return d ? ok(d) : fail('must be a date: ISO 8601 (2024-03-31, 2024-03-31T14:30:00Z), yyyy/MM/dd or MM/dd/yyyy');
    }
    default:
      return fail('cannot be compared with a value');
  }
}
