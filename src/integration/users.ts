// Users and employees of the Integration API: POST create-or-update (matched by Id, else by ExternalId),
// PATCH of value-wrapped fields, and the lookups the user feed calls. Field names are the spec's (PascalCase).
import { sql } from 'kysely';
import { columnValues, type Field, type FieldDef, pascalCase, viewOf } from '../domain/fields.ts';
import { type Actor, emitWrite, naming, type Row, selectRow, updateRow, upsertRow, type WriteResult } from '../domain/writes.ts';
import { hashSecret } from '../platform/auth/hashing.ts';
import { compileShaped, executePrepared, type Trx } from '../platform/db/database.ts';
import type { Users } from '../platform/db/schema.generated.ts';
import { HttpProblem, notFound } from '../platform/errors.ts';
import { fullTypeName } from '../platform/events/catalogue.ts';

/** Every stored user field: `post` marks the fields of the POST body, `patch` those of the PATCH table. */
interface UserField extends Field<'users'> {
  post?: boolean;
  patch?: boolean;
}

export const USER_FIELDS: UserField[] = [
  { name: 'Id', column: 'id', kind: 'guid', post: true, notNull: true },
  { name: 'UserName', column: 'user_name', kind: 'string', post: true, patch: true, notNull: true },
  { name: 'Name', column: 'name', kind: 'string', post: true, patch: true },
  { name: 'ExternalId', column: 'external_id', kind: 'string', post: true, patch: true },
  { name: 'ExternalNumber', column: 'external_number', kind: 'string', patch: true },
  { name: 'EmployeeId', column: 'employee_id', kind: 'guid', post: true, patch: true },
  { name: 'CompanyId', column: 'company_id', kind: 'guid', patch: true },
  { name: 'DepartmentId', column: 'department_id', kind: 'guid', patch: true },
  { name: 'TypologyId', column: 'typology_id', kind: 'guid', patch: true },
  { name: 'ResponsibleId', column: 'responsible_id', kind: 'guid', post: true, patch: true },
  { name: 'UserTypeId', column: 'user_type_id', kind: 'guid', post: true, patch: true },
  { name: 'CityId', column: 'city_id', kind: 'guid', patch: true },
  { name: 'Mail', column: 'email', kind: 'string', post: true, patch: true },
  { name: 'IsActive', column: 'is_active', kind: 'bool', post: true, patch: true, notNull: true },
  { name: 'HireDate', column: 'hire_date', kind: 'date', post: true, patch: true },
  { name: 'StartDate', column: 'start_date', kind: 'date', post: true, patch: true },
  { name: 'ExpirationDate', column: 'expiration_date', kind: 'date', post: true, patch: true },
  { name: 'SsoUserName', column: 'sso_user_name', kind: 'string', post: true, patch: true },
  { name: 'SsoOnly', column: 'sso_only', kind: 'bool', post: true, patch: true, notNull: true },
  { name: 'AdUserName', column: 'ad_user_name', kind: 'string', post: true, patch: true },
  { name: 'Phone', column: 'phone', kind: 'string', post: true, patch: true },
  { name: 'TaxPayerNumber', column: 'tax_payer_number', kind: 'string', post: true, patch: true },
  { name: 'ChangePasswordOnFirstLogon', column: 'change_password_on_first_logon', kind: 'bool', post: true, patch: true, notNull: true },
  { name: 'RequiredWeeklyHours', column: 'required_weekly_hours', kind: 'double', post: true, patch: true },
  { name: 'RequiredHours', column: 'required_hours', kind: 'double', post: true, patch: true },
  { name: 'LeaveDayHours', column: 'leave_day_hours', kind: 'double', post: true, patch: true },
  { name: 'WeeklyOvertimeThresholdHours', column: 'weekly_overtime_threshold_hours', kind: 'double', post: true, patch: true },
  { name: 'Tolerance', column: 'tolerance', kind: 'int', post: true, patch: true },
  { name: 'EntryTimeTotalMinutes', column: 'entry_time_total_minutes', kind: 'int', patch: true },
  { name: 'ExitTimeTotalMinutes', column: 'exit_time_total_minutes', kind: 'int', patch: true },
  { name: 'EntryTimeToleranceTotalMinutes', column: 'entry_time_tolerance_total_minutes', kind: 'int', patch: true },
  { name: 'ExitTimeToleranceTotalMinutes', column: 'exit_time_tolerance_total_minutes', kind: 'int', patch: true },
  { name: 'OffsetTotalMinutes', column: 'offset_total_minutes', kind: 'int', patch: true },
  { name: 'PaidUndertime', column: 'paid_undertime', kind: 'bool', patch: true, notNull: true },
  { name: 'PaidOvertime', column: 'paid_overtime', kind: 'bool', patch: true, notNull: true },
  // The platform's User PATCH (its Client API collection) sends {"TimesheetRequired": {"value": true}}.
  { name: 'TimesheetRequired', column: 'timesheet_required', kind: 'bool', post: true, patch: true },
];

const REQUIRED_ON_POST = new Set(['UserName', 'ExternalId', 'IsActive']);

/** Fields of the POST body (the spec's User table): the references by code come on top. */
export const USER_POST_FIELDS: FieldDef[] = USER_FIELDS.filter((f) => f.post).map((f) => ({ ...f, required: REQUIRED_ON_POST.has(f.name) }));
export const USER_REFERENCE_FIELDS = ['CompanyCode', 'DepartmentExternalId', 'TypologyExternalId'] as const;
/** Fields of the PATCH body (the spec's PATCH table), Password aside. */
export const USER_PATCH_FIELDS: FieldDef[] = USER_FIELDS.filter((f) => f.patch);
/** Fields of the user as answered (every stored field). */
export const USER_VIEW_FIELDS: FieldDef[] = USER_FIELDS.map((f) => ({ ...f, required: f.name === 'Id' || f.name === 'UserName' }));

const FIELD_OF_COLUMN = new Map<string, string>(USER_FIELDS.map((f) => [f.column, f.name]));
const fieldOf = (column: string): string | undefined => FIELD_OF_COLUMN.get(column);

export type UserView = Record<string, unknown>;
export type Action = 'Created' | 'Updated';

interface Refs {
  companyId: string;
  companyCode: string;
  departmentId: string;
  departmentExternalId: string;
  typologyId: string;
  typologyExternalId: string;
}

const refProblem = (field: string, value: string, reason: string): HttpProblem =>
  new HttpProblem(422, `${field} "${value}" ${reason}.`, { errors: [{ path: `/body/${field}`, message: reason }], extra: { field, value } });

/** What the reference lookup answers: the ids found (null when not) and how many typologies bear the ExternalId. */
interface RefRow {
  company_id: string | null;
  department_id: string | null;
  typology_id: string | null;
  typology_department_id: string | null;
  typologies: number;
}

/**
 * CompanyCode, DepartmentExternalId (of that company) and TypologyExternalId to ids: one row whatever matches.
 * A typology of the department wins; one of another department only when it is the only one.
 */
const refsQuery = (companyCode: string, departmentExternalId: string, typologyExternalId: string) => sql`
    select c.id as company_id, d.id as department_id, ty.id as typology_id, ty.department_id as typology_department_id, coalesce(ty.n, 0)::int as typologies
    from (select 1) one
    left join companies c on c.code = ${companyCode}
    left join departments d on d.company_id = c.id and d.external_id = ${departmentExternalId}
    left join lateral (
      select y.id, y.department_id, count(*) over () as n from typologies y
      where y.external_id = ${typologyExternalId}
      order by (y.department_id = d.id) desc nulls last limit 1
    ) ty on true`;

/** The references as ids, or the 422 that names the first one that does not resolve. */
function checkedRefs(r: RefRow, companyCode: string, departmentExternalId: string, typologyExternalId: string): Refs {
  if (!r.company_id) throw refProblem('CompanyCode', companyCode, 'does not match any company');
  if (!r.department_id) throw refProblem('DepartmentExternalId', departmentExternalId, `does not match any department of company ${companyCode}`);
  if (!r.typology_id) throw refProblem('TypologyExternalId', typologyExternalId, 'does not match any typology');
  if (r.typology_department_id !== r.department_id && r.typologies > 1) {
    throw refProblem(
      'TypologyExternalId',
      typologyExternalId,
      `is not a typology of department ${departmentExternalId} and matches several typologies of other departments`,
    );
  }
  return { companyId: r.company_id, companyCode, departmentId: r.department_id, departmentExternalId, typologyId: r.typology_id, typologyExternalId };
}

function userView(row: Row, refs: { companyCode: string | null; departmentExternalId: string | null; typologyExternalId: string | null }): UserView {
  return {
    ...viewOf(USER_VIEW_FIELDS, row),
    CompanyCode: refs.companyCode,
    DepartmentExternalId: refs.departmentExternalId,
    TypologyExternalId: refs.typologyExternalId,
    HasPassword: Boolean(row.password_hash),
    CreatedOnUtc: row.created_on_utc ?? null,
    ModifiedOnUtc: row.modified_on_utc ?? null,
  };
}

const USER_EVENT = { masked: ['password_hash'], names: { password_hash: 'Password', email: 'Mail' }, omit: ['inactivated_on_utc'] };

/** Deactivation time follows IsActive: set when a user becomes inactive, cleared when active again. */
async function trackInactivation(trx: Trx, result: WriteResult): Promise<void> {
  const flipped = result.inserted ? result.row.is_active === false : 'is_active' in result.changes;
  if (!flipped) return;
  await sql`update users set inactivated_on_utc = case when is_active then null else now() end where id = ${result.row.id as string}`.execute(trx);
}

/** Every column of the users table (the compiler checks the list is whole): what an event may name. */
const USER_COLUMNS: Record<keyof Users, true> = {
  ad_account_expiration_date: true,
  ad_blocked_on_utc: true,
  ad_user_name: true,
  change_password_on_first_logon: true,
  city_id: true,
  company_id: true,
  created_by_id: true,
  created_on_utc: true,
  department_id: true,
  email: true,
  employee_id: true,
  entry_time_tolerance_total_minutes: true,
  entry_time_total_minutes: true,
  exit_time_tolerance_total_minutes: true,
  exit_time_total_minutes: true,
  expiration_date: true,
  external_id: true,
  external_number: true,
  hire_date: true,
  id: true,
  image_file_id: true,
  inactivated_on_utc: true,
  is_active: true,
  leave_day_hours: true,
  modified_by_id: true,
  modified_on_utc: true,
  name: true,
  offset_total_minutes: true,
  paid_overtime: true,
  paid_undertime: true,
  password_hash: true,
  phone: true,
  required_hours: true,
  required_weekly_hours: true,
  responsible_id: true,
  sso_only: true,
  sso_user_name: true,
  start_date: true,
  tags: true,
  tax_payer_number: true,
  tenant_id: true,
  timesheet_required: true,
  tolerance: true,
  typology_id: true,
  user_name: true,
  user_type_id: true,
  weekly_overtime_threshold_hours: true,
};
const AUDIT_COLUMNS = new Set(['tenant_id', 'created_on_utc', 'created_by_id', 'modified_on_utc', 'modified_by_id']);
/**
 * The columns a User event may carry, with the name each has in it (emitWrite's rule: the event's own names,
 * else PascalCase; masked ones say "********"), for the statement that writes the event itself.
 */
const USER_EVENT_NAMES = JSON.stringify(
  Object.keys(USER_COLUMNS)
    .filter((c) => !AUDIT_COLUMNS.has(c) && !USER_EVENT.omit.includes(c))
    .map((c) => ({ col: c, name: (USER_EVENT.names as Record<string, string>)[c] ?? pascalCase(c), masked: USER_EVENT.masked.includes(c) })),
);
const REF_COLUMNS = ['company_id', 'department_id', 'typology_id'];

/**
 * POST /api/users in one statement (decision 0069): the references resolved, the user inserted or updated on
 * its key (Id, else ExternalId), its deactivation time following IsActive, and the Created or Updated event
 * appended with the changed fields, as emitWrite would. A reference that does not resolve writes nothing and
 * answers its 422; a write that changes nothing writes no event and reads the row as it is. `columns`: further
 * columns written in the same statement (the user feed's managed attributes), so the one event carries the
 * user's final values. `last`: the caller's transaction writes nothing after it, so its COMMIT leaves with the
 * statement (decision 0085); the read of an unchanged user, should one be needed, then runs after the commit.
 */
export async function upsertUser(
  trx: Trx,
  actor: Actor,
  body: Record<string, unknown>,
  columns: Row = {},
  opts: { last?: boolean } = {},
): Promise<{ user: UserView; action: Action }> {
  const companyCode = body.CompanyCode as string;
  const departmentExternalId = body.DepartmentExternalId as string;
  const typologyExternalId = body.TypologyExternalId as string;
  const own: Row = { ...columnValues(USER_POST_FIELDS, body), ...columns };
  for (const c of REF_COLUMNS) delete own[c];
  const written = Object.keys(own);
  const update = [...written.filter((c) => c !== 'id'), ...REF_COLUMNS];
  const byId = typeof own.id === 'string';
  const key = byId ? 'id' : 'external_id';
  const tracksActive = 'is_active' in own;
  const id = (c: string) => sql.id(c);
  // Built and compiled once per shape (decision 0087): the text depends on the key and the columns written alone.
  const values: Row = {
    ...own,
    $companyCode: companyCode,
    $departmentExternalId: departmentExternalId,
    $typologyExternalId: typologyExternalId,
    $tenantId: actor.tenantId,
    $userId: actor.userId,
  };
  const statement = compileShaped<RefRow & { inserted: boolean | null; after: Row | null }>(
    `users:${key}:${written.join(',')}`,
    values,
    (v) => sql`
    with ref as (${refsQuery(v('$companyCode') as string, v('$departmentExternalId') as string, v('$typologyExternalId') as string)}),
    up as (
      insert into users as t (${sql.join([...written, ...REF_COLUMNS, 'tenant_id', 'created_by_id', 'modified_by_id', ...(tracksActive ? ['inactivated_on_utc'] : [])].map(id))})
      select ${sql.join([
        ...written.map((c) => sql`${v(c)}`),
        sql`ref.company_id, ref.department_id, ref.typology_id, ${v('$tenantId')}, ${v('$userId')}, ${v('$userId')}`,
        ...(tracksActive ? [sql`case when ${v('is_active')} then null else now() end`] : []),
      ])}
      from ref
      where ref.company_id is not null and ref.department_id is not null and ref.typology_id is not null
        and (ref.typology_department_id is not distinct from ref.department_id or ref.typologies <= 1)
      on conflict (tenant_id, ${id(key)}) do update set ${sql.join(update.map((c) => sql`${id(c)} = excluded.${id(c)}`))},
        ${
          tracksActive
            ? sql`inactivated_on_utc = case when t.is_active = excluded.is_active then t.inactivated_on_utc when excluded.is_active then null else now() end,`
            : sql``
        }
        modified_on_utc = now(), modified_by_id = excluded.modified_by_id
      where row(${sql.join(update.map((c) => sql`t.${id(c)}`))}) is distinct from row(${sql.join(update.map((c) => sql`excluded.${id(c)}`))})
      returning (xmax = 0) as inserted, to_jsonb(old) as before, to_jsonb(new) as after
    ),
    ev as (
      insert into events (tenant_id, action_type, document_type, document_id, detail, user_id)
      select ${v('$tenantId')}, case when up.inserted then 'Created' else 'Updated' end, ${fullTypeName('User')}, (up.after->>'id')::uuid, d.detail, ${v('$userId')}
      from up cross join lateral (
        select jsonb_object_agg(n.name, case when n.masked then to_jsonb('********'::text) else a.value end) as detail
        from jsonb_each(up.after) a join jsonb_to_recordset(${USER_EVENT_NAMES}::jsonb) as n(col text, name text, masked boolean) on n.col = a.key
        where case when up.inserted then a.value <> 'null'::jsonb else n.col = any(${update}::text[]) and a.value is distinct from up.before -> a.key end
      ) d
      where up.inserted or d.detail is not null
    )
    select ref.*, up.inserted, up.after from ref left join up on true`,
  );
  // Prepared (decision 0061).
  const [r] = (await naming(fieldOf, { ...own }, () => executePrepared(trx, statement, opts))).rows;
  const refs = checkedRefs(r, companyCode, departmentExternalId, typologyExternalId);
  if (r.after) return { user: userView(r.after, refs), action: r.inserted ? 'Created' : 'Updated' };
  // The user exists and nothing differs: no write, no event.
  const row = await selectRow(trx, 'users', [
    ['tenant_id', actor.tenantId],
    [key, own[key]],
  ]);
  if (!row) throw new Error('upsert into users neither wrote nor found a row');
  return { user: userView(row, refs), action: 'Updated' };
}

/** PATCH: `patch` maps field names to their new values (already unwrapped from {value}). */
export async function patchUser(trx: Trx, actor: Actor, id: string, patch: Record<string, unknown>): Promise<UserView> {
  const set: Row = columnValues(USER_PATCH_FIELDS, patch);
  const always: string[] = [];
  if (typeof patch.Password === 'string') {
    set.password_hash = await hashSecret(patch.Password);
    always.push('password_hash');
  }
  const result = await naming(fieldOf, set, () => updateRow(trx, actor, 'users', id, set, always));
  if (!result) throw notFound(`No user with Id ${id}.`);
  if ('company_id' in result.changes || 'department_id' in result.changes) await checkDepartmentOfCompany(trx, result.row);
  await emitWrite(trx, actor, 'User', result, USER_EVENT);
  await trackInactivation(trx, result);
  return (await findUser(trx, 'id', id)) as UserView;
}

/** A user's department must belong to the user's company. */
async function checkDepartmentOfCompany(trx: Trx, row: Row): Promise<void> {
  if (!row.department_id) return;
  const dep = await trx
    .selectFrom('departments')
    .select('company_id')
    .where('id', '=', row.department_id as string)
    .executeTakeFirst();
  if (dep && row.company_id && dep.company_id !== row.company_id) {
    throw new HttpProblem(422, `Department ${row.department_id} does not belong to company ${row.company_id}.`, {
      errors: [{ path: '/body/DepartmentId', message: 'belongs to another company' }],
      extra: { field: 'DepartmentId', value: row.department_id },
    });
  }
}

async function findUser(trx: Trx, by: 'id' | 'external_id', value: string): Promise<UserView | null> {
  const { rows } = await sql<{ row: Row; company_code: string | null; department_external_id: string | null; typology_external_id: string | null }>`
    select to_jsonb(u) as row, c.code as company_code, d.external_id as department_external_id, ty.external_id as typology_external_id
    from users u
    left join companies c on c.id = u.company_id
    left join departments d on d.id = u.department_id
    left join typologies ty on ty.id = u.typology_id
    where ${sql.ref(`u.${by}`)} = ${value}`.execute(trx);
  const r = rows[0];
  if (!r) return null;
  return userView(r.row, { companyCode: r.company_code, departmentExternalId: r.department_external_id, typologyExternalId: r.typology_external_id });
}

export async function getUserById(trx: Trx, id: string): Promise<UserView> {
  const user = await findUser(trx, 'id', id);
  if (!user) throw notFound(`No user with Id ${id}.`);
  return user;
}

export async function getUserByExternalId(trx: Trx, externalId: string): Promise<UserView> {
  const user = await findUser(trx, 'external_id', externalId);
  if (!user) throw notFound(`No user with ExternalId "${externalId}".`);
  return user;
}

// ---------------------------------------------------------------------------------------------------
// Employees (document type Person)
// ---------------------------------------------------------------------------------------------------

export const EMPLOYEE_FIELDS: Field<'employees'>[] = [
  { name: 'Id', column: 'id', kind: 'guid', notNull: true },
  { name: 'Name', column: 'name', kind: 'string', required: true },
  { name: 'ExternalId', column: 'external_id', kind: 'string', required: true },
  { name: 'CompanyId', column: 'company_id', kind: 'guid', required: true },
  { name: 'IsActive', column: 'is_active', kind: 'bool', required: true },
];
const EMPLOYEE_FIELD_OF = new Map<string, string>(EMPLOYEE_FIELDS.map((f) => [f.column, f.name]));

export async function upsertEmployee(trx: Trx, actor: Actor, body: Record<string, unknown>): Promise<{ employee: Row; action: Action }> {
  const values = columnValues(EMPLOYEE_FIELDS, body);
  const result = await naming(
    (c) => EMPLOYEE_FIELD_OF.get(c),
    values,
    () =>
      upsertRow(trx, actor, {
        table: 'employees',
        key: typeof values.id === 'string' ? [['id', values.id]] : [['external_id', values.external_id]],
        values,
      }),
  );
  await emitWrite(trx, actor, 'Person', result);
  return { employee: viewOf(EMPLOYEE_FIELDS, result.row), action: result.inserted ? 'Created' : 'Updated' };
}
