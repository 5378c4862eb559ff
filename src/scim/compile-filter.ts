// SCIM filters to SQL: each attribute path a resource exposes is looked up in that resource's catalogue of
// SQL expressions (written here, never taken from the request), and every value is a bound parameter.
// Strings compare case-insensitively unless the attribute is caseExact, as RFC 7643 says; `co`, `sw` and
// `ew` use strpos/starts_with/right rather than LIKE, so no value needs escaping and matching is linear.
import { type RawBuilder, sql } from 'kysely';
import { isUuid } from '../platform/db/database.ts';
import { scimError } from './errors.ts';
import type { AttrPath, CompareOp, Filter, Literal } from './filter.ts';
import { CORE_GROUP, CORE_USER, ENTERPRISE_USER } from './schemas.ts';

type Sql = RawBuilder<unknown>;
type ColumnType = 'string' | 'boolean' | 'dateTime' | 'uuid';

interface Column {
  expr: Sql;
  type: ColumnType;
  caseExact?: boolean;
  /** A multi-valued attribute kept in another table: the comparison runs inside this EXISTS. */
  related?: (condition: Sql) => Sql;
}

/** Attribute paths (`attr` or `attr.sub`, lowercase) of one schema. */
type SchemaColumns = Record<string, Column>;

export interface Catalogue {
  /** The schemas in the order an unqualified path is looked up. */
  schemas: [string, SchemaColumns][];
  /** Multi-valued attributes whose bare name means their `value` (emails eq "x"). */
  multiValued: Set<string>;
}

const invalid = (detail: string) => scimError(400, 'invalidFilter', detail);
const raw = (text: string): Sql => sql.raw(text);

const roleExists = (condition: Sql): Sql =>
  sql`exists (select 1 from user_roles ur join roles r2 on r2.id = ur.role_id where ur.user_id = u.id and ${condition})`;
const memberExists = (condition: Sql): Sql =>
  sql`exists (select 1 from user_roles ur join users mu on mu.id = ur.user_id where ur.role_id = r.id and ${condition})`;

/** Users: the query's aliases are u (users), c (companies), d (departments), ty (typologies), ut (user types), s (scim_users). */
export const USER_CATALOGUE: Catalogue = {
  schemas: [
    [
      CORE_USER,
      {
        id: { expr: raw('u.id'), type: 'uuid' },
        externalid: { expr: raw('u.external_id'), type: 'string', caseExact: true },
        username: { expr: raw('u.user_name'), type: 'string' },
        displayname: { expr: raw('u.name'), type: 'string' },
        'name.formatted': { expr: raw('u.name'), type: 'string' },
        'name.givenname': { expr: raw('s.given_name'), type: 'string' },
        'name.familyname': { expr: raw('s.family_name'), type: 'string' },
        title: { expr: raw('ty.name'), type: 'string' },
        usertype: { expr: raw('ut.name'), type: 'string' },
        active: { expr: raw('u.is_active'), type: 'boolean' },
        'emails.value': { expr: raw('u.email'), type: 'string' },
        'emails.type': { expr: raw("(case when u.email is not null then 'work' end)"), type: 'string' },
        'emails.primary': { expr: raw('(case when u.email is not null then true end)'), type: 'boolean' },
        'phonenumbers.value': { expr: raw('u.phone'), type: 'string' },
        'phonenumbers.type': { expr: raw("(case when u.phone is not null then 'work' end)"), type: 'string' },
        'phonenumbers.primary': { expr: raw('(case when u.phone is not null then true end)'), type: 'boolean' },
        'groups.value': { expr: raw('r2.id'), type: 'uuid', related: roleExists },
        'groups.display': { expr: raw('r2.name'), type: 'string', related: roleExists },
        'meta.created': { expr: raw('u.created_on_utc'), type: 'dateTime' },
        'meta.lastmodified': { expr: raw('u.modified_on_utc'), type: 'dateTime' },
      },
    ],
    [
      ENTERPRISE_USER,
      {
        employeenumber: { expr: raw('u.external_number'), type: 'string' },
        department: { expr: raw('d.name'), type: 'string' },
        organization: { expr: raw('c.name'), type: 'string' },
        'manager.value': { expr: raw('u.responsible_id'), type: 'uuid' },
      },
    ],
  ],
  multiValued: new Set(['emails', 'phonenumbers', 'groups']),
};

/** Groups (roles): alias r. */
export const GROUP_CATALOGUE: Catalogue = {
  schemas: [
    [
      CORE_GROUP,
      {
        id: { expr: raw('r.id'), type: 'uuid' },
        displayname: { expr: raw('r.name'), type: 'string' },
        'members.value': { expr: raw('mu.id'), type: 'uuid', related: memberExists },
        'members.display': { expr: raw('mu.name'), type: 'string', related: memberExists },
        'meta.created': { expr: raw('r.created_on_utc'), type: 'dateTime' },
      },
    ],
  ],
  multiValued: new Set(['members']),
};

/** The column of an attribute path, or the invalidFilter error naming it. */
export function columnOf(cat: Catalogue, path: AttrPath, within: string | null = null): Column {
  const attr = within ?? path.attr;
  const sub = within ? path.attr + (path.sub ? `.${path.sub}` : '') : path.sub;
  let key = sub ? `${attr}.${sub}` : attr;
  if (!sub && cat.multiValued.has(attr)) key = `${attr}.value`;
  for (const [schema, columns] of cat.schemas) {
    if (path.schema && path.schema !== schema) continue;
    const column = columns[key];
    if (column) return column;
  }
  const shown = (path.schema ? `${path.schema}:` : '') + key;
  throw invalid(`"${shown}" is not an attribute this resource can be filtered or sorted on`);
}

function compare(column: Column, op: CompareOp, value: Literal, shown: string): Sql {
  const { expr, type } = column;
  if (value === null) {
    if (op === 'eq') return sql`${expr} is null`;
    if (op === 'ne') return sql`${expr} is not null`;
    throw invalid(`${shown} ${op} null: null compares only with eq and ne`);
  }
  if (type === 'boolean') {
    if (typeof value !== 'boolean' || (op !== 'eq' && op !== 'ne')) throw invalid(`${shown} is a boolean: it compares with eq or ne and true or false`);
    return op === 'eq' ? sql`coalesce(${expr}, false) = ${value}` : sql`coalesce(${expr}, false) <> ${value}`;
  }
  if (typeof value !== 'string') throw invalid(`${shown} is a ${type === 'dateTime' ? 'dateTime' : 'string'}: compare it with a "string"`);
  if (type === 'dateTime') {
    if (op === 'co' || op === 'sw' || op === 'ew') throw invalid(`${shown} is a dateTime: ${op} does not apply`);
    if (Number.isNaN(Date.parse(value))) throw invalid(`"${value}" is not a dateTime (${shown})`);
    return ordered(op, expr, sql`${value}::timestamptz`);
  }
  if (type === 'uuid' && (op === 'eq' || op === 'ne')) {
    if (!isUuid(value)) return op === 'eq' ? sql`false` : sql`${expr} is not null`;
    return op === 'eq' ? sql`${expr} = ${value.toLowerCase()}::uuid` : sql`${expr} is distinct from ${value.toLowerCase()}::uuid`;
  }
  const exact = column.caseExact || type === 'uuid';
  const left = type === 'uuid' ? sql`${expr}::text` : exact ? expr : sql`lower(${expr})`;
  const right = exact ? sql`${type === 'uuid' ? value.toLowerCase() : value}::text` : sql`lower(${value}::text)`;
  switch (op) {
    case 'eq':
      return sql`${left} = ${right}`;
    case 'ne':
      return sql`${left} is distinct from ${right}`;
    case 'co':
      return sql`strpos(${left}, ${right}) > 0`;
    case 'sw':
      return sql`starts_with(${left}, ${right})`;
    case 'ew':
      return sql`right(${left}, char_length(${right})) = ${right}`;
    default:
      return ordered(op, left, right);
  }
}

function ordered(op: CompareOp, left: Sql, right: Sql): Sql {
  switch (op) {
    case 'eq':
      return sql`${left} = ${right}`;
    case 'ne':
      return sql`${left} is distinct from ${right}`;
    case 'gt':
      return sql`${left} > ${right}`;
    case 'ge':
      return sql`${left} >= ${right}`;
    case 'lt':
      return sql`${left} < ${right}`;
    default:
      return sql`${left} <= ${right}`;
  }
}

const shownPath = (p: AttrPath, within: string | null): string => [within, p.attr, p.sub].filter(Boolean).join('.');

/**
 * The filter as a SQL condition. `within` is the multi-valued attribute a value filter is inside
 * (emails[type eq "work"]): its paths are that attribute's sub-attributes.
 */
export function compileFilter(cat: Catalogue, filter: Filter, within: string | null = null): Sql {
  switch (filter.kind) {
    case 'and':
      return sql`(${compileFilter(cat, filter.left, within)} and ${compileFilter(cat, filter.right, within)})`;
    case 'or':
      return sql`(${compileFilter(cat, filter.left, within)} or ${compileFilter(cat, filter.right, within)})`;
    case 'not':
      return sql`(not coalesce(${compileFilter(cat, filter.filter, within)}, false))`;
    case 'present': {
      const column = columnOf(cat, filter.path, within);
      const present = column.type === 'string' ? sql`coalesce(${column.expr}, '') <> ''` : sql`${column.expr} is not null`;
      return column.related && !within ? column.related(present) : present;
    }
    case 'compare': {
      const column = columnOf(cat, filter.path, within);
      const condition = compare(column, filter.op, filter.value, shownPath(filter.path, within));
      return column.related && !within ? column.related(condition) : condition;
    }
    case 'valuePath': {
      if (within) throw invalid('a value filter cannot be nested in another');
      const attr = filter.path.attr;
      if (!cat.multiValued.has(attr)) throw invalid(`"${attr}" is not a multi-valued attribute; [ ] does not apply`);
      const inner = compileFilter(cat, filter.filter, attr);
      // A related attribute's rows are one EXISTS; the inner condition refers to its alias.
      const sample = columnOf(cat, { schema: filter.path.schema, attr: 'value', sub: null }, attr);
      return sample.related ? sample.related(inner) : inner;
    }
  }
}

/** ORDER BY for sortBy (a single-valued attribute, or a multi-valued one's value as Users' emails). */
export function sortExpression(cat: Catalogue, path: AttrPath): Sql {
  const column = columnOf(cat, path);
  if (column.related) throw invalid(`"${shownPath(path, null)}" cannot be sorted on`);
  return column.type === 'string' && !column.caseExact ? sql`lower(${column.expr})` : column.expr;
}
