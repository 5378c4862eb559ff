// The document types Project, Job (Deliverable), Contract and Request, with the published
// property names (client-api.md) mapped onto the data model's columns, and their defaults.
import { sql } from 'kysely';
import type { Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem } from '../../platform/errors.ts';
import { addMember, removeMember } from '../collaboration/assignments.ts';
import { departmentField, guidField, nameAndNumber } from './fields.ts';
import { defineDocument, type WriteHookArgs } from './registry.ts';

/** The acting user's department, the default of a document that needs one. */
export async function departmentDefault(a: WriteHookArgs): Promise<void> {
  if (a.before || a.values.department_id !== undefined || !a.actor.userId) return;
  const user = await a.trx.selectFrom('users').select('department_id').where('id', '=', a.actor.userId).executeTakeFirst();
  if (user?.department_id) a.values.department_id = user.department_id;
}

/** Company, client and currency of a document from its contract when not sent (on create). */
async function fromContract(a: WriteHookArgs): Promise<void> {
  if (a.before) return;
  const contractId = a.values.contract_id;
  if (typeof contractId === 'string') {
    const c = await a.trx
      .selectFrom('contracts')
      .select(['company_id', 'commercial_client_id', 'currency_id', 'brand_id', 'product_id'])
      .where('id', '=', contractId)
      .executeTakeFirst();
    if (!c)
      throw new HttpProblem(422, `ContractId ${contractId} does not match any record.`, {
        errors: [{ path: `${a.path}/ContractId`, message: 'no such record' }],
      });
    a.values.company_id ??= c.company_id;
    a.values.commercial_client_id ??= c.commercial_client_id;
    a.values.currency_id ??= c.currency_id;
    a.values.brand_id ??= c.brand_id;
    a.values.product_id ??= c.product_id;
  }
  if (a.values.currency_id === undefined && typeof a.values.company_id === 'string') {
    const co = await a.trx.selectFrom('companies').select('currency_id').where('id', '=', a.values.company_id).executeTakeFirst();
    if (co?.currency_id) a.values.currency_id = co.currency_id;
  }
}

/** Single-member roles of a project's team that the published model sets by user id. */
const PROJECT_ROLES: [string, string][] = [
  ['ProjectOwnerId', 'Project Owner'],
  ['ProjectManagerId', 'Project Manager'],
];

async function teamNamed(trx: Trx, actor: Principal, name: string): Promise<{ id: string; name: string }> {
  const found = await trx.selectFrom('teams').select(['id', 'name']).where('name', '=', name).executeTakeFirst();
  if (found) return found;
  const { rows } = await sql<{ id: string; name: string }>`
    insert into teams (tenant_id, name, created_by_id, modified_by_id) values (${actor.tenantId}, ${name}, ${actor.userId}, ${actor.userId})
    on conflict (tenant_id, name) do update set name = excluded.name returning id, name`.execute(trx);
  return rows[0];
}

export const project = defineDocument({
  type: 'Project',
  className: 'Project',
  aliases: [],
  table: 'projects',
  roles: { read: 'ProjectRead', write: 'ProjectWrite' },
  numberPrefix: 'PRJ',
  fields: [
    ...nameAndNumber('PRJ'),
    { ...guidField('CompanyId', 'company_id'), required: true },
    { ...guidField('ClientId', 'commercial_client_id', 'The commercial client'), required: true },
    guidField('ContractId', 'contract_id', 'Company, client, currency, brand and product default to the contract’s'),
    guidField('BrandId', 'brand_id'),
    guidField('ProductId', 'product_id'),
    guidField('ProjectTypeId', 'project_type_id'),
    guidField('ClassificationId', 'classification_id'),
    guidField('ProjectNatureId', 'nature_id'),
    guidField('CurrencyId', 'currency_id', 'Defaults to the contract’s, else the company’s'),
    guidField('RateCardId', 'rate_card_id'),
    guidField('RateCardColumnId', 'rate_card_column_id'),
    guidField('BusinessObjectTypeId', 'business_object_type_id'),
    { name: 'BeginDateUtc', column: 'start_date', kind: 'date', aliases: ['BeginDate'] },
    { name: 'EndDateUtc', column: 'end_date', kind: 'date', aliases: ['EndDate'] },
    { name: 'Investment', column: 'investment', kind: 'double', notNull: true, description: 'Money: the amount invested (0 when none)' },
    { name: 'AllowsTimesheet', column: 'allows_timesheet', kind: 'bool', notNull: true },
    { name: 'IsDeliverable', column: 'is_deliverable', kind: 'bool', notNull: true },
    { name: 'IsActivated', column: 'is_activated', kind: 'bool', notNull: true },
  ],
  extras: [
    { name: 'ProjectOwnerId', column: '', kind: 'guid', description: 'Member of the project’s "Project Owner" team (replaces the one before)' },
    { name: 'ProjectManagerId', column: '', kind: 'guid', description: 'Member of the project’s "Project Manager" team (replaces the one before)' },
    { name: 'ProjectType', column: '', kind: 'int', description: '0 Isolated, 1 Contract: follows from ContractId (accepted, not stored)' },
    { name: 'IsDraft', column: '', kind: 'bool', description: 'A new project starts in its workflow’s initial stage either way; a Transition moves it on' },
  ],
  prepare: fromContract,
  finish: async (a) => {
    for (const [prop, teamName] of PROJECT_ROLES) {
      const userId = a.model[prop];
      if (userId === undefined) continue;
      const team = await teamNamed(a.trx, a.actor, teamName);
      const { rows } = await sql<{ user_id: string }>`select user_id from assignments where document_id = ${a.id} and team_id = ${team.id}`.execute(a.trx);
      const wanted = typeof userId === 'string' ? userId.toLowerCase() : null;
      for (const r of rows) if (r.user_id !== wanted) await removeMember(a.trx, a.actor, project, a.id, team.id, r.user_id);
      if (wanted && !rows.some((r) => r.user_id === wanted)) await addMember(a.trx, a.actor, project, a.id, team, wanted, `${a.path}/${prop}`);
    }
  },
  view: async (trx, row) => {
    const { rows } = await sql<{ team: string; user_id: string }>`
      select t.name as team, a.user_id from assignments a join teams t on t.tenant_id = a.tenant_id and t.id = a.team_id
       where a.document_id = ${row.id} and t.name in ('Project Owner', 'Project Manager') order by a.created_on_utc`.execute(trx);
    const of = (team: string) => rows.find((r) => r.team === team)?.user_id ?? null;
    return { ProjectOwnerId: of('Project Owner'), ProjectManagerId: of('Project Manager'), ProjectType: row.contract_id ? 1 : 0 };
  },
});

export const job = defineDocument({
  type: 'Job',
  className: 'Deliverable',
  aliases: ['Deliverable (Job)'],
  table: 'jobs',
  roles: { read: 'JobRead', write: 'JobWrite' },
  numberPrefix: 'JOB',
  typeColumn: 'job_type_id',
  departmentColumn: 'department_id',
  fields: [
    ...nameAndNumber('JOB'),
    { ...guidField('ProjectId', 'project_id'), required: true },
    departmentField,
    guidField('JobTypeId', 'job_type_id', 'Its workflow is the job’s (else the default job workflow)'),
    guidField('ParentJobId', 'parent_job_id'),
    guidField('JobClassificationId', 'classification_id'),
    { name: 'Priority', column: 'priority', kind: 'int', notNull: true },
    { name: 'BusinessValue', column: 'business_value', kind: 'int' },
    { name: 'EntryDateUtc', column: 'start_date', kind: 'date', aliases: ['EntryDate'] },
    { name: 'AgreedDateUtc', column: 'end_date', kind: 'date', aliases: ['AgreedDate'] },
    { name: 'RequestedDateUtc', column: 'requested_date', kind: 'date', aliases: ['RequestedDate'] },
    { name: 'Subject', column: 'subject', kind: 'string' },
    { name: 'ToIntegrate', column: 'to_integrate', kind: 'bool', notNull: true },
    { name: 'Motive', column: 'motive', kind: 'string' },
  ],
  prepare: departmentDefault,
});

export const contract = defineDocument({
  type: 'Contract',
  className: 'Contract',
  aliases: [],
  table: 'contracts',
  roles: { read: 'ContractRead', write: 'ContractWrite' },
  numberPrefix: 'CTR',
  typeColumn: 'type_id',
  fields: [
    ...nameAndNumber('CTR'),
    { ...guidField('CompanyId', 'company_id'), required: true },
    { ...guidField('ClientId', 'commercial_client_id', 'The commercial client'), required: true },
    guidField('BrandId', 'brand_id'),
    guidField('ProductId', 'product_id'),
    guidField('TypeId', 'type_id', 'A type (job_types) of document type Contract; its workflow is the contract’s'),
    guidField('CurrencyId', 'currency_id', 'Defaults to the company’s'),
    { name: 'BeginDateUtc', column: 'start_date', kind: 'date', aliases: ['BeginDate', 'StartDate'] },
    { name: 'EndDateUtc', column: 'end_date', kind: 'date', aliases: ['EndDate'] },
  ],
  prepare: fromContract,
});

export const request = defineDocument({
  type: 'Request',
  className: 'Request',
  aliases: [],
  table: 'requests',
  roles: { read: 'RequestRead', write: 'RequestWrite' },
  numberPrefix: 'REQ',
  typeColumn: 'type_id',
  departmentColumn: 'department_id',
  fields: [
    ...nameAndNumber('REQ'),
    departmentField,
    guidField('ClientId', 'commercial_client_id', 'The commercial client'),
    guidField('BrandId', 'brand_id'),
    guidField('ProductId', 'product_id'),
    guidField('ContractId', 'contract_id'),
    guidField('TypeId', 'type_id', 'A type (job_types) of document type Request; its workflow is the request’s'),
    { name: 'BeginDateUtc', column: 'begin_date_utc', kind: 'datetime' },
    { name: 'EndDateUtc', column: 'end_date_utc', kind: 'datetime' },
    { name: 'IsActivated', column: 'is_activated', kind: 'bool', notNull: true },
    { name: 'Priority', column: 'priority', kind: 'int', notNull: true },
  ],
  prepare: departmentDefault,
});
