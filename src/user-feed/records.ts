// What a user-feed file says: its name (prefix_body_suffix.csv, the exchange rules) and its content, a CSV
// with a header row of the record's fields or the JSON template ({"users": [...]}). Reading never touches the
// database: a file that cannot be read fails as a whole, a row that cannot be read fails alone.
import { parseCsv } from '../automations/actions/files.ts';

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

/** The rows of a file's content; throws UnreadableFile when the file as a whole cannot be read. */
export function readRows(bytes: Buffer): ReadRow[] {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UnreadableFile('the file is not UTF-8 text');
  }
  const start = text.replace(/^\uFEFF/, '').trimStart();
  if (start === '') throw new UnreadableFile('the file is empty');
  return start.startsWith('{') ? jsonRows(start) : csvRows(text);
}

function jsonRows(text: string): ReadRow[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new UnreadableFile(`the file is neither a CSV nor valid JSON: ${(err as Error).message}`);
  }
  const users = (doc as { users?: unknown }).users;
  if (!Array.isArray(users)) throw new UnreadableFile('the JSON template must be an object with a "users" array');
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

function csvRows(text: string): ReadRow[] {
  const delimiter = detectDelimiter(text);
  const table = parseCsv(text, delimiter).filter((r) => !(r.length === 1 && r[0].trim() === ''));
  const header = table[0] ?? [];
  const columns = header.map((h) => BY_LOWER.get(h.trim().toLowerCase()) ?? null);
  if (!columns.includes('externalId')) throw new UnreadableFile('the header row has no externalId column');
  return table.slice(1).map((cells, i) => {
    const number = i + 1;
    if (cells.length !== header.length) return { number, record: {}, error: `the row has ${cells.length} cells; the header has ${header.length}` };
    const record: FeedRecord = {};
    cells.forEach((c, j) => {
      const f = columns[j];
      if (f) record[f] = c.trim();
    });
    return { number, record, error: null };
  });
}

/** Comma unless the header row holds semicolons and no commas (files saved by spreadsheet programs in some locales). */
function detectDelimiter(text: string): string {
  const first = text.slice(0, text.search(/\r?\n|$/));
  return !first.includes(',') && first.includes(';') ? ';' : ',';
}
