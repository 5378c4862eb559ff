// Small value conversions every mapping of the import shares (src/import/mappings.ts and the files under
// src/import/mappings/): a query's column back to the stored value, and ids for rows no query names.
import { createHash } from 'node:crypto';

/** A stable id for a row whose own id no query shows: a UUID from a hash of its table and key. */
export function derivedId(table: string, ...key: unknown[]): string {
  const h = createHash('sha256')
    .update(`${table}\u0000${key.map((k) => String(k ?? '')).join('\u0000')}`)
    .digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((Number.parseInt(h[16], 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The nil UUID: the placeholder reference of a tombstone, whose other columns no query shows. */
export const NIL = '00000000-0000-0000-0000-000000000000';

/** A non-empty id, else null. */
export const id = (v: unknown): string | null => (typeof v === 'string' && v.length > 0 ? v : null);
/** A jsonb column the query shows as its text (`::text`) back to the JSON value. */
export const jsonText = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);
/** A catalogue datetime of a calendar date (midnight UTC) back to the date. */
export const day = (v: unknown): string | null => (typeof v === 'string' ? v.slice(0, 10) : null);
