// Tenant bootstrap: the minimum master data every new tenant needs before any API can be used
// (first company and its organisation, user types, the document-type catalogue, default workflows).
import type { Trx } from '../platform/db/database.ts';
import { DOCUMENT_TYPES, fullTypeName } from '../platform/events/catalogue.ts';

export interface TenantDefaults {
  companyId: string;
  companyCode: string;
  divisionId: string;
  departmentId: string;
  departmentExternalId: string;
  typologyGroupId: string;
  typologyId: string;
  typologyExternalId: string;
  userTypeIds: { regular: string; temporary: string };
}

/**
 * The spec's "Document types usable in DocumentType" (one catalogue, src/platform/events/catalogue.ts),
 * plus types that are not in the spec's webhook list ("more types may exist"): requests, leaves,
 * companies and suppliers have custom fields or workflows of their own in the named queries.
 */
const TENANT_DOCUMENT_TYPES: ReadonlyArray<{ name: string; className: string }> = [
  ...DOCUMENT_TYPES,
  { name: 'Request', className: 'Request' },
  { name: 'Leave', className: 'Leave' },
  { name: 'Company', className: 'Company' },
  { name: 'Supplier', className: 'Supplier' },
  { name: 'Data Extraction Schedule', className: 'DataExtractionSchedule' },
];

export const STAGE_TYPES: ReadonlyArray<{ name: string; color: string }> = [
  { name: 'Draft', color: '#9E9E9E' },
  { name: 'In Progress', color: '#2196F3' },
  { name: 'Completed', color: '#4CAF50' },
  { name: 'Canceled', color: '#F44336' },
];

/** Stages of the default workflows: each is named after, and typed by, its stage type. */
const DEFAULT_TRANSITIONS: ReadonlyArray<{ name: string; from: string; to: string; commentRequired?: boolean }> = [
  { name: 'Start', from: 'Draft', to: 'In Progress' },
  { name: 'Complete', from: 'In Progress', to: 'Completed' },
  { name: 'Cancel', from: 'In Progress', to: 'Canceled', commentRequired: true },
  { name: 'Discard', from: 'Draft', to: 'Canceled' },
  { name: 'Reopen', from: 'Completed', to: 'In Progress', commentRequired: true },
];

/** Company code from a display name: its ASCII letters, upper-cased, at most 10; 'MAIN' when none. */
export function companyCodeFromName(name: string): string {
  const letters = name
    .normalize('NFD')
    .replace(/[^A-Za-z]/g, '')
    .toUpperCase()
    .slice(0, 10);
  return letters.length > 0 ? letters : 'MAIN';
}

/** The id of the one row an INSERT … RETURNING id wrote. */
async function insertedId(insert: { executeTakeFirstOrThrow(): Promise<{ id: string }> }): Promise<string> {
  return (await insert.executeTakeFirstOrThrow()).id;
}

/** Ids by name of rows just inserted; a name the bootstrap did not insert is a bug in its own tables. */
function idsBy(pairs: [string, string][]): (name: string) => string {
  const ids = new Map(pairs);
  return (name) => {
    const id = ids.get(name);
    if (id === undefined) throw new Error(`tenant bootstrap: no row named ${name}`);
    return id;
  };
}

export async function createTenantDefaults(trx: Trx, tenantId: string, tenantName: string): Promise<TenantDefaults> {
  const t = { tenant_id: tenantId };

  const currencyId = await insertedId(
    trx
      .insertInto('currencies')
      .values({ ...t, name: 'Euro', iso_code: 'EUR', symbol: '€', external_id: 'EUR' })
      .returning('id'),
  );
  const countryId = await insertedId(
    trx
      .insertInto('countries')
      .values({ ...t, name: 'Portugal', iso_code: 'PT', external_id: 'PT' })
      .returning('id'),
  );

  const companyCode = companyCodeFromName(tenantName);
  const companyId = await insertedId(
    trx
      .insertInto('companies')
      .values({
        ...t,
        code: companyCode,
        name: tenantName.trim() || 'Main company',
        currency_id: currencyId,
        country_id: countryId,
        required_hours: 8,
      })
      .returning('id'),
  );

  const divisionId = await insertedId(
    trx
      .insertInto('divisions')
      .values({ ...t, company_id: companyId, name: 'General', external_id: 'DIV-001' })
      .returning('id'),
  );
  const departmentExternalId = 'DEP-001';
  const departmentId = await insertedId(
    trx
      .insertInto('departments')
      .values({
        ...t,
        company_id: companyId,
        division_id: divisionId,
        name: 'General',
        external_id: departmentExternalId,
      })
      .returning('id'),
  );

  const typologyGroupId = await insertedId(
    trx
      .insertInto('typology_groups')
      .values({ ...t, name: 'Staff', external_id: 'TG-001', company_id: companyId })
      .returning('id'),
  );
  await trx
    .insertInto('typology_group_companies')
    .values({ ...t, typology_group_id: typologyGroupId, company_id: companyId })
    .execute();
  await trx
    .insertInto('typology_group_departments')
    .values({ ...t, typology_group_id: typologyGroupId, department_id: departmentId })
    .execute();
  const typologyExternalId = 'TYP-001';
  const typologyId = await insertedId(
    trx
      .insertInto('typologies')
      .values({
        ...t,
        name: 'Staff',
        external_id: typologyExternalId,
        department_id: departmentId,
        typology_group_id: typologyGroupId,
      })
      .returning('id'),
  );

  // The user feed looks user types up by these exact names.
  const regular = await insertedId(
    trx
      .insertInto('user_types')
      .values({ ...t, name: 'Regular/Permanent' })
      .returning('id'),
  );
  const temporary = await insertedId(
    trx
      .insertInto('user_types')
      .values({ ...t, name: 'Temporary' })
      .returning('id'),
  );

  const docTypes = await trx
    .insertInto('document_types')
    .values(TENANT_DOCUMENT_TYPES.map((d) => ({ ...t, name: d.name, class_name: d.className, full_name: fullTypeName(d.className) })))
    .returning(['id', 'class_name'])
    .execute();
  const docTypeId = idsBy(docTypes.map((r) => [r.class_name, r.id]));

  const stageTypes = await trx
    .insertInto('workflow_stage_types')
    .values(STAGE_TYPES.map((s, i) => ({ ...t, name: s.name, color: s.color, sort_order: i })))
    .returning(['id', 'name'])
    .execute();
  const stageTypeId = idsBy(stageTypes.map((r) => [r.name, r.id]));

  for (const [className, label] of [
    ['Deliverable', 'Job'],
    ['Project', 'Project'],
  ] as const) {
    const workflowId = await insertedId(
      trx
        .insertInto('workflows')
        .values({
          ...t,
          document_type_id: docTypeId(className),
          name: `Default ${label} Workflow`,
          is_default: true,
        })
        .returning('id'),
    );
    const stages = await trx
      .insertInto('workflow_stages')
      .values(
        STAGE_TYPES.map((s, i) => ({
          ...t,
          workflow_id: workflowId,
          stage_type_id: stageTypeId(s.name),
          name: s.name,
          color: s.color,
          sort_order: i,
          is_initial: i === 0,
          // The stage's own Delayed flag (DE-Jobs/DE-Projects IsDelayed): work in progress can be late.
          delayed: s.name === 'In Progress',
        })),
      )
      .returning(['id', 'name'])
      .execute();
    const stageId = idsBy(stages.map((r) => [r.name, r.id]));
    await trx
      .insertInto('workflow_transitions')
      .values(
        DEFAULT_TRANSITIONS.map((tr, i) => ({
          ...t,
          workflow_id: workflowId,
          from_stage_id: stageId(tr.from),
          to_stage_id: stageId(tr.to),
          name: tr.name,
          sort_order: i,
          comment_required: tr.commentRequired ?? false,
        })),
      )
      .execute();
  }

  return {
    companyId,
    companyCode,
    divisionId,
    departmentId,
    departmentExternalId,
    typologyGroupId,
    typologyId,
    typologyExternalId,
    userTypeIds: { regular, temporary },
  };
}
