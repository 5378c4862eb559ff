// Billing clients, commercial clients, their per-company association, and suppliers: the finance side
// of the Integration API, in the spec's camelCase. A billing client and a supplier are keyed by
// (externalId, companyCode); a commercial client by externalId, and only once its billing clients exist.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { FieldDef } from '../domain/fields.ts';
import { type Actor, constraintProblem, type Row } from '../domain/writes.ts';
import type { Trx } from '../platform/db/database.ts';
import { HttpProblem } from '../platform/errors.ts';
import { appendEvent } from '../platform/events/outbox.ts';
import { companyCurrency, defaultCompany, defaultPaymentCondition, defaultVat, firstPaymentCondition } from './master-data.ts';
import type { RefDef, ResourceDef } from './resources.ts';

const str = (name: string, column: string): FieldDef => ({ name, column, kind: 'string' });
const externalId: FieldDef = { name: 'externalId', column: 'external_id', kind: 'string', required: true };
const name: FieldDef = { name: 'name', column: 'name', kind: 'string', required: true };
const address: FieldDef[] = [
  str('street', 'street'),
  str('street2', 'street2'),
  str('zipPostal', 'zip_postal'),
  str('stateProvince', 'state_province'),
  { ...str('city', 'city'), description: 'City as free text (cityId links the catalogue)' },
  str('taxpayerNumber', 'tax_payer_number'),
];
const cityRef: RefDef = { idName: 'cityId', column: 'city_id', table: 'cities' };
const countryRef: RefDef = { idName: 'countryId', column: 'country_id', table: 'countries' };
const currencyRef: RefDef = {
  idName: 'currencyId',
  name: 'currencyExternalId',
  column: 'currency_id',
  table: 'currencies',
  defaults: [{ flag: 'applyDefaultCurrency', pick: companyCurrency }],
};
const paymentConditionRef = (idName: string, refName: string, column: string): RefDef => ({
  idName,
  name: refName,
  column,
  table: 'payment_conditions',
  withinCompany: true,
  defaults: [
    { flag: 'applyDefaultPaymentCondition', pick: defaultPaymentCondition },
    { flag: 'setFirstPaymentConditionIfExternalIdIsNull', pick: firstPaymentCondition },
  ],
});
const companyExternalKey = (w: { values: Row }): [string, unknown][] => [
  ['company_id', w.values.company_id],
  ['external_id', w.values.external_id],
];

const FLAG = {
  applyDefaultPaymentCondition: "When no payment condition is sent, use the company's default payment condition (isDefault).",
  setFirstPaymentConditionIfExternalIdIsNull:
    "When no payment condition is sent (and no default applied), use the company's first payment condition (the oldest).",
  applyDefaultCurrency: "When no currency is sent, use the company's currency.",
  applyDefaultVat: "When no VAT is sent, use the company's default active VAT rate (isDefault).",
};

export const billingClients: ResourceDef = {
  path: '/api/billingclients',
  summary: 'Create or update a billing client (upsert by externalId plus companyCode)',
  description:
    'The pair externalId plus companyCode is the key; an existing billing client with that key is updated. Events: Created/Updated on document type Client.',
  table: 'billing_clients',
  documentType: 'Client',
  company: 'code',
  fields: [
    externalId,
    name,
    str('code', 'code'),
    str('number', 'number'),
    ...address,
    { ...str('country', 'country'), description: 'Country as free text (countryId links the catalogue)' },
    { name: 'active', column: 'is_active', kind: 'bool', notNull: true },
    { name: 'otherDebtor', column: 'other_debtor', kind: 'bool', notNull: true },
  ],
  refs: [cityRef, countryRef, paymentConditionRef('paymentConditionId', 'paymentConditionExternalId', 'payment_condition_id'), currencyRef],
  flags: {
    setFirstPaymentConditionIfExternalIdIsNull: FLAG.setFirstPaymentConditionIfExternalIdIsNull,
    applyDefaultPaymentCondition: FLAG.applyDefaultPaymentCondition,
    applyDefaultCurrency: FLAG.applyDefaultCurrency,
  },
  key: companyExternalKey,
};

export const suppliers: ResourceDef = {
  path: '/api/suppliers',
  summary: 'Create or update a supplier (upsert by externalId plus companyCode)',
  description:
    'The pair externalId plus companyCode is the key; an existing supplier with that key is updated. Events: Created/Updated on document type Supplier.',
  table: 'suppliers',
  documentType: 'Supplier',
  company: 'code',
  fields: [
    externalId,
    name,
    ...address,
    { name: 'active', column: 'is_active', kind: 'bool', notNull: true },
    { name: 'otherCreditor', column: 'other_creditor', kind: 'bool', notNull: true },
  ],
  refs: [
    cityRef,
    countryRef,
    paymentConditionRef('paymentConditionId', 'paymentConditionExternalId', 'payment_condition_id'),
    currencyRef,
    { idName: 'vatId', name: 'vatExternalId', column: 'vat_id', table: 'vats', withinCompany: true, defaults: [{ flag: 'applyDefaultVat', pick: defaultVat }] },
  ],
  flags: {
    applyDefaultPaymentCondition: FLAG.applyDefaultPaymentCondition,
    applyDefaultCurrency: FLAG.applyDefaultCurrency,
    applyDefaultVat: FLAG.applyDefaultVat,
  },
  options: { disableVatUpdate: 'The VAT is set when the supplier is created and left unchanged on updates.' },
  key: companyExternalKey,
  prepare: async (_trx, _actor, w) => {
    if ((w.body._options as Row | undefined)?.disableVatUpdate === true) w.update.delete('vat_id');
  },
};

const BillingClientRef = Type.Object({ id: Type.String({ format: 'uuid' }), companyId: Type.String({ format: 'uuid' }), companyCode: Type.String() });

export const commercialClients: ResourceDef = {
  path: '/api/commercialclients',
  summary: 'Create or update a commercial client (upsert by externalId)',
  description:
    'Matched by externalId (or by id alone with insertUpdateCheckOnlyId). Ordering rule: accepted only when a billing client with the same externalId ' +
    'exists (for companyId, when sent); otherwise 409 listing the missing billing clients in missingBillingClients. Events: Created/Updated on CommercialClient.',
  table: 'commercial_clients',
  documentType: 'CommercialClient',
  company: 'id',
  fields: [
    { name: 'id', column: 'id', kind: 'guid', notNull: true },
    externalId,
    name,
    str('code', 'code'),
    str('number', 'number'),
    ...address,
    { ...str('country', 'country'), description: 'Country as free text (countryId links the catalogue)' },
    { name: 'blocked', column: 'blocked', kind: 'bool', notNull: true },
    { name: 'timesheetLevelId', column: 'timesheet_level_id', kind: 'guid' },
  ],
  refs: [
    cityRef,
    countryRef,
    paymentConditionRef('commercialPaymentConditionId', 'commercialPaymentConditionExternalId', 'commercial_payment_condition_id'),
    { idName: 'clientGroupId', name: 'clientGroupExternalId', column: 'client_group_id', table: 'client_groups' },
    { idName: 'projectOwnerId', name: 'projectOwnerExternalId', column: 'owner_id', table: 'users' },
  ],
  flags: {
    setFirstPaymentConditionIfExternalIdIsNull: FLAG.setFirstPaymentConditionIfExternalIdIsNull,
    applyDefaultPaymentCondition: FLAG.applyDefaultPaymentCondition,
    insertUpdateCheckOnlyId: 'Match the commercial client by id alone (id required): an existing id is updated, externalId included; an unknown id is created.',
  },
  ignored: { nameAndExternalId: 'Display text "name (externalId)"; derived, accepted and not stored.' },
  options: {
    ignoreCode: 'Ignore the code sent: it is neither stored on create nor changed on update.',
    linkDefaultCompany: "Allow the client's company (companyId, else the tenant's first company) to work with the client (DE-ClientsCompanies).",
  },
  extraView: {
    billingClients: Type.Array(BillingClientRef, { description: 'The billing clients with the same externalId, to associate per company' }),
  },
  key: (w) => (w.body.insertUpdateCheckOnlyId === true ? [['id', w.values.id]] : [['external_id', w.values.external_id]]),
  prepare: async (trx, _actor, w) => {
    if (w.body.insertUpdateCheckOnlyId === true && typeof w.values.id !== 'string') {
      throw new HttpProblem(400, 'insertUpdateCheckOnlyId needs the id of the commercial client.', { errors: [{ path: '/body/id', message: 'is required' }] });
    }
    if ((w.body._options as Row | undefined)?.ignoreCode === true) {
      delete w.values.code;
      w.update.delete('code');
    }
    await checkBillingClientsExist(trx, String(w.values.external_id), w.company);
  },
  finish: async (trx, actor, w) => {
    if (typeof w.body.id === 'string' && w.body.insertUpdateCheckOnlyId !== true && w.result.row.id !== w.body.id.toLowerCase()) {
      throw new HttpProblem(409, `The commercial client with externalId ${w.values.external_id} has id ${w.result.row.id}, not ${w.body.id}.`, {
        errors: [{ path: '/body/id', message: 'does not match the commercial client with this externalId' }],
      });
    }
    if ((w.body._options as Row | undefined)?.linkDefaultCompany === true) {
      const company = w.company ?? (await defaultCompany(trx));
      if (company) {
        await sql`insert into client_companies (tenant_id, commercial_client_id, company_id) values (${actor.tenantId}, ${w.result.row.id as string}, ${company.id})
          on conflict do nothing`.execute(trx);
      }
    }
    w.view.billingClients = await billingClientsOf(trx, String(w.result.row.external_id));
  },
};

/**
 * The Client API's v3 create of commercial clients (client-api/people.ts): the ordering rule with billing
 * clients is the Integration API's (spec, Errors 3), so this one takes a commercial client alone, and its
 * ExternalId is optional (the platform's template requires only Name): without one the client is new.
 */
export const commercialClientsWithoutBilling: ResourceDef = {
  ...commercialClients,
  fields: commercialClients.fields.map((f) => (f.name === 'externalId' ? { ...f, required: false } : f)),
  key: (w) => (typeof w.values.external_id === 'string' ? [['external_id', w.values.external_id]] : [['id', w.values.id]]),
  prepare: async (_trx, _actor, w) => {
    if (typeof w.values.id !== 'string') w.values.id = randomUUID();
  },
};

async function billingClientsOf(trx: Trx, externalId: string): Promise<{ id: string; companyId: string; companyCode: string }[]> {
  const { rows } = await sql<{ id: string; companyId: string; companyCode: string }>`
    select b.id, b.company_id as "companyId", c.code as "companyCode"
    from billing_clients b join companies c on c.id = b.company_id
    where b.external_id = ${externalId} order by c.code`.execute(trx);
  return rows;
}

/** The spec's ordering rule: billing clients first, then the commercial client. */
async function checkBillingClientsExist(trx: Trx, externalId: string, company: { id: string; code: string } | null): Promise<void> {
  const existing = await billingClientsOf(trx, externalId);
  const missing = existing.length === 0 || (company && !existing.some((b) => b.companyId === company.id));
  if (!missing) return;
  const missingBillingClients = [{ externalId, companyId: company?.id ?? null, companyCode: company?.code ?? null }];
  const where = company ? ` for company ${company.code}` : '';
  throw new HttpProblem(
    409,
    `No billing client with externalId ${externalId} exists${where}; create the billing clients first (POST /api/billingclients), then the commercial client.`,
    { errors: [{ path: '/body/externalId', message: `no billing client with this externalId${where}` }], extra: { missingBillingClients } },
  );
}

// ---------------------------------------------------------------------------------------------------
// Commercial-client-to-billing-client association (one billing client per commercial client and company)
// ---------------------------------------------------------------------------------------------------

export interface AssociationBody {
  companyId: string;
  commercialClientId: string;
  billingClientId: string;
  externalId?: string | null;
  vatExternalId?: string | null;
}

const reject = (field: string, value: unknown, reason: string): HttpProblem =>
  new HttpProblem(422, `${field} ${value} ${reason}.`, { errors: [{ path: `/body/${field}`, message: reason }], extra: { field, value } });

export async function associate(trx: Trx, actor: Actor, body: AssociationBody): Promise<Row> {
  const companyId = body.companyId.toLowerCase();
  const [company, commercial, billing] = await Promise.all([
    trx.selectFrom('companies').select('id').where('id', '=', companyId).executeTakeFirst(),
    trx.selectFrom('commercial_clients').select('id').where('id', '=', body.commercialClientId).executeTakeFirst(),
    trx.selectFrom('billing_clients').select(['id', 'company_id']).where('id', '=', body.billingClientId).executeTakeFirst(),
  ]);
  if (!company) throw reject('companyId', body.companyId, 'does not match any company');
  if (!commercial) throw reject('commercialClientId', body.commercialClientId, 'does not match any commercial client');
  if (!billing) throw reject('billingClientId', body.billingClientId, 'does not match any billing client');
  if (billing.company_id !== companyId)
    throw reject('billingClientId', body.billingClientId, `belongs to company ${billing.company_id}, not ${body.companyId}`);
  if (body.vatExternalId) {
    const vat = await trx.selectFrom('vats').select('id').where('company_id', '=', companyId).where('external_id', '=', body.vatExternalId).executeTakeFirst();
    if (!vat) throw reject('vatExternalId', body.vatExternalId, 'does not match any VAT rate of the company');
  }
  let row: Row;
  try {
    const res = await sql<{ row: Row }>`
      insert into commercial_client_companies as t (tenant_id, company_id, commercial_client_id, billing_client_id, external_id, vat_external_id, created_by_id, modified_by_id)
      values (${actor.tenantId}, ${companyId}, ${commercial.id}, ${billing.id}, ${body.externalId ?? null}, ${body.vatExternalId ?? null}, ${actor.userId}, ${actor.userId})
      returning to_jsonb(t) as row`.execute(trx);
    row = res.rows[0].row;
  } catch (err) {
    const e = err as { code?: string };
    if (e.code === '23505') {
      throw Object.assign(
        new HttpProblem(409, `Commercial client ${body.commercialClientId} already has a billing client for company ${body.companyId}.`, {
          errors: [{ path: '/body/companyId', message: 'the commercial client is already associated for this company' }],
        }),
        { cause: undefined },
      );
    }
    throw constraintProblem(err, () => undefined, {});
  }
  await sql`insert into client_companies (tenant_id, commercial_client_id, company_id) values (${actor.tenantId}, ${commercial.id}, ${companyId})
    on conflict do nothing`.execute(trx);
  const view = {
    id: row.id,
    companyId: row.company_id,
    commercialClientId: row.commercial_client_id,
    billingClientId: row.billing_client_id,
    externalId: row.external_id ?? null,
    vatExternalId: row.vat_external_id ?? null,
  };
  await appendEvent(trx, {
    tenantId: actor.tenantId,
    actionType: 'Created',
    documentType: 'CommercialClientCompany',
    documentId: String(row.id),
    userId: actor.userId,
    detail: {
      CompanyId: view.companyId,
      CommercialClientId: view.commercialClientId,
      BillingClientId: view.billingClientId,
      ExternalId: view.externalId,
      VatExternalId: view.vatExternalId,
    },
  });
  return view;
}
