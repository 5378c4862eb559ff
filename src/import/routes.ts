// The operator API's import: `POST /admin/tenants/{tenantId}/import` queues a run (its credentials sealed
// with ATRIUM_SECRET_KEY until it ends) that a worker works; `GET /admin/tenants/{tenantId}/imports/{runId}`
// shows its status, progress (the last query committed) and, once done, its report.
import { Type } from 'typebox';
import type { AppContext } from '../platform/context.ts';
import { HttpProblem } from '../platform/errors.ts';
import type { App } from '../platform/http/app.ts';
import type { Jobs } from '../platform/jobs/jobs.ts';
import { ImportError } from './client.ts';
import { plannedQueries, runImport } from './service.ts';

export const IMPORT_QUEUE = 'tenant-import';

const Uuid = Type.String({ format: 'uuid' });
const tags = ['Operator'];
const ImportRun = Type.Object({
  runId: Uuid,
  status: Type.String({ description: 'Queued, Running, Completed or Failed' }),
  progress: Type.Record(Type.String(), Type.Unknown(), { description: 'The last named query committed and its rows' }),
  report: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'The final report (as `atrium import --json`)' }),
  error: Type.Union([Type.String(), Type.Null()]),
});

interface Credentials {
  baseUrl: string;
  tenantId: string;
  appId: string;
  appSecret: string;
  userId?: string;
}

export async function importRoutes(app: App, ctx: AppContext): Promise<void> {
  const config = { auth: 'admin' as const };
  app.post(
    '/admin/tenants/:tenantId/import',
    {
      config,
      schema: {
        tags,
        operationId: 'operator_importTenant',
        summary: "Queue an import of a tenant from a platform's (or an Atrium's) Data Extraction API into this tenant (docs/import.md)",
        params: Type.Object({ tenantId: Uuid }),
        body: Type.Object({
          from: Type.String({ minLength: 1, maxLength: 2000, description: "The source's base URL" }),
          tenant: Type.String({ minLength: 1, maxLength: 200, description: "The source's tenant (X-AppTenant)" }),
          appId: Type.String({ minLength: 1, maxLength: 200 }),
          appSecret: Type.String({ minLength: 1, maxLength: 500 }),
          user: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'X-AppUser' })),
          since: Type.Optional(Type.String({ format: 'date-time' })),
          only: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 })),
          merge: Type.Optional(Type.Boolean({ default: false })),
        }),
        response: { 202: ImportRun },
      },
    },
    async (request, reply) => {
      const { tenantId } = request.params;
      const b = request.body;
      if (!ctx.jobs) throw new HttpProblem(503, 'no job queue in this process');
      try {
        plannedQueries(b.only);
        new URL(b.from);
      } catch (err) {
        throw new HttpProblem(400, err instanceof ImportError ? err.message : `from: ${JSON.stringify(b.from)} is not a URL`);
      }
      const credentials: Credentials = { baseUrl: b.from, tenantId: b.tenant, appId: b.appId, appSecret: b.appSecret, userId: b.user };
      const exists = await ctx.db.kysely.selectFrom('tenants').select('id').where('id', '=', tenantId).executeTakeFirst();
      if (!exists) throw new HttpProblem(404, `no tenant ${tenantId}`);
      const run = await ctx.db.withTenant(tenantId, (trx) =>
        trx
          .insertInto('import_runs')
          .values({
            tenant_id: tenantId,
            source: `${b.from.replace(/\/$/, '')} tenant ${b.tenant}`,
            options: JSON.stringify({ since: b.since ?? null, only: b.only ?? null, merge: b.merge ?? false }),
            status: 'Queued',
            credentials_sealed: ctx.box.encrypt(JSON.stringify(credentials)),
          })
          .returning('id')
          .executeTakeFirstOrThrow(),
      );
      await ctx.jobs.send(IMPORT_QUEUE, { tenantId, runId: run.id });
      return reply.code(202).send({ runId: run.id, status: 'Queued', progress: {}, report: null, error: null });
    },
  );

  app.get(
    '/admin/tenants/:tenantId/imports/:runId',
    {
      config,
      schema: {
        tags,
        operationId: 'operator_importRun',
        summary: 'An import run: status, progress, report or error',
        params: Type.Object({ tenantId: Uuid, runId: Uuid }),
        response: { 200: ImportRun },
      },
    },
    async (request) => {
      const { tenantId, runId } = request.params;
      const run = await ctx.db.withTenant(tenantId, (trx) =>
        trx
          .selectFrom('import_runs')
          .select(['id', 'status', 'progress', 'report', 'error'])
          .where('tenant_id', '=', tenantId)
          .where('id', '=', runId)
          .executeTakeFirst(),
      );
      if (!run) throw new HttpProblem(404, `no import run ${runId} in tenant ${tenantId}`);
      return {
        runId: run.id,
        status: run.status,
        progress: run.progress as Record<string, unknown>,
        report: (run.report ?? null) as Record<string, unknown> | null,
        error: run.error,
      };
    },
  );
}

/** The worker of queued imports: one at a time per process; a run failing is recorded with its one-line cause. */
export function defineImportJobs(jobs: Jobs, ctx: AppContext): void {
  jobs.define<{ tenantId: string; runId: string }>({
    name: IMPORT_QUEUE,
    batchSize: 1,
    localConcurrency: 1,
    // A large tenant takes long; pg-boss must not expire (and retry) it meanwhile. A failed run is re-queued by hand.
    options: { expireInSeconds: 12 * 3600, retryLimit: 0 },
    work: async (batch) => {
      for (const job of batch) {
        const { tenantId, runId } = job.data;
        const fail = (message: string) =>
          ctx.db.withTenant(tenantId, (trx) =>
            trx
              .updateTable('import_runs')
              .set({ status: 'Failed', error: message.slice(0, 1000), finished_on_utc: new Date(), credentials_sealed: null })
              .where('tenant_id', '=', tenantId)
              .where('id', '=', runId)
              .execute(),
          );
        const run = await ctx.db.withTenant(tenantId, (trx) =>
          trx.selectFrom('import_runs').select(['credentials_sealed', 'options']).where('tenant_id', '=', tenantId).where('id', '=', runId).executeTakeFirst(),
        );
        if (!run?.credentials_sealed) continue;
        const credentials = JSON.parse(ctx.box.decrypt(run.credentials_sealed)) as Credentials;
        const options = run.options as { since: string | null; only: string[] | null; merge: boolean };
        try {
          await runImport(ctx.db, {
            source: credentials,
            tenantId,
            runId,
            since: options.since ?? undefined,
            only: options.only ?? undefined,
            merge: options.merge,
            webhooks: { box: ctx.box, allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks },
          });
        } catch (err) {
          await fail(err instanceof ImportError ? err.message : `import failed: ${(err as Error).message}`);
          if (!(err instanceof ImportError)) ctx.log.error({ err, tenantId, runId }, 'import failed');
        }
      }
    },
  });
}
