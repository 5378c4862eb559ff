// Create-or-update of one row in one statement: INSERT … ON CONFLICT (key) DO UPDATE … WHERE something
// differs, RETURNING (xmax = 0) AS inserted and the row before and after (PostgreSQL 18's RETURNING old/new).
// Uniqueness is the database's job; the caller learns whether the row was created, changed or left alone,
// and which columns changed, which is exactly what its Created/Updated event carries.
import { sql } from 'kysely';
import { executePrepared, type Trx } from '../platform/db/database.ts';
import type { TableName } from '../platform/db/schema.ts';
import { HttpProblem } from '../platform/errors.ts';
import { appendEvent } from '../platform/events/outbox.ts';
import { pascalCase } from './fields.ts';

export type Row = Record<string, unknown>;

export interface Actor {
  tenantId: string;
  /** The user the call acts as (X-AppUser), recorded as created_by_id/modified_by_id and on events. */
  userId: string | null;
}

export interface UpsertSpec {
  table: TableName;
  /** The unique key the row is matched by: [expression as in the unique index, value]; tenant_id is added. */
  key: [string, unknown][];
  /** Column values to insert (key columns included where they are columns). */
  values: Row;
  /** Columns overwritten when the row exists; default every column of values. */
  update?: string[];
}

export interface WriteResult {
  inserted: boolean;
  row: Row;
  /** Columns whose value the write changed (every set column on insert), with their new values. */
  changes: Row;
}

const AUDIT = new Set(['tenant_id', 'created_on_utc', 'created_by_id', 'modified_on_utc', 'modified_by_id']);

export async function upsertRow(trx: Trx, actor: Actor, spec: UpsertSpec): Promise<WriteResult> {
  const values: Row = { ...spec.values, tenant_id: actor.tenantId, created_by_id: actor.userId, modified_by_id: actor.userId };
  const columns = Object.keys(values);
  const keyExprs = ['tenant_id', ...spec.key.map(([expr]) => expr)];
  const update = (spec.update ?? Object.keys(spec.values)).filter((c) => c !== 'id' && !AUDIT.has(c));
  const table = sql.table(spec.table);
  const insert = sql`insert into ${table} as t (${sql.join(columns.map((c) => sql.id(c)))}) values (${sql.join(columns.map((c) => sql`${values[c]}`))})`;
  const conflict = sql`on conflict (${sql.join(keyExprs.map((e) => sql.raw(e)))})`;
  const action =
    update.length === 0
      ? sql`do nothing`
      : sql`do update set ${sql.join(
          update.map((c) => sql`${sql.id(c)} = excluded.${sql.id(c)}`),
        )}, modified_on_utc = now(), modified_by_id = excluded.modified_by_id
          where row(${sql.join(update.map((c) => sql`t.${sql.id(c)}`))}) is distinct from row(${sql.join(update.map((c) => sql`excluded.${sql.id(c)}`))})`;
  // Prepared (decision 0061): its text depends only on the table, the key and the columns written.
  const result = await executePrepared(
    trx,
    sql<{ inserted: boolean; before: Row | null; after: Row }>`
    ${insert} ${conflict} ${action}
    returning (xmax = 0) as inserted, to_jsonb(old) as before, to_jsonb(new) as after`,
  );
  const written = result.rows[0];
  if (!written) {
    // The row exists and nothing differs: no write, no event.
    const where = [['tenant_id', actor.tenantId] as [string, unknown], ...spec.key];
    const row = await selectRow(trx, spec.table, where);
    if (!row) throw new Error(`upsert into ${spec.table} neither wrote nor found a row`);
    return { inserted: false, row, changes: {} };
  }
  const { inserted, before, after } = written;
  const changes: Row = {};
  if (inserted) {
    for (const [c, v] of Object.entries(after)) if (v !== null && !AUDIT.has(c)) changes[c] = v;
  } else {
    for (const c of update) if (JSON.stringify(before?.[c] ?? null) !== JSON.stringify(after[c] ?? null)) changes[c] = after[c] ?? null;
  }
  return { inserted, row: after, changes };
}

/**
 * Updates the row with this id, writing only the columns whose value differs (compared under a row
 * lock with the stored value as to_jsonb gives it); null when there is no such row.
 */
export async function updateRow(trx: Trx, actor: Actor, table: TableName, id: string, set: Row, alwaysChanged: string[] = []): Promise<WriteResult | null> {
  const locked = await sql<{ row: Row }>`select to_jsonb(t) as row from ${sql.table(table)} as t where t.id = ${id} for update`.execute(trx);
  const before = locked.rows[0]?.row;
  if (!before) return null;
  const changed = Object.keys(set).filter((c) => alwaysChanged.includes(c) || JSON.stringify(before[c] ?? null) !== JSON.stringify(set[c] ?? null));
  if (changed.length === 0) return { inserted: false, row: before, changes: {} };
  const result = await sql<{ after: Row }>`
    update ${sql.table(table)} as t set ${sql.join(changed.map((c) => sql`${sql.id(c)} = ${set[c]}`))},
      modified_on_utc = now(), modified_by_id = ${actor.userId}
    where t.id = ${id}
    returning to_jsonb(new) as after`.execute(trx);
  const after = result.rows[0].after;
  const changes: Row = {};
  for (const c of changed)
    if (alwaysChanged.includes(c) || JSON.stringify(before[c] ?? null) !== JSON.stringify(after[c] ?? null)) changes[c] = after[c] ?? null;
  return { inserted: false, row: after, changes };
}

export async function selectRow(trx: Trx, table: TableName, where: [string, unknown][]): Promise<Row | null> {
  const conditions = where.map(([expr, v]) => sql`${sql.raw(expr)} = ${v}`);
  const res = await sql<{ row: Row }>`select to_jsonb(t) as row from ${sql.table(table)} as t where ${sql.join(conditions, sql` and `)}`.execute(trx);
  return res.rows[0]?.row ?? null;
}

export interface EventOptions {
  /** Property name of a column in the event detail; default its PascalCase. */
  names?: Record<string, string>;
  /** Columns whose value never leaves the database (a password hash): the detail says "********". */
  masked?: string[];
  /** Columns left out of the detail. */
  omit?: string[];
  /**
   * Type names of columns ('String', 'Guid', …). When given, the detail also carries PropertyTypes, each
   * changed property's type (the Client API's events, decision 0024); a column not listed is a String.
   */
  types?: Record<string, string>;
}

/** Created or Updated on documentType with the changed properties; nothing when nothing changed. */
export async function emitWrite(trx: Trx, actor: Actor, documentType: string, result: WriteResult, opts: EventOptions = {}): Promise<void> {
  const entries = Object.entries(result.changes).filter(([c]) => !opts.omit?.includes(c));
  if (!result.inserted && entries.length === 0) return;
  const detail: Row = {};
  const types: Record<string, string> = {};
  for (const [c, v] of entries) {
    const name = opts.names?.[c] ?? pascalCase(c);
    detail[name] = opts.masked?.includes(c) ? '********' : v;
    types[name] = opts.types?.[c] ?? 'String';
  }
  if (opts.types) detail.PropertyTypes = types;
  await appendEvent(trx, {
    tenantId: actor.tenantId,
    actionType: result.inserted ? 'Created' : 'Updated',
    documentType,
    documentId: String(result.row.id),
    detail,
    userId: actor.userId,
  });
}

interface PgError {
  code?: string;
  constraint?: string;
  table?: string;
}

/**
 * The column a constraint error is about, from the constraint's name (row-level security makes
 * PostgreSQL withhold the key values from the message). Names are PostgreSQL's defaults,
 * <table>_tenant_id_<columns>_fkey|_key, or <table>_<column>_key for an index of ours; of several
 * columns the last one that fieldOf knows wins (company_id_external_id -> external_id).
 */
function constraintColumn(e: PgError, fieldOf: (column: string) => string | undefined): string | undefined {
  if (!e.constraint) return undefined;
  if (e.table && e.constraint === `${e.table}_pkey`) return 'id';
  let rest = e.table && e.constraint.startsWith(`${e.table}_`) ? e.constraint.slice(e.table.length + 1) : e.constraint;
  rest = rest.replace(/_(fkey|key|pkey)$/, '').replace(/^tenant_id_/, '');
  const parts = rest.split('_');
  for (let i = 0; i < parts.length; i++) {
    const column = parts.slice(i).join('_');
    if (fieldOf(column)) return column;
  }
  return rest || undefined;
}

/**
 * A PostgreSQL constraint error as a problem that names the API field: 23505 (unique) -> 409 and
 * 23503 (foreign key) -> 422 "<field> <value> does not exist". `fieldOf` maps columns to API names,
 * `values` (column -> value) supplies the offending value. The original error stays as `cause`, so a
 * transaction retry can still recognise a unique violation.
 */
export function constraintProblem(err: unknown, fieldOf: (column: string) => string | undefined, values: Row = {}): unknown {
  const e = err as PgError;
  if (e?.code !== '23503' && e?.code !== '23505') return err;
  const column = constraintColumn(e, fieldOf);
  const field = column ? (fieldOf(column) ?? column) : undefined;
  const value = column ? values[column] : undefined;
  const shown = value === undefined ? '' : ` ${JSON.stringify(value)}`;
  const problem =
    e.code === '23503'
      ? new HttpProblem(422, field ? `${field}${shown} does not match any record.` : `A referenced record does not exist (${e.constraint}).`, {
          errors: field ? [{ path: `/body/${field}`, message: 'no such record' }] : undefined,
          extra: field ? { field, value: value ?? null } : {},
        })
      : new HttpProblem(409, field ? `Another record already has this ${field}${shown}.` : `Conflict with an existing record (${e.constraint}).`, {
          errors: field ? [{ path: `/body/${field}`, message: 'already used by another record' }] : undefined,
          extra: field ? { field, value: value ?? null } : {},
        });
  return Object.assign(problem, { cause: err });
}

/** Runs a write and rethrows constraint errors as problems naming the API field. */
export async function naming<T>(fieldOf: (column: string) => string | undefined, values: Row, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw constraintProblem(err, fieldOf, values);
  }
}
