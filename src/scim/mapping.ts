// SCIM resources and Atrium's values: a body read into the canonical form (attribute names as the schema
// spells them, every value checked against its definition, unknown attributes refused), the canonical form
// mapped to what the Integration API writes, and a stored user answered as a SCIM User. The mapping table
// is docs/scim.md's.
import { scimError } from './errors.ts';
import { parseAttrPath } from './filter.ts';
import { type AttrDef, attrOf, CORE_USER, ENTERPRISE_ATTRIBUTES, ENTERPRISE_USER, LIMITS, USER_ATTRIBUTES } from './schemas.ts';

export type Doc = Record<string, unknown>;

const invalidValue = (detail: string) => scimError(400, 'invalidValue', detail);
const isObject = (v: unknown): v is Doc => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A boolean, or the strings "true"/"false" in any case (Entra ID sends "False"). */
export function readBoolean(v: unknown, where: string): boolean {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'string' && /^(true|false)$/i.test(v.trim())) return v.trim().toLowerCase() === 'true';
  throw invalidValue(`${where} must be true or false`);
}

function readScalar(def: AttrDef, v: unknown, where: string): unknown {
  if (v === null) return null;
  if (def.type === 'boolean') return readBoolean(v, where);
  if (typeof v !== 'string') throw invalidValue(`${where} must be a string`);
  if (v.length > LIMITS.maxStringLength) throw invalidValue(`${where} is longer than ${LIMITS.maxStringLength} characters`);
  return v;
}

function readComplex(def: AttrDef, v: unknown, where: string): Doc | null {
  if (v === null) return null;
  // A bare value for a complex attribute with a value sub-attribute (Entra ID's manager: "id").
  if (!isObject(v)) {
    if (def.subAttributes?.some((s) => s.name === 'value')) return readComplex(def, { value: v }, where);
    throw invalidValue(`${where} must be an object`);
  }
  const out: Doc = {};
  for (const [key, value] of Object.entries(v)) {
    const sub = attrOf(def.subAttributes ?? [], key);
    if (!sub) throw invalidValue(`${where}.${key} is not an attribute of ${def.name}`);
    if (sub.mutability === 'writeOnly' && sub.returned === 'never' && sub.name !== 'password') continue;
    if (sub.mutability === 'readOnly') continue;
    out[sub.name] = readScalar(sub, value, `${where}.${sub.name}`);
  }
  return out;
}

/** One attribute's value checked against its definition; undefined when it is accepted but not kept. */
export function readAttribute(def: AttrDef, v: unknown, where: string): unknown {
  if (def.mutability === 'writeOnly' && def.returned === 'never' && def.name !== 'password') return undefined;
  if (def.mutability === 'readOnly') return undefined;
  if (def.multiValued) {
    if (v === null) return [];
    if (!Array.isArray(v)) throw invalidValue(`${where} must be an array`);
    const list = v;
    if (list.length > LIMITS.maxMultiValues) throw invalidValue(`${where} has more than ${LIMITS.maxMultiValues} values`);
    return list.map((item, i) => (def.type === 'complex' ? readComplex(def, item, `${where}[${i}]`) : readScalar(def, item, `${where}[${i}]`)));
  }
  return def.type === 'complex' ? readComplex(def, v, where) : readScalar(def, v, where);
}

/** The definition of a User attribute path (core or enterprise), or null. */
export function userAttribute(schema: string | null, attr: string): { def: AttrDef; enterprise: boolean } | null {
  if (schema !== ENTERPRISE_USER) {
    const def = attrOf(USER_ATTRIBUTES, attr);
    if (def) return { def, enterprise: false };
    if (schema === CORE_USER) return null;
  }
  const def = attrOf(ENTERPRISE_ATTRIBUTES, attr);
  return def ? { def, enterprise: true } : null;
}

/**
 * A User body (POST, PUT, or the result of PATCH) in canonical form: core attributes at the top, the
 * enterprise extension under its URN. Read-only attributes are ignored (RFC 7643 §2.2), attributes
 * accepted but not kept are dropped, anything else unknown is an invalidValue naming it.
 */
export function readUser(body: unknown): Doc {
  if (!isObject(body)) throw scimError(400, 'invalidSyntax', 'The body must be a JSON object (a SCIM User).');
  const doc: Doc = {};
  const enterprise: Doc = {};
  for (const [key, value] of Object.entries(body)) {
    const lower = key.toLowerCase();
    if (lower === 'schemas') {
      if (!Array.isArray(value) || value.some((s) => typeof s !== 'string')) throw invalidValue('schemas must be an array of schema URIs');
      continue;
    }
    if (lower === 'meta' || lower === 'id') continue;
    if (lower === ENTERPRISE_USER.toLowerCase()) {
      if (!isObject(value)) throw invalidValue(`${ENTERPRISE_USER} must be an object`);
      for (const [k, v] of Object.entries(value)) {
        const def = attrOf(ENTERPRISE_ATTRIBUTES, k);
        if (!def) throw invalidValue(`"${k}" is not an attribute of the enterprise extension`);
        const read = readAttribute(def, v, def.name);
        if (read !== undefined) enterprise[def.name] = read;
      }
      continue;
    }
    const path = parseAttrPath(key);
    const found = path?.attr ? userAttribute(path.schema, path.attr) : null;
    if (!path || !found) throw invalidValue(`"${key}" is not an attribute of a User`);
    const target = found.enterprise ? enterprise : doc;
    if (path.sub) {
      const sub = attrOf(found.def.subAttributes ?? [], path.sub);
      if (!sub || found.def.multiValued) throw invalidValue(`"${key}" is not an attribute of a User`);
      const read = readScalar(sub, value, `${found.def.name}.${sub.name}`);
      const parent = isObject(target[found.def.name]) ? (target[found.def.name] as Doc) : {};
      if (!(sub.mutability === 'writeOnly' && sub.returned === 'never')) parent[sub.name] = read;
      target[found.def.name] = parent;
      continue;
    }
    const read = readAttribute(found.def, value, found.def.name);
    if (read !== undefined) target[found.def.name] = read;
  }
  if (Object.keys(enterprise).length) doc[ENTERPRISE_USER] = enterprise;
  return doc;
}

/** What a User says, in Atrium's terms. null clears; the service resolves the references. */
export interface DesiredUser {
  userName: string;
  externalId: string | null;
  name: string | null;
  givenName: string | null;
  familyName: string | null;
  mail: string | null;
  phone: string | null;
  active: boolean;
  password: string | null;
  userType: string | null;
  title: string | null;
  employeeNumber: string | null;
  department: string | null;
  organization: string | null;
  managerId: string | null;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v.trim() : null);

type Value = { value?: unknown; type?: unknown; primary?: unknown };

function pick(values: unknown, prefer: 'primary' | 'work'): string | null {
  if (!Array.isArray(values)) return null;
  const list = values.filter((v): v is Value => isObject(v) && str(v.value) !== null);
  const primary = list.find((v) => v.primary === true);
  const work = list.find((v) => typeof v.type === 'string' && v.type.toLowerCase() === 'work');
  const chosen = prefer === 'primary' ? (primary ?? work ?? list[0]) : (work ?? primary ?? list[0]);
  return chosen ? str(chosen.value) : null;
}

export function desiredUser(doc: Doc): DesiredUser {
  const userName = str(doc.userName);
  if (!userName) throw invalidValue('userName is required');
  const name = isObject(doc.name) ? doc.name : {};
  const ent = isObject(doc[ENTERPRISE_USER]) ? (doc[ENTERPRISE_USER] as Doc) : {};
  const givenName = str(name.givenName);
  const familyName = str(name.familyName);
  const joined = [givenName, familyName].filter(Boolean).join(' ');
  const manager = isObject(ent.manager) ? str(ent.manager.value) : null;
  return {
    userName,
    externalId: str(doc.externalId),
    name: str(name.formatted) ?? (joined || null) ?? str(doc.displayName),
    givenName,
    familyName,
    mail: pick(doc.emails, 'primary'),
    phone: pick(doc.phoneNumbers, 'work'),
    active: doc.active === undefined || doc.active === null ? true : (doc.active as boolean),
    password: str(doc.password),
    userType: str(doc.userType),
    title: str(doc.title),
    employeeNumber: str(ent.employeeNumber),
    department: str(ent.department),
    organization: str(ent.organization),
    managerId: manager,
  };
}

/** A user row as the SCIM query selects it. */
export interface UserRow {
  id: string;
  user_name: string;
  name: string | null;
  email: string | null;
  phone: string | null;
  is_active: boolean;
  external_id: string | null;
  external_number: string | null;
  sso_user_name: string | null;
  expiration_date: string | null;
  given_name: string | null;
  family_name: string | null;
  user_type: string | null;
  title: string | null;
  department: string | null;
  organization: string | null;
  responsible_id: string | null;
  manager_name: string | null;
  groups: { value: string; display: string }[];
  created_on_utc: string;
  modified_on_utc: string;
  version: string;
}

const drop = (o: Doc): Doc => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined));

/** The SCIM User of a stored user; `base` is the service's address (…/scim/v2). */
export function scimUser(row: UserRow, base: string): Doc {
  const enterprise = drop({
    employeeNumber: row.external_number,
    department: row.department,
    organization: row.organization,
    manager: row.responsible_id ? drop({ value: row.responsible_id, $ref: `${base}/Users/${row.responsible_id}`, displayName: row.manager_name }) : null,
  });
  return drop({
    schemas: [CORE_USER, ENTERPRISE_USER],
    id: row.id,
    externalId: row.external_id,
    userName: row.user_name,
    name: drop({ formatted: row.name, givenName: row.given_name, familyName: row.family_name }),
    displayName: row.name,
    title: row.title,
    userType: row.user_type,
    active: row.is_active,
    emails: row.email ? [{ value: row.email, type: 'work', primary: true }] : null,
    phoneNumbers: row.phone ? [{ value: row.phone, type: 'work', primary: true }] : null,
    groups: row.groups.length ? row.groups.map((g) => ({ ...g, $ref: `${base}/Groups/${g.value}`, type: 'direct' })) : null,
    [ENTERPRISE_USER]: Object.keys(enterprise).length ? enterprise : null,
    meta: {
      resourceType: 'User',
      created: new Date(row.created_on_utc).toISOString(),
      lastModified: new Date(row.modified_on_utc).toISOString(),
      location: `${base}/Users/${row.id}`,
      version: row.version,
    },
  });
}

/** The writable part of a SCIM User (what PATCH operations start from). */
export function writableUser(row: UserRow): Doc {
  const full = scimUser(row, '');
  const { id: _id, meta: _meta, groups: _groups, schemas: _schemas, ...rest } = full;
  return JSON.parse(JSON.stringify(rest)) as Doc;
}

/** attributes / excludedAttributes (RFC 7644 §3.4.2.5): comma-separated attribute paths. */
export function readAttributeList(text: string | undefined, param: string): string[] | null {
  if (text === undefined || text.trim() === '') return null;
  const list = text.split(',').map((s) => s.trim());
  if (list.length > LIMITS.maxAttributesListed) throw invalidValue(`${param} names more than ${LIMITS.maxAttributesListed} attributes`);
  for (const a of list) if (!parseAttrPath(a)) throw invalidValue(`${param}: "${a}" is not an attribute path`);
  return list;
}

const ALWAYS = new Set(['id', 'schemas']);

function keyOf(o: Doc, name: string): string | undefined {
  const lower = name.toLowerCase();
  return Object.keys(o).find((k) => k.toLowerCase() === lower);
}

/** The resource with only the attributes asked for (id and schemas always), or without the excluded ones. */
export function project(resource: Doc, attributes: string[] | null, excluded: string[] | null): Doc {
  if (attributes) {
    const out: Doc = {};
    for (const k of Object.keys(resource)) if (ALWAYS.has(k)) out[k] = resource[k];
    for (const a of attributes) {
      const p = parseAttrPath(a);
      if (!p) continue;
      let source: Doc = resource;
      let target: Doc = out;
      if (p.schema && p.schema !== CORE_USER && p.schema !== resourceSchema(resource)) {
        const ext = resource[p.schema];
        if (!isObject(ext)) continue;
        if (!p.attr) {
          out[p.schema] = ext;
          continue;
        }
        source = ext;
        if (!keyOf(ext, p.attr)) continue;
        target = (out[p.schema] as Doc) ?? {};
        out[p.schema] = target;
      }
      const key = keyOf(source, p.attr);
      if (!key) continue;
      if (!p.sub) target[key] = source[key];
      else if (isObject(source[key])) {
        const sub = keyOf(source[key] as Doc, p.sub);
        if (sub) target[key] = { ...((target[key] as Doc) ?? {}), [sub]: (source[key] as Doc)[sub] };
      } else if (Array.isArray(source[key])) {
        target[key] = (source[key] as Doc[]).map((item) => {
          const sub = isObject(item) ? keyOf(item, p.sub as string) : undefined;
          return sub ? { [sub]: item[sub] } : {};
        });
      }
    }
    return out;
  }
  if (excluded) {
    const out: Doc = JSON.parse(JSON.stringify(resource)) as Doc;
    for (const a of excluded) {
      const p = parseAttrPath(a);
      if (!p) continue;
      let target: Doc = out;
      if (p.schema && p.schema !== resourceSchema(resource) && p.schema !== CORE_USER) {
        if (!p.attr) {
          delete out[p.schema];
          continue;
        }
        if (!isObject(out[p.schema])) continue;
        target = out[p.schema] as Doc;
      }
      const key = keyOf(target, p.attr);
      if (!key || ALWAYS.has(key)) continue;
      if (!p.sub) delete target[key];
      else if (isObject(target[key])) {
        const sub = keyOf(target[key] as Doc, p.sub);
        if (sub) delete (target[key] as Doc)[sub];
      }
    }
    return out;
  }
  return resource;
}

const resourceSchema = (resource: Doc): string | undefined => (Array.isArray(resource.schemas) ? (resource.schemas[0] as string) : undefined);
