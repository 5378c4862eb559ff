// Create-or-update of master data described by a ResourceDef: the owning company (by code or id), plain
// fields, references given by id or by external id (with the apply*Default* flags that fill them in),
// the unique key the record is matched by, and hooks for a resource's own rules. Request schema, response
// schema and the write all come from the one description.
import { sql } from 'kysely';
import { type TSchema, Type } from 'typebox';
import { columnValues, type FieldDef, GUID_PATTERN, nullable, requestProperties, responseProperties, viewOf } from '../domain/fields.ts';
import { type Actor, type EventOptions, emitWrite, naming, type Row, upsertRow, type WriteResult } from '../domain/writes.ts';
import type { Trx } from '../platform/db/database.ts';
import type { TableName } from '../platform/db/schema.ts';
import { badRequest, HttpProblem } from '../platform/errors.ts';

export interface Company {
  id: string;
  code: string;
}

export interface RefDef {
  /** Body and response property holding the referenced record's id, e.g. `countryId`. */
  idName: string;
  /** Body property holding the referenced record's external id (or code), e.g. `countryExternalId`. */
  name?: string;
  column: string;
  table: TableName;
  /** Column `name` is matched against; default external_id. */
  by?: string;
  /** The referenced record belongs to a company and must belong to the record's company. */
  withinCompany?: boolean;
  required?: boolean;
  /** Request flags that fill the reference in when the request gives no value, in order of precedence. */
  defaults?: { flag: string; pick: (trx: Trx, company: Company | null) => Promise<string | null> }[];
}

export interface WriteContext {
  body: Row;
  values: Row;
  /** Columns overwritten when the record exists (default: every column written). */
  update: Set<string>;
  company: Company | null;
}

export interface ResourceDef {
  path: string;
  summary: string;
  description: string;
  table: TableName;
  /** Document type of the Created/Updated events. */
  documentType: string;
  /** How the owning company is given: `code` companyCode required (companyId optional, must agree),
   *  `either` companyId or companyCode required, `optional` either or none, `id` companyId optional. */
  company?: 'code' | 'either' | 'optional' | 'id';
  fields: FieldDef[];
  refs?: RefDef[];
  /** Request-only booleans (apply*Default* and the like) with their meaning. */
  flags?: Record<string, string>;
  /** Booleans of the request's `_options` object with their meaning. */
  options?: Record<string, string>;
  /** Request-only strings accepted and not stored. */
  ignored?: Record<string, string>;
  /** The unique key the record is matched by ([expression of the unique index, value]; tenant_id implied). */
  key: (w: WriteContext) => [string, unknown][];
  prepare?: (trx: Trx, actor: Actor, w: WriteContext) => Promise<void>;
  /** Runs after the write; may add properties (declared in extraView) to the answer. */
  finish?: (trx: Trx, actor: Actor, w: WriteContext & { result: WriteResult; view: Row }) => Promise<void>;
  extraView?: Record<string, TSchema>;
  /** Fills in answer properties that are not columns of the record (after a write and on lookups). */
  complete?: (trx: Trx, view: Row) => Promise<void>;
}

const guid = () => Type.String({ format: 'uuid', pattern: GUID_PATTERN });

export function bodySchema(def: ResourceDef): TSchema {
  const props: Record<string, TSchema> = {};
  if (def.company === 'code') {
    props.companyCode = Type.String({ minLength: 1, description: 'Code of the owning company (with externalId, the key)' });
    props.companyId = Type.Optional(guid());
  } else if (def.company === 'id') {
    props.companyId = Type.Optional(nullable(guid()));
  } else if (def.company) {
    props.companyId = Type.Optional(guid());
    props.companyCode = Type.Optional(Type.String({ minLength: 1 }));
  }
  Object.assign(props, requestProperties(def.fields));
  for (const r of def.refs ?? []) {
    props[r.idName] = Type.Optional(nullable(guid()));
    if (r.name) props[r.name] = Type.Optional(nullable(Type.String({ maxLength: 4000 })));
  }
  for (const [flag, description] of Object.entries(def.flags ?? {})) props[flag] = Type.Optional(Type.Boolean({ description }));
  for (const [name, description] of Object.entries(def.ignored ?? {})) props[name] = Type.Optional(nullable(Type.String({ description })));
  if (def.options) {
    props._options = Type.Optional(
      Type.Object(Object.fromEntries(Object.entries(def.options).map(([o, description]) => [o, Type.Optional(Type.Boolean({ description }))])), {
        additionalProperties: false,
      }),
    );
  }
  return Type.Object(props, { additionalProperties: false });
}

export function viewSchema(def: ResourceDef, withAction = true): TSchema {
  const props: Record<string, TSchema> = { id: Type.String({ format: 'uuid' }) };
  if (def.company === 'id' || def.company === 'optional') {
    props.companyId = nullable(Type.String({ format: 'uuid' }));
    props.companyCode = nullable(Type.String());
  } else if (def.company) {
    props.companyId = Type.String({ format: 'uuid' });
    props.companyCode = Type.String();
  }
  Object.assign(props, responseProperties(def.fields.filter((f) => f.name !== 'id')));
  for (const r of def.refs ?? []) props[r.idName] = nullable(Type.String({ format: 'uuid' }));
  Object.assign(props, def.extraView ?? {});
  if (withAction) props.action = Type.Union([Type.Literal('Created'), Type.Literal('Updated')]);
  return Type.Object(props);
}

export function resourceView(def: ResourceDef, row: Row, company: Company | null): Row {
  const view: Row = { id: row.id };
  if (def.company) {
    view.companyId = row.company_id ?? null;
    view.companyCode = company?.code ?? null;
  }
  Object.assign(view, viewOf(def.fields, row));
  for (const r of def.refs ?? []) view[r.idName] = row[r.column] ?? null;
  return view;
}

const problem422 = (field: string, value: unknown, reason: string): HttpProblem =>
  new HttpProblem(422, `${field} ${JSON.stringify(value)} ${reason}.`, { errors: [{ path: `/body/${field}`, message: reason }], extra: { field, value } });

async function resolveCompany(trx: Trx, def: ResourceDef, body: Row): Promise<Company | null> {
  const code = body.companyCode as string | undefined;
  const id = body.companyId as string | null | undefined;
  if (!code && !id) {
    if (def.company === 'either') {
      throw badRequest('companyId or companyCode is required.', [{ path: '/body/companyCode', message: 'companyId or companyCode is required' }]);
    }
    return null;
  }
  const byCode = code ? await trx.selectFrom('companies').select(['id', 'code']).where('code', '=', code).executeTakeFirst() : undefined;
  if (code && !byCode) throw problem422('companyCode', code, 'does not match any company');
  if (id) {
    if (byCode && byCode.id !== id.toLowerCase()) throw problem422('companyId', id, `is not the company with code ${code}`);
    if (!byCode) {
      const byId = await trx.selectFrom('companies').select(['id', 'code']).where('id', '=', id).executeTakeFirst();
      if (!byId) throw problem422('companyId', id, 'does not match any company');
      return byId;
    }
  }
  return byCode ?? null;
}

/**
 * Up to two records of the referenced table whose `column` equals value (of company, when given), with
 * their company where the table has one. Table and column come from the resource's definition.
 */
async function findRefs(trx: Trx, r: RefDef, column: string, value: string, company: Company | null): Promise<{ id: string; company_id: string | null }[]> {
  const companyId = r.withinCompany ? sql.ref('company_id') : sql`null::uuid`;
  const inCompany = company ? sql` and company_id = ${company.id}` : sql``;
  const { rows } = await sql<{ id: string; company_id: string | null }>`
    select id, ${companyId} as company_id from ${sql.table(r.table)} where ${sql.ref(column)} = ${value}${inCompany} limit 2`.execute(trx);
  return rows;
}

async function resolveRef(trx: Trx, r: RefDef, body: Row, company: Company | null): Promise<string | null | undefined> {
  let value: string | null | undefined;
  if (body[r.idName] !== undefined) {
    value = body[r.idName] as string | null;
    if (value !== null) {
      const [found] = await findRefs(trx, r, 'id', value, null);
      if (!found) throw problem422(r.idName, value, 'does not match any record');
      if (r.withinCompany && company && found.company_id !== company.id) throw problem422(r.idName, value, `does not belong to company ${company.code}`);
      value = found.id;
    }
  } else if (r.name && body[r.name] !== undefined) {
    const key = body[r.name] as string | null;
    value = null;
    if (key !== null) {
      const rows = await findRefs(trx, r, r.by ?? 'external_id', key, r.withinCompany ? company : null);
      if (rows.length === 0) throw problem422(r.name, key, `does not match any record${r.withinCompany && company ? ` of company ${company.code}` : ''}`);
      if (rows.length > 1) throw problem422(r.name, key, 'matches several records; send the id instead');
      value = rows[0].id;
    }
  }
  if (value == null) {
    for (const d of r.defaults ?? []) {
      if (body[d.flag] !== true) continue;
      const picked = await d.pick(trx, company);
      if (picked) {
        value = picked;
        break;
      }
    }
  }
  if (r.required && value == null) {
    const names = [r.idName, r.name].filter(Boolean).join(' or ');
    throw badRequest(`${names} is required.`, [{ path: `/body/${r.name ?? r.idName}`, message: `${names} is required` }]);
  }
  return value;
}

export async function upsertResource(
  trx: Trx,
  actor: Actor,
  def: ResourceDef,
  body: Row,
  events: EventOptions = {},
): Promise<{ view: Row; inserted: boolean }> {
  const company = def.company ? await resolveCompany(trx, def, body) : null;
  const values: Row = columnValues(def.fields, body);
  if (def.company && company) values.company_id = company.id;
  for (const r of def.refs ?? []) {
    const v = await resolveRef(trx, r, body, company);
    if (v !== undefined) values[r.column] = v;
  }
  const w: WriteContext = { body, values, update: new Set(Object.keys(values)), company };
  await def.prepare?.(trx, actor, w);
  const fieldOf = (column: string): string | undefined =>
    def.fields.find((f) => f.column === column)?.name ??
    def.refs?.find((r) => r.column === column)?.idName ??
    (column === 'company_id' ? 'companyId' : undefined);
  const result = await naming(fieldOf, w.values, () => upsertRow(trx, actor, { table: def.table, key: def.key(w), values: w.values, update: [...w.update] }));
  await emitWrite(trx, actor, def.documentType, result, events);
  const view = resourceView(def, result.row, company);
  await def.finish?.(trx, actor, { ...w, result, view });
  await def.complete?.(trx, view);
  return { view, inserted: result.inserted };
}

/** One record of the resource by its key columns, with its company code; null when there is none. */
export async function findResource(trx: Trx, def: ResourceDef, where: [string, unknown][]): Promise<Row | null> {
  const conditions = where.map(([column, value]) => sql`t.${sql.id(column)} = ${value}`);
  const company = def.company ? sql`(select to_jsonb(c) from companies c where c.id = (to_jsonb(t) ->> 'company_id')::uuid)` : sql`null::jsonb`;
  const { rows } = await sql<{ row: Row; company: Company | null }>`
    select to_jsonb(t) as row, ${company} as company from ${sql.table(def.table)} t where ${sql.join(conditions, sql` and `)}`.execute(trx);
  const r = rows[0];
  if (!r) return null;
  const view = resourceView(def, r.row, r.company);
  await def.complete?.(trx, view);
  return view;
}
