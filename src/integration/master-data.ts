// Master data users and clients refer to: companies, divisions, departments, countries, cities,
// currencies, VAT rates, payment conditions, client groups, user typology groups and typologies. Each is
// created or updated by its external id (within its company where it belongs; companies by code), so a
// tenant can be set up entirely through the API. camelCase like the spec's client resources.
import { sql } from 'kysely';
import type { FieldDef } from '../domain/fields.ts';
import type { Trx } from '../platform/db/database.ts';
import type { Company, ResourceDef } from './resources.ts';

const externalId: FieldDef = { name: 'externalId', column: 'external_id', kind: 'string', required: true };
const name: FieldDef = { name: 'name', column: 'name', kind: 'string', required: true };
const companyExternalKey = (w: { values: Record<string, unknown> }): [string, unknown][] => [
  ['company_id', w.values.company_id],
  ['external_id', w.values.external_id],
];
const externalKey = (w: { values: Record<string, unknown> }): [string, unknown][] => [['external_id', w.values.external_id]];

export const companies: ResourceDef = {
  path: '/api/companies',
  summary: 'Create or update a company (keyed by code)',
  description: 'Matched by code. Currency and country by id or external id.',
  table: 'companies',
  documentType: 'Company',
  fields: [
    { name: 'code', column: 'code', kind: 'string', required: true },
    name,
    { name: 'requiredHours', column: 'required_hours', kind: 'double', notNull: true, description: 'Daily required hours' },
    { name: 'timesheetStart', column: 'timesheet_start', kind: 'date' },
  ],
  refs: [
    { idName: 'currencyId', name: 'currencyExternalId', column: 'currency_id', table: 'currencies' },
    { idName: 'countryId', name: 'countryExternalId', column: 'country_id', table: 'countries' },
  ],
  key: (w) => [['code', w.values.code]],
};

export const divisions: ResourceDef = {
  path: '/api/divisions',
  summary: 'Create or update a division (keyed by externalId within its company)',
  description: 'The company is given by companyId or companyCode.',
  table: 'divisions',
  documentType: 'Division',
  company: 'either',
  fields: [externalId, name],
  key: companyExternalKey,
};

export const departments: ResourceDef = {
  path: '/api/departments',
  summary: 'Create or update a department (keyed by externalId within its company)',
  description: 'The company is given by companyId or companyCode; the division (optional) by id or by external id within the company.',
  table: 'departments',
  documentType: 'Department',
  company: 'either',
  fields: [externalId, name],
  refs: [{ idName: 'divisionId', name: 'divisionExternalId', column: 'division_id', table: 'divisions', withinCompany: true }],
  key: companyExternalKey,
};

export const countries: ResourceDef = {
  path: '/api/countries',
  summary: 'Create or update a country (keyed by externalId)',
  description: 'Matched by externalId.',
  table: 'countries',
  documentType: 'Country',
  fields: [externalId, name, { name: 'isoCode', column: 'iso_code', kind: 'string' }],
  key: externalKey,
};

export const cities: ResourceDef = {
  path: '/api/cities',
  summary: 'Create or update a city (keyed by externalId)',
  description: 'Matched by externalId; the country (required) by id or external id.',
  table: 'cities',
  documentType: 'City',
  fields: [externalId, name],
  refs: [{ idName: 'countryId', name: 'countryExternalId', column: 'country_id', table: 'countries', required: true }],
  key: externalKey,
};

export const currencies: ResourceDef = {
  path: '/api/currencies',
  summary: 'Create or update a currency (keyed by externalId)',
  description: 'Matched by externalId; isoCode is unique too (another currency with the same isoCode is a 409).',
  table: 'currencies',
  documentType: 'Currency',
  fields: [externalId, name, { name: 'isoCode', column: 'iso_code', kind: 'string', required: true }, { name: 'symbol', column: 'symbol', kind: 'string' }],
  key: externalKey,
};

export const vats: ResourceDef = {
  path: '/api/vats',
  summary: 'Create or update a VAT rate (keyed by externalId within its company)',
  description: 'The company is given by companyId or companyCode. isDefault marks the rate applyDefaultVat picks.',
  table: 'vats',
  documentType: 'Vat',
  company: 'either',
  fields: [
    externalId,
    name,
    { name: 'percentage', column: 'percentage', kind: 'double', required: true },
    { name: 'isActive', column: 'is_active', kind: 'bool', notNull: true },
    { name: 'isDefault', column: 'is_default', kind: 'bool', notNull: true },
  ],
  key: companyExternalKey,
};

export const paymentConditions: ResourceDef = {
  path: '/api/paymentconditions',
  summary: 'Create or update a payment condition (keyed by externalId within its company)',
  description: 'The company is given by companyId or companyCode. isDefault marks the condition applyDefaultPaymentCondition picks.',
  table: 'payment_conditions',
  documentType: 'PaymentCondition',
  company: 'either',
  fields: [
    externalId,
    name,
    { name: 'days', column: 'days', kind: 'int', notNull: true },
    { name: 'isDefault', column: 'is_default', kind: 'bool', notNull: true },
  ],
  key: companyExternalKey,
};

export const clientGroups: ResourceDef = {
  path: '/api/clientgroups',
  summary: 'Create or update a client group (keyed by externalId)',
  description: 'Matched by externalId.',
  table: 'client_groups',
  documentType: 'ClientGroup',
  fields: [externalId, name],
  key: externalKey,
};

export const typologyGroups: ResourceDef = {
  path: '/api/usertypologygroups',
  summary: 'Create or update a user typology group (keyed by externalId, else by name)',
  description:
    'Matched by externalId when given, else by name (case-insensitive), so the user feed can create a missing group from its description alone. ' +
    'An optional company (companyId or companyCode) owns the group and is linked to it.',
  table: 'typology_groups',
  documentType: 'UserTypologyGroup',
  company: 'optional',
  fields: [{ ...externalId, required: false }, name],
  key: (w) => (typeof w.values.external_id === 'string' ? [['external_id', w.values.external_id]] : [['lower(name)', String(w.values.name).toLowerCase()]]),
  finish: async (trx, actor, w) => {
    if (!w.company) return;
    await sql`insert into typology_group_companies (tenant_id, typology_group_id, company_id) values (${actor.tenantId}, ${w.view.id}, ${w.company.id})
      on conflict do nothing`.execute(trx);
  },
};

export const typologies: ResourceDef = {
  path: '/api/usertypologies',
  summary: 'Create or update a user typology (keyed by externalId within its department)',
  description:
    'A typology belongs to a department (departmentId, or departmentExternalId with companyId or companyCode) and to a typology group ' +
    '(typologyGroupId or typologyGroupExternalId); the group is linked to the department.',
  table: 'typologies',
  documentType: 'UserTypology',
  company: 'optional',
  fields: [
    externalId,
    name,
    { name: 'plannable', column: 'plannable', kind: 'bool', notNull: true },
    { name: 'isActive', column: 'is_active', kind: 'bool', notNull: true },
    { name: 'hourlyValue', column: 'hourly_value', kind: 'double' },
  ],
  refs: [
    { idName: 'departmentId', name: 'departmentExternalId', column: 'department_id', table: 'departments', withinCompany: true, required: true },
    { idName: 'typologyGroupId', name: 'typologyGroupExternalId', column: 'typology_group_id', table: 'typology_groups', required: true },
  ],
  // company_id is no column of typologies: it only scopes the department lookup.
  prepare: async (_trx, _actor, w) => {
    delete w.values.company_id;
    w.update.delete('company_id');
  },
  key: (w) => [
    ['department_id', w.values.department_id],
    ['external_id', w.values.external_id],
  ],
  finish: async (trx, actor, w) => {
    await sql`insert into typology_group_departments (tenant_id, typology_group_id, department_id)
      values (${actor.tenantId}, ${w.result.row.typology_group_id as string}, ${w.result.row.department_id as string}) on conflict do nothing`.execute(trx);
  },
  // A typology's company is its department's.
  complete: async (trx, view) => {
    const dep = await trx
      .selectFrom('departments as d')
      .innerJoin('companies as c', 'c.id', 'd.company_id')
      .select(['c.id', 'c.code'])
      .where('d.id', '=', view.departmentId as string)
      .executeTakeFirst();
    view.companyId = dep?.id ?? null;
    view.companyCode = dep?.code ?? null;
  },
};

export const MASTER_DATA: ResourceDef[] = [
  companies,
  divisions,
  departments,
  countries,
  cities,
  currencies,
  vats,
  paymentConditions,
  clientGroups,
  typologyGroups,
  typologies,
];

// Defaults the apply*Default* flags pick.

/** The tenant's first company (the one it was set up with): the default company. */
export async function defaultCompany(trx: Trx): Promise<Company | null> {
  const row = await trx.selectFrom('companies').select(['id', 'code']).orderBy('created_on_utc').orderBy('code').limit(1).executeTakeFirst();
  return row ?? null;
}

const companyOrDefault = async (trx: Trx, company: Company | null): Promise<Company | null> => company ?? (await defaultCompany(trx));

export async function defaultPaymentCondition(trx: Trx, company: Company | null): Promise<string | null> {
  const c = await companyOrDefault(trx, company);
  if (!c) return null;
  const row = await trx
    .selectFrom('payment_conditions')
    .select('id')
    .where('company_id', '=', c.id)
    .where('is_default', '=', true)
    .orderBy('name')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

export async function firstPaymentCondition(trx: Trx, company: Company | null): Promise<string | null> {
  const c = await companyOrDefault(trx, company);
  if (!c) return null;
  const row = await trx
    .selectFrom('payment_conditions')
    .select('id')
    .where('company_id', '=', c.id)
    .orderBy('created_on_utc')
    .orderBy('name')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}

export async function companyCurrency(trx: Trx, company: Company | null): Promise<string | null> {
  const c = await companyOrDefault(trx, company);
  if (!c) return null;
  const row = await trx.selectFrom('companies').select('currency_id').where('id', '=', c.id).executeTakeFirst();
  return row?.currency_id ?? null;
}

export async function defaultVat(trx: Trx, company: Company | null): Promise<string | null> {
  const c = await companyOrDefault(trx, company);
  if (!c) return null;
  const row = await trx
    .selectFrom('vats')
    .select('id')
    .where('company_id', '=', c.id)
    .where('is_default', '=', true)
    .where('is_active', '=', true)
    .orderBy('name')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row?.id ?? null;
}
