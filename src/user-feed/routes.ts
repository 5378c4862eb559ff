// User feed API under /api/v3/user-feed: the settings (on/off, schedule, dry-run default), run now (with
// ?dryRun=true to see what would change), and the runs with per-file and per-row outcomes. The feed is an
// automation, so its runs are also under /api/v3/automations/{automationId}/runs; the roles are the automations'.
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Type } from 'typebox';
import { findAutomation, type HttpRequestValue, runAndRecord, toRunnable } from '../automations/service.ts';
import type { AppContext } from '../platform/context.ts';
import { HttpProblem, notFound } from '../platform/errors.ts';
import { exportStore } from '../platform/export-store.ts';
import type { App } from '../platform/http/app.ts';
import { named } from '../platform/http/openapi.ts';
import { Guid, nullable } from '../platform/http/schemas.ts';
import { basePathOf } from '../platform/http/tenant-address.ts';
import { requirePrincipal } from '../platform/http/tenant-seam.ts';
import { resultCopyKey } from './process-file.ts';
import { findFeedRun, getUserFeed, listFeedRuns, putUserFeed, setAutomationRun } from './service.ts';

const tags = ['User feed'];
const base = '/api/v3/user-feed';

const Settings = named(
  'UserFeed',
  Type.Object({
    enabled: Type.Boolean({ description: 'Whether the schedule runs the feed.' }),
    schedule: Type.String({ description: 'Five-field cron in UTC; default 0 4 * * *.' }),
    dryRun: Type.Boolean({ description: 'Default of every run: report what would change and change nothing.' }),
    automationId: nullable(Guid),
    nextRunUtc: nullable(Type.String({ format: 'date-time' })),
  }),
);

const SettingsBody = named(
  'UserFeedChange',
  Type.Object(
    {
      enabled: Type.Optional(Type.Boolean()),
      schedule: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
      dryRun: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
);

const RowResult = Type.Object({
  row: Type.Integer(),
  externalId: nullable(Type.String()),
  outcome: Type.String({ description: 'Created, Updated, Deactivated, Unchanged, Skipped or Failed' }),
  userId: nullable(Guid),
  message: nullable(Type.String()),
});

const FileResult = Type.Object({
  name: Type.String(),
  status: Type.String({ description: 'Succeeded, Failed, or Skipped (another worker holds this content)' }),
  message: nullable(Type.String()),
  alreadyProcessed: Type.Boolean(),
  fileId: nullable(Guid),
  rows: Type.Integer(),
  created: Type.Integer(),
  updated: Type.Integer(),
  deactivated: Type.Integer(),
  unchanged: Type.Integer(),
  skipped: Type.Integer(),
  failed: Type.Integer(),
  movedTo: nullable(Type.String()),
  resultFile: nullable(Type.String()),
  notified: Type.Boolean(),
  rowResults: Type.Optional(Type.Array(RowResult)),
});

const Run = named(
  'UserFeedRun',
  Type.Object({
    id: Guid,
    automationId: nullable(Guid),
    automationRunId: nullable(Guid),
    trigger: Type.String(),
    dryRun: Type.Boolean(),
    status: Type.String({ description: 'Running, Succeeded or Failed' }),
    startedOnUtc: Type.String({ format: 'date-time' }),
    finishedOnUtc: nullable(Type.String({ format: 'date-time' })),
    error: nullable(Type.String()),
    files: Type.Array(FileResult),
  }),
);

const RunQuery = Type.Object({ dryRun: Type.Optional(Type.String({ enum: ['true', 'false'], description: "Default: the feed's dryRun setting." })) });
// Query strings are not coerced (as elsewhere in the API): numbers are validated as digits.
const RunsQuery = Type.Object(
  {
    skip: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$', description: 'Runs to skip; default 0' })),
    take: Type.Optional(Type.String({ pattern: '^(500|[1-4][0-9]{2}|[1-9][0-9]?)$', description: '1 to 500; default 50' })),
  },
  { additionalProperties: false },
);
const RunParams = Type.Object({ id: Guid });

export async function userFeedRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    base,
    { schema: { tags, operationId: 'userFeed_get', summary: 'The user feed settings', response: { 200: Settings } }, config: { roles: ['AutomationGet'] } },
    async (request) => request.readTenant((trx) => getUserFeed(trx)),
  );

  app.put(
    base,
    {
      schema: {
        tags,
        operationId: 'userFeed_put',
        summary: 'Change the user feed settings',
        description: "Fields left out keep their value. Saves a new version of the feed's automation (made on first save).",
        body: SettingsBody,
        response: { 200: Settings },
      },
      config: { roles: ['AutomationWrite'] },
    },
    async (request) => request.writeTenant((trx, p) => putUserFeed(trx, p, request.body)),
  );

  app.post(
    `${base}/run`,
    {
      schema: {
        tags,
        operationId: 'userFeed_run',
        summary: 'Run the user feed now',
        description:
          "Answers the finished run with each file's rows. `?dryRun=true` reports what would change and changes nothing (no row, no event, no move, no e-mail).",
        querystring: RunQuery,
        response: { 200: Run, 202: Run },
      },
      config: { roles: ['AutomationWrite'] },
    },
    async (request, reply) => {
      const settings = await request.writeTenant(async (trx, p) => {
        const s = await getUserFeed(trx);
        return s.automationId ? s : putUserFeed(trx, p, {});
      });
      const automation = toRunnable(await request.readTenant((trx) => findAutomation(trx, settings.automationId as string)));
      const feedRunId = randomUUID();
      const body: Record<string, unknown> = { trigger: 'manual', userFeedRunId: feedRunId };
      if (request.query.dryRun !== undefined) body.dryRun = request.query.dryRun === 'true';
      const value: HttpRequestValue = { Scheme: 'internal', Host: 'atrium', Path: `${base}/run`, Method: 'POST', Query: {}, Headers: {}, Body: body };
      // The run is not bound to this request: a long file goes on after the answer (202), and is recorded when it ends.
      // Not bound to the request's deadline either: the record is written through runAndRecord, not writeTenant.
      const finished = runAndRecord(ctx, automation, value, {
        trigger: 'manual',
        recording: 'end',
        alongside: async (trx, runId, outcome) => {
          const exists = await trx.selectFrom('user_feed_runs').select('id').where('id', '=', feedRunId).executeTakeFirst();
          if (exists) await setAutomationRun(trx, feedRunId, runId);
          return { found: exists ? await findFeedRun(trx, feedRunId) : null, error: outcome.error };
        },
      }).then((r) => r.alongside as { found: Awaited<ReturnType<typeof findFeedRun>> | null; error: string | null });
      finished.catch((err) => request.log.error({ err, feedRunId }, 'user feed run not recorded'));
      const waitMs = Math.max(0, request.deadline - Date.now() - 2000);
      const done = await Promise.race([finished, sleep(waitMs).then(() => null)]);
      if (done) {
        // The run ended before it could start a feed run (no SFTP-HRFEED key, or a key without a field).
        if (!done.found) throw new HttpProblem(409, `The user feed could not run: ${done.error ?? 'unknown reason'}.`);
        return done.found;
      }
      const running = await request.readTenant((trx) => findFeedRun(trx, feedRunId).catch(() => null));
      return reply
        .code(202)
        .header('location', `${basePathOf(request)}${base}/runs/${feedRunId}`)
        .send(
          running ?? {
            id: feedRunId,
            automationId: automation.id,
            automationRunId: null,
            trigger: 'manual',
            dryRun: typeof body.dryRun === 'boolean' ? body.dryRun : settings.dryRun,
            status: 'Running',
            startedOnUtc: new Date().toISOString(),
            finishedOnUtc: null,
            error: null,
            files: [],
          },
        );
    },
  );

  app.get(
    `${base}/runs`,
    {
      schema: {
        tags,
        operationId: 'userFeed_listRuns',
        summary: 'Runs of the user feed, newest first',
        querystring: RunsQuery,
        response: { 200: Type.Array(Run) },
      },
      config: { roles: ['AutomationGet'] },
    },
    async (request) => request.readTenant((trx) => listFeedRuns(trx, Number(request.query.skip ?? 0), Number(request.query.take ?? 50))),
  );

  app.get(
    `${base}/runs/:id`,
    {
      schema: { tags, operationId: 'userFeed_getRun', summary: "One run with each file's rows", params: RunParams, response: { 200: Run } },
      config: { roles: ['AutomationGet'] },
    },
    async (request) => request.readTenant((trx) => findFeedRun(trx, request.params.id)),
  );

  app.get(
    `${base}/runs/:id/results/:name`,
    {
      schema: {
        tags,
        operationId: 'userFeed_getResultFile',
        summary: "A copy of a run's results file (SR_….json), as written beside the file on the SFTP server",
        description: 'Kept in the export store (ATRIUM_EXPORTS_DIR or ATRIUM_EXPORTS_URL), so any API process serves it.',
        params: Type.Object({ id: Guid, name: Type.String({ pattern: '^SR_[^/\\\\]+\\.json$', maxLength: 300 }) }),
        response: { 200: { description: 'The results file', content: { 'application/json': { schema: Type.Unknown() } } } },
      },
      config: { roles: ['AutomationGet'] },
    },
    async (request, reply) => {
      const { id, name } = request.params;
      const run = await request.readTenant((trx) => findFeedRun(trx, id));
      const listed = run.files.some((f) => f.resultFile !== null && path.posix.basename(f.resultFile) === name);
      const file = listed ? await exportStore(ctx.config).get(resultCopyKey(requirePrincipal(request).tenantId, id, name)) : null;
      if (!file) throw notFound(`Run ${id} has no results file ${name}.`);
      return reply
        .type('application/json; charset=utf-8')
        .header('content-length', file.size)
        .header('content-disposition', `attachment; filename="${name}"`)
        .send(file.stream);
    },
  );
}
