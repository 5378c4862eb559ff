// DevExtreme filter expressions -> one SQL boolean over the output columns of a named query (the
// subquery `q`). Values are always bound parameters; identifiers come only from the query's columns.
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import { badRequest, type FieldError, FieldErrorList, moreErrors } from '../../platform/errors.ts';
import type { CatalogueColumn, ColumnType } from '../definition.ts';
import { convertValue, type DateValue, nextDayInstant } from './values.ts';

/** Operations per data type, the first being the default (spec table; guid: equality and text matching). */
export const OPERATIONS: Record<ColumnType, readonly string[]> = {
  string: ['contains', 'notcontains', 'startswith', 'endswith', '=', '<>', 'isblank', 'isnotblank'],
  guid: ['=', '<>', 'contains', 'notcontains', 'startswith', 'endswith', 'isblank', 'isnotblank'],
  decimal: ['=', '<>', '<', '>', '<=', '>=', 'between', 'isblank', 'isnotblank'],
  integer: ['=', '<>', '<', '>', '<=', '>=', 'between', 'isblank', 'isnotblank'],
  date: ['=', '<>', '<', '>', '<=', '>=', 'between', 'isblank', 'isnotblank'],
  datetime: ['=', '<>', '<', '>', '<=', '>=', 'between', 'isblank', 'isnotblank'],
  boolean: ['=', '<>', 'isblank', 'isnotblank'],
  object: ['isblank', 'isnotblank'],
};

const NO_VALUE = new Set(['isblank', 'isnotblank']);
const MAX_DEPTH = 32;
const MAX_CONDITIONS = 500;

export type Bool = RawBuilder<SqlBool>;

/** The columns a filter may name, looked up exactly first, then ignoring case. */
export class FieldSet {
  readonly columns: CatalogueColumn[];
  readonly #exact = new Map<string, CatalogueColumn>();
  readonly #folded = new Map<string, CatalogueColumn>();
  /** When given, every column looked up is added to it: the columns a plan's conditions and order read. */
  readonly #used: Set<string> | undefined;
  constructor(columns: CatalogueColumn[], used?: Set<string>) {
    this.columns = columns;
    this.#used = used;
    for (const c of columns) {
      this.#exact.set(c.name, c);
      if (!this.#folded.has(c.name.toLowerCase())) this.#folded.set(c.name.toLowerCase(), c);
    }
  }
  get(name: unknown): CatalogueColumn | undefined {
    if (typeof name !== 'string') return undefined;
    const c = this.#exact.get(name) ?? this.#folded.get(name.toLowerCase());
    if (c) this.#used?.add(c.name);
    return c;
  }
  unknownField(name: unknown, path: string): FieldError {
    return { path, message: `unknown field ${JSON.stringify(name)}; valid fields: ${this.columns.map((c) => c.name).join(', ')}` };
  }
}

const col = (c: CatalogueColumn) => sql.id('q', c.name);
const escapeLike = (s: string) => s.replace(/[\\%_]/g, '\\$&');

/** Compiles `filters`; every problem is collected and answered as one 400 with a path per error. */
export function compileFilter(filters: unknown, fields: FieldSet, path = '/queryBuilder/filters'): Bool | null {
  const errors = new FieldErrorList();
  const state = { count: 0 };
  const result = walk(filters, fields, path, errors, 0, state);
  if (errors.length) throw badRequest(`The filter is invalid: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}${moreErrors(errors)}`, errors);
  return result;
}

function walk(node: unknown, fields: FieldSet, path: string, errors: FieldError[], depth: number, state: { count: number }): Bool | null {
  if (depth > MAX_DEPTH) {
    errors.push({ path, message: `filters are nested deeper than ${MAX_DEPTH} levels` });
    return null;
  }
  if (!Array.isArray(node)) {
    errors.push({ path, message: 'must be an array: [field, operation, value], ["!", expression] or expressions joined by "and" / "or"' });
    return null;
  }
  if (node.length === 0) return null;
  if (node[0] === '!') {
    if (node.length !== 2) {
      errors.push({ path, message: 'a negation is ["!", expression]' });
      return null;
    }
    const inner = walk(node[1], fields, `${path}/1`, errors, depth + 1, state);
    // Conditions are two-valued (null never leaks out of a leaf), so NOT of "a > 5" keeps rows where a is null.
    return inner ? sql<SqlBool>`not coalesce(${inner}, false)` : null;
  }
  const leadingJoiner = typeof node[0] === 'string' && /^(and|or)$/i.test(node[0]) && Array.isArray(node[1]);
  if (typeof node[0] === 'string' && !leadingJoiner) {
    if (++state.count > MAX_CONDITIONS) {
      if (state.count === MAX_CONDITIONS + 1) errors.push({ path, message: `a filter may hold at most ${MAX_CONDITIONS} conditions` });
      return null;
    }
    return condition(node, fields, path, errors);
  }
  // A group: expressions joined by "and" / "or"; adjacent expressions without a joiner are ANDed.
  const parts: Bool[] = [];
  const joiners = new Set<string>();
  let expectExpression = true;
  let ok = true;
  node.forEach((item, i) => {
    if (typeof item === 'string') {
      const j = item.toLowerCase();
      if (j !== 'and' && j !== 'or') {
        errors.push({ path: `${path}/${i}`, message: `unknown joiner ${JSON.stringify(item)}; use "and" or "or"` });
        ok = false;
      } else if (expectExpression) {
        errors.push({ path: `${path}/${i}`, message: `"${item}" must stand between two expressions` });
        ok = false;
      } else joiners.add(j);
      expectExpression = true;
      return;
    }
    if (!expectExpression) joiners.add('and');
    expectExpression = false;
    const compiled = walk(item, fields, `${path}/${i}`, errors, depth + 1, state);
    if (compiled) parts.push(compiled);
  });
  if (expectExpression && node.length > 0 && ok) {
    errors.push({ path: `${path}/${node.length - 1}`, message: 'a joiner must be followed by an expression' });
  }
  if (joiners.size > 1) {
    errors.push({ path, message: 'mixes "and" and "or" in one group; nest the expressions to say which binds first, e.g. [[a, "and", b], "or", c]' });
    return null;
  }
  if (parts.length === 0) return null;
  if (parts.length === 1) return parts[0];
  return sql<SqlBool>`(${sql.join(parts, joiners.has('or') ? sql` or ` : sql` and `)})`;
}

function condition(node: unknown[], fields: FieldSet, path: string, errors: FieldError[]): Bool | null {
  let op: string;
  let value: unknown;
  if (node.length === 3 && typeof node[1] === 'string') [op, value] = [node[1], node[2]];
  else if (node.length === 2 && typeof node[1] === 'string' && NO_VALUE.has(node[1].toLowerCase())) op = node[1];
  else if (node.length === 2 && !Array.isArray(node[1])) [op, value] = ['=', node[1]];
  else {
    errors.push({ path, message: 'a condition is [field, operation, value] or [field, value]' });
    return null;
  }
  const column = fields.get(node[0]);
  if (!column) {
    errors.push(fields.unknownField(node[0], `${path}/0`));
    return null;
  }
  return compileCondition(column, op, value, path, errors);
}

/** One condition on one column; also used for the named parameters (ModifiedFrom: >=, To: <=, others: =). */
export function compileCondition(column: CatalogueColumn, opGiven: string, value: unknown, path: string, errors: FieldError[]): Bool | null {
  const op = opGiven.toLowerCase();
  const allowed = OPERATIONS[column.type];
  if (!allowed.includes(op)) {
    errors.push({
      path: `${path}/1`,
      message: `operation ${JSON.stringify(opGiven)} is not allowed on field ${column.name} of type ${column.type}; allowed: ${allowed.join(', ')}`,
    });
    return null;
  }
  const c = col(column);
  if (op === 'isblank') return column.type === 'string' ? sql<SqlBool>`(${c} is null or ${c} = '')` : sql<SqlBool>`(${c} is null)`;
  if (op === 'isnotblank') return column.type === 'string' ? sql<SqlBool>`(${c} is not null and ${c} <> '')` : sql<SqlBool>`(${c} is not null)`;
  if (value === null && (op === '=' || op === '<>')) return op === '=' ? sql<SqlBool>`(${c} is null)` : sql<SqlBool>`(${c} is not null)`;
  if (op === 'between') {
    if (!Array.isArray(value) || value.length !== 2) {
      errors.push({ path: `${path}/2`, message: 'between takes [from, to]; a null bound leaves that side open' });
      return null;
    }
    const parts: Bool[] = [];
    for (const [i, bound] of value.entries()) {
      if (bound === null || bound === undefined) continue;
      const piece = compare(column, i === 0 ? '>=' : '<=', bound, `${path}/2/${i}`, errors);
      if (piece) parts.push(piece);
    }
    return parts.length ? sql<SqlBool>`(${sql.join(parts, sql` and `)})` : sql<SqlBool>`(${c} is not null)`;
  }
  return compare(column, op, value, `${path}/2`, errors);
}

function compare(column: CatalogueColumn, op: string, raw: unknown, path: string, errors: FieldError[]): Bool | null {
  const converted = convertValue(column.type, raw, op);
  if (!converted.ok) {
    errors.push({ path, message: `${JSON.stringify(raw)} is not a valid ${column.type} for field ${column.name}: ${converted.message}` });
    return null;
  }
  const c = col(column);
  const v = converted.value;
  switch (column.type) {
    case 'string':
    case 'guid':
      return text(column, op, v as string);
    case 'decimal':
    case 'integer': {
      const num = column.type === 'integer' && /^[+-]?\d{1,18}$/.test(v as string) ? sql`${v}::bigint` : sql`${v}::numeric`;
      return ordered(c, op, num);
    }
    case 'boolean':
      return op === '=' ? sql<SqlBool>`(${c} = ${v})` : sql<SqlBool>`(${c} is distinct from ${v})`;
    case 'date':
      return ordered(c, op, sql`${(v as DateValue).date}::date`);
    case 'datetime': {
      const d = v as DateValue;
      if (d.hasTime) return ordered(c, op, sql`${d.instant}::timestamptz`);
      // A bare date against a datetime means that whole UTC day.
      const start = sql`${`${d.date}T00:00:00.000Z`}::timestamptz`;
      const end = sql`${nextDayInstant(d.date)}::timestamptz`;
      if (op === '=') return sql<SqlBool>`(${c} >= ${start} and ${c} < ${end})`;
      if (op === '<>') return sql<SqlBool>`(${c} is null or ${c} < ${start} or ${c} >= ${end})`;
      if (op === '<') return sql<SqlBool>`(${c} < ${start})`;
      if (op === '<=') return sql<SqlBool>`(${c} < ${end})`;
      if (op === '>') return sql<SqlBool>`(${c} >= ${end})`;
      return sql<SqlBool>`(${c} >= ${start})`;
    }
    default:
      return null;
  }
}

function ordered(c: RawBuilder<unknown>, op: string, v: RawBuilder<unknown>): Bool {
  switch (op) {
    case '=':
      return sql<SqlBool>`(${c} = ${v})`;
    case '<>':
      return sql<SqlBool>`(${c} is null or ${c} <> ${v})`;
    case '<':
      return sql<SqlBool>`(${c} < ${v})`;
    case '>':
      return sql<SqlBool>`(${c} > ${v})`;
    case '<=':
      return sql<SqlBool>`(${c} <= ${v})`;
    default:
      return sql<SqlBool>`(${c} >= ${v})`;
  }
}

/** Case-insensitive text operations; ILIKE so a trigram index can serve contains. */
function text(column: CatalogueColumn, op: string, v: string): Bool {
  const isGuid = column.type === 'guid';
  const c = isGuid ? sql`${col(column)}::text` : col(column);
  if (isGuid && (op === '=' || op === '<>')) {
    const g = sql`${v}::uuid`;
    return op === '=' ? sql<SqlBool>`(${col(column)} = ${g})` : sql<SqlBool>`(${col(column)} is null or ${col(column)} <> ${g})`;
  }
  switch (op) {
    case 'contains':
      return sql<SqlBool>`(${c} ilike ${`%${escapeLike(v)}%`})`;
    case 'notcontains':
      return sql<SqlBool>`(${c} is null or ${c} not ilike ${`%${escapeLike(v)}%`})`;
    case 'startswith':
      return sql<SqlBool>`(${c} ilike ${`${escapeLike(v)}%`})`;
    case 'endswith':
      return sql<SqlBool>`(${c} ilike ${`%${escapeLike(v)}`})`;
    case '=':
      return sql<SqlBool>`(lower(${c}) = lower(${v}))`;
    default:
      return sql<SqlBool>`(${c} is null or lower(${c}) <> lower(${v}))`;
  }
}
