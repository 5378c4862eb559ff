// Create, change and read a document of any registered type, in the caller's transaction: the row, its
// workflow's initial stage, its history, its folder, its custom fields and brief, and the Created /
// Updated event with every changed property and its type (the spec's note 2).
import { randomUUID } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import { updateRow } from '../../domain/writes.ts';
import type { Principal } from '../../platform/auth/principal.ts';
import { executeDraw, executePrepared, type Trx } from '../../platform/db/database.ts';
import { HttpProblem, notFound } from '../../platform/errors.ts';
import { fullTypeName } from '../../platform/events/catalogue.ts';
import { appendEvent } from '../../platform/events/outbox.ts';
import { addBrief, type BriefInput } from '../collaboration/briefs.ts';
import { putUserFieldValues, userFieldValuesOf } from '../collaboration/user-fields.ts';
import {
  type InitialStage,
  initialStageAndTransition,
  movedAction,
  type PlannedMove,
  planStageChange,
  type StageChange,
  stageUpdatedDetail,
} from '../workflow/workflow.ts';
import { requireStageWrite, requireWrite } from './access.ts';
import { documentTypeId } from './document-type-ids.ts';
import { columnValues, type Field, KIND_TYPE, requireFields, viewOf } from './fields.ts';
import type { DocumentDef, Row, WriteHookArgs } from './registry.ts';

export interface DocumentInput {
  model: Row;
  /** JSON path of the model, for field errors (`/body/CreateModel`, `/body/Actions/Document/Project`). */
  path: string;
  /** Custom fields by column name (DocumentUserFieldValues). */
  userFields?: Record<string, unknown> | null;
  brief?: BriefInput | null;
}

/** A document as loaded for a change: its row and current stage. */
export interface LoadedDocument {
  def: DocumentDef;
  row: Row;
  id: string;
  stage: { id: string | null; name: string | null; typeName: string | null };
}

/** Changed columns as event detail: API names, values, and PropertyTypes naming each one's type. */
export function changeDetail(fields: readonly Field[], changes: Row): Row {
  const detail: Row = {};
  const types: Record<string, string> = {};
  for (const [column, value] of Object.entries(changes)) {
    const f = fields.find((x) => x.column === column);
    if (!f) continue;
    detail[f.name] = value;
    types[f.name] = KIND_TYPE[f.kind];
  }
  return { ...detail, PropertyTypes: types };
}

/** Locks and loads a document; 404 when there is none of this type with this id. */
export async function loadDocument(trx: Trx, def: DocumentDef, id: string, lock = true): Promise<LoadedDocument> {
  const { rows } = await sql<{ row: Row; stage_name: string | null; stage_type: string | null }>`
    select to_jsonb(d) as row, s.name as stage_name, st.name as stage_type
      from ${sql.table(def.table)} d
      left join workflow_stages s on ${def.stageless ? sql`false` : sql`s.tenant_id = d.tenant_id and s.id = d.stage_id`}
      left join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
     where d.id = ${id.toLowerCase()} ${lock ? sql`for update of d` : sql``}`.execute(trx);
  const found = rows[0];
  if (!found) throw notFound(`There is no ${def.type} with id ${id}.`);
  const stageId = (found.row.stage_id as string | null) ?? null;
  return { def, row: found.row, id: String(found.row.id), stage: { id: stageId, name: found.stage_name, typeName: found.stage_type } };
}

/** A PostgreSQL constraint error on a document write as a problem naming the model's property. */
function constraintProblem(err: unknown, def: DocumentDef, path: string, values: Row): unknown {
  const e = err as { code?: string; constraint?: string; table?: string };
  if (e?.code !== '23503' && e?.code !== '23505') return err;
  const rest = (e.constraint ?? '')
    .replace(`${e.table}_`, '')
    .replace(/_(fkey|key)$/, '')
    .replace(/^tenant_id_/, '');
  const field = [...def.fields].reverse().find((f) => rest.endsWith(f.column));
  const name = field?.name ?? rest;
  const value = field ? values[field.column] : undefined;
  const shown = value === undefined ? '' : ` ${JSON.stringify(value)}`;
  const problem =
    e.code === '23503'
      ? new HttpProblem(422, `${name}${shown} does not match any record.`, { errors: [{ path: `${path}/${name}`, message: 'no such record' }] })
      : new HttpProblem(409, `Another ${def.type} already has this ${name}${shown}.`, {
          errors: [{ path: `${path}/${name}`, message: 'already used by another record' }],
        });
  return Object.assign(problem, { cause: err });
}

async function naming<T>(def: DocumentDef, path: string, values: Row, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw constraintProblem(err, def, path, values);
  }
}

/**
 * The Created event's detail built by PostgreSQL from the inserted row: each non-null field under its API
 * name, and PropertyTypes naming the type of each one present (the same shape as changeDetail).
 */
function createdDetail(fields: readonly Field[]) {
  const pairs = fields.map((f) => sql`${f.name}::text, to_jsonb(ins.${sql.id(f.column)})`);
  return sql`jsonb_strip_nulls(jsonb_build_object('Id', ins.id, ${sql.join(pairs)})) as d`;
}

/** The workflow and initial stage of a new document: `preferred` (the definition's own), its type's workflow, else its document type's default. */
const initialStageSql = (dt: string, typeId: unknown, preferred: RawBuilder<unknown> = sql`null::uuid`) => sql`
  select w.id as workflow_id, st.id as stage_id, st.name as stage_name, sty.name as stage_type
    from workflows w
    join workflow_stages st on st.tenant_id = w.tenant_id and st.workflow_id = w.id and st.is_initial
    join workflow_stage_types sty on sty.tenant_id = st.tenant_id and sty.id = st.stage_type_id
   where w.id = coalesce(
           ${preferred},
           (select jt.workflow_id from job_types jt where jt.id = ${typeId}::uuid),
           (select x.id from workflows x where x.document_type_id = ${dt} and x.is_default order by x.created_on_utc, x.id limit 1))
   order by st.sort_order limit 1`;

/**
 * More rows written by the statement that creates a document (a post's own row): given the new document's
 * id and the planned move, answers an INSERT … RETURNING of one row, which comes back as `also`.
 */
export type AlsoWrite = (id: string, moved: Row | undefined) => Promise<RawBuilder<unknown>>;

/**
 * Where a create's read-only lookups may run instead of the transaction: the tenant's pipelined read lane
 * (prepared, written with other requests' lookups). Only for lookups of rows the transaction has not written.
 */
export type Lookup = <T>(fn: (db: Trx) => Promise<T>) => Promise<T>;

/**
 * The draw of the next number of a document type in a tenant (decision 0044): one past the larger of the
 * counter and the highest number of that prefix in use (the demo data's, an import's), so a generated number
 * never meets one already taken. It runs outside the creating transaction and commits at once (executeDraw,
 * decision 0068), like nextval: the counter's row lock lasts this statement, not the creating transaction.
 */
function nextNumber(def: DocumentDef, tenantId: string) {
  // The pattern is a literal (made of the type's prefix, letters and digits only) so that the statement matches
  // the partial index of its table (migration 0039): the highest number in use is one index probe, not a scan.
  // It is written as ORDER BY … DESC LIMIT 1 rather than max(): the plan of max() is chosen by the table's
  // estimated size, and a plan made while the table looked small (a lane's prepared plan, or statistics not yet
  // refreshed after a burst of inserts) aggregated every document of the tenant on each draw, a cost that grew
  // with the tenant (decision 0072). The ordered form reads the index from its top whatever the estimate.
  const pattern = sql.lit(`^${def.numberPrefix.replace(/[^A-Za-z0-9]/g, '')}-([0-9]{1,18})$`);
  return sql<{ number: string; value: string }>`
    insert into document_numbers as dn (tenant_id, prefix, last_value)
    values (${tenantId}, ${def.numberPrefix}, coalesce((
      select substring(number from ${pattern})::bigint from ${sql.table(def.table)} where tenant_id = ${tenantId} and number ~ ${pattern}
       order by substring(number from ${pattern})::bigint desc limit 1), 0) + 1)
    on conflict (tenant_id, prefix) do update set last_value = greatest(dn.last_value + 1, excluded.last_value)
    returning ${def.numberPrefix}::text || '-' || lpad(dn.last_value::text, 6, '0') as number, dn.last_value::text as value`;
}

/** A number drawn by nextNumber, and whether it was drawn outside the creating transaction. */
type Drawn = { rows: { number: string; value: string }[]; outside: boolean };

/**
 * A drawn number its create did not use goes back to the counter when no later draw took the one after it
 * (the usual case: a create refused by a constraint or by the rules of its move), so a refused create leaves no gap.
 */
const giveBack = (def: DocumentDef, tenantId: string, value: string) => sql`
  update document_numbers set last_value = last_value - 1 where tenant_id = ${tenantId} and prefix = ${def.numberPrefix} and last_value = ${value}::bigint`;

/**
 * Creates a document; answers it loaded (row and stage). Checks the Write role and fills defaults; the row,
 * its number (drawn from the type's counter when not sent), its workflow's initial stage, its root folder, its
 * first history row and its Created event are one statement. With `change` (a post creating a document and
 * moving it), the transition is checked against the initial stage first and the document is written directly in
 * its destination stage, with both history periods and StageUpdated, in that same statement. A type with a
 * `finish` hook (the project's team) is moved after it instead, since its team takes part in the rules.
 */
export async function createDocument(
  trx: Trx,
  actor: Principal,
  def: DocumentDef,
  input: DocumentInput,
  change?: StageChange,
  also?: AlsoWrite,
  lookup: Lookup = (fn) => fn(trx),
  opts: { last?: boolean } = {},
): Promise<LoadedDocument & { moved?: Row; also?: Row }> {
  requireWrite(actor, def);
  if (def.create) {
    const id = await def.create(trx, actor, input.model, input.path);
    if (input.userFields) await putUserFieldValues(trx, actor, def, id, input.userFields, `${input.path}/DocumentUserFieldValues`);
    if (input.brief) await addBrief(trx, actor, def, id, input.brief);
    return loadDocument(trx, def, id, false);
  }
  const values = columnValues(def.fields, input.model, input.path);
  const hook: WriteHookArgs = { trx, actor, model: input.model, path: input.path, values, before: null };
  await def.prepare?.(hook);
  const number = values.number ?? null;
  const name = values.name ?? null;
  delete values.number;
  delete values.name;
  requireFields(
    def.fields.filter((f) => f.column !== 'number' && f.column !== 'name'),
    values,
    input.path,
  );
  const dt = await documentTypeId(trx, actor.tenantId, def.className);
  const typeId = def.typeColumn ? (values[def.typeColumn] ?? null) : null;
  const preferred = def.workflow?.(values);
  const columns = Object.keys(values);
  const hasName = def.fields.some((f) => f.column === 'name');
  const fieldTypes = sql.join(def.fields.map((f) => sql`(${f.name}::text, ${KIND_TYPE[f.kind]}::text)`));
  let plan: PlannedMove | null = null;
  let initial = initialStageSql(dt, typeId, preferred);
  let drawing: Promise<Drawn> | null = null;
  let drawn: Drawn | null = null;
  // With `also`, the id is chosen here so that the caller's rows can name the new document in the same statement.
  const newId = also ? randomUUID() : null;
  let alsoSql: RawBuilder<unknown> | null = null;
  // A number drawn for a create that is then refused goes back (see giveBack).
  const giveBackDrawn = async () => {
    const d = await drawing?.catch(() => null);
    if (d?.outside) await executeDraw(trx, giveBack(def, actor.tenantId, d.rows[0].value)).catch(() => {});
  };
  try {
    if (change && !def.finish) {
      const looking = change.transitionId
        ? lookup((db) => initialStageAndTransition(db, actor, initialStageSql(dt, typeId, preferred), change.transitionId as string))
        : initialStageSql(dt, typeId, preferred)
            .execute(trx)
            .then(({ rows }) => ({ start: rows[0] as InitialStage | undefined, t: undefined }));
      // The number is drawn while the workflow is looked up: both leave for the tenant's lane in one write (decision
      // 0089). A move the rules refuse below gives it back.
      if (number === null) {
        drawing = executeDraw(trx, nextNumber(def, actor.tenantId));
        drawing.catch(() => {});
      }
      const looked = await looking;
      const { start } = looked;
      const provisional: LoadedDocument = {
        def,
        id: '',
        row: { ...values, workflow_id: start?.workflow_id ?? null, stage_id: start?.stage_id ?? null },
        stage: { id: start?.stage_id ?? null, name: start?.stage_name ?? null, typeName: start?.stage_type ?? null },
      };
      plan = await planStageChange(trx, actor, provisional, change, looked.t);
      // The stage the rules were checked against is the one written: the statement need not look it up again.
      if (start) {
        initial = sql`select ${start.workflow_id}::uuid as workflow_id, ${start.stage_id}::uuid as stage_id, ${start.stage_name}::text as stage_name, ${start.stage_type}::text as stage_type`;
      }
    }
    alsoSql = also ? await also(newId as string, plan ? movedAction(plan) : undefined) : null;
    // Without a move, drawn once every check above has passed, so a refused create takes no number.
    if (number === null) drawing ??= executeDraw(trx, nextNumber(def, actor.tenantId));
    drawn = await drawing;
  } catch (err) {
    await giveBackDrawn();
    throw err;
  }
  const toStage = plan?.t.to_stage_id ?? null;
  const stageDetail = plan ? JSON.stringify(stageUpdatedDetail({ def, row: values }, plan)) : null;
  const statement = sql<{ row: Row; stage_name: string | null; stage_type: string | null; also: Row | null }>`
    with n as (select ${number ?? drawn?.rows[0].number}::text as number
    ), s as (${initial}
    ), ins as (
      insert into ${sql.table(def.table)} (${newId ? sql`id, ` : sql``}tenant_id, created_by_id, modified_by_id, number, ${hasName ? sql`name, ` : sql``} workflow_id, stage_id
        ${sql.join(
          columns.map((c) => sql`, ${sql.id(c)}`),
          sql``,
        )})
      values (${newId ? sql`${newId}::uuid, ` : sql``}${actor.tenantId}, ${actor.userId}, ${actor.userId}, (select number from n), ${hasName ? sql`coalesce(nullif(${name}::text, ''), (select number from n)), ` : sql``}
        (select workflow_id from s), coalesce(${toStage}::uuid, (select stage_id from s)) ${sql.join(
          columns.map((c) => sql`, ${values[c]}`),
          sql``,
        )})
      returning *
    ), folder as (
      insert into folders (tenant_id, name, document_type_id, document_id, created_by_id, modified_by_id)
      select ins.tenant_id, ins.number, ${dt}::uuid, ins.id, ins.created_by_id, ins.created_by_id from ins
    ), history as (
      insert into document_history (tenant_id, document_type_id, document_id, version, start_date, end_date, user_id, action, stage_id)
      select ins.tenant_id, ${dt}::uuid, ins.id, 1, now(), case when ${toStage}::uuid is not null then now() end, ins.created_by_id, 'Created', (select stage_id from s)
        from ins
      union all
      select ins.tenant_id, ${dt}::uuid, ins.id, 2, now(), null, ins.created_by_id, 'StageChanged', ins.stage_id from ins where ${toStage}::uuid is not null
    ), detail as (
      select ${createdDetail(def.fields)} from ins
    ), event as (
      insert into events (tenant_id, action_type, document_type, document_id, detail, user_id)
      select ins.tenant_id, 'Created', ${fullTypeName(def.className)}, ins.id,
             detail.d || jsonb_build_object('PropertyTypes', (select coalesce(jsonb_object_agg(t.k, t.v), '{}') from (values ${fieldTypes}) t(k, v) where detail.d ? t.k)),
             ins.created_by_id
        from ins, detail
      -- One INSERT for both, in this order, so Created takes the lower seq and is dispatched first.
      union all
      select ins.tenant_id, 'StageUpdated', ${fullTypeName(def.className)}, ins.id, ${stageDetail}::jsonb, ins.created_by_id from ins where ${toStage}::uuid is not null
    )${alsoSql ? sql`, also as (${alsoSql})` : sql``}
    select to_jsonb(ins) as row, (select stage_name from s) as stage_name, (select stage_type from s) as stage_type,
           ${alsoSql ? sql`(select to_jsonb(a) from also a)` : sql`null`} as also
      from ins`;
  const inserted = await naming(def, input.path, { ...values, number: number ?? drawn?.rows[0].number ?? null, name }, async () => {
    try {
      // The caller's last write, unless this type, user fields or a brief write after it: COMMIT leaves with it (decision 0085).
      return await executePrepared(trx, statement, { last: opts.last === true && !def.finish && !input.userFields && !input.brief });
    } catch (err) {
      await giveBackDrawn();
      throw err;
    }
  });
  const found = inserted.rows[0];
  const row = found.row;
  const id = String(row.id);
  await def.finish?.({ ...hook, id });
  if (input.userFields) await putUserFieldValues(trx, actor, def, id, input.userFields, `${input.path}/DocumentUserFieldValues`);
  if (input.brief) await addBrief(trx, actor, def, id, input.brief);
  const alsoRow = found.also ?? undefined;
  if (plan) return { def, row, id, stage: { id: plan.t.to_stage_id, name: plan.t.to_stage, typeName: null }, moved: movedAction(plan), also: alsoRow };
  return { def, row, id, stage: { id: (row.stage_id as string | null) ?? null, name: found.stage_name, typeName: found.stage_type }, also: alsoRow };
}

/** Changes the properties sent; Updated with those that really changed. Checks the Write role and the stage's write teams. */
export async function updateDocument(trx: Trx, actor: Principal, def: DocumentDef, id: string, input: DocumentInput): Promise<LoadedDocument> {
  requireWrite(actor, def);
  const doc = await loadDocument(trx, def, id);
  await requireStageWrite(trx, actor, doc.id, doc.stage);
  const values = columnValues(def.fields, input.model, input.path);
  const hook: WriteHookArgs = { trx, actor, model: input.model, path: input.path, values, before: doc.row };
  await def.prepare?.(hook);
  for (const f of def.fields) {
    if (f.required && values[f.column] === null)
      throw new HttpProblem(400, `${f.name} may not be null.`, { errors: [{ path: `${input.path}/${f.name}`, message: 'may not be null' }] });
  }
  const result = await naming(def, input.path, values, () => updateRow(trx, actor, def.table, doc.id, values));
  await def.finish?.({ ...hook, id: doc.id });
  if (result && Object.keys(result.changes).length) {
    await appendEvent(trx, {
      tenantId: actor.tenantId,
      actionType: 'Updated',
      documentType: def.className,
      documentId: doc.id,
      detail: changeDetail(def.fields, result.changes),
      userId: actor.userId,
    });
  }
  if (input.userFields) await putUserFieldValues(trx, actor, def, doc.id, input.userFields, `${input.path}/DocumentUserFieldValues`);
  if (input.brief) await addBrief(trx, actor, def, doc.id, input.brief);
  return doc;
}

/** The answer of GET /api/v3/<type>s/{id}: the fields, the stage, the folder and the custom fields. */
export async function documentView(trx: Trx, def: DocumentDef, id: string): Promise<Row> {
  const { rows } = await sql<{ row: Row; stage: string | null; stage_type_id: string | null; stage_type: string | null; folder_id: string | null }>`
    select to_jsonb(d) as row, s.name as stage, st.id as stage_type_id, st.name as stage_type,
           (select f.id from folders f where f.document_id = d.id and f.parent_id is null order by f.created_on_utc, f.id limit 1) as folder_id
      from ${sql.table(def.table)} d
      left join workflow_stages s on s.tenant_id = d.tenant_id and s.id = d.stage_id
      left join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
     where d.id = ${id.toLowerCase()}`.execute(trx);
  const found = rows[0];
  if (!found) throw notFound(`There is no ${def.type} with id ${id}.`);
  const r = found.row;
  return {
    Id: r.id,
    ...viewOf(def.fields, r),
    ...((await def.view?.(trx, r)) ?? {}),
    WorkflowId: r.workflow_id ?? null,
    StageId: r.stage_id ?? null,
    Stage: found.stage,
    StageTypeId: found.stage_type_id,
    StageType: found.stage_type,
    FileSystemRootId: found.folder_id,
    DocumentUserFieldValues: await userFieldValuesOf(trx, def, String(r.id)),
    CreatedOnUtc: new Date(String(r.created_on_utc)).toISOString(),
    CreatedById: r.created_by_id ?? null,
    ModifiedOnUtc: new Date(String(r.modified_on_utc)).toISOString(),
    ModifiedById: r.modified_by_id ?? null,
  };
}
