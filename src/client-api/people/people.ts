// Users, commercial clients, their links and users' typology histories through the Client API (v3
// envelopes). Users are written as the Integration API writes them (upsertRow, emitWrite: Created on
// User), roles through the tenancy service (UserRoleAdded); commercial clients through the Integration
// API's resource definition without its ordering rule with billing clients (that rule is the Integration
// API's, spec Errors 3; issue 31).
import { sql } from 'kysely';
import { type Actor, emitWrite, naming, updateRow, upsertRow } from '../../domain/writes.ts';
import { commercialClientsWithoutBilling, upsertResource } from '../../integration/service.ts';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem, notFound } from '../../platform/errors.ts';
import { appendEvents } from '../../platform/events/outbox.ts';
import { assignRoles } from '../../tenancy/service.ts';
import { changeDetail } from '../documents/documents.ts';
import { columnTypes, columnValues, type Field, guidField, viewOf } from '../documents/fields.ts';
import type { Row } from '../documents/registry.ts';

/** The published Create / CreateMany user model (DivisionId has no column: a division is its department's). */
export const USER_MODEL: Field<'users'>[] = [
  { name: 'UserName', column: 'user_name', kind: 'string', notNull: true, required: true },
  { name: 'Name', column: 'name', kind: 'string' },
  { name: 'ExternalId', column: 'external_id', kind: 'string' },
  guidField('CompanyId', 'company_id'),
  guidField('DepartmentId', 'department_id'),
  guidField('TypologyId', 'typology_id'),
  { name: 'Mail', column: 'email', kind: 'string' },
  { name: 'IsActive', column: 'is_active', kind: 'bool', notNull: true },
  { name: 'SsoUserName', column: 'sso_user_name', kind: 'string' },
  { name: 'RequiredHours', column: 'required_hours', kind: 'double' },
  guidField('ResponsibleId', 'responsible_id'),
  guidField('UserTypeId', 'user_type_id'),
  { name: 'TimesheetRequired', column: 'timesheet_required', kind: 'bool' },
  { name: 'AdUserName', column: 'ad_user_name', kind: 'string' },
  { name: 'TaxpayerNumber', column: 'tax_payer_number', kind: 'string' },
];
const USER_NAMES = new Map<string, string>(USER_MODEL.map((f) => [f.column, f.name]));
/** The user model's references and their tables, checked before a batch insert so an error names its item. */
const USER_REFERENCES: [string, 'companies' | 'departments' | 'typologies' | 'users' | 'user_types'][] = [
  ['company_id', 'companies'],
  ['department_id', 'departments'],
  ['typology_id', 'typologies'],
  ['responsible_id', 'users'],
  ['user_type_id', 'user_types'],
];
const USER_EVENT = { names: Object.fromEntries(USER_NAMES), omit: ['inactivated_on_utc', 'password_hash'], types: { ...columnTypes(USER_MODEL), id: 'Guid' } };

/** A problem about the model at `path` (a CreateMany item) rather than at /body. */
export function at<T>(path: string, fn: () => Promise<T>, rename: Record<string, string> = {}): Promise<T> {
  return fn().catch((err: unknown) => {
    if (err instanceof HttpProblem && err.errors && path !== '/body') {
      const moved = err.errors.map((e) => {
        const p = e.path.startsWith(path) ? e.path : e.path.replace(/^\/body/, path);
        const last = p.split('/').pop() ?? '';
        return { ...e, path: rename[last] ? `${p.slice(0, -last.length)}${rename[last]}` : p };
      });
      throw Object.assign(new HttpProblem(err.status, err.message, { errors: moved, extra: err.extra, headers: err.headers }), { cause: err });
    }
    throw err;
  });
}

function required(fields: readonly Field[], values: Row, path: string): void {
  for (const f of fields) {
    if (f.required && (values[f.column] === undefined || values[f.column] === null)) {
      throw new HttpProblem(400, `${f.name} is required.`, { errors: [{ path: `${path}/${f.name}`, message: 'is required' }] });
    }
  }
}

async function insertUser(trx: Trx, actor: Actor, values: Row, path: string): Promise<string> {
  const id = crypto.randomUUID();
  const result = await at(path, () =>
    naming(
      (c) => USER_NAMES.get(c),
      values,
      () => upsertRow(trx, actor, { table: 'users', key: [['id', id]], values: { ...values, id } }),
    ),
  );
  await emitWrite(trx, actor, 'User', result, USER_EVENT);
  if (result.row.is_active === false) await sql`update users set inactivated_on_utc = now() where id = ${id}`.execute(trx);
  return id;
}

/** The v3 answer of a user: the published model's properties, Id and stamps. */
export function userV3View(row: Row): Row {
  return {
    Id: row.id,
    ...viewOf(USER_MODEL, row),
    CreatedOnUtc: new Date(String(row.created_on_utc)).toISOString(),
    ModifiedOnUtc: new Date(String(row.modified_on_utc)).toISOString(),
  };
}

/**
 * Create / CreateMany: new users from the published model in one INSERT and one INSERT of their Created
 * events (a thousand users are two statements, not two thousand). A UserName already taken, in the
 * tenant or earlier in the same call, is a 409 naming that item; a reference that matches nothing a 422.
 */
export async function createUsers(trx: Trx, actor: Actor, items: { model: Row; path: string }[]): Promise<Row[]> {
  const rows = items.map(({ model, path }) => {
    const values = columnValues(USER_MODEL, model, path);
    // The platform's template sends "ExternalId": "": no external id (it is unique when set).
    if (values.external_id === '') values.external_id = null;
    required(USER_MODEL, values, path);
    return { id: crypto.randomUUID(), ...values } as Row & { id: string };
  });
  const names = rows.map((r) => String(r.user_name));
  const { rows: taken } = await sql<{ user_name: string }>`select user_name from users where user_name = any(${names}::text[])`.execute(trx);
  const takenSet = new Set(taken.map((t) => t.user_name));
  const seen = new Set<string>();
  names.forEach((n, i) => {
    if (takenSet.has(n) || seen.has(n)) {
      throw new HttpProblem(409, `Another user already has this UserName "${n}".`, {
        errors: [{ path: `${items[i].path}/UserName`, message: 'already used by another record' }],
      });
    }
    seen.add(n);
  });
  for (const [column, table] of USER_REFERENCES) {
    const ids = [...new Set(rows.map((r) => r[column]).filter((v): v is string => typeof v === 'string'))];
    if (!ids.length) continue;
    const { rows: found } = await sql<{ id: string }>`select id from ${sql.table(table)} where id = any(${ids}::uuid[])`.execute(trx);
    const known = new Set(found.map((x) => x.id));
    const i = rows.findIndex((r) => typeof r[column] === 'string' && !known.has(r[column] as string));
    if (i >= 0) {
      const name = USER_NAMES.get(column);
      throw new HttpProblem(422, `${name} ${(rows[i] as Row)[column]} does not match any record.`, {
        errors: [{ path: `${items[i].path}/${name}`, message: 'no such record' }],
      });
    }
  }
  const columns = ['id', ...USER_MODEL.map((f) => f.column)];
  const inserted = await sql<{ row: Row }>`
    insert into users (tenant_id, created_by_id, modified_by_id, inactivated_on_utc, ${sql.join(columns.map((c) => sql.id(c)))})
    select ${actor.tenantId}, ${actor.userId}, ${actor.userId}, case when r.is_active = false then now() end,
           ${sql.join(columns.map((c) => (c === 'is_active' ? sql`coalesce(r.is_active, true)` : sql.ref(`r.${c}`))))}
      from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(id uuid, user_name text, name text, external_id text, company_id uuid, department_id uuid,
           typology_id uuid, email text, is_active boolean, sso_user_name text, required_hours numeric, responsible_id uuid, user_type_id uuid,
           timesheet_required boolean, ad_user_name text, tax_payer_number text)
    returning to_jsonb(users) as row`.execute(trx);
  const byId = new Map(inserted.rows.map((r) => [String(r.row.id), r.row]));
  const ordered = rows.map((r) => byId.get(r.id) as Row);
  await appendEvents(
    trx,
    ordered.map((row, i) => {
      const set: Row = {};
      for (const f of USER_MODEL) if (f.column in rows[i] || f.column === 'is_active') set[f.column] = row[f.column];
      const detail: Row = { Id: row.id, ...changeDetail(USER_MODEL, set) };
      return { tenantId: actor.tenantId, actionType: 'Created', documentType: 'User', documentId: String(row.id), detail, userId: actor.userId };
    }),
  );
  return ordered.map(userV3View);
}

/**
 * Duplicate: a new user under Name and UserName with the roles (UserRoleAdded each), the team places
 * (assignments), the typology, company, department and working-time settings of UserToDuplicateId.
 */
export async function duplicateUser(trx: Trx, actor: Actor, model: { UserToDuplicateId: string; Name: string; UserName: string }, path: string): Promise<Row> {
  const source = await trx.selectFrom('users').selectAll().where('id', '=', model.UserToDuplicateId.toLowerCase()).executeTakeFirst();
  if (!source) {
    throw new HttpProblem(422, `UserToDuplicateId ${model.UserToDuplicateId} does not match any user.`, {
      errors: [{ path: `${path}/UserToDuplicateId`, message: 'no such user' }],
    });
  }
  const copied: (keyof typeof source)[] = [
    'company_id',
    'department_id',
    'typology_id',
    'user_type_id',
    'responsible_id',
    'is_active',
    'required_hours',
    'required_weekly_hours',
    'leave_day_hours',
    'weekly_overtime_threshold_hours',
    'tolerance',
    'timesheet_required',
    'city_id',
    'sso_only',
    'paid_overtime',
    'paid_undertime',
  ];
  const values: Row = { user_name: model.UserName, name: model.Name };
  for (const c of copied) values[c] = source[c];
  const id = await insertUser(trx, actor, values, path);
  const { rows } = await sql<{
    name: string;
  }>`select r.name from user_roles ur join roles r on r.id = ur.role_id where ur.user_id = ${source.id} order by r.name`.execute(trx);
  await assignRoles(
    trx,
    actor.tenantId,
    id,
    rows.map((r) => r.name),
    actor.userId,
  );
  await sql`insert into assignments (tenant_id, document_id, document_type_id, team_id, user_id, created_by_id, modified_by_id)
            select tenant_id, document_id, document_type_id, team_id, ${id}, ${actor.userId}, ${actor.userId} from assignments where user_id = ${source.id}
            on conflict do nothing`.execute(trx);
  await sql`insert into commercial_client_users (tenant_id, commercial_client_id, user_id)
            select tenant_id, commercial_client_id, ${id} from commercial_client_users where user_id = ${source.id} on conflict do nothing`.execute(trx);
  const row = await sql<{ row: Row }>`select to_jsonb(u) as row from users u where id = ${id}`.execute(trx);
  return userV3View(row.rows[0].row);
}

/** Links a user to a commercial client (Active false removes the link); answers the link. */
export async function linkCommercialClientUser(
  trx: Trx,
  actor: Actor,
  model: { CommercialClientId: string; UserId: string; Active?: boolean | null },
  path: string,
): Promise<Row> {
  const client = model.CommercialClientId.toLowerCase();
  const user = model.UserId.toLowerCase();
  const { rows } = await sql<{ c: boolean; u: boolean }>`
    select exists (select 1 from commercial_clients where id = ${client}) as c, exists (select 1 from users where id = ${user}) as u`.execute(trx);
  for (const [ok, name, value] of [
    [rows[0].c, 'CommercialClientId', client],
    [rows[0].u, 'UserId', user],
  ] as const) {
    if (!ok) throw new HttpProblem(422, `${name} ${value} does not match any record.`, { errors: [{ path: `${path}/${name}`, message: 'no such record' }] });
  }
  const active = model.Active !== false;
  const changed = active
    ? await sql<{ id: string }>`insert into commercial_client_users (tenant_id, commercial_client_id, user_id) values (${actor.tenantId}, ${client}, ${user})
                                on conflict do nothing returning id`.execute(trx)
    : await sql<{ id: string }>`delete from commercial_client_users where commercial_client_id = ${client} and user_id = ${user} returning id`.execute(trx);
  if (changed.rows.length) {
    await emitWrite(
      trx,
      actor,
      'CommercialClient',
      { inserted: false, row: { id: client }, changes: { [active ? 'user_added' : 'user_removed']: user } },
      {
        names: { user_added: 'UserAdded', user_removed: 'UserRemoved' },
        types: { user_added: 'Guid', user_removed: 'Guid' },
      },
    );
  }
  const [link] = (await sql<{ id: string }>`select id from commercial_client_users where commercial_client_id = ${client} and user_id = ${user}`.execute(trx))
    .rows;
  return { Id: link?.id ?? null, CommercialClientId: client, UserId: user, Active: Boolean(link) };
}

/** The published v3 commercial-client item names -> the Integration API's names (columns the two share). */
const CLIENT_NAMES: Record<string, string> = {
  Name: 'name',
  ExternalId: 'externalId',
  Code: 'code',
  Number: 'number',
  Street: 'street',
  Street2: 'street2',
  StateProvince: 'stateProvince',
  TaxpayerNumber: 'taxpayerNumber',
  ZipPostal: 'zipPostal',
  CommercialClientCountryId: 'countryId',
  CommercialClientCityId: 'cityId',
  CommercialPaymentConditionId: 'commercialPaymentConditionId',
  ClientGroupId: 'clientGroupId',
  ProjectOwnerId: 'projectOwnerId',
  TimesheetLevelId: 'timesheetLevelId',
};
/** Published item fields with a column the Integration API's model does not write. */
export const CLIENT_EXTRA: Field<'commercial_clients'>[] = [
  { name: 'Email', column: 'email', kind: 'string' },
  { name: 'Phone', column: 'phone', kind: 'string' },
  { name: 'HeadOffice', column: 'head_office', kind: 'string' },
  { name: 'FullTimeEmployeeTime', column: 'full_time_employee_time', kind: 'double' },
  { name: 'Margin', column: 'margin', kind: 'double' },
  { name: 'SupplierMargin', column: 'supplier_margin', kind: 'double' },
  guidField('ProjectManagerId', 'manager_id'),
];
export const CLIENT_MAPPED = Object.keys(CLIENT_NAMES);
const V3_NAME = Object.fromEntries(Object.entries(CLIENT_NAMES).map(([v3, name]) => [name, v3]));

/** Create of one commercial client: no billing client needed (that ordering rule is the Integration API's); ExternalId optional. */
export async function createCommercialClient(trx: Trx, actor: Actor, model: Row, path: string): Promise<Row> {
  const body: Row = {};
  // An empty ExternalId (the template sends "") is none: the client is new, not matched on "".
  for (const [v3, name] of Object.entries(CLIENT_NAMES)) if (model[v3] !== undefined && !(v3 === 'ExternalId' && model[v3] === '')) body[name] = model[v3];
  const extra = columnValues(CLIENT_EXTRA, model, path);
  const { view, inserted } = await at(
    path,
    () => upsertResource(trx, actor, commercialClientsWithoutBilling, body, { types: { ...columnTypes(commercialClientsWithoutBilling.fields), id: 'Guid' } }),
    V3_NAME,
  );
  if (!inserted) {
    throw new HttpProblem(409, `A commercial client with ExternalId ${String(model.ExternalId)} exists already; Create makes new ones.`, {
      errors: [{ path: `${path}/ExternalId`, message: 'already used by another commercial client' }],
    });
  }
  const id = String(view.id);
  if (Object.keys(extra).length) {
    const result = await at(path, () =>
      naming(
        () => undefined,
        extra,
        () => updateRow(trx, actor, 'commercial_clients', id, extra),
      ),
    );
    if (result)
      await emitWrite(trx, actor, 'CommercialClient', result, {
        names: Object.fromEntries(CLIENT_EXTRA.map((f) => [f.column, f.name])),
        types: columnTypes(CLIENT_EXTRA),
      });
  }
  return commercialClientView(trx, id);
}

export async function commercialClientView(trx: Trx, id: string): Promise<Row> {
  const row = await trx.selectFrom('commercial_clients').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`There is no commercial client with id ${id}.`);
  return {
    Id: row.id,
    Name: row.name,
    ExternalId: row.external_id,
    Code: row.code,
    Number: row.number,
    Street: row.street,
    Street2: row.street2,
    StateProvince: row.state_province,
    TaxpayerNumber: row.tax_payer_number,
    ZipPostal: row.zip_postal,
    Email: row.email,
    Phone: row.phone,
    HeadOffice: row.head_office,
    FullTimeEmployeeTime: row.full_time_employee_time === null ? null : Number(row.full_time_employee_time),
    Margin: row.margin === null ? null : Number(row.margin),
    SupplierMargin: row.supplier_margin === null ? null : Number(row.supplier_margin),
    CommercialClientCountryId: row.country_id,
    CommercialClientCityId: row.city_id,
    CommercialPaymentConditionId: row.commercial_payment_condition_id,
    ClientGroupId: row.client_group_id,
    ProjectOwnerId: row.owner_id,
    ProjectManagerId: row.manager_id,
    TimesheetLevelId: row.timesheet_level_id,
  };
}
