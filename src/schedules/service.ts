// Schedules of a tenant: validation of the body (cron, query, format, and the query builder planned
// exactly as dynamic-execute plans it), storage with events, the views the API answers, and runs.
import { sql } from 'kysely';
import type { ExecuteBody } from '../extraction/service.ts';
import { plan } from '../extraction/service.ts';
import type { Principal } from '../platform/auth/principal.ts';
import { CronError, describeCron, nextRuns, normalizeCron, validateCron } from '../platform/cron.ts';
import type { Trx } from '../platform/db/database.ts';
import { jsonObject, type RowOf } from '../platform/db/schema.ts';
import { badRequest, type FieldError, HttpProblem, notFound } from '../platform/errors.ts';
import { appendEvent } from '../platform/events/outbox.ts';
import type { ScheduleInput } from './schemas.ts';

export const DOCUMENT_TYPE = 'DataExtractionSchedule';
export const FORMATS = ['csv', 'json', 'ndjson', 'xlsx'] as const;
export type ScheduleFormat = (typeof FORMATS)[number];

export const CONTENT_TYPES: Record<ScheduleFormat, string> = {
  csv: 'text/csv; charset=utf-8',
  json: 'application/json; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
};

export interface ScheduleView {
  id: string;
  tenantId: string;
  name: string;
  query: string;
  format: ScheduleFormat;
  cronExpression: string;
  active: boolean;
  /** CSV only: the file starts with a UTF-8 BOM. */
  bom: boolean;
  /** CSV only: formula-like text cells are quoted (see CsvOptions). */
  excelSafe: boolean;
  queryBuilder: Record<string, unknown> | null;
  parameters: Record<string, unknown> | null;
  /** The next five fire times (ISO 8601 UTC); empty while the schedule is inactive. */
  nextRunsUtc: string[];
  cronDescription: string;
  runAsAppId: string | null;
  runAsUserId: string | null;
  createdOnUtc: string;
  createdById: string | null;
  modifiedOnUtc: string;
  modifiedById: string | null;
}

export interface RunView {
  id: string;
  scheduleId: string;
  trigger: 'schedule' | 'manual';
  fireTimeUtc: string | null;
  startedOnUtc: string;
  finishedOnUtc: string | null;
  status: 'Running' | 'Succeeded' | 'Failed';
  rows: number | null;
  bytes: number | null;
  error: string | null;
  fileName: string | null;
  fileDeletedOnUtc: string | null;
}

export type ScheduleRow = RowOf<'extraction_schedules'>;
export type RunRow = RowOf<'extraction_schedule_runs'>;

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function scheduleView(row: ScheduleRow, now = new Date()): ScheduleView {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    query: row.query,
    format: row.format,
    cronExpression: row.cron_expression,
    active: row.active,
    bom: row.csv_bom,
    excelSafe: row.excel_safe,
    queryBuilder: jsonObject(row.query_builder),
    parameters: jsonObject(row.parameters),
    nextRunsUtc: row.active ? nextRuns(row.cron_expression, now, 5).map((d) => d.toISOString()) : [],
    cronDescription: describeCron(row.cron_expression),
    runAsAppId: row.run_as_app_id,
    runAsUserId: row.run_as_user_id,
    createdOnUtc: row.created_on_utc.toISOString(),
    createdById: row.created_by_id,
    modifiedOnUtc: row.modified_on_utc.toISOString(),
    modifiedById: row.modified_by_id,
  };
}

export function runView(row: RunRow): RunView {
  return {
    id: row.id,
    scheduleId: row.schedule_id,
    trigger: row.trigger,
    fireTimeUtc: iso(row.fire_time_utc),
    startedOnUtc: row.started_on_utc.toISOString(),
    finishedOnUtc: iso(row.finished_on_utc),
    status: row.status,
    rows: row.rows === null ? null : Number(row.rows),
    bytes: row.bytes === null ? null : Number(row.bytes),
    error: row.error,
    fileName: row.file_name,
    fileDeletedOnUtc: iso(row.file_deleted_on_utc),
  };
}

/** `.csv`, `CSV` and `csv` are the same format. */
export function parseFormat(value: string): ScheduleFormat | null {
  const f = value.trim().toLowerCase().replace(/^\./, '');
  return (FORMATS as readonly string[]).includes(f) ? (f as ScheduleFormat) : null;
}

interface Validated {
  name: string;
  query: string;
  format: ScheduleFormat;
  cron: string;
  active: boolean;
  bom: boolean;
  excelSafe: boolean;
  queryBuilder: Record<string, unknown> | null;
  parameters: Record<string, unknown> | null;
}

/** Every problem of the body at once where they are independent; the builder is planned as the caller. */
async function validate(trx: Trx, principal: Principal, input: ScheduleInput): Promise<Validated> {
  const errors: FieldError[] = [];
  const name = input.Name.trim();
  if (!name) errors.push({ path: '/Name', message: 'Name must not be empty.' });
  const format = parseFormat(input.Format);
  if (!format) errors.push({ path: '/Format', message: `Format must be one of ${FORMATS.join(', ')} (a leading dot is accepted); got "${input.Format}".` });
  const cron = normalizeCron(input.CronExpression);
  try {
    validateCron(cron);
  } catch (err) {
    if (!(err instanceof CronError)) throw err;
    errors.push({ path: '/CronExpression', message: err.message });
  }
  const body: ExecuteBody = { queryBuilder: input.queryBuilder ?? null, parameters: input.parameters ?? null };
  let query = input.Query.trim();
  try {
    // The same planning as dynamic-execute: unknown fields, ops, values and parameters are 400s.
    const planned = await plan(trx, principal, query, body, false);
    query = planned.query.name;
  } catch (err) {
    if (!(err instanceof HttpProblem)) throw err;
    if (err.status === 404) errors.push({ path: '/Query', message: err.message });
    else if (err.status === 400 && errors.length === 0) throw err;
    else if (err.status === 400) errors.push(...(err.errors ?? [{ path: '/queryBuilder', message: err.message }]));
    else throw err;
  }
  if (errors.length) {
    throw new HttpProblem(400, errors.length === 1 ? errors[0].message : `The schedule has ${errors.length} problems.`, { errors });
  }
  return {
    name,
    query,
    format: format as ScheduleFormat,
    cron,
    active: input.Active ?? true,
    bom: input.Bom ?? false,
    excelSafe: input.ExcelSafe ?? false,
    queryBuilder: (input.queryBuilder as Record<string, unknown> | null | undefined) ?? null,
    parameters: (input.parameters as Record<string, unknown> | null | undefined) ?? null,
  };
}

/** The stored columns of a validated body; the saver becomes whom the runs act as. */
const columns = (v: Validated, principal: Principal) => ({
  name: v.name,
  query: v.query,
  format: v.format,
  cron_expression: v.cron,
  active: v.active,
  csv_bom: v.bom,
  excel_safe: v.excelSafe,
  query_builder: v.queryBuilder === null ? null : JSON.stringify(v.queryBuilder),
  parameters: v.parameters === null ? null : JSON.stringify(v.parameters),
  run_as_app_id: principal.appId,
  run_as_user_id: principal.userId,
});

/** A schedule as events describe it (Created, Deleted, and the Schedule of Executed). */
export const eventDetail = (view: ScheduleView) => ({
  Name: view.name,
  Query: view.query,
  Format: view.format,
  CronExpression: view.cronExpression,
  Active: view.active,
});

export async function listSchedules(trx: Trx): Promise<ScheduleView[]> {
  const rows = await trx.selectFrom('extraction_schedules').selectAll().orderBy('name').orderBy('id').execute();
  const now = new Date();
  return rows.map((r) => scheduleView(r, now));
}

export async function findSchedule(trx: Trx, id: string, lock = false): Promise<ScheduleRow> {
  let q = trx.selectFrom('extraction_schedules').selectAll().where('id', '=', id);
  if (lock) q = q.forUpdate();
  const row = await q.executeTakeFirst();
  if (!row) throw notFound(`No schedule ${id}.`);
  return row;
}

export async function createSchedule(trx: Trx, principal: Principal, input: ScheduleInput): Promise<ScheduleView> {
  const v = await validate(trx, principal, input);
  const row = await trx
    .insertInto('extraction_schedules')
    .values({
      tenant_id: principal.tenantId,
      ...columns(v, principal),
      created_by_id: principal.userId,
      modified_by_id: principal.userId,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = scheduleView(row);
  await appendEvent(trx, {
    tenantId: principal.tenantId,
    actionType: 'Created',
    documentType: DOCUMENT_TYPE,
    documentId: row.id,
    detail: eventDetail(view),
    userId: principal.userId,
  });
  return view;
}

export async function replaceSchedule(trx: Trx, principal: Principal, id: string, input: ScheduleInput): Promise<ScheduleView> {
  const before = scheduleView(await findSchedule(trx, id, true));
  const v = await validate(trx, principal, input);
  const row = await trx
    .updateTable('extraction_schedules')
    .set({
      ...columns(v, principal),
      modified_on_utc: sql`now()`,
      modified_by_id: principal.userId,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const view = scheduleView(row);
  // Updated carries the changed properties, as every Updated event does.
  const after = eventDetail(view);
  const previous = eventDetail(before) as Record<string, unknown>;
  const changed: Record<string, unknown> = Object.fromEntries(Object.entries(after).filter(([k, val]) => previous[k] !== val));
  if (JSON.stringify(before.queryBuilder) !== JSON.stringify(view.queryBuilder)) changed.QueryBuilder = view.queryBuilder;
  if (JSON.stringify(before.parameters) !== JSON.stringify(view.parameters)) changed.Parameters = view.parameters;
  if (Object.keys(changed).length) {
    await appendEvent(trx, {
      tenantId: principal.tenantId,
      actionType: 'Updated',
      documentType: DOCUMENT_TYPE,
      documentId: id,
      detail: changed,
      userId: principal.userId,
    });
  }
  return view;
}

/** Deletes the schedule and its runs; answers the schedule and the files to remove after the commit. */
export async function deleteSchedule(trx: Trx, principal: Principal, id: string): Promise<{ view: ScheduleView; files: string[] }> {
  const view = scheduleView(await findSchedule(trx, id, true));
  const files = await trx.selectFrom('extraction_schedule_runs').select('file_path').where('schedule_id', '=', id).where('file_path', 'is not', null).execute();
  await trx.deleteFrom('extraction_schedules').where('id', '=', id).execute();
  await appendEvent(trx, {
    tenantId: principal.tenantId,
    actionType: 'Deleted',
    documentType: DOCUMENT_TYPE,
    documentId: id,
    detail: eventDetail(view),
    userId: principal.userId,
  });
  return { view, files: files.flatMap((f) => (f.file_path === null ? [] : [f.file_path])) };
}

export const MAX_RUNS_TAKE = 1000;

export async function listRuns(trx: Trx, scheduleId: string, skip: number, take: number): Promise<RunView[]> {
  await findSchedule(trx, scheduleId);
  const rows = await trx
    .selectFrom('extraction_schedule_runs')
    .selectAll()
    .where('schedule_id', '=', scheduleId)
    .orderBy('started_on_utc', 'desc')
    .orderBy('id', 'desc')
    .offset(skip)
    .limit(take)
    .execute();
  return rows.map(runView);
}

export async function findRun(trx: Trx, scheduleId: string, runId: string): Promise<RunRow> {
  const row = await trx.selectFrom('extraction_schedule_runs').selectAll().where('schedule_id', '=', scheduleId).where('id', '=', runId).executeTakeFirst();
  if (!row) throw notFound(`No run ${runId} of schedule ${scheduleId}.`);
  return row;
}

/** A run-now: the run row exists (Running) before its job is queued, so the caller can follow it at once. */
export async function startManualRun(trx: Trx, scheduleId: string): Promise<RunView> {
  const schedule = await findSchedule(trx, scheduleId);
  const row = await trx
    .insertInto('extraction_schedule_runs')
    .values({ tenant_id: schedule.tenant_id, schedule_id: scheduleId, trigger: 'manual' })
    .returningAll()
    .executeTakeFirstOrThrow();
  return runView(row);
}

/** What a schedule with this expression would show, before it is saved: the console's live preview. */
export function previewCron(expression: string, now = new Date()): { cronExpression: string; nextRunsUtc: string[]; cronDescription: string } {
  const cron = normalizeCron(expression);
  try {
    validateCron(cron);
  } catch (err) {
    if (!(err instanceof CronError)) throw err;
    throw badRequest(err.message, [{ path: '/querystring/cronExpression', message: err.message }]);
  }
  return { cronExpression: cron, nextRunsUtc: nextRuns(cron, now, 5).map((d) => d.toISOString()), cronDescription: describeCron(cron) };
}
