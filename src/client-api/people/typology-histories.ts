// A user's typology history: periods (StartDate, EndDate; open-ended when EndDate is null) that may not
// overlap (409), and the user's current typology follows it (the period holding today, else the latest
// started), with Updated on User when that changes.
import { sql } from 'kysely';
import { type Actor, emitWrite, updateRow } from '../../domain/writes.ts';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem, notFound } from '../../platform/errors.ts';
import { appendEvent } from '../../platform/events/outbox.ts';
import { columnValues, type Field, KIND_TYPE } from '../documents/fields.ts';
import type { Row } from '../documents/registry.ts';

export const HISTORY_FIELDS: Field<'user_typology_histories'>[] = [
  { name: 'UserId', column: 'user_id', kind: 'guid', required: true, notNull: true },
  { name: 'TypologyId', column: 'typology_id', kind: 'guid', required: true, notNull: true },
  { name: 'StartDate', column: 'start_date', kind: 'date', required: true, notNull: true },
  { name: 'EndDate', column: 'end_date', kind: 'date' },
];
/** Published, checked against the typology when sent, not stored (the typology names its department and group). */
export const HISTORY_CHECKED: Field[] = [
  { name: 'DepartmentId', column: 'department_id', kind: 'guid' },
  { name: 'TypologyGroupId', column: 'typology_group_id', kind: 'guid' },
  { name: 'UserTypeId', column: 'user_type_id', kind: 'guid' },
];

const NAMES = Object.fromEntries(HISTORY_FIELDS.map((f) => [f.column, f.name]));

function view(row: Row): Row {
  return { Id: row.id, UserId: row.user_id, TypologyId: row.typology_id, StartDate: row.start_date, EndDate: row.end_date ?? null };
}

async function check(trx: Trx, values: Row, model: Row, path: string, selfId: string | null): Promise<void> {
  const { rows } = await sql<{ user_ok: boolean; typology: { department_id: string; typology_group_id: string | null } | null }>`
    select exists (select 1 from users where id = ${values.user_id}) as user_ok,
           (select jsonb_build_object('department_id', department_id, 'typology_group_id', typology_group_id) from typologies where id = ${values.typology_id}) as typology`.execute(
    trx,
  );
  const r = rows[0];
  const fail = (name: string, message: string, detail: string) => new HttpProblem(422, detail, { errors: [{ path: `${path}/${name}`, message }] });
  if (!r.user_ok) throw fail('UserId', 'no such record', `UserId ${values.user_id} does not match any user.`);
  if (!r.typology) throw fail('TypologyId', 'no such record', `TypologyId ${values.typology_id} does not match any typology.`);
  const checked = columnValues(HISTORY_CHECKED, model, path);
  if (checked.department_id && checked.department_id !== r.typology.department_id)
    throw fail('DepartmentId', 'not the typology’s department', 'DepartmentId is not the department of the typology.');
  if (checked.typology_group_id && checked.typology_group_id !== r.typology.typology_group_id)
    throw fail('TypologyGroupId', 'not the typology’s group', 'TypologyGroupId is not the group of the typology.');
  if (values.end_date && String(values.end_date) < String(values.start_date))
    throw new HttpProblem(400, 'EndDate is before StartDate.', { errors: [{ path: `${path}/EndDate`, message: 'is before StartDate' }] });
  // The user's row is locked first, so two writers of one user's history take turns and both see the other's period.
  await sql`select 1 from users where id = ${values.user_id} for update`.execute(trx);
  const overlap = await sql<{ id: string; start_date: string; end_date: string | null }>`
    select id, start_date::text, end_date::text from user_typology_histories
     where user_id = ${values.user_id} and id is distinct from ${selfId}::uuid
       and daterange(start_date, end_date, '[]') && daterange(${values.start_date}::date, ${values.end_date ?? null}::date, '[]') limit 1`.execute(trx);
  const o = overlap.rows[0];
  if (o) {
    throw new HttpProblem(409, `The period overlaps the user's typology period ${o.start_date} – ${o.end_date ?? 'open'} (${o.id}).`, {
      errors: [{ path: `${path}/StartDate`, message: 'overlaps another period of the user' }],
      extra: { overlappingId: o.id },
    });
  }
}

/** Updated on User naming the history period and its changed properties (with PropertyTypes). */
async function historyEvent(trx: Trx, actor: Actor, userId: string, detail: Row): Promise<void> {
  const types: Record<string, string> = { TypologyHistoryId: 'Guid' };
  for (const f of HISTORY_FIELDS) if (f.name in detail) types[f.name] = KIND_TYPE[f.kind];
  const { Id: _id, ...rest } = detail;
  await appendEvent(trx, {
    tenantId: actor.tenantId,
    actionType: 'Updated',
    documentType: 'User',
    documentId: userId,
    detail: { ...rest, PropertyTypes: types },
    userId: actor.userId,
  });
}

/** The user's typology from the history; Updated on User with TypologyId when it changes. */
async function follow(trx: Trx, actor: Actor, userId: string): Promise<void> {
  const { rows } = await sql<{ typology_id: string }>`
    select typology_id from user_typology_histories where user_id = ${userId}
     order by (start_date <= current_date and (end_date is null or end_date >= current_date)) desc, (start_date <= current_date) desc, start_date desc limit 1`.execute(
    trx,
  );
  if (!rows[0]) return;
  const result = await updateRow(trx, actor, 'users', userId, { typology_id: rows[0].typology_id });
  if (result) await emitWrite(trx, actor, 'User', result, { names: { typology_id: 'TypologyId' }, types: { typology_id: 'Guid' } });
}

export async function createTypologyHistory(trx: Trx, actor: Actor, model: Row, path: string): Promise<Row> {
  const values = columnValues(HISTORY_FIELDS, model, path);
  for (const f of HISTORY_FIELDS) {
    if (f.required && values[f.column] == null)
      throw new HttpProblem(400, `${f.name} is required.`, { errors: [{ path: `${path}/${f.name}`, message: 'is required' }] });
  }
  await check(trx, values, model, path, null);
  const { rows } = await sql<{ row: Row }>`
    insert into user_typology_histories (tenant_id, user_id, typology_id, start_date, end_date, created_by_id, modified_by_id)
    values (${actor.tenantId}, ${values.user_id}, ${values.typology_id}, ${values.start_date}, ${values.end_date ?? null}, ${actor.userId}, ${actor.userId})
    returning to_jsonb(user_typology_histories) as row`.execute(trx);
  const row = rows[0].row;
  await historyEvent(trx, actor, String(values.user_id), { TypologyHistoryId: row.id, ...view(row) });
  await follow(trx, actor, String(values.user_id));
  return view(row);
}

export async function patchTypologyHistory(trx: Trx, actor: Actor, id: string, patch: Row): Promise<Row> {
  const before = await trx.selectFrom('user_typology_histories').selectAll().where('id', '=', id.toLowerCase()).forUpdate().executeTakeFirst();
  if (!before) throw notFound(`There is no user typology history with id ${id}.`);
  const set = columnValues(HISTORY_FIELDS, patch, '/body');
  const merged: Row = { ...before, ...set };
  await check(trx, merged, patch, '/body', before.id);
  const result = await updateRow(trx, actor, 'user_typology_histories', before.id, set);
  const row = result?.row ?? (before as unknown as Row);
  if (result && Object.keys(result.changes).length) {
    const changes: Row = { TypologyHistoryId: before.id };
    for (const [c, v] of Object.entries(result.changes)) if (NAMES[c]) changes[NAMES[c]] = v;
    await historyEvent(trx, actor, before.user_id, changes);
  }
  await follow(trx, actor, before.user_id);
  if (set.user_id && set.user_id !== before.user_id) await follow(trx, actor, String(set.user_id));
  return view(row);
}
