// Time through the Client API: timesheet entries and leaves, created, changed and deleted. A deletion is
// soft (deleted_on), which is what DE-TimeSheetsDeleted / DE-LeavesDeleted read. Each write raises its
// Created / Updated / Deleted and TimeUpdated (changed properties and PropertyTypes) in its transaction.
// A user enters their own time; another user's needs the Administrator role.
import { sql } from 'kysely';
import { isAdministrator, type Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { TableName } from '../../platform/db/schema.ts';
import { HttpProblem, notFound } from '../../platform/errors.ts';
import { appendEvents, type NewEvent } from '../../platform/events/outbox.ts';
import { changeDetail } from '../documents/documents.ts';
import { columnValues, type Field, viewOf } from '../documents/fields.ts';
import type { Row } from '../documents/registry.ts';

export interface TimeDef {
  label: string;
  table: TableName & ('timesheets' | 'leaves');
  documentType: 'Timesheet' | 'Leave';
  fields: Field[];
}

const STATUS = 'Draft, New, Approved, Rejected or Canceled';
const common: Field[] = [
  { name: 'UserId', column: 'user_id', kind: 'guid', notNull: true, description: 'Default: the acting user' },
  { name: 'Status', column: 'status', kind: 'string', notNull: true, description: STATUS },
  { name: 'RequestedApproval', column: 'requested_approval', kind: 'bool', notNull: true },
];

export const timesheet: TimeDef = {
  label: 'timesheet',
  table: 'timesheets',
  documentType: 'Timesheet',
  fields: [
    { name: 'JobId', column: 'job_id', kind: 'guid', required: true, notNull: true },
    { name: 'Date', column: 'date', kind: 'date', required: true, notNull: true },
    { name: 'DurationMinutes', column: 'duration_minutes', kind: 'int', required: true, notNull: true },
    { name: 'Description', column: 'description', kind: 'string' },
    { name: 'IsBillable', column: 'is_billable', kind: 'bool', notNull: true },
    { name: 'WorkTypeId', column: 'work_type_id', kind: 'guid' },
    // What the platform stores when time is booked (DE-TimeSheets, EstimatedPlannedActualMonthly read them):
    // sent, or taken from the user and the cost in force on the entry's day when the entry is created.
    { name: 'CompanyId', column: 'booked_company_id', kind: 'guid', description: "The company the time is booked in. Default: the user's company" },
    { name: 'UserDepartmentId', column: 'booked_department_id', kind: 'guid', description: "Default: the user's department when booked" },
    { name: 'TypologyId', column: 'booked_typology_id', kind: 'guid', description: "Default: the user's typology on the entry's date" },
    { name: 'HourlyUserCost', column: 'booked_hourly_cost', kind: 'double', description: "Default: the user's hourly cost in force on the entry's date" },
    ...common,
  ],
};

export const leave: TimeDef = {
  label: 'leave',
  table: 'leaves',
  documentType: 'Leave',
  fields: [
    { name: 'LeaveTypeId', column: 'leave_type_id', kind: 'guid', required: true, notNull: true },
    { name: 'Day', column: 'day', kind: 'date', required: true, notNull: true },
    { name: 'TotalMinutes', column: 'total_minutes', kind: 'int', required: true, notNull: true },
    { name: 'IsHalfDay', column: 'is_half_day', kind: 'bool', notNull: true },
    { name: 'Remarks', column: 'remarks', kind: 'string' },
    ...common,
  ],
};

/**
 * A new timesheet keeps what was true when it was booked (the platform's snapshot): the user's company,
 * department and typology on the entry's date, and the hourly cost in force that day, unless sent.
 */
async function bookingSnapshot(trx: Trx, values: Row): Promise<void> {
  const { rows } = await sql<{ company_id: string | null; department_id: string | null; typology_id: string | null; hourly_cost: string | null }>`
    select u.company_id, u.department_id,
           coalesce((select h.typology_id from user_typology_histories h
                      where h.tenant_id = u.tenant_id and h.user_id = u.id and h.start_date <= ${values.date}::date
                        and coalesce(h.end_date, 'infinity'::date) >= ${values.date}::date
                      order by h.start_date desc, h.id desc limit 1), u.typology_id) as typology_id,
           (select c.hourly_value from user_costs c
             where c.tenant_id = u.tenant_id and c.user_id = u.id and c.start_date <= ${values.date}::date
               and coalesce(c.end_date, 'infinity'::date) >= ${values.date}::date
             order by c.start_date desc, c.id desc limit 1) as hourly_cost
      from users u where u.id = ${values.user_id}`.execute(trx);
  const user = rows[0];
  if (!user) return; // the insert names the unknown user
  values.booked_company_id ??= user.company_id;
  values.booked_department_id ??= user.department_id;
  values.booked_typology_id ??= user.typology_id;
  values.booked_hourly_cost ??= user.hourly_cost;
}

function mayEnterFor(actor: Principal, userId: unknown): void {
  if (actor.userId && userId !== actor.userId && !isAdministrator(actor)) {
    throw new HttpProblem(403, 'Time of another user needs the role Administrator.', { extra: { requiredRole: 'Administrator' } });
  }
}

/** A constraint error as a 422/400 naming the property. */
function naming(def: TimeDef, path: string, err: unknown): never {
  const e = err as { code?: string; constraint?: string };
  if (e?.code === '23503' || e?.code === '23514') {
    const rest = (e.constraint ?? '')
      .replace(`${def.table}_`, '')
      .replace(/_(fkey|check)$/, '')
      .replace(/^tenant_id_/, '');
    const f = def.fields.find((x) => rest.endsWith(x.column)) ?? def.fields.find((x) => rest.includes(x.column));
    const name = f?.name ?? rest;
    const status = e.code === '23503' ? 422 : 400;
    throw new HttpProblem(status, `${name} ${status === 422 ? 'does not match any record' : `is not valid (${f?.name === 'Status' ? STATUS : 'check'})`}.`, {
      errors: [{ path: `${path}/${name}`, message: status === 422 ? 'no such record' : 'not valid' }],
    });
  }
  throw err;
}

const events = (def: TimeDef, actor: Principal, id: string, action: string, detail: Row): NewEvent[] =>
  [action, 'TimeUpdated'].map((actionType) => ({
    tenantId: actor.tenantId,
    actionType,
    documentType: def.documentType,
    documentId: id,
    detail,
    userId: actor.userId,
  }));

export function timeView(def: TimeDef, row: Row): Row {
  return { Id: row.id, ...viewOf(def.fields, row), DeletedOn: row.deleted_on ? new Date(String(row.deleted_on)).toISOString() : null };
}

export async function createTime(trx: Trx, actor: Principal, def: TimeDef, model: Row, path: string): Promise<Row> {
  const values = columnValues(def.fields, model, path);
  values.user_id ??= actor.userId;
  for (const f of def.fields) {
    if ((f.required || f.column === 'user_id') && values[f.column] == null) {
      throw new HttpProblem(400, `${f.name} is required.`, { errors: [{ path: `${path}/${f.name}`, message: 'is required' }] });
    }
  }
  mayEnterFor(actor, values.user_id);
  if (def.table === 'timesheets') await bookingSnapshot(trx, values);
  const columns = Object.keys(values);
  const row = await sql<{ row: Row }>`
    insert into ${sql.table(def.table)} (tenant_id, created_by_id, modified_by_id, ${sql.join(columns.map((c) => sql.id(c)))})
    values (${actor.tenantId}, ${actor.userId}, ${actor.userId}, ${sql.join(columns.map((c) => sql`${values[c]}`))})
    returning to_jsonb(${sql.table(def.table)}) as row`
    .execute(trx)
    .then((r) => r.rows[0].row)
    .catch((err: unknown) => naming(def, path, err));
  const set: Row = {};
  for (const f of def.fields) if (row[f.column] != null) set[f.column] = row[f.column];
  await appendEvents(trx, events(def, actor, String(row.id), 'Created', { Id: row.id, ...changeDetail(def.fields, set) }));
  return timeView(def, row);
}

async function load(trx: Trx, def: TimeDef, id: string): Promise<Row> {
  const { rows } = await sql<{
    row: Row;
  }>`select to_jsonb(t) as row from ${sql.table(def.table)} t where t.id = ${id.toLowerCase()} and t.deleted_on is null for update`.execute(trx);
  if (!rows[0]) throw notFound(`There is no ${def.label} with id ${id}.`);
  return rows[0].row;
}

export async function patchTime(trx: Trx, actor: Principal, def: TimeDef, id: string, patch: Row): Promise<Row> {
  const before = await load(trx, def, id);
  mayEnterFor(actor, before.user_id);
  const set = columnValues(def.fields, patch, '/body');
  if ('user_id' in set) mayEnterFor(actor, set.user_id);
  const changed = Object.keys(set).filter((c) => JSON.stringify(before[c] ?? null) !== JSON.stringify(set[c] ?? null));
  if (!changed.length) return timeView(def, before);
  const after = await sql<{ row: Row }>`
    update ${sql.table(def.table)} as t set ${sql.join(changed.map((c) => sql`${sql.id(c)} = ${set[c]}`))}, modified_on_utc = now(), modified_by_id = ${actor.userId}
     where t.id = ${before.id as string} returning to_jsonb(t) as row`
    .execute(trx)
    .then((r) => r.rows[0].row)
    .catch((err: unknown) => naming(def, '/body', err));
  const changes: Row = {};
  for (const c of changed) if (JSON.stringify(before[c] ?? null) !== JSON.stringify(after[c] ?? null)) changes[c] = after[c] ?? null;
  if (Object.keys(changes).length) await appendEvents(trx, events(def, actor, String(after.id), 'Updated', changeDetail(def.fields, changes)));
  return timeView(def, after);
}

/** Soft delete: the row leaves DE-TimeSheets / DE-Leaves and appears in the *Deleted queries. */
export async function deleteTime(trx: Trx, actor: Principal, def: TimeDef, id: string): Promise<void> {
  const before = await load(trx, def, id);
  mayEnterFor(actor, before.user_id);
  await sql`update ${sql.table(def.table)} set deleted_on = now(), modified_on_utc = now(), modified_by_id = ${actor.userId} where id = ${before.id as string}`.execute(
    trx,
  );
  await appendEvents(trx, events(def, actor, String(before.id), 'Deleted', { Id: before.id, PropertyTypes: { Id: 'Guid' } }));
}
