// The spec's per-row rules ("States and transitions" for user-feed rows), applied through the Integration
// API's services so every change raises the events the API's own writes raise. One call works in the
// caller's transaction; the caller commits the row's outcome with it.
import { sql } from 'kysely';
import type { Actor } from '../domain/writes.ts';
import { findUserTypeByName, patchUser, typologies, typologyGroups, upsertResource, upsertUser } from '../integration/service.ts';
import type { Trx } from '../platform/db/database.ts';
import { HttpProblem } from '../platform/errors.ts';
import type { FeedRecord } from './records.ts';

export type Outcome = 'Created' | 'Updated' | 'Deactivated' | 'Unchanged' | 'Skipped' | 'Failed';

export interface RowOutcome {
  outcome: Outcome;
  userId: string | null;
  message: string | null;
  /** A freelancer created inactive: the second pass activates it. */
  pendingActivation: boolean;
}

/** A row that breaks a rule: the row fails with this message, the file goes on. */
export class RowError extends Error {}

const TRUE = new Set(['true', '1', 'yes', 'y']);
const FALSE = new Set(['false', '0', 'no', 'n']);

function flag(record: FeedRecord, field: 'isActive' | 'fslaStatus'): boolean | null {
  const v = (record[field] ?? '').trim().toLowerCase();
  if (v === '') return null;
  if (TRUE.has(v)) return true;
  if (FALSE.has(v)) return false;
  throw new RowError(`${field} "${record[field]}" is not true or false`);
}

function date(record: FeedRecord, field: 'hireDate' | 'expirationDate'): string | null {
  const v = (record[field] ?? '').trim();
  if (v === '') return null;
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[T ][0-9:.]+Z?)?$/.exec(v) ?? /^(\d{4})(\d{2})(\d{2})$/.exec(v);
  const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : null;
  if (!m || !d || d.getUTCDate() !== Number(m[3]) || d.getUTCMonth() !== Number(m[2]) - 1) throw new RowError(`${field} "${v}" is not a date YYYY-MM-DD`);
  return `${m[1]}-${m[2]}-${m[3]}`;
}

function number(record: FeedRecord, field: 'weeklyRequiredHours'): number | null {
  const v = (record[field] ?? '').trim();
  if (v === '') return null;
  const n = Number(v.replace(',', '.'));
  if (!Number.isFinite(n) || n < 0) throw new RowError(`${field} "${v}" is not a number of hours`);
  return n;
}

function required(record: FeedRecord, field: keyof FeedRecord): string {
  const v = (record[field] ?? '').trim();
  if (v === '') throw new RowError(`${field} is required`);
  return v;
}

const text = (record: FeedRecord, field: keyof FeedRecord): string | null => {
  const v = (record[field] ?? '').trim();
  return v === '' ? null : v;
};

/** A row that deactivates (isActive false); an unreadable isActive fails the row later, so here it does not. */
export function deactivates(record: FeedRecord): boolean {
  try {
    return flag(record, 'isActive') === false;
  } catch (err) {
    if (err instanceof RowError) return false;
    throw err;
  }
}

export const isFreelancer = (record: FeedRecord): boolean => (record.employeeClass ?? '').trim().toLowerCase() === 'freelancer';

/** The user type a row names: userType, with employeeClass (Freelancer, Intern) after it when given. */
export const userTypeName = (record: FeedRecord): string => [text(record, 'userType'), text(record, 'employeeClass')].filter(Boolean).join(' ');

/**
 * The user type: userType with employeeClass after it ("Temporary Freelancer") when the tenant has such a
 * type, else userType alone (decision 0031); neither existing fails the row, as the spec says.
 */
async function findUserType(trx: Trx, record: FeedRecord): Promise<string> {
  const names = [...new Set([userTypeName(record), (record.userType ?? '').trim()])];
  for (const name of names) {
    try {
      return (await findUserTypeByName(trx, name)).id;
    } catch (err) {
      if (!(err instanceof HttpProblem && err.status === 404)) throw err;
    }
  }
  throw new RowError(`userType "${names.join('" or "')}" does not exist`);
}

/** Timesheet Required: true for Regular/Permanent, false for Temporary (the spec's managed attribute). */
export function timesheetRequired(record: FeedRecord): boolean {
  return !/^temporary\b/i.test((record.userType ?? '').trim());
}

interface ExistingUser {
  id: string;
  user_name: string;
  sso_user_name: string | null;
  snapshot: string;
}

/** The user's stored state, without the audit columns, to tell an update that changed nothing. */
async function findUser(trx: Trx, externalId: string): Promise<ExistingUser | null> {
  const { rows } = await sql<ExistingUser>`
    select id, user_name, sso_user_name, (to_jsonb(u) - 'modified_on_utc' - 'modified_by_id')::text as snapshot
    from users u where external_id = ${externalId}`.execute(trx);
  return rows[0] ?? null;
}

/**
 * Ids of master data a file's rows share (departments, user types, typology groups and typologies), by what
 * the rows name them. Only ids read from committed or released work go in; the caller clears it when a
 * transaction rolls back.
 */
export type LookupCache = Map<string, string>;

async function cached(cache: LookupCache, key: string, find: () => Promise<string | null>): Promise<string | null> {
  const hit = cache.get(key);
  if (hit) return hit;
  const id = await find();
  if (id) cache.set(key, id);
  return id;
}

/** Applies one row; a rule the row breaks throws RowError (or an Integration API problem), and the caller fails the row. */
export async function applyRow(trx: Trx, actor: Actor, record: FeedRecord, cache: LookupCache = new Map()): Promise<RowOutcome> {
  const externalId = required(record, 'externalId');
  const active = flag(record, 'isActive');
  const user = await findUser(trx, externalId);
  if (active === false) {
    if (!user) return { outcome: 'Skipped', userId: null, message: 'no user with this externalId and isActive is false', pendingActivation: false };
    await deactivate(trx, actor, user, externalId, date(record, 'expirationDate'));
    return { outcome: (await changed(trx, user, externalId)) ? 'Deactivated' : 'Unchanged', userId: user.id, message: null, pendingActivation: false };
  }
  return upsert(trx, actor, record, externalId, user, cache);
}

async function changed(trx: Trx, before: ExistingUser, externalId: string): Promise<boolean> {
  const after = await findUser(trx, externalId);
  return after?.snapshot !== before.snapshot;
}

/** The spec's order: the expiration date first, then IsActive false, then the login names freed. */
export async function deactivate(trx: Trx, actor: Actor, user: ExistingUser, externalId: string, expiration: string | null): Promise<void> {
  if (expiration) await patchUser(trx, actor, user.id, { ExpirationDate: expiration });
  await patchUser(trx, actor, user.id, { IsActive: false });
  const suffix = `_${externalId}`;
  const rename: Record<string, unknown> = {};
  if (!user.user_name.endsWith(suffix)) rename.UserName = `${user.user_name}${suffix}`;
  if (user.sso_user_name && !user.sso_user_name.endsWith(suffix)) rename.SsoUserName = `${user.sso_user_name}${suffix}`;
  if (Object.keys(rename).length > 0) await patchUser(trx, actor, user.id, rename);
}

async function upsert(trx: Trx, actor: Actor, record: FeedRecord, externalId: string, user: ExistingUser | null, cache: LookupCache): Promise<RowOutcome> {
  const companyCode = required(record, 'companyCode');
  const departmentId = required(record, 'departmentid');
  const username = required(record, 'username');
  const groupName = (isFreelancer(record) ? 'FREELANCE ' : '') + required(record, 'userTypologyGroup');
  const resourceType = required(record, 'resourceType');
  required(record, 'userType');
  const hireDate = date(record, 'hireDate');
  const expirationDate = date(record, 'expirationDate');
  const weekly = number(record, 'weeklyRequiredHours');
  const fsla = flag(record, 'fslaStatus');

  const department = await cached(cache, `department\n${companyCode}\n${departmentId}`, () => findDepartment(trx, companyCode, departmentId));
  if (!department) throw new RowError(`no department "${departmentId}" in company "${companyCode}"`);

  const userTypeId = (await cached(cache, `userType\n${userTypeName(record)}\n${record.userType}`, () => findUserType(trx, record))) as string;

  const group =
    (await cached(cache, `group\n${groupName.toLowerCase()}`, () => findGroup(trx, groupName))) ?? (await createGroup(trx, actor, groupName, companyCode));
  const freelance = isFreelancer(record);
  const typologyExternalId =
    (await cached(cache, typologyKey(department, group, resourceType), () => findTypology(trx, resourceType, department, group, freelance))) ??
    (await createTypology(trx, actor, resourceType, department, group, freelance));

  // The manager, overtime and city are resolved first: the user is written once with its final values, so the
  // one Created (or Updated) event tells a subscriber the truth (TimesheetRequired false for a Temporary user).
  const manager = await managerColumns(trx, text(record, 'responsible'), fsla, text(record, 'workLocation'));
  // A new freelancer is created inactive and activated in a second pass (the spec's order).
  const pendingActivation = !user && isFreelancer(record);
  const { user: written, action } = await upsertUser(
    trx,
    actor,
    {
      UserName: username,
      Name: text(record, 'name'),
      ExternalId: externalId,
      CompanyCode: companyCode,
      DepartmentExternalId: departmentId,
      TypologyExternalId: typologyExternalId,
      Mail: text(record, 'email'),
      IsActive: !pendingActivation,
      HireDate: hireDate,
      ExpirationDate: expirationDate,
      SsoUserName: text(record, 'ssoUsername'),
      RequiredWeeklyHours: weekly,
      UserTypeId: userTypeId,
      Phone: text(record, 'workphone'),
    },
    // ExternalNumber and Timesheet Required are not fields of POST /api/users: written in the same statement.
    { external_number: text(record, 'externalNumber'), timesheet_required: timesheetRequired(record), ...manager.columns },
  );
  const userId = written.Id as string;
  const message = manager.note;

  const outcome: RowOutcome['outcome'] = action === 'Created' ? 'Created' : user && !(await changed(trx, user, externalId)) ? 'Unchanged' : 'Updated';
  return { outcome, userId, message, pendingActivation };
}

async function findDepartment(trx: Trx, companyCode: string, departmentId: string): Promise<string | null> {
  const { rows } = await sql<{ id: string }>`
    select d.id from departments d join companies c on c.id = d.company_id
    where c.code = ${companyCode} and d.external_id = ${departmentId}`.execute(trx);
  return rows[0]?.id ?? null;
}

/**
 * The typology group and typology a row would create (their keys), read only; none for a row that fails or
 * deactivates before it writes. `memo` holds one scan's reads, misses included.
 */
export async function missingMasterData(trx: Trx, record: FeedRecord, memo: Map<string, string | null>): Promise<string[]> {
  const read = async (key: string, find: () => Promise<string | null>) => {
    if (!memo.has(key)) memo.set(key, await find());
    return memo.get(key) ?? null;
  };
  let companyCode: string;
  let departmentId: string;
  let groupName: string;
  let resourceType: string;
  try {
    required(record, 'externalId');
    if (flag(record, 'isActive') === false) return [];
    companyCode = required(record, 'companyCode');
    departmentId = required(record, 'departmentid');
    groupName = (isFreelancer(record) ? 'FREELANCE ' : '') + required(record, 'userTypologyGroup');
    resourceType = required(record, 'resourceType');
  } catch (err) {
    if (err instanceof RowError) return [];
    throw err;
  }
  const department = await read(`department\n${companyCode}\n${departmentId}`, () => findDepartment(trx, companyCode, departmentId));
  if (!department) return [];
  const missing: string[] = [];
  const groupKey = `group\n${groupName.toLowerCase()}`;
  if (!(await read(groupKey, () => findGroup(trx, groupName)))) missing.push(groupKey);
  // A group still to be created has no typology yet: the typology is missing too.
  const group = memo.get(groupKey) ?? null;
  const typology = typologyKey(department, group ?? groupKey, resourceType);
  if (!group || !(await read(typology, () => findTypology(trx, resourceType, department, group, isFreelancer(record))))) missing.push(typology);
  return missing;
}

/**
 * responsible_id, paid_overtime and city_id of a row that names a manager; a manager not found leaves the
 * user without one (the spec: recorded, not failed), and those columns as they were.
 */
async function managerColumns(
  trx: Trx,
  responsible: string | null,
  fsla: boolean | null,
  workLocation: string | null,
): Promise<{ columns: Record<string, unknown>; note: string | null }> {
  if (!responsible) return { columns: {}, note: null };
  const { rows } = await sql<{ id: string }>`select id from users where external_id = ${responsible}`.execute(trx);
  if (!rows[0]) return { columns: {}, note: `created without a manager: no user with externalId "${responsible}"` };
  const columns: Record<string, unknown> = { responsible_id: rows[0].id };
  if (fsla !== null) columns.paid_overtime = fsla;
  let note: string | null = null;
  if (workLocation) {
    const { rows: cities } = await sql<{ id: string }>`
      select id from cities where external_id = ${workLocation} or lower(name) = lower(${workLocation}) order by (external_id = ${workLocation}) desc nulls last limit 1`.execute(
      trx,
    );
    if (cities[0]) columns.city_id = cities[0].id;
    else note = `workLocation "${workLocation}" matches no city; CityId left as it was`;
  }
  return { columns, note };
}

/** The typology group by description (case-insensitive). */
async function findGroup(trx: Trx, name: string): Promise<string | null> {
  const { rows } = await sql<{ id: string }>`select id from typology_groups where lower(name) = lower(${name}) order by created_on_utc limit 1`.execute(trx);
  return rows[0]?.id ?? null;
}

export async function createGroup(trx: Trx, actor: Actor, name: string, companyCode: string): Promise<string> {
  const { view } = await upsertResource(trx, actor, typologyGroups, { name, companyCode });
  return view.id as string;
}

const typologyKey = (department: string, group: string, resourceType: string) => `typology\n${department}\n${group}\n${resourceType.toLowerCase()}`;

/**
 * The typology of the user's department by business title (its external id, else its name): its external id.
 * A freelancer's belongs to the FREELANCE group; another user's preferably to the row's group, else to any
 * group but a FREELANCE one (typologies made before the feed, by the API or by hand).
 */
async function findTypology(trx: Trx, resourceType: string, departmentId: string, groupId: string, freelance: boolean): Promise<string | null> {
  const { rows } = await sql<{ external_id: string | null }>`
    select t.external_id from typologies t left join typology_groups g on g.id = t.typology_group_id
    where t.department_id = ${departmentId} and (t.external_id = ${resourceType} or lower(t.name) = lower(${resourceType}))
      and ${freelance ? sql`t.typology_group_id = ${groupId}` : sql`(t.typology_group_id = ${groupId} or coalesce(g.name, '') not ilike 'FREELANCE %')`}
    order by (t.typology_group_id = ${groupId}) desc nulls last, (t.external_id = ${resourceType}) desc nulls last limit 1`.execute(trx);
  return rows[0]?.external_id ?? null;
}

/**
 * A missing typology, created for the department and associated with the group. Its external id is the
 * business title, or "FREELANCE title" for a freelancer's when the plain group's typology holds the title
 * (external ids are unique per department).
 */
export async function createTypology(trx: Trx, actor: Actor, resourceType: string, departmentId: string, groupId: string, freelance = false): Promise<string> {
  let externalId = resourceType;
  if (freelance) {
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from typologies where department_id = ${departmentId} and external_id = ${resourceType}`.execute(trx);
    if (rows[0].n > 0) externalId = `FREELANCE ${resourceType}`;
  }
  await upsertResource(trx, actor, typologies, { externalId, name: resourceType, departmentId, typologyGroupId: groupId });
  return externalId;
}

/** The second pass: a freelancer created inactive becomes active. */
export async function activate(trx: Trx, actor: Actor, userId: string): Promise<void> {
  await patchUser(trx, actor, userId, { IsActive: true });
}
