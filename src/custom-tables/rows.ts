// Rows of a custom table: validated in JS first (every bad value is named by row, column and reason),
// then written by set-based statements (INSERT ... SELECT FROM jsonb_to_recordset ... ON CONFLICT), so a
// batch is one statement per column set and commits or fails as a whole.
import { type RawBuilder, sql } from 'kysely';
import type { Principal } from '../platform/auth/principal.ts';
import type { Trx } from '../platform/db/database.ts';
import { badRequest, type FieldError, HttpProblem, MAX_FIELD_ERRORS, notFound } from '../platform/errors.ts';
import { fullTypeName } from '../platform/events/catalogue.ts';
import { appendEvent } from '../platform/events/outbox.ts';
import { assertMay, ROW_DOCUMENT, requireTable, TABLE_DOCUMENT, type TableDef, tableRef } from './catalogue.ts';
import { type ColumnDef, type DbValue, dataTypeById, keyToString, parseKey, parseValue, toJson } from './column-types.ts';

export interface RowModel {
  KeyColumnName?: string;
  KeyValue?: unknown;
  KeyDataTypeId?: number;
  Columns?: { ColumnName: string; Value?: unknown }[];
}

export interface RowObject {
  TableName: string;
  KeyValue: string;
  KeyColumnName: string;
  KeyDataTypeId: number;
  Columns: { ColumnName: string; ColumnDataTypeId: number; Value: unknown }[];
}

/** A validated row: its database-ready key and the values of the columns it names (by physical name). */
export interface PreparedRow {
  key: DbValue;
  values: Map<string, DbValue>;
}

export const UPDATE_OPERATIONS = ['Update', 'UpdateMany', 'UpsertMany'] as const;
export const DELETE_OPERATIONS = ['Delete', 'DeleteAll', 'DeleteMany'] as const;

/** OperationType as a number or a name (case-insensitive). */
export function parseOperationType(value: unknown, names: readonly string[]): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value < names.length) return value;
  if (typeof value === 'string') {
    const i = names.findIndex((n) => n.toLowerCase() === value.toLowerCase() || String(names.indexOf(n)) === value);
    if (i >= 0) return i;
  }
  throw badRequest(`OperationType must be one of ${names.map((n, i) => `${n} (${i})`).join(', ')}.`, [
    { path: '/body/OperationType', message: `must be one of ${names.join(', ')} or 0..${names.length - 1}` },
  ]);
}

export const castOf = (c: ColumnDef): RawBuilder<unknown> => sql.raw(dataTypeById(c.dataTypeId)!.castType);
const show = (v: unknown): string => {
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 40 ? `${s.slice(0, 37)}...` : s;
};

/** Collects errors, keeping the first MAX_FIELD_ERRORS and counting the rest; `fail` throws the 400. */
export class Problems {
  readonly errors: FieldError[] = [];
  count = 0;
  add(path: string, message: string): void {
    this.count++;
    if (this.errors.length < MAX_FIELD_ERRORS) this.errors.push({ path, message });
  }
  fail(what: string): void {
    if (this.count === 0) return;
    const more = this.count > this.errors.length ? ` (${this.count - this.errors.length} more not shown)` : '';
    throw new HttpProblem(400, `${what} was rejected and nothing was changed: ${this.errors.map((e) => e.message).join('; ')}${more}`, {
      errors: this.errors,
      extra: this.count > this.errors.length ? { errorCount: this.count } : {},
    });
  }
}

export function checkKeyColumn(t: TableDef, given: unknown, path: string, problems: Problems, row: string): void {
  if (given !== undefined && given !== null && (typeof given !== 'string' || given.toLowerCase() !== t.key.physical)) {
    problems.add(path, `${row}: KeyColumnName ${show(given)} is not the table's key column ${t.key.name}`);
  }
}

/**
 * Validates one row given as a key and (column name, value) cells. `row` labels the row in messages.
 * Returns null when anything is wrong (the reasons are in problems).
 */
export function prepareRow(
  t: TableDef,
  row: string,
  key: { value: unknown; path: string },
  cells: Iterable<{ name: string; value: unknown; namePath: string; valuePath: string }>,
  problems: Problems,
): PreparedRow | null {
  const before = problems.count;
  const k = parseKey(t.key, key.value);
  const label = k.ok ? `row ${row} (key ${show(key.value)})` : `row ${row}`;
  if (!k.ok) problems.add(key.path, `${label}, key column "${t.key.name}": ${k.reason}`);
  const values = new Map<string, DbValue>();
  const byName = columnIndex(t);
  for (const cell of cells) {
    const name = typeof cell.name === 'string' ? cell.name.toLowerCase() : '';
    const col = byName.get(name);
    if (!col) {
      const why =
        name === t.key.physical
          ? 'the key is set by KeyValue'
          : `unknown column; the table has ${t.columns.map((c) => c.name).join(', ') || 'no other columns'}`;
      problems.add(cell.namePath, `${label}, column "${cell.name}": ${why}`);
      continue;
    }
    if (values.has(col.physical)) {
      problems.add(cell.namePath, `${label}, column "${col.name}": named twice in one row`);
      continue;
    }
    const v = parseValue(col, cell.value);
    if (!v.ok) problems.add(cell.valuePath, `${label}, column "${col.name}": ${v.reason}`);
    else values.set(col.physical, v.value);
  }
  return problems.count === before && k.ok ? { key: k.value, values } : null;
}

const indexCache = new WeakMap<TableDef, Map<string, ColumnDef>>();
function columnIndex(t: TableDef): Map<string, ColumnDef> {
  let m = indexCache.get(t);
  if (!m) {
    m = new Map(t.columns.map((c) => [c.physical, c]));
    indexCache.set(t, m);
  }
  return m;
}

/** Validates UpdateModel objects; the batch is rejected as a whole when any is wrong. */
export function prepareModels(t: TableDef, models: RowModel[], path: string, problems: Problems, single = false): PreparedRow[] {
  const out: PreparedRow[] = [];
  const label = (i: number) => String(i);
  models.forEach((m, i) => {
    const base = single ? path : `${path}/${i}`;
    checkKeyColumn(t, m.KeyColumnName, `${base}/KeyColumnName`, problems, `row ${label(i)}`);
    if (m.KeyDataTypeId !== undefined && m.KeyDataTypeId !== null && m.KeyDataTypeId !== t.key.dataTypeId) {
      problems.add(`${base}/KeyDataTypeId`, `row ${label(i)}: KeyDataTypeId ${m.KeyDataTypeId} is not the key's type ${t.key.dataTypeId}`);
    }
    const cells = (m.Columns ?? []).map((c, j) => ({
      name: c.ColumnName,
      value: c.Value,
      namePath: `${base}/Columns/${j}/ColumnName`,
      valuePath: `${base}/Columns/${j}/Value`,
    }));
    const r = prepareRow(t, label(i), { value: m.KeyValue, path: `${base}/KeyValue` }, cells, problems);
    if (r) out.push(r);
  });
  return out;
}

/** Rows naming one key twice are merged in order, as if applied one after the other. */
export function mergeByKey(rows: PreparedRow[]): PreparedRow[] {
  const byKey = new Map<string, PreparedRow>();
  for (const r of rows) {
    const k = String(r.key);
    const prev = byKey.get(k);
    if (!prev) byKey.set(k, { key: r.key, values: new Map(r.values) });
    else for (const [c, v] of r.values) prev.values.set(c, v);
  }
  return [...byKey.values()];
}

/**
 * Inserts absent rows and updates present ones; columns a row does not name keep their values.
 * One INSERT ... SELECT FROM jsonb_to_recordset ... ON CONFLICT per distinct set of named columns.
 */
export async function upsertPrepared(trx: Trx, t: TableDef, input: PreparedRow[]): Promise<{ inserted: number; updated: number }> {
  const groups = new Map<string, { cols: ColumnDef[]; rows: PreparedRow[] }>();
  for (const r of mergeByKey(input)) {
    const cols = t.columns.filter((c) => r.values.has(c.physical));
    const sig = cols.map((c) => c.physical).join(',');
    let g = groups.get(sig);
    if (!g) {
      g = { cols, rows: [] };
      groups.set(sig, g);
    }
    g.rows.push(r);
  }
  let inserted = 0;
  let total = 0;
  for (const { cols, rows } of groups.values()) {
    const all = [t.key, ...cols];
    const payload = JSON.stringify(
      rows.map((r) => {
        const o: Record<string, DbValue> = { [t.key.physical]: r.key };
        for (const c of cols) o[c.physical] = r.values.get(c.physical)!;
        return o;
      }),
    );
    const names = sql.join(all.map((c) => sql.id(c.physical)));
    const defs = sql.join(all.map((c) => sql`${sql.id(c.physical)} ${castOf(c)}`));
    const onConflict = cols.length
      ? sql`do update set ${sql.join(cols.map((c) => sql`${sql.id(c.physical)} = excluded.${sql.id(c.physical)}`))}`
      : sql`do nothing`;
    const res = await sql<{ inserted: number; total: number }>`
      with up as (
        insert into ${tableRef(t)} (${names})
        select ${names} from jsonb_to_recordset(${payload}::jsonb) as r(${defs})
        on conflict (${sql.id(t.key.physical)}) ${onConflict}
        returning (xmax = 0) as inserted
      ) select (count(*) filter (where inserted))::int as inserted, count(*)::int as total from up`.execute(trx);
    inserted += res.rows[0].inserted;
    total += cols.length ? res.rows[0].total : res.rows[0].inserted;
  }
  return { inserted, updated: total - inserted };
}

const keyMatch = (t: TableDef, key: DbValue) => sql`${sql.id(t.key.physical)} = cast(${key} as ${castOf(t.key)})`;

function rowObject(t: TableDef, r: Record<string, unknown>): RowObject {
  return {
    TableName: t.name,
    KeyValue: keyToString(t.key, r[t.key.physical]),
    KeyColumnName: t.key.name,
    KeyDataTypeId: t.key.dataTypeId,
    Columns: t.columns.map((c) => ({ ColumnName: c.name, ColumnDataTypeId: c.dataTypeId, Value: toJson(c, r[c.physical]) })),
  };
}

const selectList = (t: TableDef) => sql.join([t.key, ...t.columns].map((c) => sql.id(c.physical)));

function parseKeyOrThrow(t: TableDef, value: unknown, path: string): DbValue {
  const k = parseKey(t.key, value);
  if (!k.ok) throw badRequest(`keyValue is not a valid ${dataTypeById(t.key.dataTypeId)!.name} key: ${k.reason}.`, [{ path, message: k.reason }]);
  return k.value;
}

/** The rows ordered by key; without `take` every row, up to a limit past which paging is required. */
export const ROWS_WITHOUT_TAKE_LIMIT = 10_000;
export async function readRows(trx: Trx, p: Principal, tableName: string, page: { skip?: number; take?: number }): Promise<RowObject[]> {
  const t = await requireTable(trx, tableName, 'share');
  assertMay(p, t, 'read');
  const limit = page.take ?? ROWS_WITHOUT_TAKE_LIMIT + 1;
  const res = await sql<Record<string, unknown>>`
    select ${selectList(t)} from ${tableRef(t)} order by ${sql.id(t.key.physical)} offset ${page.skip ?? 0} limit ${limit}`.execute(trx);
  if (page.take === undefined && res.rows.length > ROWS_WITHOUT_TAKE_LIMIT) {
    throw badRequest(`Custom table "${t.name}" has more than ${ROWS_WITHOUT_TAKE_LIMIT} rows; page it with skip and take, or export it.`, [
      { path: '/querystring/take', message: `required when more than ${ROWS_WITHOUT_TAKE_LIMIT} rows would be returned` },
    ]);
  }
  return res.rows.map((r) => rowObject(t, r));
}

export async function readRow(trx: Trx, p: Principal, tableName: string, keyValue: string): Promise<RowObject> {
  const t = await requireTable(trx, tableName, 'share');
  assertMay(p, t, 'read');
  const key = parseKeyOrThrow(t, keyValue, '/querystring/keyValue');
  const res = await sql<Record<string, unknown>>`select ${selectList(t)} from ${tableRef(t)} where ${keyMatch(t, key)}`.execute(trx);
  if (!res.rows[0]) throw notFound(`Custom table "${t.name}" has no row with ${t.key.name} = ${keyValue}.`);
  return rowObject(t, res.rows[0]);
}

export async function readColumnValue(
  trx: Trx,
  p: Principal,
  tableName: string,
  keyValue: string,
  columnName: string,
): Promise<{ TableName: string; KeyValue: string; ColumnName: string; ColumnDataTypeId: number; Value: unknown }> {
  const t = await requireTable(trx, tableName, 'share');
  assertMay(p, t, 'read');
  const col = [t.key, ...t.columns].find((c) => c.physical === columnName.toLowerCase());
  if (!col) throw notFound(`Custom table "${t.name}" has no column ${columnName}.`);
  const key = parseKeyOrThrow(t, keyValue, '/querystring/keyValue');
  const res = await sql<{ v: unknown }>`select ${sql.id(col.physical)} as v from ${tableRef(t)} where ${keyMatch(t, key)}`.execute(trx);
  if (!res.rows[0]) throw notFound(`Custom table "${t.name}" has no row with ${t.key.name} = ${keyValue}.`);
  return { TableName: t.name, KeyValue: keyValue, ColumnName: col.name, ColumnDataTypeId: col.dataTypeId, Value: toJson(col, res.rows[0].v) };
}

export interface WriteRequest {
  OperationType: unknown;
  UpdateModel?: RowModel;
  UpdateManyModel?: RowModel[];
  UpsertManyModel?: RowModel[];
}

export interface WriteResult {
  TableName: string;
  OperationType: string;
  RowCount: number;
  Inserted: number;
  Updated: number;
}

function requireModel<T>(model: T | undefined, name: string, op: string): T {
  if (model === undefined || model === null) throw badRequest(`${op} needs ${name}.`, [{ path: `/body/${name}`, message: `is required for ${op}` }]);
  return model;
}

const batchEvent = (t: TableDef, p: Principal, url: string, op: string, detail: Record<string, unknown>) => ({
  tenantId: p.tenantId,
  actionType: 'BatchExecuted',
  documentType: TABLE_DOCUMENT,
  documentId: t.id,
  userId: p.userId,
  detail: { DocumentType: fullTypeName(ROW_DOCUMENT), Url: url, TableName: t.name, OperationType: op, ...detail },
});

/** PUT rows: Update (one existing row), UpdateMany and UpsertMany (insert or update each, as one batch). */
export async function writeRows(trx: Trx, p: Principal, tableName: string, body: WriteRequest, url: string): Promise<WriteResult> {
  const op = parseOperationType(body.OperationType, UPDATE_OPERATIONS);
  const opName = UPDATE_OPERATIONS[op];
  const t = await requireTable(trx, tableName, 'share');
  assertMay(p, t, 'save');
  const problems = new Problems();
  if (op === 0) {
    const model = requireModel(body.UpdateModel, 'UpdateModel', opName);
    const [row] = prepareModels(t, [model], '/body/UpdateModel', problems, true);
    problems.fail('The update');
    const cols = t.columns.filter((c) => row.values.has(c.physical));
    const res = cols.length
      ? await sql`update ${tableRef(t)} set ${sql.join(cols.map((c) => sql`${sql.id(c.physical)} = cast(${row.values.get(c.physical)} as ${castOf(c)})`))}
          where ${keyMatch(t, row.key)}`.execute(trx)
      : await sql`select 1 from ${tableRef(t)} where ${keyMatch(t, row.key)}`.execute(trx);
    const n = Number(res.numAffectedRows ?? res.rows.length);
    if (n === 0) throw notFound(`Custom table "${t.name}" has no row with ${t.key.name} = ${String(model.KeyValue)}.`);
    await appendEvent(trx, {
      tenantId: p.tenantId,
      actionType: 'Updated',
      documentType: ROW_DOCUMENT,
      userId: p.userId,
      detail: { TableName: t.name, TableId: t.id, KeyValue: String(model.KeyValue), Columns: cols.map((c) => c.name) },
    });
    return { TableName: t.name, OperationType: opName, RowCount: 1, Inserted: 0, Updated: 1 };
  }
  const modelName = op === 1 ? 'UpdateManyModel' : 'UpsertManyModel';
  const models = requireModel(op === 1 ? body.UpdateManyModel : body.UpsertManyModel, modelName, opName);
  const rows = prepareModels(t, models, `/body/${modelName}`, problems);
  problems.fail(`The batch of ${models.length} rows`);
  const { inserted, updated } = await upsertPrepared(trx, t, rows);
  await appendEvent(trx, batchEvent(t, p, url, opName, { RowCount: models.length, Inserted: inserted, Updated: updated }));
  return { TableName: t.name, OperationType: opName, RowCount: models.length, Inserted: inserted, Updated: updated };
}

export interface DeleteRequest {
  OperationType: unknown;
  DeleteModel?: { KeyColumnName?: string; KeyValue?: unknown };
  DeleteManyModel?: { KeyColumnName?: string; KeyValues?: unknown[] };
}

/** DELETE rows: Delete (one row; 404 if absent), DeleteAll, DeleteMany (keys that are absent are skipped). */
export async function deleteRows(
  trx: Trx,
  p: Principal,
  tableName: string,
  body: DeleteRequest,
  url: string,
): Promise<{ TableName: string; OperationType: string; Deleted: number }> {
  const op = parseOperationType(body.OperationType, DELETE_OPERATIONS);
  const opName = DELETE_OPERATIONS[op];
  const t = await requireTable(trx, tableName, 'share');
  assertMay(p, t, 'save');
  const problems = new Problems();
  let deleted: number;
  if (op === 0) {
    const model = requireModel(body.DeleteModel, 'DeleteModel', opName);
    checkKeyColumn(t, model.KeyColumnName, '/body/DeleteModel/KeyColumnName', problems, 'DeleteModel');
    const k = parseKey(t.key, model.KeyValue);
    if (!k.ok) problems.add('/body/DeleteModel/KeyValue', `DeleteModel, key column "${t.key.name}": ${k.reason}`);
    problems.fail('The delete');
    const res = await sql`delete from ${tableRef(t)} where ${keyMatch(t, k.ok ? k.value : null)}`.execute(trx);
    deleted = Number(res.numAffectedRows ?? 0);
    if (deleted === 0) throw notFound(`Custom table "${t.name}" has no row with ${t.key.name} = ${String(model.KeyValue)}.`);
    await appendEvent(trx, {
      tenantId: p.tenantId,
      actionType: 'Deleted',
      documentType: ROW_DOCUMENT,
      userId: p.userId,
      detail: { TableName: t.name, TableId: t.id, KeyValue: String(model.KeyValue) },
    });
  } else if (op === 1) {
    const res = await sql`delete from ${tableRef(t)}`.execute(trx);
    deleted = Number(res.numAffectedRows ?? 0);
    await appendEvent(trx, batchEvent(t, p, url, opName, { RowCount: deleted }));
  } else {
    const model = requireModel(body.DeleteManyModel, 'DeleteManyModel', opName);
    checkKeyColumn(t, model.KeyColumnName, '/body/DeleteManyModel/KeyColumnName', problems, 'DeleteManyModel');
    const keys: DbValue[] = [];
    (model.KeyValues ?? []).forEach((v, i) => {
      const k = parseKey(t.key, v);
      if (!k.ok) problems.add(`/body/DeleteManyModel/KeyValues/${i}`, `key ${i} ${show(v)}: ${k.reason}`);
      else keys.push(k.value);
    });
    problems.fail('The delete');
    const res = await sql`delete from ${tableRef(t)} where ${sql.id(t.key.physical)} in (
      select cast(x.v #>> '{}' as ${castOf(t.key)}) from jsonb_array_elements(${JSON.stringify(keys)}::jsonb) as x(v))`.execute(trx);
    deleted = Number(res.numAffectedRows ?? 0);
    await appendEvent(trx, batchEvent(t, p, url, opName, { RowCount: deleted, KeyCount: keys.length }));
  }
  return { TableName: t.name, OperationType: opName, Deleted: deleted };
}
