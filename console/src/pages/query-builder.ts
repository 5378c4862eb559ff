// The query builder JSON of the explorer's visual filters, sorting and paging: exactly the body
// dynamic-execute takes, so what the page shows is what an integration would send.

export interface FieldMetadata {
  name: string;
  dataType: string;
  operations: string[];
  defaultOperation: string;
}

export interface FilterRow {
  field: string;
  op: string;
  value: string;
  /** The upper bound of `between`. */
  value2: string;
}

export interface SortRow {
  field: string;
  direction: 'asc' | 'desc';
}

export const NO_VALUE = new Set(['isblank', 'isnotblank']);

/** The text of an input as the JSON value the field's type takes. */
export function typedValue(dataType: string, text: string): string | number | boolean | null {
  if (text === '') return null;
  if (dataType === 'integer' || dataType === 'decimal') {
    const n = Number(text);
    return Number.isFinite(n) ? n : text;
  }
  if (dataType === 'boolean') return text === 'true';
  return text;
}

export function condition(f: FilterRow, fields: FieldMetadata[]): unknown[] {
  const type = fields.find((x) => x.name === f.field)?.dataType ?? 'string';
  if (NO_VALUE.has(f.op)) return [f.field, f.op];
  if (f.op === 'between') return [f.field, 'between', [typedValue(type, f.value), typedValue(type, f.value2)]];
  return [f.field, f.op, typedValue(type, f.value)];
}

export function buildFilters(rows: FilterRow[], joiner: 'and' | 'or', fields: FieldMetadata[]): unknown[] | undefined {
  const complete = rows.filter((r) => r.field && r.op);
  if (!complete.length) return undefined;
  if (complete.length === 1) return condition(complete[0], fields);
  return complete.flatMap((r, i) => (i === 0 ? [condition(r, fields)] : [joiner, condition(r, fields)]));
}

export interface QueryBuilderJson {
  skip?: number;
  take?: number;
  orderBy?: { field: string; direction: 'asc' | 'desc' }[];
  fields?: string[];
  filters?: unknown[];
}

export function buildQueryBuilder(opts: {
  filters: FilterRow[];
  joiner: 'and' | 'or';
  sort: SortRow[];
  fields: FieldMetadata[];
  selected: string[];
}): QueryBuilderJson {
  const qb: QueryBuilderJson = {};
  const filters = buildFilters(opts.filters, opts.joiner, opts.fields);
  if (filters) qb.filters = filters;
  const sort = opts.sort.filter((s) => s.field);
  if (sort.length) qb.orderBy = sort.map((s) => ({ field: s.field, direction: s.direction }));
  if (opts.selected.length) qb.fields = opts.selected;
  return qb;
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function curlFor(origin: string, tenant: string, query: string, body: unknown): string {
  return [
    `curl -s -X POST ${shellQuote(`${origin}/api/v3/analytics/named-query/${encodeURIComponent(query)}/dynamic-execute`)}`,
    `  -H "Authorization: Bearer $TOKEN" -H ${shellQuote(`X-AppTenant: ${tenant}`)} -H 'Content-Type: application/json'`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join(' \\\n');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** An OData SimpleIdentifier for a field (as the server's OData model names properties). */
const odataName = (name: string) => {
  const s = name.replace(/[^A-Za-z0-9_]/g, '_');
  return /^[A-Za-z_]/.test(s) ? s : `_${s}`;
};

/** A value as an OData v4 literal of the field's type (dates and guids bare, strings quoted). */
function odataLiteral(dataType: string, text: string): string {
  const v = typedValue(dataType, text);
  if (v === null) return 'null';
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if ((dataType === 'date' || dataType === 'datetime' || dataType === 'guid') && /^[0-9A-Fa-f:.TZ+-]+$/.test(v)) return v;
  return `'${v.replace(/'/g, "''")}'`;
}

const COMPARE: Record<string, string> = { '=': 'eq', '<>': 'ne', '<': 'lt', '>': 'gt', '<=': 'le', '>=': 'ge' };

/** One filter row as an OData condition with the query builder's meaning (blank, not-contains and null included). */
function odataCondition(f: FilterRow, fields: FieldMetadata[]): string {
  const type = fields.find((x) => x.name === f.field)?.dataType ?? 'string';
  const p = odataName(f.field);
  const text = type === 'string';
  switch (f.op) {
    case 'isblank':
      return text ? `(${p} eq null or ${p} eq '')` : `${p} eq null`;
    case 'isnotblank':
      return text ? `(${p} ne null and ${p} ne '')` : `${p} ne null`;
    case 'contains':
    case 'startswith':
    case 'endswith':
      return `${f.op}(${p},${odataLiteral('string', f.value)})`;
    case 'notcontains':
      return `(${p} eq null or not contains(${p},${odataLiteral('string', f.value)}))`;
    case 'between': {
      const sides = [f.value ? `${p} ge ${odataLiteral(type, f.value)}` : '', f.value2 ? `${p} le ${odataLiteral(type, f.value2)}` : ''].filter(Boolean);
      return sides.length ? `(${sides.join(' and ')})` : 'true';
    }
    default:
      return `${p} ${COMPARE[f.op] ?? 'eq'} ${odataLiteral(type, f.value)}`;
  }
}

/** The explorer's filter rows as an OData $filter, or undefined without any. */
export function odataFilterFor(rows: FilterRow[], joiner: 'and' | 'or', fields: FieldMetadata[]): string | undefined {
  const complete = rows.filter((r) => r.field && r.op);
  if (!complete.length) return undefined;
  return complete.map((r) => odataCondition(r, fields)).join(` ${joiner} `);
}

/** The OData feed of the query for Excel / Power BI: under the tenant's base path when it has a slug. */
export function odataUrlFor(origin: string, tenant: string, query: string, sort: SortRow[], filter?: string): string {
  const base = UUID.test(tenant) ? `${origin}/odata/v4` : `${origin}/t/${encodeURIComponent(tenant)}/odata/v4`;
  const options: string[] = [];
  if (filter) options.push(`$filter=${encodeURIComponent(filter)}`);
  const orderBy = sort.filter((s) => s.field).map((s) => `${odataName(s.field)} ${s.direction}`);
  if (orderBy.length) options.push(`$orderby=${encodeURIComponent(orderBy.join(','))}`);
  return `${base}/${odataName(query)}${options.length ? `?${options.join('&')}` : ''}`;
}

/** The string fields a search box looks in (those that take contains). */
export const searchable = (fields: FieldMetadata[]): FieldMetadata[] => fields.filter((f) => f.dataType === 'string' && f.operations.includes('contains'));

/** The filters with a search over the string fields: any of them contains the text, and the other filters hold. */
export function withSearch(filters: unknown[] | undefined, search: string, fields: FieldMetadata[]): unknown[] | undefined {
  const text = search.trim();
  const within = searchable(fields);
  if (!text || !within.length) return filters;
  const any =
    within.length === 1
      ? [within[0].name, 'contains', text]
      : within.flatMap((f, i) => (i ? ['or', [f.name, 'contains', text]] : [[f.name, 'contains', text]]));
  return filters ? [filters, 'and', any] : any;
}

/**
 * The columns shown by default: names before ids. A guid column whose name is another column's plus "Id"
 * (ClientId beside Client) is hidden, its value shown on hover of the name; other columns keep their order.
 */
export function readableColumns(names: string[], fields: FieldMetadata[], showIds: boolean): { columns: string[]; idOf: Record<string, string> } {
  const type = new Map(fields.map((f) => [f.name, f.dataType]));
  const present = new Set(names);
  const idOf: Record<string, string> = {};
  for (const n of names) if (type.get(n) === 'guid' && n.endsWith('Id') && present.has(n.slice(0, -2))) idOf[n.slice(0, -2)] = n;
  if (showIds) return { columns: names, idOf };
  const hidden = new Set(Object.values(idOf));
  const named = names.filter((n) => !hidden.has(n) && type.get(n) !== 'guid');
  const ids = names.filter((n) => !hidden.has(n) && type.get(n) === 'guid');
  return { columns: [...named, ...ids], idOf };
}
