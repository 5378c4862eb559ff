// The import's mappings of workflow configuration (DE-BusinessObjectTypes, DE-Transitions, DE-Types,
// DE-Stages): business object types, workflows, their stage types, stages and transitions, and job types.
// The target's default workflows give way to the source's (IMPORT_TABLES). These queries also name the
// source's document-type ids: the target's type of the same name takes the source's id (re-keyed before
// any row of the target refers to it), so every DocumentId they show lines up.
import type { SourceRow } from '../client.ts';
import type { QueryImport, RunState, TableWrite, Values } from '../mappings.ts';
import { derivedId, id, jsonText } from './helpers.ts';

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
