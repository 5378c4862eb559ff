// What a user-feed file says: its name (prefix_body_suffix.csv, the exchange rules) and its content, a CSV
// with a header row of the record's fields or the JSON template ({"users": [...]}). Reading never touches the
// database: a file that cannot be read fails as a whole, a row that cannot be read fails alone.
import { isUtf8 } from 'node:buffer';
import { CsvReadError, csvRecords } from '../platform/csv.ts';

/** The spec's user-feed record fields (every value a string). */
export const RECORD_FIELDS = [
  'companyCode',
  'divisionid',
  'departmentid',
  'userTypologyGroup',
  'resourceType',
  'userType',
  'name',
  'externalId',
  'externalNumber',
  'responsible',
  'administrativeResponsible',
  'planningResponsible',
  'leavesResponsible',
  'workphone',
  'email',
  'ssoUsername',
  'username',
  'weeklyRequiredHours',
  'hireDate',
  'expirationDate',
  'workLocation',
  'fslaStatus',
  'isActive',
  'employeeClass',
] as const;
export type RecordField = (typeof RECORD_FIELDS)[number];
export type FeedRecord = Partial<Record<RecordField, string>>;

const BY_LOWER = new Map<string, RecordField>(RECORD_FIELDS.map((f) => [f.toLowerCase(), f]));

export interface FeedFileName {
  prefix: string;
  body: string;
  /** YYYYMMDDHHmmss: the as-of time, and the processing order among files of the same prefix and body. */
  suffix: string;
}

/** The exchange's name rules for a data file the service consumes; the reason when the name breaks them. */
export function parseFileName(name: string): { name: FeedFileName } | { error: string } {
  const m = /^([A-Za-z]{2})_(.+)_([0-9]+)\.csv$/.exec(name);
  if (!m) return { error: `"${name}" is not named prefix_body_YYYYMMDDHHmmss.csv` };
  const [, prefix, body, suffix] = m;
  if (prefix !== 'AD') return { error: `prefix "${prefix}" is not AD: a data file from the agency starts with A (agency) then D (data)` };
  if (!/^[A-Za-z0-9 .-]+$/.test(body)) return { error: `body "${body}" must be a friendly name of letters, digits, spaces, dots or dashes` };
  if (!validStamp(suffix)) return { error: `suffix "${suffix}" is not a timestamp YYYYMMDDHHmmss` };
  return { name: { prefix, body, suffix } };
}

function validStamp(s: string): boolean {
  if (!/^\d{14}$/.test(s)) return false;
  const [y, mo, d, h, mi, se] = [s.slice(0, 4), s.slice(4, 6), s.slice(6, 8), s.slice(8, 10), s.slice(10, 12), s.slice(12, 14)].map(Number);
  const t = new Date(Date.UTC(y, mo - 1, d, h, mi, se));
  return t.getUTCFullYear() === y && t.getUTCMonth() === mo - 1 && t.getUTCDate() === d && h < 24 && t.getUTCHours() === h && mi < 60 && se < 60;
}

/** Processing order: by prefix and body, then by suffix (the spec: the suffix orders files of one prefix and body). */
export function compareFileNames(a: FeedFileName, b: FeedFileName): number {
  const ka = `${a.prefix}_${a.body}`;
  const kb = `${b.prefix}_${b.body}`;
  if (ka !== kb) return ka < kb ? -1 : 1;
  return a.suffix < b.suffix ? -1 : a.suffix > b.suffix ? 1 : 0;
}

/** One row as read: its record, or why it cannot be read. `number` counts data rows from 1. */
export interface ReadRow {
  number: number;
  record: FeedRecord;
  error: string | null;
}

export class UnreadableFile extends Error {}

/** The bounds a file is read within (docs/operations.md, "Limits: user feed"). */
export interface ReadLimits {
  /** Data rows a file may hold (ATRIUM_USER_FEED_MAX_ROWS). */
  maxRows: number;
}

/** Bytes one CSV record may span: a user's 24 fields are far below it; a 5 MB cell fails the file here, not the heap. */
export const MAX_RECORD_BYTES = 64 * 1024;

/** The rows of a file's content; throws UnreadableFile when the file as a whole cannot be read. */
export async function readRows(bytes: Buffer, limits: ReadLimits): Promise<ReadRow[]> {
  if (bytes.length === 0) throw new UnreadableFile('the file is empty (0 bytes)');
  // Checked on the bytes: a CSV is never held as one string beside its rows.
  if (!isUtf8(bytes)) throw new UnreadableFile('the file is not UTF-8 text');
  const first = bytes
    .subarray(0, 4096)
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart();
  if (first === '' && bytes.toString('utf8').trim() === '') throw new UnreadableFile('the file is empty');
  return first.startsWith('{') ? jsonRows(bytes.toString('utf8').replace(/^\uFEFF/, ''), limits) : csvRows(bytes, limits);
}

function jsonRows(text: string, limits: ReadLimits): ReadRow[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UnreadableFile(`the file is neither a CSV nor valid JSON: ${(err as Error).message}`);
  }
  const users = (doc as { users?: unknown }).users;
  if (!Array.isArray(users)) throw new UnreadableFile('the JSON template must be an object with a "users" array');
  if (users.length > limits.maxRows) throw tooManyRows(limits);
  return users.map((u, i) => {
    if (!u || typeof u !== 'object' || Array.isArray(u)) return { number: i + 1, record: {}, error: 'the row is not an object' };
    const record: FeedRecord = {};
    for (const [k, v] of Object.entries(u)) {
      const f = BY_LOWER.get(k.toLowerCase());
      if (f && v !== null && v !== undefined) record[f] = typeof v === 'string' ? v : String(v);
    }
    return { number: i + 1, record, error: null };
  });
}

const tooManyRows = (limits: ReadLimits) =>
  new UnreadableFile(`the file has more than ${limits.maxRows.toLocaleString('en-US')} rows (ATRIUM_USER_FEED_MAX_ROWS)`);

/**
 * A CSV through the platform's reader (platform/csv.ts): each record bounded by MAX_RECORD_BYTES, rows
 * counted against the limit as they come, only the record's own fields kept. A broken quote or an
 * oversized record fails the file.
 */
async function csvRows(bytes: Buffer, limits: ReadLimits): Promise<ReadRow[]> {
  let header: string[] | null = null;
  let columns: (RecordField | null)[] = [];
  const rows: ReadRow[] = [];
  try {
    for await (const cells of csvRecords(bytes, { maxRecordBytes: MAX_RECORD_BYTES })) {
      if (cells.length === 1 && cells[0].trim() === '') continue;
      if (!header) {
        header = cells;
        columns = header.map((h) => BY_LOWER.get(h.trim().toLowerCase()) ?? null);
        if (!columns.includes('externalId')) throw new UnreadableFile('the header row has no externalId column');
        continue;
      }
      const number = rows.length + 1;
      if (number > limits.maxRows) throw tooManyRows(limits);
      if (cells.length !== header.length) {
        rows.push({ number, record: {}, error: `the row has ${cells.length} cells; the header has ${header.length}` });
        continue;
      }
      // Only the record's own fields, and only those with a value (an absent field reads as empty): a file at
      // the row limit is held in a bounded heap (docs/operations.md, "Limits: user feed").
      const record: FeedRecord = {};
      cells.forEach((c, j) => {
        const f = columns[j];
        const v = f ? c.trim() : '';
        if (f && v !== '') record[f] = v;
      });
      rows.push({ number, record, error: null });
    }
  } catch (err) {
    if (err instanceof CsvReadError) throw new UnreadableFile(err.message);
    throw err;
  }
  if (!header) throw new UnreadableFile('the file is empty');
  return rows;
}
