// SCIM Groups are Atrium roles: a member is a user holding the role. Membership changes go through the
// tenancy service's assignRoles/removeRoles, so each raises UserRoleAdded/UserRoleRemoved as the
// administration API's do. Built-in roles cannot be renamed or deleted; roles a provider creates can.
import { sql } from 'kysely';
import { sha256 } from '../platform/auth/hashing.ts';
import { BUILT_IN_ROLES } from '../platform/auth/roles.ts';
import { isUuid, type Trx } from '../platform/db/database.ts';
import { assignRoles, removeRoles } from '../tenancy/service.ts';
import { compileFilter, GROUP_CATALOGUE, sortExpression } from './compile-filter.ts';
import { scimError } from './errors.ts';
import { type AttrPath, type Filter, parsePatchPath } from './filter.ts';
import type { Doc } from './mapping.ts';
import { matches, type PatchOperation } from './patch.ts';
import { CORE_GROUP } from './schemas.ts';

export interface GroupRow {
  id: string;
  name: string;
  created_on_utc: string;
  members: { value: string; display: string | null }[];
  version: string;
}

/** Members a request may name at once (a PUT or PATCH): the body limit bounds it too. */
export const MAX_MEMBERS_PER_REQUEST = 10_000;

const BUILT_IN = new Set(BUILT_IN_ROLES.map((r) => r.name.toLowerCase()));
const groupNotFound = (id: string) => scimError(404, null, `No Group ${id}.`);
const invalidValue = (detail: string) => scimError(400, 'invalidValue', detail);
const isObject = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v);

const MEMBERS = sql`left join lateral (
    select coalesce(jsonb_agg(jsonb_build_object('value', mu.id, 'display', mu.name) order by mu.id), '[]'::jsonb) as members
    from user_roles ur join users mu on mu.id = ur.user_id
    where ur.role_id = p.id and not exists (select 1 from scim_users x where x.user_id = mu.id and x.deleted_on_utc is not null)) g on true`;

const withVersion = (r: Omit<GroupRow, 'version'>): GroupRow => ({
  ...r,
  version: `W/"${sha256(JSON.stringify([r.id, r.name, r.members.map((m) => m.value)])).slice(0, 22)}"`,
});

export interface GroupListQuery {
  filter: Filter | null;
  sortBy: AttrPath | null;
  descending: boolean;
  startIndex: number;
  count: number;
  withMembers: boolean;
}

export async function listGroups(trx: Trx, q: GroupListQuery): Promise<{ rows: GroupRow[]; total: number }> {
  const where = q.filter ? compileFilter(GROUP_CATALOGUE, q.filter) : sql`true`;
  const order = q.sortBy ? sortExpression(GROUP_CATALOGUE, q.sortBy) : sql`r.name`;
  const direction = q.descending ? sql`desc nulls last` : sql`asc nulls last`;
  const { rows } = await sql<Omit<GroupRow, 'version'> & { total: string }>`
    select p.id, p.name, p.created_on_utc, p.total, ${q.withMembers ? sql`g.members` : sql`'[]'::jsonb as members`} from (
      select r.id, r.name, r.created_on_utc, ${order} as sort_key, count(*) over () as total from roles r
      where ${where} order by sort_key ${direction}, r.id offset ${q.startIndex - 1} limit ${q.count}
    ) p ${q.withMembers ? MEMBERS : sql``}
    order by p.sort_key ${direction}, p.id`.execute(trx);
  let total = rows[0] ? Number(rows[0].total) : 0;
  if (rows.length === 0) total = Number((await sql<{ n: string }>`select count(*) as n from roles r where ${where}`.execute(trx)).rows[0].n);
  return { rows: rows.map(({ total: _t, ...r }) => withVersion(r)), total };
}

export async function findGroup(trx: Trx, id: string, lock = false): Promise<GroupRow | null> {
  if (!isUuid(id)) return null;
  const { rows } = await sql<Omit<GroupRow, 'version'>>`
    select p.id, p.name, p.created_on_utc, g.members from (select r.id, r.name, r.created_on_utc from roles r where r.id = ${id.toLowerCase()} ${lock ? sql`for update` : sql``}) p
    ${MEMBERS}`.execute(trx);
  return rows[0] ? withVersion(rows[0]) : null;
}

export async function getGroup(trx: Trx, id: string): Promise<GroupRow> {
  const row = await findGroup(trx, id);
  if (!row) throw groupNotFound(id);
  return row;
}

export function scimGroup(row: GroupRow, base: string): Doc {
  const created = new Date(row.created_on_utc).toISOString();
  return {
    schemas: [CORE_GROUP],
    id: row.id,
    displayName: row.name,
    members: row.members.map((m) => ({ value: m.value, display: m.display ?? undefined, $ref: `${base}/Users/${m.value}`, type: 'User' })),
    meta: { resourceType: 'Group', created, lastModified: created, location: `${base}/Groups/${row.id}`, version: row.version },
  };
}

function checkIfMatch(ifMatch: string | undefined, version: string): void {
  if (ifMatch === undefined || ifMatch.trim() === '*') return;
  const strip = (v: string) => v.trim().replace(/^W\//, '');
  if (!ifMatch.split(',').some((v) => strip(v) === strip(version))) throw scimError(412, null, `The resource changed: its version is ${version}.`);
}

function readDisplayName(v: unknown): string {
  if (typeof v !== 'string' || v.trim() === '' || v.length > 200) throw invalidValue('displayName must be a string of 1 to 200 characters');
  return v.trim();
}

/** Member ids from a members value; each must be a User of this tenant (no nested groups). */
async function readMembers(trx: Trx, v: unknown): Promise<string[]> {
  const list = v === null || v === undefined ? [] : Array.isArray(v) ? v : [v];
  if (list.length > MAX_MEMBERS_PER_REQUEST) throw invalidValue(`At most ${MAX_MEMBERS_PER_REQUEST} members per request.`);
  const ids = list.map((m, i) => {
    const value = isObject(m) ? m.value : m;
    if (isObject(m) && typeof m.type === 'string' && m.type.toLowerCase() !== 'user') throw invalidValue(`members[${i}]: only Users can be members`);
    if (typeof value !== 'string' || !isUuid(value)) throw invalidValue(`members[${i}].value must be a User id`);
    return value.toLowerCase();
  });
  const unique = [...new Set(ids)];
  if (unique.length === 0) return [];
  const { rows } = await sql<{ id: string }>`
    select u.id from users u left join scim_users s on s.user_id = u.id
    where u.id = any(${unique}::uuid[]) and s.deleted_on_utc is null`.execute(trx);
  const found = new Set(rows.map((r) => r.id));
  const missing = unique.find((id) => !found.has(id));
  if (missing) throw invalidValue(`members: no User ${missing}`);
  return unique;
}

async function setMembers(trx: Trx, tenantId: string, actorId: string | null, role: GroupRow, add: string[], remove: string[]): Promise<void> {
  for (const userId of add) await assignRoles(trx, tenantId, userId, [role.name], actorId);
  for (const userId of remove) await removeRoles(trx, tenantId, userId, [role.name], actorId);
}

async function rename(trx: Trx, role: GroupRow, name: string): Promise<GroupRow> {
  if (name === role.name) return role;
  if (BUILT_IN.has(role.name.toLowerCase())) throw scimError(400, 'mutability', `${role.name} is a built-in role; it cannot be renamed.`);
  const taken = await sql`select 1 from roles where lower(name) = lower(${name}) and id <> ${role.id}`.execute(trx);
  if (taken.rows.length) throw scimError(409, 'uniqueness', `A Group named "${name}" exists.`);
  await sql`update roles set name = ${name} where id = ${role.id}`.execute(trx);
  return { ...role, name };
}

export interface Actor {
  tenantId: string;
  userId: string | null;
}

export async function createScimGroup(trx: Trx, actor: Actor, body: unknown): Promise<GroupRow> {
  if (!isObject(body)) throw scimError(400, 'invalidSyntax', 'The body must be a JSON object (a SCIM Group).');
  checkGroupAttributes(body);
  const name = readDisplayName(body.displayName);
  const taken = await sql`select 1 from roles where lower(name) = lower(${name})`.execute(trx);
  if (taken.rows.length) throw scimError(409, 'uniqueness', `A Group named "${name}" exists.`);
  const members = await readMembers(trx, body.members);
  const { rows } = await sql<{ id: string }>`
    insert into roles (tenant_id, name, description) values (${actor.tenantId}, ${name}, 'Created by SCIM provisioning') returning id`.execute(trx);
  const role = (await findGroup(trx, rows[0].id, true)) as GroupRow;
  await setMembers(trx, actor.tenantId, actor.userId, role, members, []);
  return (await findGroup(trx, role.id)) as GroupRow;
}

const GROUP_KEYS = new Set(['schemas', 'id', 'meta', 'displayname', 'members', 'externalid']);

function checkGroupAttributes(body: Doc): void {
  for (const key of Object.keys(body)) {
    const bare = key.toLowerCase().startsWith(`${CORE_GROUP.toLowerCase()}:`) ? key.slice(CORE_GROUP.length + 1) : key;
    if (!GROUP_KEYS.has(bare.toLowerCase())) throw invalidValue(`"${key}" is not an attribute of a Group`);
  }
}

export async function replaceScimGroup(trx: Trx, actor: Actor, id: string, body: unknown, ifMatch?: string): Promise<GroupRow> {
  if (!isObject(body)) throw scimError(400, 'invalidSyntax', 'The body must be a JSON object (a SCIM Group).');
  checkGroupAttributes(body);
  let role = await findGroup(trx, id, true);
  if (!role) throw groupNotFound(id);
  checkIfMatch(ifMatch, role.version);
  role = await rename(trx, role, readDisplayName(body.displayName));
  const wanted = await readMembers(trx, body.members);
  const have = new Set(role.members.map((m) => m.value));
  const want = new Set(wanted);
  await setMembers(
    trx,
    actor.tenantId,
    actor.userId,
    role,
    wanted.filter((m) => !have.has(m)),
    [...have].filter((m) => !want.has(m)),
  );
  return (await findGroup(trx, id)) as GroupRow;
}

export async function patchScimGroup(trx: Trx, actor: Actor, id: string, ops: PatchOperation[], ifMatch?: string): Promise<GroupRow> {
  let role = await findGroup(trx, id, true);
  if (!role) throw groupNotFound(id);
  checkIfMatch(ifMatch, role.version);
  const members = new Set(role.members.map((m) => m.value));
  const apply = async (op: PatchOperation['op'], path: string | null, value: unknown): Promise<void> => {
    if (path === null) {
      if (op === 'remove') throw scimError(400, 'noTarget', 'A remove operation needs a path.');
      if (!isObject(value)) throw invalidValue(`An ${op} without a path needs an object value.`);
      checkGroupAttributes(value);
      for (const [k, v] of Object.entries(value)) if (!['schemas', 'id', 'meta'].includes(k.toLowerCase())) await apply(op, k, v);
      return;
    }
    const pp = parsePatchPath(path);
    const attr = pp.path.attr;
    if (pp.path.schema && pp.path.schema !== CORE_GROUP) throw scimError(400, 'invalidPath', `"${path}" names no attribute of a Group.`);
    if (attr === 'externalid') return; // accepted, not kept
    if (attr === 'id' || attr === 'meta') throw scimError(400, 'mutability', `${attr} is read-only.`);
    if (attr === 'displayname' && !pp.filter && !pp.path.sub) {
      if (op === 'remove') throw scimError(400, 'mutability', 'displayName is required; it cannot be removed.');
      role = await rename(trx, role as GroupRow, readDisplayName(value));
      return;
    }
    if (attr !== 'members' || pp.path.sub || pp.subAfterFilter) throw scimError(400, 'invalidPath', `"${path}" names no attribute of a Group that can change.`);
    if (pp.filter) {
      if (op !== 'remove') throw scimError(400, 'invalidPath', 'A members value filter only selects members to remove.');
      const filter = pp.filter;
      for (const m of [...members]) if (matches({ value: m, type: 'User' }, filter)) members.delete(m);
      return;
    }
    if (op === 'remove') {
      if (value === undefined || value === null) members.clear();
      else for (const m of await readMembers(trx, value)) members.delete(m);
      return;
    }
    const listed = await readMembers(trx, value);
    if (op === 'replace') members.clear();
    for (const m of listed) members.add(m);
  };
  for (const op of ops) await apply(op.op, op.path, op.value);
  if (members.size > MAX_MEMBERS_PER_REQUEST + (role as GroupRow).members.length) throw invalidValue('Too many members.');
  const had = new Set((role as GroupRow).members.map((m) => m.value));
  await setMembers(
    trx,
    actor.tenantId,
    actor.userId,
    role as GroupRow,
    [...members].filter((m) => !had.has(m)),
    [...had].filter((m) => !members.has(m)),
  );
  return (await findGroup(trx, id)) as GroupRow;
}

export async function deleteScimGroup(trx: Trx, actor: Actor, id: string, ifMatch?: string): Promise<void> {
  const role = await findGroup(trx, id, true);
  if (!role) throw groupNotFound(id);
  checkIfMatch(ifMatch, role.version);
  if (BUILT_IN.has(role.name.toLowerCase())) throw scimError(400, 'mutability', `${role.name} is a built-in role; it cannot be deleted.`);
  // Members lose the role one by one first, so each loss is an event like any other.
  await setMembers(
    trx,
    actor.tenantId,
    actor.userId,
    role,
    [],
    role.members.map((m) => m.value),
  );
  await sql`delete from roles where id = ${role.id}`.execute(trx);
}
