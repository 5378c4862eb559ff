// SCIM Users over the Integration API's write path: every change is upsertUser / patchUser / updateRow with
// their validation and Created/Updated events, references resolved as the user feed resolves them (typology
// group and typology created when missing, Timesheet Required from the user type), and deactivation by the
// feed's own rule (expiration date, IsActive false, login names freed with the externalId suffix).
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { type Actor, emitWrite, updateRow } from '../domain/writes.ts';
import { patchUser, upsertUser } from '../integration/service.ts';
import { sha256 } from '../platform/auth/hashing.ts';
import { isUuid, type Trx } from '../platform/db/database.ts';
import { createGroup, createTypology, deactivate, timesheetRequired } from '../user-feed/service.ts';
import { compileFilter, sortExpression, USER_CATALOGUE } from './compile-filter.ts';
import { scimError } from './errors.ts';
import type { AttrPath, Filter } from './filter.ts';
import { type DesiredUser, type Doc, desiredUser, readUser, type UserRow, writableUser } from './mapping.ts';
import { applyUserPatch, type PatchOperation } from './patch.ts';
import type { ScimSettings } from './settings.ts';

export interface ListQuery {
  filter: Filter | null;
  sortBy: AttrPath | null;
  descending: boolean;
  startIndex: number;
  count: number;
  withGroups: boolean;
}

const userNotFound = (id: string) => scimError(404, null, `No User ${id}.`);

/** The version (ETag) of a user: a digest of everything its SCIM answer says. */
const versionOf = (row: Omit<UserRow, 'version'>): string => `W/"${sha256(JSON.stringify(row)).slice(0, 22)}"`;

const USER_COLUMNS = sql`u.id, u.user_name, u.name, u.email, u.phone, u.is_active, u.external_id, u.external_number, u.sso_user_name,
      u.expiration_date::text as expiration_date, s.given_name, s.family_name, ut.name as user_type, ty.name as title,
      d.name as department, c.name as organization, u.responsible_id, m.name as manager_name, u.created_on_utc, u.modified_on_utc`;

const USER_FROM = sql`users u
    left join scim_users s on s.user_id = u.id
    left join companies c on c.id = u.company_id
    left join departments d on d.id = u.department_id
    left join typologies ty on ty.id = u.typology_id
    left join user_types ut on ut.id = u.user_type_id
    left join users m on m.id = u.responsible_id`;

/** The roles of the page's users (p), for the groups attribute: computed for the page only, after LIMIT. */
const GROUPS = sql`left join lateral (select coalesce(jsonb_agg(jsonb_build_object('value', r2.id, 'display', r2.name) order by r2.name), '[]'::jsonb) as groups
      from user_roles ur join roles r2 on r2.id = ur.role_id where ur.user_id = p.id) g on true`;

const withVersion = (row: Omit<UserRow, 'version'>): UserRow => ({ ...row, version: versionOf(row) });

export async function listUsers(trx: Trx, q: ListQuery): Promise<{ rows: UserRow[]; total: number }> {
  const where = q.filter ? compileFilter(USER_CATALOGUE, q.filter) : sql`true`;
  const order = q.sortBy ? sortExpression(USER_CATALOGUE, q.sortBy) : sql`u.created_on_utc`;
  const direction = q.descending ? sql`desc nulls last` : sql`asc nulls last`;
  let total = 0;
  let rows: UserRow[] = [];
  if (q.count > 0) {
    const result = await sql<Omit<UserRow, 'version'> & { total: string; sort_key: unknown }>`
      select p.*, ${q.withGroups ? sql`g.groups` : sql`'[]'::jsonb as groups`} from (
        select ${USER_COLUMNS}, ${order} as sort_key, count(*) over () as total
        from ${USER_FROM}
        where s.deleted_on_utc is null and ${where}
        order by sort_key ${direction}, u.id offset ${q.startIndex - 1} limit ${q.count}
      ) p ${q.withGroups ? GROUPS : sql``}
      order by p.sort_key ${direction}, p.id`.execute(trx);
    rows = result.rows.map(({ total: t, sort_key: _k, ...r }) => {
      total = Number(t);
      return withVersion(r);
    });
  }
  if (rows.length === 0) {
    // An empty page (count=0, or startIndex past the end) still answers how many match.
    const counted = await sql<{ n: string }>`select count(*) as n from ${USER_FROM} where s.deleted_on_utc is null and ${where}`.execute(trx);
    total = Number(counted.rows[0].n);
  }
  return { rows, total };
}

/** The user as SCIM sees it; null when there is none or a SCIM DELETE removed it. `lock` takes its row lock first. */
export async function findUser(trx: Trx, id: string, lock = false): Promise<UserRow | null> {
  if (!isUuid(id)) return null;
  if (lock) await sql`select 1 from users where id = ${id.toLowerCase()} for update`.execute(trx);
  const { rows } = await sql<Omit<UserRow, 'version'>>`
    select p.*, g.groups from (select ${USER_COLUMNS} from ${USER_FROM} where s.deleted_on_utc is null and u.id = ${id.toLowerCase()}) p ${GROUPS}`.execute(
    trx,
  );
  return rows[0] ? withVersion(rows[0]) : null;
}

/**
 * Stores the name parts SCIM keeps and reads the user back in the same statement (one round trip less per
 * write): the read's snapshot predates the upsert, so the parts written are taken from its RETURNING.
 */
async function findUserWritingNames(trx: Trx, tenantId: string, id: string, given: string | null, family: string | null): Promise<UserRow | null> {
  const { rows } = await sql<Omit<UserRow, 'version'> & { new_given: string | null; new_family: string | null }>`
    with up as (
      insert into scim_users (tenant_id, user_id, given_name, family_name) values (${tenantId}, ${id}, ${given}, ${family})
      on conflict (tenant_id, user_id) do update set given_name = excluded.given_name, family_name = excluded.family_name
      returning given_name, family_name
    )
    select p.*, g.groups, (select given_name from up) as new_given, (select family_name from up) as new_family
    from (select ${USER_COLUMNS} from ${USER_FROM} where s.deleted_on_utc is null and u.id = ${id}) p ${GROUPS}`.execute(trx);
  if (!rows[0]) return null;
  const { new_given, new_family, ...row } = rows[0];
  return withVersion({ ...row, given_name: new_given, family_name: new_family });
}

export async function getUser(trx: Trx, id: string): Promise<UserRow> {
  const row = await findUser(trx, id);
  if (!row) throw userNotFound(id);
  return row;
}

/** If-Match: `*` or one of the listed versions (weak comparison); 412 otherwise. */
export function checkIfMatch(ifMatch: string | undefined, version: string): void {
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const strip = (v: string) => v.trim().replace(/^W\//, '');
  if (!ifMatch.split(',').some((v) => strip(v) === strip(version))) {
    throw scimError(412, null, `The resource changed: its version is ${version}, not ${ifMatch}.`);
  }
}

export interface Saved {
  row: UserRow;
  created: boolean;
  /** The write deactivated the user: the caller drops cached logins after commit. */
  deactivated: boolean;
}

export async function createUser(trx: Trx, actor: Actor, settings: ScimSettings, body: unknown): Promise<Saved> {
  const saved = await saveUser(trx, actor, settings, null, desiredUser(readUser(body)));
  return saved;
}

export async function replaceUser(trx: Trx, actor: Actor, settings: ScimSettings, id: string, body: unknown, ifMatch?: string): Promise<Saved> {
  const current = await findUser(trx, id, true);
  if (!current) throw userNotFound(id);
  checkIfMatch(ifMatch, current.version);
  return saveUser(trx, actor, settings, current, desiredUser(readUser(body)));
}

export async function patchScimUser(trx: Trx, actor: Actor, settings: ScimSettings, id: string, ops: PatchOperation[], ifMatch?: string): Promise<Saved> {
  const current = await findUser(trx, id, true);
  if (!current) throw userNotFound(id);
  checkIfMatch(ifMatch, current.version);
  const { doc } = applyUserPatch(writableUser(current), ops);
  return saveUser(trx, actor, settings, current, desiredUser(readUser(doc)));
}

/** DELETE: deactivated by the feed's rule and answered 404 from then on. */
export async function deleteUser(trx: Trx, actor: Actor, settings: ScimSettings, id: string, ifMatch?: string): Promise<Saved> {
  const current = await findUser(trx, id, true);
  if (!current) throw userNotFound(id);
  checkIfMatch(ifMatch, current.version);
  const doc: Doc = { ...writableUser(current), active: false };
  const saved = await saveUser(trx, actor, settings, current, desiredUser(readUser(doc)));
  await sql`update scim_users set deleted_on_utc = now() where user_id = ${current.id}`.execute(trx);
  return saved;
}

// ---------------------------------------------------------------------------------------------------
// The write
// ---------------------------------------------------------------------------------------------------

interface Refs {
  companyCode: string;
  departmentExternalId: string;
  departmentId: string;
  typologyExternalId: string;
  userTypeId: string;
  userTypeName: string;
  /** The user that holds the externalId asked about (create only), and whether a SCIM DELETE removed it. */
  holder: { id: string; deleted: boolean } | null;
}

const invalidValue = (detail: string) => scimError(400, 'invalidValue', detail);

/**
 * Every reference of a user in one statement: the company (organization by code, else name; else the
 * settings'), the department in it (by external id, else name; else the settings'), the user type (the
 * settings' userTypes map, else the name itself), the typology group and the typology by the user feed's own
 * rules (findGroup and findTypology in user-feed/rows.ts read them the same way), and who holds the
 * externalId. What is missing is created afterwards by the feed's functions.
 */
async function resolveRefs(trx: Trx, actor: Actor, settings: ScimSettings, d: DesiredUser, externalIdToCheck: string | null): Promise<Refs> {
  const mapped = d.userType ? Object.entries(settings.userTypes).find(([k]) => k.toLowerCase() === d.userType?.toLowerCase())?.[1] : undefined;
  const userTypeName = mapped ?? d.userType ?? settings.userType;
  const resourceType = (settings.typologyFromTitle && d.title) || settings.typology;
  const wanted = d.department ?? settings.departmentExternalId;
  const { rows } = await sql<{
    org_code: string | null;
    company_code: string;
    department_id: string | null;
    department_external_id: string | null;
    department_exact: boolean | null;
    user_type_id: string | null;
    group_id: string | null;
    typology_external_id: string | null;
    holder: { id: string; deleted: boolean } | null;
  }>`
    with co as (
      select (select code from companies where code = ${d.organization} or lower(name) = lower(${d.organization})
              order by (code = ${d.organization}) desc, created_on_utc limit 1) as org_code
    ), company as (select co.org_code, coalesce(co.org_code, ${settings.companyCode}) as code from co)
    select company.org_code, company.code as company_code, dep.id as department_id, dep.external_id as department_external_id, dep.exact as department_exact,
      (select id from user_types where lower(name) = lower(${userTypeName}) limit 1) as user_type_id,
      (select id from typology_groups where lower(name) = lower(${settings.typologyGroup}) order by created_on_utc limit 1) as group_id,
      (select external_id from typologies where department_id = dep.id and (external_id = ${resourceType} or lower(name) = lower(${resourceType}))
        order by (external_id = ${resourceType}) desc nulls last limit 1) as typology_external_id,
      (select jsonb_build_object('id', u.id, 'deleted', s.deleted_on_utc is not null) from users u left join scim_users s on s.user_id = u.id
        where u.external_id = ${externalIdToCheck}) as holder
    from company
    left join lateral (
      select d.id, d.external_id, (d.external_id = ${wanted} or lower(d.name) = lower(${wanted})) as exact
      from departments d join companies c on c.id = d.company_id
      where c.code = company.code and (d.external_id = ${wanted} or lower(d.name) = lower(${wanted}) or ${d.department === null})
      order by (d.external_id = ${wanted}) desc nulls last, (lower(d.name) = lower(${wanted})) desc nulls last, d.created_on_utc limit 1
    ) dep on true`.execute(trx);
  const r = rows[0];
  if (d.organization && !r.org_code) throw invalidValue(`organization "${d.organization}" matches no company (by code or name).`);
  if (!r.department_id || (d.department && !r.department_exact)) {
    throw invalidValue(`department "${wanted}" matches no department of company "${r.company_code}" (by external id or name).`);
  }
  if (!r.department_external_id) throw invalidValue(`department "${wanted}" has no external id, which the Integration API needs.`);
  if (!r.user_type_id) throw invalidValue(`userType "${userTypeName}" is no user type of Atrium (see the SCIM settings' userTypes).`);
  const group = r.group_id ?? (await createGroup(trx, actor, settings.typologyGroup, r.company_code));
  const typologyExternalId = r.typology_external_id ?? (await createTypology(trx, actor, resourceType, r.department_id, group));
  return {
    companyCode: r.company_code,
    departmentExternalId: r.department_external_id,
    departmentId: r.department_id,
    typologyExternalId,
    userTypeId: r.user_type_id,
    userTypeName,
    holder: r.holder,
  };
}

const today = (): string => new Date().toISOString().slice(0, 10);
const stripSuffix = (name: string, suffix: string): string => (name.endsWith(suffix) && name.length > suffix.length ? name.slice(0, -suffix.length) : name);

/** Is a login name free for this user (no other user has it, in any letter case)? */
async function nameFree(trx: Trx, column: 'user_name' | 'sso_user_name', name: string, self: string | null): Promise<boolean> {
  const { rows } = await sql`select 1 from users where lower(${sql.ref(column)}) = lower(${name}) and id is distinct from ${self} limit 1`.execute(trx);
  return rows.length === 0;
}

async function saveUser(trx: Trx, actor: Actor, settings: ScimSettings, current: UserRow | null, d: DesiredUser): Promise<Saved> {
  if (d.managerId !== null) {
    const ok = isUuid(d.managerId) && d.managerId.toLowerCase() !== current?.id && (await findUser(trx, d.managerId)) !== null;
    if (!ok) throw invalidValue(`manager.value "${d.managerId}" is not the id of another User.`);
  }
  const refs = await resolveRefs(trx, actor, settings, d, current ? null : d.externalId);
  if (!current && refs.holder) {
    // A user a SCIM DELETE removed comes back when its externalId is sent again; any other holder is a conflict.
    if (!refs.holder.deleted) throw scimError(409, 'uniqueness', `Another user already has externalId "${d.externalId}".`);
    await sql`update scim_users set deleted_on_utc = null where user_id = ${refs.holder.id}`.execute(trx);
    const revived = (await findUser(trx, refs.holder.id, true)) as UserRow;
    return { ...(await saveUser(trx, actor, settings, revived, d)), created: false };
  }
  const externalId = d.externalId ?? current?.external_id ?? d.userName;
  const suffix = `_${externalId}`;
  const wantedUser = stripSuffix(d.userName, suffix);
  const wantedSso = settings.ssoUserName === 'userName' ? wantedUser : current?.sso_user_name ? stripSuffix(current.sso_user_name, suffix) : null;
  const id = current?.id ?? randomUUID();
  const wasActive = current?.is_active ?? null;

  let userName = wantedUser;
  let ssoUserName = wantedSso;
  let isActive = true;
  let expiration: string | null | undefined;
  let deactivateAfter = false;
  if (d.active) {
    if (current && (wasActive === false || current.user_name.endsWith(suffix))) {
      // Re-activation gives the login names back only if nobody took them meanwhile.
      userName = (await nameFree(trx, 'user_name', wantedUser, id)) ? wantedUser : current.user_name;
      ssoUserName = wantedSso && (await nameFree(trx, 'sso_user_name', wantedSso, id)) ? wantedSso : current.sso_user_name;
      if (current.expiration_date && current.expiration_date <= today()) expiration = null;
    }
  } else if (!current) {
    isActive = false;
    userName = `${wantedUser}${suffix}`;
    ssoUserName = wantedSso ? `${wantedSso}${suffix}` : null;
    expiration = today();
  } else if (wasActive) {
    deactivateAfter = true; // the other changes first, then the feed's deactivation in its order
  } else {
    isActive = false;
    userName = `${wantedUser}${suffix}`;
    ssoUserName = wantedSso ? `${wantedSso}${suffix}` : null;
  }

  const { user } = await upsertUser(trx, actor, {
    Id: id,
    UserName: userName,
    Name: d.name,
    ExternalId: externalId,
    CompanyCode: refs.companyCode,
    DepartmentExternalId: refs.departmentExternalId,
    TypologyExternalId: refs.typologyExternalId,
    Mail: d.mail,
    IsActive: isActive,
    SsoUserName: ssoUserName,
    UserTypeId: refs.userTypeId,
    Phone: d.phone,
    ResponsibleId: d.managerId?.toLowerCase() ?? null,
    ...(expiration !== undefined ? { ExpirationDate: expiration } : {}),
  });
  const userId = user.Id as string;
  // ExternalNumber and Timesheet Required are not fields of POST /api/users: written as the user feed writes them.
  const timesheet = timesheetRequired({ userType: refs.userTypeName });
  // A new user already has the columns' defaults (no number, Timesheet Required): nothing to write then.
  if (current || d.employeeNumber !== null || !timesheet) {
    const extra = await updateRow(trx, actor, 'users', userId, { external_number: d.employeeNumber, timesheet_required: timesheet });
    if (extra) await emitWrite(trx, actor, 'User', extra, { names: { external_number: 'ExternalNumber', timesheet_required: 'TimesheetRequired' } });
  }
  if (d.password) await patchUser(trx, actor, userId, { Password: d.password });
  if (deactivateAfter && current) {
    const stored = (await findUser(trx, userId)) as UserRow;
    const expires = current.expiration_date && current.expiration_date <= today() ? null : today();
    await deactivate(trx, actor, { id: userId, user_name: stored.user_name, sso_user_name: stored.sso_user_name, snapshot: '' }, externalId, expires);
  }

  const deactivated = wasActive !== false && (deactivateAfter || (!current && !isActive));
  // Every process drops its cached logins when the transaction commits (user verifications are cached for seconds).
  if (deactivated) await sql`select pg_notify('atrium_auth', '')`.execute(trx);
  const names = d.givenName !== null || d.familyName !== null || current?.given_name || current?.family_name;
  const row = (names ? await findUserWritingNames(trx, actor.tenantId, userId, d.givenName, d.familyName) : await findUser(trx, userId)) as UserRow;
  return { row, created: !current, deactivated };
}
