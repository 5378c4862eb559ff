// Scheduled extraction API under /api/v3/analytics/schedules: CRUD, run-now, runs and their files.
// HTTP only; validation and storage are the service's, running is the worker's.
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from 'typebox';
import { hasRole } from '../platform/auth/principal.ts';
import type { AppContext } from '../platform/context.ts';
import { conflict, forbidden, HttpProblem } from '../platform/errors.ts';
import { exportStore } from '../platform/export-store.ts';
import type { App, FastifyRequest } from '../platform/http/app.ts';
import { named } from '../platform/http/openapi.ts';
import { Guid, nullable } from '../platform/http/schemas.ts';
import { basePathOf } from '../platform/http/tenant-address.ts';
import { requirePrincipal } from '../platform/http/tenant-seam.ts';
import { ScheduleBody } from './schemas.ts';
import {
  CONTENT_TYPES,
  createSchedule,
  deleteSchedule,
  findRun,
  findSchedule,
  listRuns,
  listSchedules,
  MAX_RUNS_TAKE,
  parseFormat,
  previewCron,
  type RunView,
  replaceSchedule,
  runView,
  scheduleView,
  startManualRun,
} from './service.ts';
import { enqueueRun, syncSchedule } from './worker.ts';

const tags = ['Scheduled extraction'];

/** A schedule extracts data as the one who saved it: saving needs DataExtractionRead besides ScheduleWrite (decision 0043). */
function requireExtraction(request: FastifyRequest): void {
  if (!hasRole(requirePrincipal(request), 'DataExtractionRead')) throw forbidden('DataExtractionRead');
}

const Schedule = named(
  'Schedule',
  Type.Object({
    id: Guid,
    tenantId: Guid,
    name: Type.String(),
    query: Type.String(),
    format: Type.String(),
    cronExpression: Type.String(),
    active: Type.Boolean(),
    bom: Type.Boolean(),
    excelSafe: Type.Boolean(),
    queryBuilder: nullable(Type.Record(Type.String(), Type.Unknown())),
    parameters: nullable(Type.Record(Type.String(), Type.Unknown())),
    nextRunsUtc: Type.Array(Type.String({ format: 'date-time' }), { description: 'The next five fire times (UTC); empty while inactive.' }),
    cronDescription: Type.String(),
    runAsAppId: nullable(Guid),
    runAsUserId: nullable(Guid),
    createdOnUtc: Type.String({ format: 'date-time' }),
    createdById: nullable(Guid),
    modifiedOnUtc: Type.String({ format: 'date-time' }),
    modifiedById: nullable(Guid),
  }),
);

const Run = named(
  'ScheduleRun',
  Type.Object({
    id: Guid,
    scheduleId: Guid,
    trigger: Type.Union([Type.Literal('schedule'), Type.Literal('manual')]),
    fireTimeUtc: nullable(Type.String({ format: 'date-time' })),
    startedOnUtc: Type.String({ format: 'date-time' }),
    finishedOnUtc: nullable(Type.String({ format: 'date-time' })),
    status: Type.Union([Type.Literal('Running'), Type.Literal('Succeeded'), Type.Literal('Failed')]),
    rows: nullable(Type.Integer()),
    bytes: nullable(Type.Integer()),
    error: nullable(Type.String()),
    fileName: nullable(Type.String()),
    fileDeletedOnUtc: nullable(Type.String({ format: 'date-time' })),
  }),
);

const IdParams = Type.Object({ id: Guid });
const RunParams = Type.Object({ id: Guid, runId: Guid });
const RunsQuery = Type.Object(
  {
    skip: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$', description: 'Runs to skip; default 0' })),
    take: Type.Optional(Type.String({ pattern: '^(1000|[1-9][0-9]{0,2})$', description: `1 to ${MAX_RUNS_TAKE}; default 50` })),
  },
  { additionalProperties: false },
);
const RunNowQuery = Type.Object(
  {
    wait: Type.Optional(
      Type.String({ pattern: '^([0-9]|1[0-9]|2[0-5])$', description: 'Seconds (0 to 25, default 10) to wait for the run to finish before answering 202.' }),
    ),
  },
  { additionalProperties: false },
);

/** After the row's commit: pg-boss fires the schedule. A failure here is repaired by the worker's reconciliation. */
async function afterSave(ctx: AppContext, request: FastifyRequest, view: { tenantId: string; id: string; cronExpression: string; active: boolean }) {
  if (!ctx.jobs) return;
  await syncSchedule(ctx.jobs, view).catch((err: Error) =>
    request.log.warn({ err, scheduleId: view.id }, 'pg-boss schedule not synced; the worker reconciles it'),
  );
}

export async function scheduleRoutes(app: App, ctx: AppContext): Promise<void> {
  const base = '/api/v3/analytics/schedules';

  app.get(
    base,
    {
      config: { roles: ['ScheduleRead', 'ScheduleWrite'] },
      schema: { tags, operationId: 'schedules_list', summary: 'List the schedules of the tenant', response: { 200: Type.Array(Schedule) } },
    },
    async (request) => request.readTenant((trx) => listSchedules(trx)),
  );

  app.get(
    `${base}/cron-preview`,
    {
      config: { roles: ['ScheduleRead', 'ScheduleWrite'] },
      schema: {
        tags,
        operationId: 'schedules_previewCron',
        summary: 'The next five fire times (UTC) and the words of a cron expression, without saving anything',
        querystring: Type.Object({ cronExpression: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }),
        response: {
          200: Type.Object({ cronExpression: Type.String(), nextRunsUtc: Type.Array(Type.String({ format: 'date-time' })), cronDescription: Type.String() }),
        },
      },
    },
    async (request) => previewCron(request.query.cronExpression),
  );

  app.get(
    `${base}/:id`,
    {
      config: { roles: ['ScheduleRead', 'ScheduleWrite'] },
      schema: { tags, operationId: 'schedules_get', summary: 'Get one schedule', params: IdParams, response: { 200: Schedule } },
    },
    async (request) => request.readTenant(async (trx) => scheduleView(await findSchedule(trx, request.params.id))),
  );

  app.post(
    base,
    {
      config: { roles: ['ScheduleWrite'] },
      schema: {
        tags,
        operationId: 'schedules_create',
        summary: 'Create a schedule',
        description:
          'Query, queryBuilder and parameters are validated exactly as a dynamic-execute body is; the schedule runs as the calling app (and X-AppUser). ' +
          'The answer shows the next five fire times and the expression in words.',
        body: ScheduleBody,
        response: { 201: Schedule },
      },
    },
    async (request, reply) => {
      requireExtraction(request);
      const view = await request.writeTenant((trx, principal) => createSchedule(trx, principal, request.body));
      await afterSave(ctx, request, view);
      return reply
        .code(201)
        .header('location', `${basePathOf(request)}${base}/${view.id}`)
        .send(view);
    },
  );

  app.put(
    `${base}/:id`,
    {
      config: { roles: ['ScheduleWrite'] },
      schema: { tags, operationId: 'schedules_replace', summary: 'Replace a schedule', params: IdParams, body: ScheduleBody, response: { 200: Schedule } },
    },
    async (request) => {
      requireExtraction(request);
      const view = await request.writeTenant((trx, principal) => replaceSchedule(trx, principal, request.params.id, request.body));
      await afterSave(ctx, request, view);
      return view;
    },
  );

  app.delete(
    `${base}/:id`,
    {
      config: { roles: ['ScheduleWrite'] },
      schema: { tags, operationId: 'schedules_delete', summary: 'Delete a schedule, its runs and its files', params: IdParams, response: { 200: Schedule } },
    },
    async (request) => {
      const { view, files } = await request.writeTenant((trx, principal) => deleteSchedule(trx, principal, request.params.id));
      await afterSave(ctx, request, { ...view, active: false });
      await exportStore(ctx.config)
        .delete(files)
        .catch((err) => request.log.warn({ err }, 'files of a deleted schedule not deleted'));
      return view;
    },
  );

  app.post(
    `${base}/:id/run`,
    {
      config: { roles: ['ScheduleWrite'] },
      schema: {
        tags,
        operationId: 'schedules_runNow',
        summary: 'Run the schedule now',
        description:
          'Queues a run and waits up to `wait` seconds (default 10) for it: 200 with the finished run, or 202 with the run still Running ' +
          '(follow it at the Location). Runs are executed by worker processes.',
        params: IdParams,
        querystring: RunNowQuery,
        response: { 200: Run, 202: Run },
      },
    },
    async (request, reply) => {
      if (!ctx.jobs) throw new HttpProblem(503, 'Background jobs are not available in this process.');
      const { run, tenantId } = await request.writeTenant(async (trx, p) => ({ run: await startManualRun(trx, request.params.id), tenantId: p.tenantId }));
      await enqueueRun(ctx.jobs, tenantId, request.params.id, run.id);
      const waitMs = Math.min(Number(request.query.wait ?? 10) * 1000, Math.max(0, request.deadline - Date.now() - 1000));
      const until = Date.now() + waitMs;
      let current: RunView = run;
      while (current.status === 'Running' && Date.now() < until) {
        await sleep(Math.min(100, Math.max(0, until - Date.now())));
        current = runView(await request.readTenant((db) => findRun(db, request.params.id, run.id), { lane: true }));
      }
      return reply
        .code(current.status === 'Running' ? 202 : 200)
        .header('location', `${basePathOf(request)}${base}/${request.params.id}/runs/${run.id}`)
        .send(current);
    },
  );

  app.get(
    `${base}/:id/runs`,
    {
      config: { roles: ['ScheduleRead', 'ScheduleWrite'] },
      schema: {
        tags,
        operationId: 'schedules_listRuns',
        summary: 'Runs of the schedule, newest first',
        params: IdParams,
        querystring: RunsQuery,
        response: { 200: Type.Array(Run) },
      },
    },
    async (request) => request.readTenant((trx) => listRuns(trx, request.params.id, Number(request.query.skip ?? 0), Number(request.query.take ?? 50))),
  );

  app.get(
    `${base}/:id/runs/:runId`,
    {
      config: { roles: ['ScheduleRead', 'ScheduleWrite'] },
      schema: { tags, operationId: 'schedules_getRun', summary: 'One run of the schedule', params: RunParams, response: { 200: Run } },
    },
    async (request) => request.readTenant(async (trx) => runView(await findRun(trx, request.params.id, request.params.runId))),
  );

  app.get(
    `${base}/:id/runs/:runId/file`,
    {
      config: { roles: ['ScheduleRead', 'ScheduleWrite'] },
      schema: {
        tags,
        operationId: 'schedules_downloadRunFile',
        summary: "Download a run's file",
        description:
          'Content-Disposition names it {Query}_{yyyyMMddHHmmss}.{ext} (the run start, UTC). 409 while the run is Running or when it failed; 410 once retention deleted it.',
        params: RunParams,
        response: {
          200: {
            description: 'The file, in the format of the schedule',
            content: Object.fromEntries([...new Set(Object.values(CONTENT_TYPES))].map((type) => [type, { schema: Type.String({ format: 'binary' }) }])),
          },
        },
      },
    },
    async (request, reply) => {
      const { run, format } = await request.readTenant(async (trx) => {
        const schedule = await findSchedule(trx, request.params.id);
        return { run: await findRun(trx, request.params.id, request.params.runId), format: schedule.format };
      });
      if (run.status === 'Running') throw conflict('The run has not finished yet; its file is not ready.');
      if (run.status === 'Failed') throw conflict(`The run failed and produced no file: ${run.error ?? 'unknown error'}`);
      if (!run.file_path || !run.file_name)
        throw new HttpProblem(410, `The file of this run was deleted by retention (${run.file_deleted_on_utc?.toISOString() ?? 'earlier'}).`);
      // Streamed through this process from the store (local directory or object storage), whichever process wrote it.
      const stored = await exportStore(ctx.config).get(run.file_path);
      if (!stored) throw new HttpProblem(410, 'The file of this run is no longer in storage.');
      const ext = path.extname(run.file_path).slice(1);
      return reply
        .type(CONTENT_TYPES[parseFormat(ext) ?? format])
        .header('content-length', stored.size)
        .header('content-disposition', `attachment; filename="${run.file_name}"`)
        .header('cache-control', 'no-store')
        .send(stored.stream as never);
    },
  );
}
