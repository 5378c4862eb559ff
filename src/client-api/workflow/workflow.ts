// Workflows of a document type (stages, stage types, colours, transitions with their flags), the
// transitions open to the acting user from a document's stage, and the stage change itself: allowed only
// from the transition's from-stage and to users who may write in that stage (409 naming the current
// stage), flags enforced (a required comment: 422); it moves the document, writes its history and raises
// StageUpdated with the spec's detail fields.
import { type RawBuilder, sql } from 'kysely';
import { hasRole, isAdministrator, type Principal } from '../../platform/auth/principal.ts';
import type { Trx } from '../../platform/db/database.ts';
import { forbidden, HttpProblem, notFound } from '../../platform/errors.ts';
import { eventInsert } from '../../platform/events/outbox.ts';
import { documentTypeId } from '../documents/document-type-ids.ts';
import type { LoadedDocument } from '../documents/documents.ts';
import type { Row } from '../documents/registry.ts';

interface TransitionRow {
  id: string;
  workflow_id: string;
  name: string;
  from_stage_id: string;
  from_stage: string;
  to_stage_id: string;
  to_stage: string;
  sort_order: number;
  request_confirmation: boolean;
  must_send_notification: boolean;
  comment_required: boolean;
  hours_required: boolean;
  file_upload_required: boolean;
  file_upload_folder: string | null;
  motives: unknown;
  roles: unknown;
  type_ids: string[];
  workflow_name: string;
  write_teams: string[];
  on_write_team: boolean;
}

/**
 * Transitions with their stages, the types they are limited to, the teams that may write in their
 * from-stage and whether the user is on one of them in this document's team.
 */
const transitions = (documentId: string | null, userId: string | null) => sql`
  select t.id, t.workflow_id, w.name as workflow_name, t.name, t.from_stage_id, fs.name as from_stage, t.to_stage_id, ts.name as to_stage, t.sort_order,
         t.request_confirmation, t.must_send_notification, t.comment_required, t.hours_required, t.file_upload_required,
         t.file_upload_folder, t.motives, t.roles,
         coalesce((select array_agg(tt.job_type_id order by tt.job_type_id) from workflow_transition_types tt where tt.transition_id = t.id), '{}') as type_ids,
         coalesce((select array_agg(tm.name order by tm.name) from workflow_stage_write_teams ws join teams tm on tm.tenant_id = ws.tenant_id and tm.id = ws.team_id
                    where ws.stage_id = t.from_stage_id), '{}') as write_teams,
         exists (select 1 from workflow_stage_write_teams ws join assignments a on a.tenant_id = ws.tenant_id and a.team_id = ws.team_id
                  where ws.stage_id = t.from_stage_id and a.document_id = ${documentId}::uuid and a.user_id = ${userId}::uuid) as on_write_team
    from workflow_transitions t
    join workflows w on w.tenant_id = t.tenant_id and w.id = t.workflow_id
    join workflow_stages fs on fs.tenant_id = t.tenant_id and fs.id = t.from_stage_id
    join workflow_stages ts on ts.tenant_id = t.tenant_id and ts.id = t.to_stage_id`;

export function transitionView(t: TransitionRow): Row {
  return {
    Id: t.id,
    WorkflowId: t.workflow_id,
    Name: t.name,
    LocalizedName: t.name,
    FromStageId: t.from_stage_id,
    FromStage: t.from_stage,
    ToStageId: t.to_stage_id,
    ToStage: t.to_stage,
    Order: t.sort_order,
    RequestConfirmation: t.request_confirmation,
    MustSendNotification: t.must_send_notification,
    CommentRequired: t.comment_required,
    HoursRequired: t.hours_required,
    FileUploadRequired: t.file_upload_required,
    FileUploadFolder: t.file_upload_folder,
    Motives: Array.isArray(t.motives) ? t.motives : [],
    Roles: Array.isArray(t.roles) ? t.roles : [],
    TypeIds: t.type_ids,
  };
}

/** GET /api/v3/document-types/{id}/workflows: {id} is the document type's id or any of its names. */
export async function workflowsOf(trx: Trx, documentType: string, expandTransitions: boolean): Promise<Row[]> {
  const isId = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(documentType);
  const dt = await trx
    .selectFrom('document_types')
    .select(['id', 'class_name', 'name'])
    .where((eb) =>
      isId
        ? eb('id', '=', documentType.toLowerCase())
        : eb.or([
            eb(sql`lower(class_name)`, '=', documentType.toLowerCase()),
            eb(sql`lower(name)`, '=', documentType.toLowerCase()),
            eb(sql`lower(full_name)`, '=', documentType.toLowerCase()),
          ]),
    )
    .executeTakeFirst();
  if (!dt) throw notFound(`There is no document type ${documentType}.`);
  const { rows: workflows } = await sql<{ id: string; name: string; is_default: boolean; external_id: string | null }>`
    select id, name, is_default, external_id from workflows where document_type_id = ${dt.id} order by is_default desc, name, id`.execute(trx);
  if (workflows.length === 0) return [];
  const ids = workflows.map((w) => w.id);
  const { rows: stages } = await sql<{
    id: string;
    workflow_id: string;
    name: string;
    color: string | null;
    sort_order: number;
    is_initial: boolean;
    external_id: string | null;
    stage_type_id: string;
    stage_type: string;
    stage_type_color: string | null;
    write_teams: { Id: string; Name: string }[];
  }>`
    select s.id, s.workflow_id, s.name, s.color, s.sort_order, s.is_initial, s.external_id, st.id as stage_type_id, st.name as stage_type, st.color as stage_type_color,
           coalesce((select jsonb_agg(jsonb_build_object('Id', tm.id, 'Name', tm.name) order by tm.name)
                       from workflow_stage_write_teams w join teams tm on tm.tenant_id = w.tenant_id and tm.id = w.team_id where w.stage_id = s.id), '[]') as write_teams
      from workflow_stages s join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
     where s.workflow_id = any(${ids}::uuid[]) order by s.sort_order, s.name`.execute(trx);
  const listed = expandTransitions
    ? (await sql<TransitionRow>`${transitions(null, null)} where t.workflow_id = any(${ids}::uuid[]) order by t.sort_order, t.name`.execute(trx)).rows
    : [];
  return workflows.map((w) => ({
    Id: w.id,
    Name: w.name,
    IsDefault: w.is_default,
    ExternalId: w.external_id,
    DocumentTypeId: dt.id,
    DocumentTypeName: dt.class_name,
    Stages: stages
      .filter((s) => s.workflow_id === w.id)
      .map((s) => ({
        Id: s.id,
        Name: s.name,
        LocalizedName: s.name,
        Color: s.color,
        Order: s.sort_order,
        IsInitial: s.is_initial,
        ExternalId: s.external_id,
        StageTypeId: s.stage_type_id,
        StageType: s.stage_type,
        StageTypeColor: s.stage_type_color,
        AllowWriteTeams: s.write_teams,
      })),
    ...(expandTransitions ? { Transitions: listed.filter((t) => t.workflow_id === w.id).map(transitionView) } : {}),
  }));
}

/** Why the actor may not run a transition on the document, or null when it may. */
function refusal(actor: Principal, doc: LoadedDocument, t: TransitionRow): 'stage' | 'type' | 'write' | 'role' | null {
  if (t.from_stage_id !== doc.stage.id) return 'stage';
  const typeId = doc.def.typeColumn ? (doc.row[doc.def.typeColumn] as string | null) : null;
  if (t.type_ids.length && (!typeId || !t.type_ids.includes(typeId))) return 'type';
  const roles = Array.isArray(t.roles) ? (t.roles as string[]) : [];
  if (roles.length && !roles.some((r) => hasRole(actor, r))) return 'role';
  if (t.write_teams.length && !t.on_write_team && !isAdministrator(actor)) return 'write';
  return null;
}

/** GET /api/workflowStateTransitions: what the actor may run from the document's stage now. */
export async function availableTransitions(trx: Trx, actor: Principal, doc: LoadedDocument): Promise<Row[]> {
  if (!doc.stage.id) return [];
  const { rows } =
    await sql<TransitionRow>`${transitions(doc.id || null, actor.userId)} where t.from_stage_id = ${doc.stage.id} order by t.sort_order, t.name`.execute(trx);
  return rows.filter((t) => refusal(actor, doc, t) === null).map(transitionView);
}

export interface StageChange {
  transitionId?: string | null;
  /** The stage to go to (StatusId); alone, the stage is set directly and the event has no WorkflowStageTransition*. */
  statusId?: string | null;
  /** The post's text (a comment) and whether it links files, for the transition's flags. */
  comment: string;
  hasFiles: boolean;
  /** JSON path of the Transition object. */
  path: string;
}

function currentStageConflict(doc: LoadedDocument, why: string): HttpProblem {
  return new HttpProblem(409, `The ${doc.def.type} is in stage "${doc.stage.name}": ${why}`, {
    extra: { currentStageId: doc.stage.id, currentStage: doc.stage.name },
  });
}

/** A stage change that passed every rule, ready to be written. */
export interface PlannedMove {
  t: TransitionRow;
  direct: boolean;
}

export async function changeStage(trx: Trx, actor: Principal, doc: LoadedDocument, change: StageChange): Promise<Row> {
  const plan = await planStageChange(trx, actor, doc, change);
  return moveTo(trx, actor, doc, plan);
}

/**
 * Finds the transition asked for and applies the workflow's rules to it; throws the refusal. The document
 * may be one about to be created (id ''), in its initial stage.
 */
export async function planStageChange(
  trx: Trx,
  actor: Principal,
  doc: LoadedDocument,
  change: StageChange,
  /** The transition named by change.transitionId when already looked up (null: there is none). */
  known?: TransitionRow | null,
): Promise<PlannedMove> {
  if (!doc.row.workflow_id || !doc.stage.id) throw new HttpProblem(409, `The ${doc.def.type} has no workflow, so its stage cannot change.`);
  let t: TransitionRow | undefined;
  const direct = !change.transitionId;
  if (change.transitionId) {
    t =
      known !== undefined
        ? (known ?? undefined)
        : (
            await sql<TransitionRow>`${transitions(doc.id || null, actor.userId)} where t.id = ${change.transitionId.toLowerCase()} and t.workflow_id = ${doc.row.workflow_id}`.execute(
              trx,
            )
          ).rows[0];
    if (!t) {
      throw new HttpProblem(422, `TransitionId ${change.transitionId} is not a transition of the ${doc.def.type}'s workflow.`, {
        errors: [{ path: `${change.path}/TransitionId`, message: 'not a transition of the document’s workflow' }],
      });
    }
    if (change.statusId && change.statusId.toLowerCase() !== t.to_stage_id) {
      throw new HttpProblem(422, `StatusId ${change.statusId} is not where transition "${t.name}" leads (${t.to_stage}).`, {
        errors: [{ path: `${change.path}/StatusId`, message: 'not the transition’s destination stage' }],
      });
    }
  } else if (change.statusId) {
    const to = change.statusId.toLowerCase();
    const stage = await trx
      .selectFrom('workflow_stages')
      .select('id')
      .where('id', '=', to)
      .where('workflow_id', '=', String(doc.row.workflow_id))
      .executeTakeFirst();
    if (!stage) {
      throw new HttpProblem(422, `StatusId ${change.statusId} is not a stage of the ${doc.def.type}'s workflow.`, {
        errors: [{ path: `${change.path}/StatusId`, message: 'not a stage of the document’s workflow' }],
      });
    }
    // Set directly: allowed along a transition from the current stage, whose rules still apply.
    const { rows } =
      await sql<TransitionRow>`${transitions(doc.id || null, actor.userId)} where t.from_stage_id = ${doc.stage.id} and t.to_stage_id = ${to} order by t.sort_order, t.name`.execute(
        trx,
      );
    const reasons = [];
    for (const candidate of rows) {
      const why = refusal(actor, doc, candidate);
      if (!why) {
        t = candidate;
        break;
      }
      reasons.push(why);
    }
    if (!t) {
      if (reasons.includes('role')) throw forbidden(rows.flatMap((r) => (Array.isArray(r.roles) ? (r.roles as string[]) : [])));
      throw currentStageConflict(doc, rows.length ? 'the acting user may not move it from this stage.' : 'no transition leads from it to the stage asked for.');
    }
  } else {
    throw new HttpProblem(400, 'A Transition needs TransitionId or StatusId.', { errors: [{ path: change.path, message: 'needs TransitionId or StatusId' }] });
  }
  if (!direct) {
    const why = refusal(actor, doc, t);
    if (why === 'stage') throw currentStageConflict(doc, `transition "${t.name}" leads from "${t.from_stage}".`);
    if (why === 'type') throw currentStageConflict(doc, `transition "${t.name}" is not open to documents of this type.`);
    if (why === 'role') throw forbidden(t.roles as string[]);
    if (why === 'write') throw currentStageConflict(doc, 'the acting user is not on a team that may write in this stage.');
  }
  if (t.comment_required && change.comment.trim() === '') {
    throw new HttpProblem(422, `Transition "${t.name}" requires a comment: send it as the post's Text.`, {
      errors: [{ path: '/body/Text', message: 'a comment is required' }],
    });
  }
  if (t.file_upload_required && !change.hasFiles) {
    throw new HttpProblem(422, `Transition "${t.name}" requires a file: send it in Actions.Files.`, {
      errors: [{ path: '/body/Actions/Files', message: 'a file is required' }],
    });
  }
  return { t, direct };
}

export interface InitialStage {
  workflow_id: string;
  stage_id: string;
  stage_name: string;
  stage_type: string;
}

/**
 * A new document's initial stage (`initial`: a statement selecting the InitialStage row) and the transition
 * `transitionId` of its workflow, in one statement: a post creating a document and moving it asks for both
 * before writing, and one round trip fewer is a good part of such a post's time.
 */
export async function initialStageAndTransition(
  trx: Trx,
  actor: Principal,
  initial: RawBuilder<unknown>,
  transitionId: string,
): Promise<{ start: InitialStage | undefined; t: TransitionRow | null }> {
  const { rows } = await sql<{ start: InitialStage; t: TransitionRow | null }>`
    with s as (${initial})
    select to_jsonb(s) as start,
           (select to_jsonb(tr) from (${transitions(null, actor.userId)} where t.id = ${transitionId.toLowerCase()} and t.workflow_id = s.workflow_id) tr) as t
      from s`.execute(trx);
  return { start: rows[0]?.start, t: rows[0]?.t ?? null };
}

/** The spec's StageUpdated detail (no WorkflowStageTransition* when the stage was set directly; DepartmentId where the type has one). */
export function stageUpdatedDetail(doc: Pick<LoadedDocument, 'def' | 'row'>, { t, direct }: PlannedMove): Row {
  const departmentId = doc.def.departmentColumn ? ((doc.row[doc.def.departmentColumn] as string | null) ?? null) : undefined;
  return {
    ...(direct ? {} : { WorkflowStageTransitionId: t.id, WorkflowStageTransitionName: t.name, WorkflowStageTransitionLocalizedName: t.name }),
    FromWorkflowStageId: t.from_stage_id,
    FromWorkflowStageName: t.from_stage,
    FromWorkflowStageLocalizedName: t.from_stage,
    ToWorkflowStageId: t.to_stage_id,
    ToWorkflowStageName: t.to_stage,
    ToWorkflowStageLocalizedName: t.to_stage,
    WorkflowId: t.workflow_id,
    WorkflowName: t.workflow_name,
    ...(departmentId !== undefined ? { DepartmentId: departmentId } : {}),
  };
}

/** What a post's Actions.Transition answers once the move is written. */
export const movedAction = ({ t, direct }: PlannedMove): Row => ({ StatusId: t.to_stage_id, TransitionId: direct ? null : t.id });

/** The stage change, its history (the open period closed, a new one opened) and StageUpdated, in one statement. */
async function moveTo(trx: Trx, actor: Principal, doc: LoadedDocument, plan: PlannedMove): Promise<Row> {
  const { t } = plan;
  const dt = await documentTypeId(trx, actor.tenantId, doc.def.className);
  const detail = stageUpdatedDetail(doc, plan);
  const event = eventInsert({
    tenantId: actor.tenantId,
    actionType: 'StageUpdated',
    documentType: doc.def.className,
    documentId: doc.id,
    detail,
    userId: actor.userId,
  });
  await sql`
    with moved as (
      update ${sql.table(doc.def.table)} set stage_id = ${t.to_stage_id}, modified_on_utc = now(), modified_by_id = ${actor.userId} where id = ${doc.id}
    ), closed as (
      update document_history set end_date = now() where document_id = ${doc.id} and end_date is null
    ), opened as (
      insert into document_history (tenant_id, document_type_id, document_id, version, start_date, user_id, action, stage_id)
      values (${actor.tenantId}, ${dt}, ${doc.id}, coalesce((select max(version) from document_history where document_id = ${doc.id}), 0) + 1, now(),
              ${actor.userId}, 'StageChanged', ${t.to_stage_id})
    ), event as (${event})
    select 1`.execute(trx);
  doc.stage = { id: t.to_stage_id, name: t.to_stage, typeName: null };
  doc.row.stage_id = t.to_stage_id;
  return movedAction(plan);
}
