// The import's mappings of workflow configuration (DE-BusinessObjectTypes, DE-Transitions, DE-Types,
// DE-Stages): business object types, workflows, their stage types, stages and transitions, and job types.
// The target's default workflows give way to the source's (IMPORT_TABLES). These queries also name the
// source's document-type ids: the target's type of the same name takes the source's id (re-keyed before
// any row of the target refers to it), so every DocumentId they show lines up.
import { sql } from 'kysely';
import type { Trx } from '../../platform/db/database.ts';
import type { SourceRow } from '../client.ts';
import type { QueryImport, RunState, TableWrite, Values } from '../mappings.ts';
import { day, derivedId, id, jsonText } from './helpers.ts';
import { CLIENT, CREATED_BY, imageFlags, MODIFIED, MODIFIED_BY } from './images.ts';

/**
 * Re-keys the target's document type named `Document` to the source's `DocumentId` (two writes: the
 * target's row of another id goes, then the same type comes back under the source's id). The run's maps of
 * document types follow, so later queries write the source's ids.
 */
const documentTypeRekey: TableWrite[] = [
  {
    table: 'document_types',
    mode: 'delete',
    values: (r, s) => {
      const own = s.documentTypes.byName.get(String(r.Document));
      return own && id(r.DocumentId) && own.id !== r.DocumentId ? { id: own.id } : null;
    },
  },
  {
    table: 'document_types',
    mode: 'insertMissing',
    values: (r, s) => {
      const own = s.documentTypes.byName.get(String(r.Document));
      const sourceId = id(r.DocumentId);
      if (!own || !sourceId) return null;
      if (own.id !== sourceId) {
        own.id = sourceId;
        s.documentTypes.byClass.set(own.className, sourceId);
        s.documentTypes.byFullName.set(own.fullName, sourceId);
      }
      return { id: sourceId, name: r.Document, class_name: own.className, full_name: own.fullName };
    },
  },
];

/** A transition's list shown flattened to text ("a, b, c"; null when empty) back to the JSON array. */
const textList = (v: unknown): string[] => (typeof v === 'string' && v.length > 0 ? v.split(', ') : []);

/** The workflow of a row that shows one: remembered as the placeholder of stages not yet placed. */
function workflowOf(r: SourceRow, s: RunState): Values | null {
  const workflowId = id(r.WorkflowId);
  if (!workflowId || !s.documentTypes.byName.has(String(r.Document))) return null;
  s.workflowId ??= workflowId;
  return { id: workflowId, name: r.Workflow, document_type_id: r.DocumentId };
}

/** Write-teams of a stage, by team name (DE-Transitions shows names only; teams come with DE-Assignments). */
function writeTeams(stageId: unknown, names: unknown, s: RunState): Values[] {
  if (!id(stageId)) return [];
  return textList(names).flatMap((name) => {
    const teamId = s.teams.get(name);
    return teamId ? [{ id: derivedId('workflow_stage_write_teams', stageId, teamId), stage_id: stageId, team_id: teamId }] : [];
  });
}

/** Workflow configuration, read after the organisation, catalogues and people, before clients and documents. */
export const WORKFLOW_IMPORTS: QueryImport[] = [
  {
    namedQuery: 'DE-BusinessObjectTypes',
    key: ['BusinessObjectTypeId'],
    writes: [
      ...documentTypeRekey,
      {
        // The configuration's content is no query's column (only whether there is one): a type that has one
        // gets an empty-keyed marker object, so HasConfiguration reads the same (docs/import.md).
        table: 'business_object_types',
        complete: { scope: 'all' },
        insertOnly: ['configuration'],
        values: (r) =>
          id(r.DocumentId)
            ? {
                id: r.BusinessObjectTypeId,
                name: r.BusinessObjectType,
                is_default: r.Default,
                document_type_id: r.DocumentId,
                configuration: r.HasConfiguration ? { imported: true } : null,
              }
            : null,
      },
    ],
  },
  {
    // First pass: the workflows transitions show (with their document type).
    namedQuery: 'DE-Transitions',
    key: ['TransitionId'],
    writes: [...documentTypeRekey, { table: 'workflows', values: workflowOf }],
  },
  {
    namedQuery: 'DE-Types',
    key: ['TypeId'],
    writes: [
      ...documentTypeRekey,
      // A workflow no transition shows: known from its types only.
      { table: 'workflows', mode: 'insertMissing', values: workflowOf },
      {
        table: 'briefing_templates',
        mode: 'insertMissing',
        values: (r) => (id(r.BriefingTemplateId) ? { id: r.BriefingTemplateId, name: r.BriefingTemplate } : null),
      },
      {
        table: 'job_types',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.TypeId,
          name: r.Type,
          code: r.Code,
          duration_days: r.DurationDays,
          is_active: r.Active,
          is_retainer: r.IsRetainer,
          plannable: r.Plannable,
          is_deliverable: r.IsDeliverable,
          allow_all_job_types: r.AllowAllJobTypes,
          created_on_utc: r.CreatedOn,
          modified_on_utc: r.ModifiedOn,
          briefing_template_id: r.BriefingTemplateId,
          business_object_type_id: r.BusinessObjectTypeId,
          company_id: r.CompanyId,
          department_id: r.DepartmentId,
          document_type_id: r.DocumentId,
          workflow_id: r.WorkflowId,
          created_by_id: r.CreatedById,
          modified_by_id: r.ModifiedById,
          style: jsonText(r.TypeStyle),
          accessible_to_all_departments: r.AccessibleToAllDepartments,
          allows_timesheet: r.AllowsTimesheet,
          service_id: r.ServiceId,
          work_type_id: r.WorkTypeId,
        }),
      },
      ...imageFlags(CREATED_BY, MODIFIED_BY),
    ],
  },
  {
    // DE-Stages shows no stage's workflow: a new stage is placed in a workflow of the source's, and the
    // transitions (next pass) move each stage they name into its own workflow.
    namedQuery: 'DE-Stages',
    key: ['StageId'],
    writes: [
      { table: 'workflow_stage_types', complete: { scope: 'all' }, values: (r) => ({ id: r.TypeId, name: r.Type }) },
      {
        table: 'workflow_stages',
        complete: { scope: 'all' },
        insertOnly: ['workflow_id'],
        values: (r, s) => {
          if (!s.workflowId) return null;
          if (r.Type === 'Draft') s.draftStageId ??= String(r.StageId);
          return { id: r.StageId, name: r.Stage, stage_type_id: r.TypeId, workflow_id: s.workflowId };
        },
      },
    ],
  },
  {
    namedQuery: 'DE-Transitions',
    key: ['TransitionId'],
    writes: [
      {
        table: 'workflow_stages',
        mode: 'updateOnly',
        values: (r) => [
          { id: r.FromWorkflowStateId, workflow_id: r.WorkflowId },
          { id: r.ToWorkflowStateId, workflow_id: r.WorkflowId },
        ],
      },
      {
        table: 'workflow_transitions',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.TransitionId,
          name: r.Transition,
          workflow_id: r.WorkflowId,
          from_stage_id: r.FromWorkflowStateId,
          to_stage_id: r.ToWorkflowStateId,
          external_id: r.ExternalId,
          sort_order: r.Order,
          request_confirmation: r.RequestConfirmation,
          must_send_notification: r.MustSendNotification,
          comment_required: r.CommentRequired,
          hours_required: r.HoursRequired,
          file_upload_required: r.FileUploadRequired,
          file_upload_folder: r.FileUploadFolder,
          query_validation: r.QueryValidation,
          motives: textList(r.Motives),
          actions: textList(r.Actions),
          roles: textList(r.Roles),
        }),
      },
    ],
  },
];

/** Who may write a document in each stage: after DE-Assignments, which brings the teams (by name). */
export const WORKFLOW_TEAM_IMPORTS: QueryImport[] = [
  {
    namedQuery: 'DE-Transitions',
    key: ['TransitionId'],
    writes: [
      {
        table: 'workflow_stage_write_teams',
        complete: { scope: 'all' },
        values: (r, s) => [...writeTeams(r.FromWorkflowStateId, r.FromAllowWriteTeams, s), ...writeTeams(r.ToWorkflowStateId, r.ToAllowWriteTeams, s)],
      },
    ],
  },
];

/**
 * What the source deleted (DE-TimeSheetsDeleted, DE-LeavesDeleted): recorded as Atrium records its own
 * deletions, a tombstone (the row's deleted_on). A row the target holds keeps its columns and gets its
 * deletion time; a row it never held (deleted before the first import) is a tombstone whose columns no
 * query shows, so they are placeholders written on insert only (a user, a job or leave type of the
 * target's, the deletion's day). Tombstones are rows of no other query.
 */
export const TOMBSTONE_IMPORTS: QueryImport[] = [
  {
    namedQuery: 'DE-TimeSheetsDeleted',
    key: ['TimesheetId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'timesheets',
        complete: { scope: 'tombstones' },
        insertOnly: ['user_id', 'job_id', 'date', 'duration_minutes'],
        values: (r, s) =>
          s.anyId.users && s.anyId.jobs
            ? {
                id: r.TimesheetId,
                deleted_on: r.ModifiedOnUtc,
                user_id: s.anyId.users,
                job_id: s.anyId.jobs,
                date: String(r.ModifiedOnUtc).slice(0, 10),
                duration_minutes: 1,
              }
            : null,
      },
    ],
  },
  {
    namedQuery: 'DE-LeavesDeleted',
    key: ['LeaveId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'leaves',
        complete: { scope: 'tombstones' },
        insertOnly: ['user_id', 'leave_type_id', 'day', 'total_minutes'],
        values: (r, s) =>
          s.anyId.users && s.anyId.leave_types
            ? {
                id: r.LeaveId,
                deleted_on: r.ModifiedOnUtc,
                user_id: s.anyId.users,
                leave_type_id: s.anyId.leave_types,
                day: String(r.ModifiedOnUtc).slice(0, 10),
                total_minutes: 0,
              }
            : null,
      },
    ],
  },
];

/** A stage's and a stage type's colour, shown by the documents in them (DE-Jobs, DE-Projects, DE-History). */
export const stageColours: TableWrite[] = [
  { table: 'workflow_stages', mode: 'updateOnly', values: (r) => (id(r.StageId) ? { id: r.StageId, color: r.StageColor } : null) },
  { table: 'workflow_stage_types', mode: 'updateOnly', values: (r) => (id(r.StageTypeId) ? { id: r.StageTypeId, color: r.StageTypeColor } : null) },
];

/**
 * Projects and contracts, before the jobs. DE-Projects names each project's contract, Draft ones too
 * (which DE-Contracts leaves out): such a contract comes with the project's company and client, in a
 * Draft stage; DE-Contracts then gives the others in full. A contract no project names shows no company:
 * it takes one of the target's (docs/import.md).
 */
export const PROJECT_IMPORTS: QueryImport[] = [
  {
    namedQuery: 'DE-Projects',
    key: ['ProjectId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'contracts',
        mode: 'insertMissing',
        values: (r, s) =>
          id(r.ContractId)
            ? {
                id: r.ContractId,
                name: r.Contract,
                number: r.ContractNumber,
                commercial_client_id: r.ClientId,
                company_id: r.CompanyId,
                stage_id: s.draftStageId,
              }
            : null,
      },
      {
        table: 'projects',
        complete: { scope: 'all' },
        values: (r) => ({
          id: r.ProjectId,
          name: r.Project,
          number: r.ProjectNumber,
          company_id: r.CompanyId,
          commercial_client_id: r.ClientId,
          contract_id: r.ContractId,
          start_date: day(r.StartDate),
          end_date: day(r.EndDate),
          modified_on_utc: r.ModifiedOn,
          brand_id: r.BrandId,
          product_id: r.ProductId,
          classification_id: r.ClassificationId,
          nature_id: r.NatureId,
          stage_id: r.StageId,
          currency_id: r.CurrencyId,
          investment: r.Investment,
          created_by_id: r.CreatedById,
          modified_by_id: r.ModifiedId,
        }),
      },
      ...stageColours,
      // Whether its client, creator and modifier have an image (the company's: DE-Companies).
      ...imageFlags(CLIENT, CREATED_BY, MODIFIED),
    ],
  },
  {
    namedQuery: 'DE-Contracts',
    key: ['ContractId'],
    modifiedFrom: true,
    writes: [
      {
        table: 'contracts',
        insertOnly: ['company_id'],
        values: (r, s) =>
          s.anyId.companies
            ? {
                id: r.ContractId,
                name: r.Contract,
                number: r.ContractNumber,
                commercial_client_id: r.ClientId,
                start_date: day(r.StartDate),
                end_date: day(r.EndDate),
                modified_on_utc: r.ModifiedOn,
                brand_id: r.BrandId,
                product_id: r.ProductId,
                type_id: r.TypeId,
                stage_id: r.StageId,
                company_id: s.anyId.companies,
              }
            : null,
      },
    ],
  },
];

/** The target's rate cards and their columns, by name (per run): what DE-Projects names. */
interface RateCards {
  cards: Map<string, { id: string; companyId: string }[]>;
  columns: Map<string, string>;
}
const rateCardsOf = new WeakMap<RunState, RateCards>();
const columnKey = (cardId: string, name: string) => `${cardId}\u0000${name}`;

async function loadRateCards(trx: Trx, tenantId: string, state: RunState): Promise<void> {
  const cards = await sql<{ id: string; name: string; company_id: string }>`
    select id, name, company_id from rate_cards where tenant_id = ${tenantId} order by id`.execute(trx);
  const columns = await sql<{ id: string; name: string; rate_card_id: string }>`
    select id, name, rate_card_id from rate_card_columns where tenant_id = ${tenantId} order by id desc`.execute(trx);
  const byName = new Map<string, { id: string; companyId: string }[]>();
  for (const c of cards.rows) byName.set(c.name, [...(byName.get(c.name) ?? []), { id: c.id, companyId: c.company_id }]);
  // Ordered by id descending: of two columns of one card with the same name, the smallest id is kept.
  rateCardsOf.set(state, { cards: byName, columns: new Map(columns.rows.map((c) => [columnKey(c.rate_card_id, c.name), c.id])) });
}

/** What one DE-Projects row gives: a card and a column to create (when the target lacks them), the project's references. */
interface ProjectRateCard {
  card: Values | null;
  column: Values | null;
  project: Values;
}
const rateCardOfRow = new WeakMap<SourceRow, ProjectRateCard>();

/**
 * A project's rate card and column, shown by name: the target's card of that name (of the project's company
 * first, then the smallest id) and its column of that name. A card or column no DE-RateCardsColumns row
 * showed (one without a rate) is created from the project's row: its name, company and currency.
 */
function projectRateCard(r: SourceRow, s: RunState): ProjectRateCard {
  const known: RateCards = rateCardsOf.get(s) ?? { cards: new Map(), columns: new Map() };
  const out: ProjectRateCard = { card: null, column: null, project: { id: r.ProjectId, rate_card_id: null, rate_card_column_id: null } };
  const cardName = typeof r.RateCard === 'string' ? r.RateCard : null;
  if (cardName !== null) {
    const candidates = known.cards.get(cardName) ?? [];
    let card = candidates.find((c) => c.companyId === r.CompanyId) ?? candidates[0];
    // A card the target lacks is created only where the row shows what it needs (company, currency).
    if (!card && (!id(r.CompanyId) || !id(r.CurrencyId))) {
      rateCardOfRow.set(r, out);
      return out;
    }
    if (!card) {
      card = { id: derivedId('rate_cards', r.CompanyId, cardName), companyId: String(r.CompanyId) };
      known.cards.set(cardName, [card]);
      out.card = { id: card.id, name: cardName, company_id: r.CompanyId, currency_id: r.CurrencyId };
    }
    out.project.rate_card_id = card.id;
    const columnName = typeof r.RateCardColumn === 'string' ? r.RateCardColumn : null;
    if (columnName !== null) {
      let column = known.columns.get(columnKey(card.id, columnName));
      if (!column) {
        column = derivedId('rate_card_columns', card.id, columnName);
        known.columns.set(columnKey(card.id, columnName), column);
        out.column = { id: column, name: columnName, rate_card_id: card.id };
      }
      out.project.rate_card_column_id = column;
    }
  }
  rateCardOfRow.set(r, out);
  return out;
}

/** DE-Projects again, after the finance queries bring the rate cards: each project's card and column. */
export const PROJECT_RATE_CARD_IMPORTS: QueryImport[] = [
  {
    namedQuery: 'DE-Projects',
    key: ['ProjectId'],
    modifiedFrom: true,
    before: loadRateCards,
    writes: [
      { table: 'rate_cards', mode: 'insertMissing', values: (r, s) => projectRateCard(r, s).card },
      { table: 'rate_card_columns', mode: 'insertMissing', values: (r) => rateCardOfRow.get(r)?.column ?? null },
      { table: 'projects', mode: 'updateOnly', values: (r) => rateCardOfRow.get(r)?.project ?? null },
    ],
  },
];
