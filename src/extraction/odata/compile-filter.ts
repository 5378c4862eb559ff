// An OData $filter tree -> one SQL boolean over the named query's rows (the subquery `q`). A property
// compared with a literal goes through the query builder's compileCondition, so both feeds answer alike
// (text ignoring case, a bare date against a datetime meaning that day); other expressions (functions,
// arithmetic, property against property) compile here. Literals are always bound parameters.
import { type RawBuilder, type SqlBool, sql } from 'kysely';
import type { FieldError } from '../../platform/errors.ts';
import type { CatalogueColumn } from '../definition.ts';
import { type Bool, compileCondition, OPERATIONS } from '../query/compile-filter.ts';
import { filterError, type Node } from './parse-filter.ts';

type ValueType = 'string' | 'number' | 'boolean' | 'null' | 'date' | 'datetime' | 'guid' | 'object';
type Value = { sql: RawBuilder<unknown>; type: ValueType };

const SQL_OPS = { eq: '=', ne: '<>', gt: '>', ge: '>=', lt: '<', le: '<=' } as const;
const SWAPPED = { eq: 'eq', ne: 'ne', gt: 'lt', ge: 'le', lt: 'gt', le: 'ge' } as const;
const COLUMN_TYPES: Record<CatalogueColumn['type'], ValueType> = {
  string: 'string',
  guid: 'guid',
  decimal: 'number',
  integer: 'number',
  boolean: 'boolean',
  date: 'date',
  datetime: 'datetime',
  object: 'object',
};

/** The functions of $filter this feed compiles, for the error that names an unknown one. */
export const FILTER_FUNCTIONS = [
  'contains',
  'startswith',
  'endswith',
  'indexof',
  'length',
  'substring',
  'tolower',
  'toupper',
  'trim',
  'concat',
  'year',
  'month',
  'day',
  'hour',
  'minute',
  'second',
  'date',
  'round',
  'floor',
  'ceiling',
];

/** Compiles a parsed $filter; `property` resolves an OData property name to its column (undefined: unknown). */
export function compileODataFilter(node: Node, property: (name: string) => CatalogueColumn | undefined): Bool {
  const column = (name: string): CatalogueColumn => {
    const c = property(name);
    if (!c) throw filterError(`unknown property ${name}`);
    return c;
  };

  function bool(n: Node): Bool {
    switch (n.kind) {
      case 'logic':
        return sql<SqlBool>`(${bool(n.left)} ${n.op === 'and' ? sql`and` : sql`or`} ${bool(n.right)})`;
      case 'not':
        // Two-valued like the query builder's "!": not (Amount gt 5) keeps the rows where Amount is null.
        return sql<SqlBool>`not coalesce(${bool(n.operand)}, false)`;
      case 'compare':
        return compare(n.op, n.left, n.right);
      case 'in': {
        if (n.list.length > 500) throw filterError('in (…) takes at most 500 values');
        return sql<SqlBool>`(${sql.join(
          n.list.map((item) => compare('eq', n.left, item)),
          sql` or `,
        )})`;
      }
      case 'call':
        if (n.name === 'contains' || n.name === 'startswith' || n.name === 'endswith') return textTest(n.name, n.args);
        break;
      case 'property':
      case 'literal': {
        const v = value(n);
        if (v.type === 'boolean') return sql<SqlBool>`(${v.sql} = true)`;
        break;
      }
    }
    throw filterError('expected a condition: a comparison, a function such as contains(…), or a boolean property');
  }

  /** A property against a literal reads as the query builder reads it; everything else compiles generically. */
  function compare(op: keyof typeof SQL_OPS, left: Node, right: Node): Bool {
    if (left.kind === 'literal' && right.kind === 'property') return compare(SWAPPED[op], right, left);
    if (left.kind === 'property' && right.kind === 'literal') {
      const c = column(left.name);
      const sqlOp = SQL_OPS[op];
      if (right.type === 'null') return op === 'eq' ? sql<SqlBool>`(${sql.id('q', c.name)} is null)` : sql<SqlBool>`(${sql.id('q', c.name)} is not null)`;
      if (OPERATIONS[c.type].includes(sqlOp)) {
        const errors: FieldError[] = [];
        const condition = compileCondition(c, sqlOp, right.value, '/query/$filter', errors);
        if (!condition) throw filterError(errors.map((e) => e.message).join('; '));
        return condition;
      }
    }
    const l = value(left);
    const r = value(right);
    if (l.type === 'null' || r.type === 'null') {
      const other = l.type === 'null' ? r : l;
      if (op === 'eq') return sql<SqlBool>`(${other.sql} is null)`;
      if (op === 'ne') return sql<SqlBool>`(${other.sql} is not null)`;
      throw filterError(`null can only be compared with eq or ne`);
    }
    const [a, b] = comparable(l, r, op);
    if (op === 'ne') return sql<SqlBool>`(${a} is distinct from ${b})`;
    return sql<SqlBool>`(${a} ${sql.raw(SQL_OPS[op])} ${b})`;
  }

  /** Both sides as one SQL type; text compares ignoring case, as the platform does. */
  function comparable(l: Value, r: Value, op: string): [RawBuilder<unknown>, RawBuilder<unknown>] {
    const types = new Set([l.type, r.type]);
    if (types.has('object')) throw filterError('a property of type object can only be compared with null');
    if (types.size === 1 || (types.has('date') && types.has('datetime'))) {
      if (l.type === 'string') return [sql`${l.sql} collate atrium_ci`, sql`${r.sql} collate atrium_ci`];
      return [l.sql, r.sql];
    }
    if (types.has('guid') && types.has('string')) return [sql`${l.sql}::text collate atrium_ci`, sql`${r.sql}::text collate atrium_ci`];
    throw filterError(`cannot compare a ${l.type} with a ${r.type} (${op})`);
  }

  function textTest(fn: 'contains' | 'startswith' | 'endswith', args: Node[]): Bool {
    if (args.length !== 2) throw filterError(`${fn} takes two arguments`);
    const [target, search] = args;
    if (target.kind === 'property' && search.kind === 'literal' && search.type === 'string') {
      const c = column(target.name);
      if (OPERATIONS[c.type].includes(fn)) return compileCondition(c, fn, search.value, '/query/$filter', []) as Bool;
    }
    const s = text(value(target), fn);
    const t = text(value(search), fn);
    if (fn === 'contains') return sql<SqlBool>`(strpos(lower(${s}), lower(${t})) > 0)`;
    if (fn === 'startswith') return sql<SqlBool>`starts_with(lower(${s}), lower(${t}))`;
    return sql<SqlBool>`(right(lower(${s}), char_length(${t})) = lower(${t}))`;
  }

  function text(v: Value, fn: string): RawBuilder<unknown> {
    if (v.type === 'string') return v.sql;
    if (v.type === 'guid') return sql`${v.sql}::text`;
    throw filterError(`${fn} takes text, not a ${v.type}`);
  }
  function number(v: Value, what: string): RawBuilder<unknown> {
    if (v.type !== 'number') throw filterError(`${what} takes numbers, not a ${v.type}`);
    return v.sql;
  }

  function value(n: Node): Value {
    switch (n.kind) {
      case 'literal':
        switch (n.type) {
          case 'null':
            return { sql: sql`null`, type: 'null' };
          case 'string':
            return { sql: sql`${n.value}::text`, type: 'string' };
          case 'number':
            return { sql: sql`${n.value}::numeric`, type: 'number' };
          case 'boolean':
            return { sql: sql`${n.value}::boolean`, type: 'boolean' };
          case 'date':
            return { sql: sql`${n.value}::date`, type: 'date' };
          case 'datetime':
            return { sql: sql`${n.value}::timestamptz`, type: 'datetime' };
          default:
            return { sql: sql`${n.value}::uuid`, type: 'guid' };
        }
      case 'property': {
        const c = column(n.name);
        return { sql: sql.id('q', c.name), type: COLUMN_TYPES[c.type] };
      }
      case 'neg':
        return { sql: sql`(- ${number(value(n.operand), 'a minus sign')})`, type: 'number' };
      case 'arith': {
        const l = number(value(n.left), n.op);
        const r = number(value(n.right), n.op);
        // Division by zero answers null (no row matches) instead of failing the whole request.
        const expr =
          n.op === 'add'
            ? sql`(${l} + ${r})`
            : n.op === 'sub'
              ? sql`(${l} - ${r})`
              : n.op === 'mul'
                ? sql`(${l} * ${r})`
                : n.op === 'div'
                  ? sql`(${l}::numeric / nullif(${r}, 0))`
                  : sql`mod(${l}::numeric, nullif(${r}, 0)::numeric)`;
        return { sql: expr, type: 'number' };
      }
      case 'call':
        return call(n.name, n.args);
      default:
        // A condition used as a value: contains(Label,'x') eq true.
        return { sql: sql`coalesce(${bool(n)}, false)`, type: 'boolean' };
    }
  }

  function call(name: string, args: Node[]): Value {
    const arity = (min: number, max = min) => {
      if (args.length < min || args.length > max) throw filterError(`${name} takes ${min === max ? min : `${min} or ${max}`} argument${max > 1 ? 's' : ''}`);
      return args.map(value);
    };
    switch (name) {
      case 'contains':
      case 'startswith':
      case 'endswith':
        return { sql: sql`coalesce(${textTest(name, args)}, false)`, type: 'boolean' };
      case 'tolower':
      case 'toupper':
      case 'trim': {
        const [s] = arity(1);
        const fn = name === 'tolower' ? sql`lower` : name === 'toupper' ? sql`upper` : sql`btrim`;
        return { sql: sql`${fn}(${text(s, name)})`, type: 'string' };
      }
      case 'length':
        return { sql: sql`char_length(${text(arity(1)[0], name)})`, type: 'number' };
      case 'indexof': {
        // Zero-based, -1 when absent; matching ignores case like contains.
        const [s, t] = arity(2);
        return { sql: sql`(strpos(lower(${text(s, name)}), lower(${text(t, name)})) - 1)`, type: 'number' };
      }
      case 'substring': {
        const [s, start, length] = arity(2, 3);
        const from = sql`(${number(start, name)}::int + 1)`;
        return {
          sql: length ? sql`substr(${text(s, name)}, ${from}, greatest(${number(length, name)}::int, 0))` : sql`substr(${text(s, name)}, ${from})`,
          type: 'string',
        };
      }
      case 'concat': {
        const [a, b] = arity(2);
        return { sql: sql`(${text(a, name)} || ${text(b, name)})`, type: 'string' };
      }
      case 'year':
      case 'month':
      case 'day':
      case 'hour':
      case 'minute':
      case 'second': {
        const [d] = arity(1);
        if (d.type !== 'date' && d.type !== 'datetime') throw filterError(`${name} takes a date or a datetime, not a ${d.type}`);
        if (d.type === 'date' && (name === 'hour' || name === 'minute' || name === 'second')) throw filterError(`${name} takes a datetime`);
        // Datetimes are UTC instants: their parts are read in UTC whatever the session's time zone.
        const source = d.type === 'datetime' ? sql`(${d.sql} at time zone 'UTC')` : d.sql;
        const part = name === 'second' ? sql`floor(extract(second from ${source}))` : sql`extract(${sql.raw(name)} from ${source})`;
        return { sql: sql`${part}::numeric`, type: 'number' };
      }
      case 'date': {
        const [d] = arity(1);
        if (d.type === 'date') return d;
        if (d.type !== 'datetime') throw filterError(`date takes a datetime, not a ${d.type}`);
        return { sql: sql`(${d.sql} at time zone 'UTC')::date`, type: 'date' };
      }
      case 'round':
      case 'floor':
      case 'ceiling': {
        const [x] = arity(1);
        const fn = name === 'round' ? sql`round` : name === 'floor' ? sql`floor` : sql`ceil`;
        return { sql: sql`${fn}(${number(x, name)})`, type: 'number' };
      }
      default:
        throw filterError(`the function ${name} is not supported; supported: ${FILTER_FUNCTIONS.join(', ')}`);
    }
  }

  return bool(node);
}
