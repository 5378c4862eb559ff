// The spec's ColumnDataType enumeration: its PostgreSQL type, how a value travels as JSON, and the
// checks that turn a JSON value into a database-ready one (or a reason it is refused). Pure; no SQL runs here.
import { UUID_RE } from '../platform/db/database.ts';

export type ExtractionDataType = 'string' | 'numeric' | 'date' | 'boolean' | 'guid' | 'object';

export interface ColumnDataType {
  id: number;
  name: string;
  /** Base type used for casts and jsonb_to_recordset column definitions. */
  castType: string;
  extraction: ExtractionDataType;
  /** Maximum characters for varchar types; `null` for unbounded or non-text types; `'column'` for VarcharOther. */
  maxLength: number | null | 'column';
}

export const COLUMN_DATA_TYPES: readonly ColumnDataType[] = [
  { id: 0, name: 'Boolean', castType: 'boolean', extraction: 'boolean', maxLength: null },
  { id: 1, name: 'Date', castType: 'date', extraction: 'date', maxLength: null },
  { id: 2, name: 'Float', castType: 'double precision', extraction: 'numeric', maxLength: null },
  { id: 3, name: 'Integer', castType: 'integer', extraction: 'numeric', maxLength: null },
  { id: 4, name: 'Money', castType: 'numeric', extraction: 'numeric', maxLength: null },
  { id: 5, name: 'Varchar50', castType: 'text', extraction: 'string', maxLength: 50 },
  { id: 6, name: 'Varchar100', castType: 'text', extraction: 'string', maxLength: 100 },
  { id: 7, name: 'VarcharMax', castType: 'text', extraction: 'string', maxLength: null },
  { id: 8, name: 'Text', castType: 'text', extraction: 'string', maxLength: null },
  { id: 9, name: 'UniqueIdentifier', castType: 'uuid', extraction: 'guid', maxLength: null },
  { id: 10, name: 'Varchar200', castType: 'text', extraction: 'string', maxLength: 200 },
  { id: 11, name: 'VarcharOther', castType: 'text', extraction: 'string', maxLength: 'column' },
  { id: 12, name: 'VarBinary', castType: 'bytea', extraction: 'object', maxLength: null },
];

export const VARCHAR_OTHER = 11;
/** PostgreSQL's limit for varchar(n). */
export const MAX_VARCHAR_LENGTH = 10_485_760;
/** A key is a btree index entry; PostgreSQL refuses entries above ~2.7 kB, so keys stay well below. */
export const MAX_KEY_BYTES = 2000;
export const INTEGER_MIN = -2147483648;
export const INTEGER_MAX = 2147483647;

/** What a column is, in the catalogue's terms. `physical` is the lower-cased name used (quoted) in SQL. */
export interface ColumnDef {
  name: string;
  physical: string;
  dataTypeId: number;
  length: number | null;
}

export const dataTypeById = (id: number): ColumnDataType | undefined => COLUMN_DATA_TYPES[id];

/** The column's PostgreSQL type in DDL. Only numbers from the catalogue are interpolated. */
export function ddlType(col: Pick<ColumnDef, 'dataTypeId' | 'length'>): string {
  switch (col.dataTypeId) {
    case 4:
      return 'numeric(19,4)';
    case 5:
      return 'varchar(50)';
    case 6:
      return 'varchar(100)';
    case 10:
      return 'varchar(200)';
    case VARCHAR_OTHER:
      return `varchar(${Number(col.length)})`;
    default:
      return dataTypeById(col.dataTypeId)!.castType;
  }
}

export const maxLengthOf = (col: Pick<ColumnDef, 'dataTypeId' | 'length'>): number | null => {
  const m = dataTypeById(col.dataTypeId)!.maxLength;
  return m === 'column' ? col.length : m;
};

/** A database-ready value: what goes into a jsonb parameter (or a bound, cast parameter). */
export type DbValue = boolean | number | string | null;

export type Parsed = { ok: true; value: DbValue } | { ok: false; reason: string };

const ok = (value: DbValue): Parsed => ({ ok: true, value });
const no = (reason: string): Parsed => ({ ok: false, reason });
const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})(?:T00:00(?::00(?:\.0+)?)?(?:Z|[+-]00:?00)?)?$/;
const MONEY_RE = /^(-?)(\d{1,15})(?:\.(\d{1,4}))?$/;
const BASE64_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function codePointLengthExceeds(s: string, max: number): number | null {
  if (s.length <= max) return null;
  let n = 0;
  for (const _ of s) n++;
  return n > max ? n : null;
}

/**
 * Turns a JSON value into the database-ready value of a column, or the reason it cannot be stored.
 * `fromText` also accepts the string forms used for keys in query strings and KeyValue ("42", "true").
 */
export function parseValue(col: Pick<ColumnDef, 'dataTypeId' | 'length'>, value: unknown, opts: { fromText?: boolean } = {}): Parsed {
  if (value === null || value === undefined) return ok(null);
  const type = dataTypeById(col.dataTypeId)!;
  const text = opts.fromText && typeof value === 'string';
  switch (type.id) {
    case 0:
      if (typeof value === 'boolean') return ok(value);
      if (text && /^(true|false)$/i.test(value as string)) return ok((value as string).toLowerCase() === 'true');
      return no(`expected true or false, got ${show(value)}`);
    case 1: {
      if (typeof value !== 'string') return no(`expected a date as "YYYY-MM-DD", got ${show(value)}`);
      const m = DATE_RE.exec(value);
      if (!m) return no(`expected a date as "YYYY-MM-DD" (a time part must be midnight), got ${show(value)}`);
      const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
      const probe = new Date(Date.UTC(2000, mo - 1, d));
      probe.setUTCFullYear(y);
      if (y < 1 || probe.getUTCFullYear() !== y || probe.getUTCMonth() !== mo - 1 || probe.getUTCDate() !== d) {
        return no(`${show(value)} is not a calendar date`);
      }
      return ok(`${m[1]}-${m[2]}-${m[3]}`);
    }
    case 2: {
      const n = text ? textNumber(value as string) : value;
      if (typeof n !== 'number' || !Number.isFinite(n)) return no(`expected a finite number, got ${show(value)}`);
      return ok(n);
    }
    case 3: {
      const n = text && /^[+-]?\d{1,10}$/.test(value as string) ? Number(value) : value;
      if (typeof n !== 'number' || !Number.isInteger(n)) return no(`expected an integer, got ${show(value)}`);
      if (n < INTEGER_MIN || n > INTEGER_MAX) return no(`${show(value)} is outside the Integer range ${INTEGER_MIN}..${INTEGER_MAX}`);
      return ok(n);
    }
    case 4: {
      const s = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : typeof value === 'string' ? value : null;
      if (s === null) return no(`expected a decimal number or a decimal string, got ${show(value)}`);
      const m = MONEY_RE.exec(s);
      if (!m) return no(`expected a decimal with at most 15 integer digits and 4 decimal places, got ${show(value)}`);
      return ok(canonicalMoney(m));
    }
    case 9:
      if (typeof value !== 'string' || !UUID_RE.test(value)) return no(`expected a UUID such as "3f2504e0-4f89-41d3-9a0c-0305e82c3301", got ${show(value)}`);
      return ok(value.toLowerCase());
    case 12: {
      if (typeof value !== 'string' || !BASE64_RE.test(value)) return no(`expected base64-encoded bytes, got ${show(value)}`);
      return ok(`\\x${Buffer.from(value, 'base64').toString('hex')}`);
    }
    default: {
      if (typeof value !== 'string') return no(`expected a string, got ${show(value)}`);
      if (!value.isWellFormed()) return no('the string contains an unpaired UTF-16 surrogate');
      if (value.includes('\u0000')) return no('the string contains a NUL character, which PostgreSQL cannot store');
      const max = maxLengthOf(col);
      if (max !== null) {
        const over = codePointLengthExceeds(value, max);
        if (over !== null) return no(`the string has ${over} characters; the column holds at most ${max} (${type.name})`);
      }
      return ok(value);
    }
  }
}

function textNumber(s: string): number | string {
  return /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s) ? Number(s) : s;
}

function canonicalMoney(m: RegExpExecArray): string {
  const int = m[2].replace(/^0+(?=\d)/, '');
  const frac = (m[3] ?? '').padEnd(4, '0');
  const sign = m[1] === '-' && !(/^0+$/.test(int) && /^0+$/.test(frac)) ? '-' : '';
  return `${sign}${int}.${frac}`;
}

/** Parses a key value (JSON value or its string form) and enforces the key's size limit. */
export function parseKey(col: Pick<ColumnDef, 'dataTypeId' | 'length'>, value: unknown): Parsed {
  if (value === null || value === undefined) return no('a key value is required');
  const parsed = parseValue(col, value, { fromText: true });
  if (parsed.ok && typeof parsed.value === 'string') {
    const bytes = col.dataTypeId === 12 ? (parsed.value.length - 2) / 2 : Buffer.byteLength(parsed.value);
    if (bytes > MAX_KEY_BYTES) return no(`a key value may take at most ${MAX_KEY_BYTES} bytes (got ${bytes})`);
  }
  return parsed;
}

export const isTextType = (id: number): boolean => dataTypeById(id)?.castType === 'text';

/** A database value (as node-pg returns it) in its JSON form. */
export function toJson(col: Pick<ColumnDef, 'dataTypeId'>, v: unknown): unknown {
  if (v === null || v === undefined) return null;
  if (col.dataTypeId === 12) return (v as Buffer).toString('base64');
  return v;
}

/** A key as the string KeyValue of the spec's row object. */
export const keyToString = (col: Pick<ColumnDef, 'dataTypeId'>, v: unknown): string => String(toJson(col, v));
