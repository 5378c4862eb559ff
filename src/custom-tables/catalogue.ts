// The custom-table catalogue: a tenant's table names -> physical tables in schema customtables, their
// typed columns and Read/Save roles; and the DDL that keeps the physical tables in step, run as the
// database owner inside the same tenant transaction so a catalogue change and its DDL commit together.
import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { isAdministrator, type Principal } from '../platform/auth/principal.ts';
import { APP_ROLE, isUuid, type Trx } from '../platform/db/database.ts';
import type { RowOf } from '../platform/db/schema.ts';
import { badRequest, type FieldError, HttpProblem, notFound } from '../platform/errors.ts';
import { appendEvent } from '../platform/events/outbox.ts';
import { type ColumnDef, dataTypeById, ddlType, MAX_VARCHAR_LENGTH, VARCHAR_OTHER } from './column-types.ts';

export const SCHEMA = 'customtables';
/** Table and column names: a letter, then letters, digits and underscores; 63 characters at most. */
export const NAME_RE = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;
/** Every physical table carries the tenant in this column, so no user column may take its name. */
export const TENANT_COLUMN = 'tenant_id';
/** Event document types (full names get the platform namespace in the outbox). */
export const TABLE_DOCUMENT = 'CustomTable';
export const ROW_DOCUMENT = 'CustomTableRow';
const MAX_COLUMNS = 1000;

export interface TableDef {
  id: string;
  tenantId: string;
  name: string;
  physical: string;
  key: ColumnDef;
  /** Non-key columns in creation order. */
  columns: ColumnDef[];
  readRoles: string[];
  saveRoles: string[];
  createdOn: Date;
  modifiedOn: Date;
}

export interface ColumnSpec {
  ColumnName: string;
  ColumnDataTypeId: number;
  Length?: number | null;
}

export interface TableSpec {
  KeyColumnName: string;
  KeyDataTypeId: number;
  KeyLength?: number | null;
  Columns?: ColumnSpec[];
}

/** The catalogue entry as the API shows it. */
export interface TableSummary {
  Id: string;
  TableName: string;
  KeyColumnName: string;
  KeyDataTypeId: number;
  KeyLength?: number;
  Columns: { ColumnName: string; ColumnDataTypeId: number; Length?: number }[];
  ReadRoles: string[];
  SaveRoles: string[];
  CreatedOn: string;
  ModifiedOn: string;
}

/** Physical name: `ct_<12 hex of the tenant>_<lower name>`, hashed when it would pass 63 characters. */
export function physicalTableName(tenantId: string, name: string): string {
  const tenant = tenantId.replace(/-/g, '').slice(0, 12).toLowerCase();
  const lower = name.toLowerCase();
  if (lower.length <= 40) return `ct_${tenant}_${lower}`;
  return `ct_${tenant}_${lower.slice(0, 33)}_${createHash('sha256').update(lower).digest('hex').slice(0, 6)}`;
}

/** Schema-qualified, quoted reference to a physical table. */
export const tableRef = (t: Pick<TableDef, 'physical'>) => sql.id(SCHEMA, t.physical);

type TableRow = RowOf<'custom_tables'>;
type ColumnRow = Pick<RowOf<'custom_table_columns'>, 'table_id' | 'name' | 'physical_name' | 'data_type_id' | 'length'>;

function toDef(t: TableRow, cols: ColumnRow[]): TableDef {
  return {
    id: t.id,
    tenantId: t.tenant_id,
    name: t.name,
    physical: t.physical_name,
    key: { name: t.key_column_name, physical: t.key_physical_name, dataTypeId: t.key_data_type_id, length: t.key_length },
    columns: cols.map((c) => ({ name: c.name, physical: c.physical_name, dataTypeId: c.data_type_id, length: c.length })),
    readRoles: t.read_roles,
    saveRoles: t.save_roles,
    createdOn: t.created_on_utc,
    modifiedOn: t.modified_on_utc,
  };
}

async function columnsOf(trx: Trx, tableIds: string[]): Promise<ColumnRow[]> {
  if (tableIds.length === 0) return [];
  return trx
    .selectFrom('custom_table_columns')
    .select(['table_id', 'name', 'physical_name', 'data_type_id', 'length'])
    .where((eb) => eb('table_id', '=', eb.fn.any(eb.val(tableIds))))
    .orderBy('ordinal')
    .execute();
}

/**
 * The table's definition, or null. `share` keeps it from being altered or dropped while rows are
 * read or written; `update` is taken by schema changes.
 */
export async function loadTable(trx: Trx, by: { name: string } | { id: string }, lock: 'share' | 'update' | null = null): Promise<TableDef | null> {
  let q = trx.selectFrom('custom_tables').selectAll();
  q = 'name' in by ? q.where('name_key', '=', by.name.toLowerCase()) : q.where('id', '=', by.id);
  if (lock === 'share') q = q.forShare();
  else if (lock === 'update') q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) return null;
  return toDef(row, await columnsOf(trx, [row.id]));
}

export async function requireTable(trx: Trx, name: string, lock: 'share' | 'update' | null = null): Promise<TableDef> {
  const t = await loadTable(trx, { name }, lock);
  if (!t) throw notFound(`Custom table "${name}" does not exist.`);
  return t;
}

/** Reads need a Read role, writes a Save role; Administrator always may; an empty list lets any user of the tenant. */
export function mayAccess(p: Principal, t: Pick<TableDef, 'readRoles' | 'saveRoles'>, access: 'read' | 'save'): boolean {
  const roles = access === 'read' ? t.readRoles : t.saveRoles;
  return roles.length === 0 || isAdministrator(p) || roles.some((r) => p.roles.has(r));
}

export function assertMay(p: Principal, t: TableDef, access: 'read' | 'save'): void {
  if (mayAccess(p, t, access)) return;
  const roles = access === 'read' ? t.readRoles : t.saveRoles;
  const what = access === 'read' ? 'Reading' : 'Changing';
  throw new HttpProblem(403, `${what} custom table "${t.name}" requires one of the roles: ${roles.join(', ')}.`, {
    extra: { requiredRoles: roles },
  });
}

export function summarize(t: TableDef): TableSummary {
  const withLength = (c: ColumnDef) => (c.dataTypeId === VARCHAR_OTHER && c.length !== null ? { Length: c.length } : {});
  return {
    Id: t.id,
    TableName: t.name,
    KeyColumnName: t.key.name,
    KeyDataTypeId: t.key.dataTypeId,
    ...(t.key.dataTypeId === VARCHAR_OTHER && t.key.length !== null ? { KeyLength: t.key.length } : {}),
    Columns: t.columns.map((c) => ({ ColumnName: c.name, ColumnDataTypeId: c.dataTypeId, ...withLength(c) })),
    ReadRoles: t.readRoles,
    SaveRoles: t.saveRoles,
    CreatedOn: t.createdOn.toISOString(),
    ModifiedOn: t.modifiedOn.toISOString(),
  };
}

/** Every table the principal may read, by name. */
export async function listTables(trx: Trx, p: Principal): Promise<TableSummary[]> {
  const tables = await trx.selectFrom('custom_tables').selectAll().orderBy('name_key').execute();
  const cols = await columnsOf(
    trx,
    tables.map((t) => t.id),
  );
  return tables
    .map((t) =>
      toDef(
        t,
        cols.filter((c) => c.table_id === t.id),
      ),
    )
    .filter((t) => mayAccess(p, t, 'read'))
    .map(summarize);
}

/** The table's schema with its row count. */
export async function describeTable(trx: Trx, p: Principal, name: string): Promise<TableSummary & { RowCount: number }> {
  const t = await requireTable(trx, name, 'share');
  assertMay(p, t, 'read');
  const count = await sql<{ n: string }>`select count(*) as n from ${tableRef(t)}`.execute(trx);
  return { ...summarize(t), RowCount: Number(count.rows[0].n) };
}

function checkName(name: unknown, path: string, what: string, errors: FieldError[]): void {
  if (typeof name !== 'string' || !NAME_RE.test(name)) {
    errors.push({ path, message: `${what} must start with a letter and hold only letters, digits and underscores, at most 63 characters` });
  }
}

function checkType(id: unknown, length: unknown, path: string, lengthPath: string, errors: FieldError[]): void {
  if (typeof id !== 'number' || !Number.isInteger(id) || !dataTypeById(id)) {
    errors.push({ path, message: 'must be a ColumnDataType between 0 and 12' });
    return;
  }
  if (id === VARCHAR_OTHER && !(typeof length === 'number' && Number.isInteger(length) && length >= 1 && length <= MAX_VARCHAR_LENGTH)) {
    errors.push({ path: lengthPath, message: `VarcharOther needs a Length between 1 and ${MAX_VARCHAR_LENGTH}` });
  }
}

/** Validates a create/import body; names compare case-insensitively. */
export function validateSpec(tableName: string, spec: TableSpec, base = '/body'): void {
  const errors: FieldError[] = [];
  checkName(tableName, '/params/tableName', 'A table name', errors);
  checkName(spec.KeyColumnName, `${base}/KeyColumnName`, 'A column name', errors);
  checkType(spec.KeyDataTypeId, spec.KeyLength, `${base}/KeyDataTypeId`, `${base}/KeyLength`, errors);
  const seen = new Map<string, number>();
  const cols = spec.Columns ?? [];
  if (cols.length > MAX_COLUMNS) errors.push({ path: `${base}/Columns`, message: `a table holds at most ${MAX_COLUMNS} columns` });
  if (typeof spec.KeyColumnName === 'string' && spec.KeyColumnName.toLowerCase() === TENANT_COLUMN) {
    errors.push({ path: `${base}/KeyColumnName`, message: `${TENANT_COLUMN} is reserved for the tenant column` });
  }
  cols.forEach((c, i) => {
    const path = `${base}/Columns/${i}`;
    checkName(c.ColumnName, `${path}/ColumnName`, 'A column name', errors);
    checkType(c.ColumnDataTypeId, c.Length, `${path}/ColumnDataTypeId`, `${path}/Length`, errors);
    if (typeof c.ColumnName !== 'string') return;
    const key = c.ColumnName.toLowerCase();
    if (key === TENANT_COLUMN) errors.push({ path: `${path}/ColumnName`, message: `${TENANT_COLUMN} is reserved for the tenant column` });
    const before = seen.get(key);
    if (before !== undefined)
      errors.push({ path: `${path}/ColumnName`, message: `repeats the column name of /Columns/${before} (names compare case-insensitively)` });
    seen.set(key, i);
  });
  if (errors.length) throw badRequest(`The table definition is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors);
}

const sameType = (a: Pick<ColumnDef, 'dataTypeId' | 'length'>, b: { dataTypeId: number; length?: number | null }) =>
  a.dataTypeId === b.dataTypeId && (a.dataTypeId !== VARCHAR_OTHER || a.length === (b.length ?? null));

const typeLabel = (c: { dataTypeId: number; length?: number | null }) =>
  `${dataTypeById(c.dataTypeId)?.name ?? c.dataTypeId}${c.dataTypeId === VARCHAR_OTHER ? `(${c.length})` : ''}`;

function tenantLiteral(tenantId: string): string {
  if (!isUuid(tenantId)) throw new Error('tenant id is not a uuid');
  return tenantId;
}

/** DDL runs as the session (owner) role, then the transaction returns to atrium_app. */
async function asOwner(trx: Trx, fn: () => Promise<void>): Promise<void> {
  await sql`set local role none`.execute(trx);
  await fn();
  await sql`set local role ${sql.id(APP_ROLE)}`.execute(trx);
}

const tenantMatch = sql`${sql.id(TENANT_COLUMN)} = nullif(current_setting('atrium.tenant_id', true), '')::uuid`;

export interface EnsureResult {
  table: TableDef;
  created: boolean;
  addedColumns: string[];
}

/**
 * Creates the table, or adds the columns it lacks. A key or column that exists with another type is a 409.
 * Concurrent calls for one name are serialised by an advisory lock.
 */
export async function ensureTable(trx: Trx, p: Principal, tableName: string, spec: TableSpec, base = '/body'): Promise<EnsureResult> {
  validateSpec(tableName, spec, base);
  await sql`select pg_advisory_xact_lock(hashtextextended(${`customtable:${p.tenantId}:${tableName.toLowerCase()}`}, 0))`.execute(trx);
  const existing = await loadTable(trx, { name: tableName }, 'update');
  const key = { dataTypeId: spec.KeyDataTypeId, length: spec.KeyDataTypeId === VARCHAR_OTHER ? (spec.KeyLength ?? null) : null };
  const wanted = (spec.Columns ?? []).map((c) => ({
    name: c.ColumnName,
    physical: c.ColumnName.toLowerCase(),
    dataTypeId: c.ColumnDataTypeId,
    length: c.ColumnDataTypeId === VARCHAR_OTHER ? (c.Length ?? null) : null,
  }));
  if (!existing) return { table: await createTable(trx, p, tableName, spec, key, wanted), created: true, addedColumns: wanted.map((c) => c.name) };

  assertMay(p, existing, 'save');
  const conflicts: FieldError[] = [];
  if (existing.key.physical !== spec.KeyColumnName.toLowerCase() || !sameType(existing.key, key)) {
    conflicts.push({
      path: `${base}/KeyColumnName`,
      message: `the table's key is ${existing.key.name} ${typeLabel(existing.key)}, not ${spec.KeyColumnName} ${typeLabel(key)}`,
    });
  }
  const added: ColumnDef[] = [];
  wanted.forEach((c, i) => {
    const have = c.physical === existing.key.physical ? existing.key : existing.columns.find((x) => x.physical === c.physical);
    if (!have) added.push(c);
    else if (!sameType(have, c)) {
      conflicts.push({ path: `${base}/Columns/${i}/ColumnDataTypeId`, message: `column ${have.name} exists as ${typeLabel(have)}, not ${typeLabel(c)}` });
    }
  });
  if (conflicts.length) {
    throw new HttpProblem(409, `Custom table "${existing.name}" exists with another definition: ${conflicts.map((e) => e.message).join('; ')}.`, {
      errors: conflicts,
    });
  }
  if (added.length === 0) return { table: existing, created: false, addedColumns: [] };
  if (existing.columns.length + added.length > MAX_COLUMNS) throw badRequest(`A table holds at most ${MAX_COLUMNS} columns.`);
  const first = existing.columns.length;
  await sql`insert into custom_table_columns (tenant_id, table_id, name, name_key, physical_name, data_type_id, length, ordinal)
    select ${p.tenantId}::uuid, ${existing.id}::uuid, c.name, lower(c.name), c.physical, c.type, c.length, ${first} + c.ord
    from jsonb_to_recordset(${JSON.stringify(added.map((c, i) => ({ name: c.name, physical: c.physical, type: c.dataTypeId, length: c.length, ord: i })))}::jsonb)
      as c(name text, physical text, type integer, length integer, ord integer)`.execute(trx);
  await sql`update custom_tables set modified_on_utc = now() where id = ${existing.id}::uuid`.execute(trx);
  await asOwner(trx, async () => {
    const adds = added.map((c) => sql`add column ${sql.id(c.physical)} ${sql.raw(ddlType(c))}`);
    await sql`alter table ${tableRef(existing)} ${sql.join(adds)}`.execute(trx);
  });
  await appendEvent(trx, {
    tenantId: p.tenantId,
    actionType: 'Updated',
    documentType: TABLE_DOCUMENT,
    documentId: existing.id,
    userId: p.userId,
    detail: { TableName: existing.name, AddedColumns: added.map((c) => ({ ColumnName: c.name, ColumnDataTypeId: c.dataTypeId })) },
  });
  return { table: (await loadTable(trx, { id: existing.id }))!, created: false, addedColumns: added.map((c) => c.name) };
}

async function createTable(
  trx: Trx,
  p: Principal,
  tableName: string,
  spec: TableSpec,
  key: { dataTypeId: number; length: number | null },
  columns: ColumnDef[],
): Promise<TableDef> {
  if (columns.some((c) => c.physical === spec.KeyColumnName.toLowerCase())) {
    const i = columns.findIndex((c) => c.physical === spec.KeyColumnName.toLowerCase());
    if (!sameType(columns[i], key)) {
      throw new HttpProblem(409, `Column ${columns[i].name} is the key column with another type.`, {
        errors: [{ path: `/body/Columns/${i}/ColumnDataTypeId`, message: `the key column is ${typeLabel(key)}` }],
      });
    }
    columns.splice(i, 1);
  }
  const physical = physicalTableName(p.tenantId, tableName);
  const inserted = await sql<{ id: string }>`
    insert into custom_tables (tenant_id, name, name_key, physical_name, key_column_name, key_physical_name, key_data_type_id, key_length)
    values (${p.tenantId}::uuid, ${tableName}, ${tableName.toLowerCase()}, ${physical}, ${spec.KeyColumnName}, ${spec.KeyColumnName.toLowerCase()},
            ${key.dataTypeId}, ${key.length})
    returning id`.execute(trx);
  const id = inserted.rows[0].id;
  if (columns.length) {
    await sql`insert into custom_table_columns (tenant_id, table_id, name, name_key, physical_name, data_type_id, length, ordinal)
      select ${p.tenantId}::uuid, ${id}::uuid, c.name, lower(c.name), c.physical, c.type, c.length, c.ord
      from jsonb_to_recordset(${JSON.stringify(columns.map((c, i) => ({ name: c.name, physical: c.physical, type: c.dataTypeId, length: c.length, ord: i })))}::jsonb)
        as c(name text, physical text, type integer, length integer, ord integer)`.execute(trx);
  }
  const ref = sql.id(SCHEMA, physical);
  await asOwner(trx, async () => {
    const defs = [
      // The check pins the table to its tenant: RLS alone would let another tenant add rows tagged as its own.
      sql`${sql.id(TENANT_COLUMN)} uuid not null default nullif(current_setting('atrium.tenant_id', true), '')::uuid check (${sql.id(TENANT_COLUMN)} = ${sql.lit(tenantLiteral(p.tenantId))}::uuid)`,
      sql`${sql.id(spec.KeyColumnName.toLowerCase())} ${sql.raw(ddlType(key))} not null primary key`,
      ...columns.map((c) => sql`${sql.id(c.physical)} ${sql.raw(ddlType(c))}`),
    ];
    await sql`create table ${ref} (${sql.join(defs)})`.execute(trx);
    await sql`alter table ${ref} enable row level security`.execute(trx);
    await sql`alter table ${ref} force row level security`.execute(trx);
    await sql`create policy tenant_isolation on ${ref} using (${tenantMatch}) with check (${tenantMatch})`.execute(trx);
    await sql`grant select, insert, update, delete on ${ref} to ${sql.id(APP_ROLE)}`.execute(trx);
  });
  await appendEvent(trx, {
    tenantId: p.tenantId,
    actionType: 'Created',
    documentType: TABLE_DOCUMENT,
    documentId: id,
    userId: p.userId,
    detail: {
      TableName: tableName,
      KeyColumnName: spec.KeyColumnName,
      KeyDataTypeId: key.dataTypeId,
      Columns: columns.map((c) => ({ ColumnName: c.name, ColumnDataTypeId: c.dataTypeId })),
    },
  });
  return (await loadTable(trx, { id }))!;
}

export async function dropTable(trx: Trx, p: Principal, tableName: string): Promise<{ TableName: string; Id: string; Dropped: true }> {
  const t = await requireTable(trx, tableName, 'update');
  assertMay(p, t, 'save');
  await sql`delete from custom_tables where id = ${t.id}::uuid`.execute(trx);
  await asOwner(trx, async () => {
    await sql`drop table ${tableRef(t)}`.execute(trx);
  });
  await appendEvent(trx, {
    tenantId: p.tenantId,
    actionType: 'Deleted',
    documentType: TABLE_DOCUMENT,
    documentId: t.id,
    userId: p.userId,
    detail: { TableName: t.name },
  });
  return { TableName: t.name, Id: t.id, Dropped: true };
}

/** Sets a table's Read and Save roles (replacing both lists). Administrator only: the caller checks the role. */
export async function setDefinition(trx: Trx, p: Principal, id: string, roles: { ReadRoles?: string[]; SaveRoles?: string[] }): Promise<TableSummary> {
  const t = await loadTable(trx, { id }, 'update');
  if (!t) throw notFound(`Custom table ${id} does not exist.`);
  const read = [...new Set(roles.ReadRoles ?? [])];
  const save = [...new Set(roles.SaveRoles ?? [])];
  const known = new Set(
    (await sql<{ name: string }>`select name from roles where name = any(${[...read, ...save]}::text[])`.execute(trx)).rows.map((r) => r.name),
  );
  const errors: FieldError[] = [];
  (roles.ReadRoles ?? []).forEach((r, i) => {
    if (!known.has(r)) errors.push({ path: `/body/ReadRoles/${i}`, message: `unknown role ${r}` });
  });
  (roles.SaveRoles ?? []).forEach((r, i) => {
    if (!known.has(r)) errors.push({ path: `/body/SaveRoles/${i}`, message: `unknown role ${r}` });
  });
  if (errors.length) throw badRequest(`Unknown role(s): ${errors.map((e) => e.message.slice(13)).join(', ')}.`, errors);
  await sql`update custom_tables set read_roles = ${read}::text[], save_roles = ${save}::text[], modified_on_utc = now() where id = ${t.id}::uuid`.execute(trx);
  await appendEvent(trx, {
    tenantId: p.tenantId,
    actionType: 'Updated',
    documentType: TABLE_DOCUMENT,
    documentId: t.id,
    userId: p.userId,
    detail: { TableName: t.name, ReadRoles: read, SaveRoles: save },
  });
  return summarize((await loadTable(trx, { id: t.id }))!);
}
