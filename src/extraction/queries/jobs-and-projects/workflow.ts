// Workflow configuration: DE-Stages (one row per stage), DE-Transitions (one row per transition, with
// its lists flattened to text) and DE-Types (one row per job/request/estimate/contract type).
import type { NamedQueryDefinition } from '../../definition.ts';
import { sql } from '../../definition.ts';
import { userName } from '../fragments.ts';

export const stages: NamedQueryDefinition = {
  name: 'DE-Stages',
  key: ['StageId'],
  source: (ctx) => sql`
    select
      s.id as "StageId",
      s.name as "Stage",
      st.id as "TypeId",
      st.name as "Type"
    from workflow_stages s
    join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
    where s.tenant_id = ${ctx.tenantId}`,
};

/** A jsonb array as "a, b, c": strings as they are, objects by their name or type (else their JSON). */
const jsonList = (column: string) => sql`(
  select string_agg(case jsonb_typeof(e) when 'string' then e #>> '{}' else coalesce(e ->> 'name', e ->> 'type', e::text) end, ', ' order by n)
  from jsonb_array_elements(${sql.ref(column)}) with ordinality as x(e, n)
)`;

/** Names of the teams that may edit a document while it is in the stage, alphabetically. */
const writeTeams = (stageIdColumn: string) => sql`(
  select string_agg(tm.name, ', ' order by tm.name)
  from workflow_stage_write_teams wt
  join teams tm on tm.tenant_id = wt.tenant_id and tm.id = wt.team_id
  where wt.tenant_id = t.tenant_id and wt.stage_id = ${sql.ref(stageIdColumn)}
)`;

export const transitions: NamedQueryDefinition = {
  name: 'DE-Transitions',
  key: ['TransitionId'],
  source: (ctx) => sql`
    select
      t.id as "Oid",
      t.id as "TransitionId",
      t.name as "Transition",
      dt.name as "Document",
      dt.id as "DocumentId",
      w.name as "Workflow",
      w.id as "WorkflowId",
      fs.name as "FromWorkflowState",
      fs.id as "FromWorkflowStateId",
      ts.name as "ToWorkflowState",
      ts.id as "ToWorkflowStateId",
      t.external_id as "ExternalId",
      t.sort_order as "Order",
      t.request_confirmation as "RequestConfirmation",
      t.must_send_notification as "MustSendNotification",
      t.comment_required as "CommentRequired",
      t.hours_required as "HoursRequired",
      t.file_upload_required as "FileUploadRequired",
      t.file_upload_folder as "FileUploadFolder",
      t.query_validation as "QueryValidation",
      ${jsonList('t.motives')} as "Motives",
      ${jsonList('t.actions')} as "Actions",
      ${writeTeams('t.from_stage_id')} as "FromAllowWriteTeams",
      ${writeTeams('t.to_stage_id')} as "ToAllowWriteTeams",
      ${jsonList('t.roles')} as "Roles",
      types.ids as "TypeIds",
      types.names as "Types"
    from workflow_transitions t
    join workflows w on w.tenant_id = t.tenant_id and w.id = t.workflow_id
    join document_types dt on dt.tenant_id = w.tenant_id and dt.id = w.document_type_id
    join workflow_stages fs on fs.tenant_id = t.tenant_id and fs.id = t.from_stage_id
    join workflow_stages ts on ts.tenant_id = t.tenant_id and ts.id = t.to_stage_id
    -- As the platform: every type whose workflow is the transition's, ids and names ", "-joined in the same (name) order.
    left join lateral (
      select string_agg(jt.id::text, ', ' order by jt.name, jt.id) as ids, string_agg(jt.name, ', ' order by jt.name, jt.id) as names
      from job_types jt
      where jt.tenant_id = t.tenant_id and jt.workflow_id = t.workflow_id
    ) types on true
    where t.tenant_id = ${ctx.tenantId}`,
};

export const types: NamedQueryDefinition = {
  name: 'DE-Types',
  key: ['TypeId'],
  source: (ctx) => sql`
    select
      jt.id as "TypeId",
      jt.id as "DocumentOid",
      jt.name as "Type",
      jt.code as "Code",
      jt.duration_days as "DurationDays",
      jt.is_active as "Active",
      jt.is_retainer as "IsRetainer",
      jt.plannable as "Plannable",
      jt.is_deliverable as "IsDeliverable",
      jt.allow_all_job_types as "AllowAllJobTypes",
      jt.created_on_utc as "CreatedOn",
      jt.modified_on_utc as "ModifiedOn",
      bt.name as "BriefingTemplate",
      bt.id as "BriefingTemplateId",
      bot.name as "BusinessObjectType",
      bot.id as "BusinessObjectTypeId",
      co.name as "Company",
      co.id as "CompanyId",
      dv.name as "Division",
      dv.id as "DivisionId",
      d.name as "Department",
      d.id as "DepartmentId",
      dt.name as "Document",
      dt.id as "DocumentId",
      w.name as "Workflow",
      w.id as "WorkflowId",
      ${userName('cu')} as "CreatedByName",
      ${userName('mu')} as "ModifiedByName",
      jt.created_by_id as "CreatedById",
      jt.modified_by_id as "ModifiedById",
      cu.image_file_id is not null as "CreatedByHasImage",
      mu.image_file_id is not null as "ModifiedByHasImage",
      jt.style::text as "TypeStyle",
      jt.accessible_to_all_departments as "AccessibleToAllDepartments",
      jt.allows_timesheet as "AllowsTimesheet",
      sv.id as "ServiceId",
      sv.name as "Service",
      wt.name as "WorkType",
      wt.id as "WorkTypeId"
    from job_types jt
    join companies co on co.tenant_id = jt.tenant_id and co.id = jt.company_id
    join document_types dt on dt.tenant_id = jt.tenant_id and dt.id = jt.document_type_id
    left join departments d on d.tenant_id = jt.tenant_id and d.id = jt.department_id
    left join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
    left join briefing_templates bt on bt.tenant_id = jt.tenant_id and bt.id = jt.briefing_template_id
    left join business_object_types bot on bot.tenant_id = jt.tenant_id and bot.id = jt.business_object_type_id
    left join workflows w on w.tenant_id = jt.tenant_id and w.id = jt.workflow_id
    left join services sv on sv.tenant_id = jt.tenant_id and sv.id = jt.service_id
    left join work_types wt on wt.tenant_id = jt.tenant_id and wt.id = jt.work_type_id
    left join users cu on cu.tenant_id = jt.tenant_id and cu.id = jt.created_by_id
    left join users mu on mu.tenant_id = jt.tenant_id and mu.id = jt.modified_by_id
    where jt.tenant_id = ${ctx.tenantId}`,
};
