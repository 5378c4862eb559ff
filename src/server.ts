// Process runtime: opens the database (embedded PostgreSQL unless DATABASE_URL), migrates, builds the
// context, registers every surface, starts HTTP and/or workers, and shuts all of it down in order.

import { existsSync } from 'node:fs';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { DestinationStream } from 'pino';
import { automationRoutes } from './automations/routes.ts';
import { setApiAddress, useActionHandlers } from './automations/runtime.ts';
import { defineAutomations, sweepAutomationRuns } from './automations/worker.ts';
import { clientApiRoutes } from './client-api/routes.ts';
import type { Config } from './config.ts';
import { customTablesRoutes } from './custom-tables/routes.ts';
import type { LoadProgress } from './demo/demo-data.ts';
import { sweepChangeLog } from './extraction/pages/count-cache.ts';
import { readAheadSettled } from './extraction/pages/read-ahead.ts';
import { extractionRoutes } from './extraction/routes.ts';
import { defineImportJobs, importRoutes } from './import/routes.ts';
import { sweepBlockedLogins } from './integration/ad-blocker.ts';
import { integrationRoutes } from './integration/routes.ts';
import { mcpRoutes } from './mcp/routes.ts';
import { SecretBox } from './platform/auth/hashing.ts';
import { authRoutes } from './platform/auth/routes.ts';
import { AuthService } from './platform/auth/service.ts';
import type { AppContext } from './platform/context.ts';
import { type Log, loadSecretKey, type OpenedDatabase, openDatabase } from './platform/data-dir.ts';
import { DatabaseHandle } from './platform/db/database.ts';
import { migrateToLatest } from './platform/db/migrate.ts';
import { ReadReplicas } from './platform/db/replicas.ts';
import { type App, buildApp } from './platform/http/app.ts';
import { consoleRoutes } from './platform/http/console.ts';
import { healthRoutes } from './platform/http/health.ts';
import { tenantBaseUrl } from './platform/http/tenant-address.ts';
import { Jobs } from './platform/jobs/jobs.ts';
import { defineMaintenance } from './platform/jobs/maintenance.ts';
import { createLogger } from './platform/log.ts';
import { startTracing } from './platform/tracing.ts';
import { savedQueryRoutes } from './saved-queries/routes.ts';
import { scheduleRoutes } from './schedules/routes.ts';
import { defineSchedules } from './schedules/worker.ts';
import { scimRoutes } from './scim/routes.ts';
import { adminRoutes } from './tenancy/routes.ts';
import { createTenant, type TenantCredentials } from './tenancy/service.ts';
import { tenantAdministrationRoutes } from './tenancy/tenant-routes.ts';
import { USER_FEED_ACTIONS } from './user-feed/action.ts';
import { userFeedRoutes } from './user-feed/routes.ts';
import { defineUserFeedJobs } from './user-feed/sweep.ts';
import { webhookRoutes } from './webhooks/api/routes.ts';
import { defineWebhooks } from './webhooks/delivery/start.ts';
import { sweepExpired } from './webhooks/retention.ts';

export { type Log, loadSecretKey, type OpenedDatabase, openDatabase };

/** logDestination: where the process logger writes (stdout when not given; a test reads its lines). */
export function createContext(config: Config, db: DatabaseHandle, key: Buffer, logDestination?: DestinationStream): AppContext {
  const box = new SecretBox(key);
  const auth = new AuthService(db, box, config);
  const ctx: AppContext = { config, db, box, auth, log: createLogger(config, logDestination), jobs: null, logDestination };
  // Built-in automation actions of other surfaces, passed in rather than registered by importing a file.
  useActionHandlers(ctx, USER_FEED_ACTIONS);
  return ctx;
}

/** Every surface's routes; a new surface adds one line here. */
export async function registerSurfaces(app: App, ctx: AppContext): Promise<void> {
  await healthRoutes(app, ctx);
  await authRoutes(app, ctx);
  await integrationRoutes(app, ctx);
  await clientApiRoutes(app, ctx);
  await customTablesRoutes(app, ctx);
  await webhookRoutes(app, ctx);
  await extractionRoutes(app, ctx);
  await scheduleRoutes(app, ctx);
  await savedQueryRoutes(app);
  await tenantAdministrationRoutes(app, ctx);
  await consoleRoutes(app);
  await automationRoutes(app, ctx);
  await userFeedRoutes(app, ctx);
  await scimRoutes(app, ctx);
  await mcpRoutes(app, ctx);
  if (ctx.config.adminToken) {
    await adminRoutes(app, ctx);
    await importRoutes(app, ctx);
  }
}

export function defineQueues(jobs: Jobs, ctx: AppContext): void {
  const retentionLog = ctx.log.child({ component: 'retention' });
  defineMaintenance(jobs, ctx.db, [
    async () => {
      const swept = await sweepExpired(ctx.db.kysely, { retentionMs: ctx.config.eventRetentionMs });
      if (swept.events + swept.invocations > 0 || !swept.complete) retentionLog.info(swept, 'deleted events and webhook history past ATRIUM_EVENT_RETENTION');
    },
    async () => {
      const runs = await sweepAutomationRuns(ctx);
      if (runs > 0) retentionLog.info({ runs }, 'deleted automation runs past ATRIUM_EVENT_RETENTION');
    },
    () => sweepChangeLog(ctx.db).then(() => undefined),
    // Sign-ins held for the Active Directory agent live 15 minutes (their sealed passwords with them).
    () => ctx.db.asOwner((trx) => sweepBlockedLogins(trx)),
  ]);
  defineWebhooks(jobs, ctx);
  defineSchedules(jobs, ctx);
  defineAutomations(jobs, ctx);
  defineUserFeedJobs(jobs, ctx);
  defineImportJobs(jobs, ctx);
}

export interface Runtime {
  ctx: AppContext;
  app: App | null;
  jobs: Jobs;
  address: string | null;
  close: () => Promise<void>;
}

export async function startServer(config: Config, log: Log, opts: { logDestination?: DestinationStream } = {}): Promise<Runtime> {
  // Before the database handle: its Kysely instances trace statements only when tracing is on.
  const stopTracing = startTracing(config.tracing);
  const opened = await openDatabase(config, log);
  const db = new DatabaseHandle(opened.connectionString, { statementTimeoutMs: config.requestTimeoutMs });
  let jobs: Jobs | null = null;
  let app: App | null = null;
  try {
    const applied = await migrateToLatest(db.kysely);
    if (applied.length) log(`Applied migrations: ${applied.join(', ')}`);
    const ctx = createContext(config, db, await loadSecretKey(config, log), opts.logDestination);
    // A rotated secret, a revoked app or changed roles drop the cached verifications of every API process at once.
    if (config.role !== 'worker') await db.notifications.listen('atrium_auth', () => ctx.auth.invalidateCaches());
    if (config.databaseReadUrls.length > 0) {
      const replicas = new ReadReplicas(db, config.databaseReadUrls, {
        maxLagMs: config.readMaxLagMs,
        statementTimeoutMs: config.requestTimeoutMs,
        log: ctx.log.child({ component: 'replicas' }),
      });
      db.useReplicas(replicas);
      await replicas.start();
    }
    const jobsLog = ctx.log.child({ component: 'jobs' });
    jobs = new Jobs(db, { onError: (err) => jobsLog.error({ err }, 'pg-boss failed') });
    ctx.jobs = jobs;
    defineQueues(jobs, ctx);
    await jobs.start({ work: config.role !== 'api' });
    if (opened.embedded && config.role !== 'worker') await ensureDemoTenant(ctx, config, log);
    let address: string | null = null;
    if (config.role !== 'worker') {
      app = await buildApp(ctx, (a) => registerSurfaces(a, ctx));
      address = await app.listen({ port: config.port, host: config.host });
      setApiAddress(ctx, address);
    } else if (config.metricsPort !== undefined) {
      // A worker serves no API, but its counters and readiness are its own: an operator scrapes them here.
      app = await buildApp(ctx, (a) => healthRoutes(a, ctx));
      address = await app.listen({ port: config.metricsPort, host: config.host });
    }
    const runningJobs = jobs;
    const runningApp = app;
    let closing: Promise<void> | null = null;
    const close = () => {
      closing ??= (async () => {
        if (runningApp) await runningApp.close();
        await runningJobs.stop();
        // Pages being read ahead (decision 0041) hold a connection each until their batch ends.
        await readAheadSettled(db);
        await db.close();
        await opened.stop();
        await stopTracing();
      })();
      return closing;
    };
    return { ctx, app, jobs, address, close };
  } catch (err) {
    await app?.close().catch(() => {});
    await jobs?.stop().catch(() => {});
    await db.close().catch(() => {});
    await opened.stop().catch(() => {});
    await stopTracing();
    throw err;
  }
}

/** First start on an empty data dir: a "Demo Agency" tenant with demo data; later starts reuse it. */
async function ensureDemoTenant(ctx: AppContext, config: Config, log: Log): Promise<void> {
  const file = path.join(config.dataDir, 'demo-credentials.json');
  let creds: TenantCredentials;
  if (existsSync(file)) {
    creds = JSON.parse(await readFile(file, 'utf8'));
    // A file written before tenants had slugs (or before the public URL changed) is brought up to date.
    const row = await ctx.db.withTenant(creds.tenantId, (trx) => trx.selectFrom('tenants').select('slug').executeTakeFirst());
    const baseUrl = row ? tenantBaseUrl(config, row.slug) : undefined;
    if (row && (creds.slug !== row.slug || creds.baseUrl !== baseUrl)) {
      const { tenantId, slug: _slug, baseUrl: _baseUrl, ...rest } = creds;
      creds = { tenantId, slug: row.slug, baseUrl: baseUrl as string, ...rest };
      await writeCredentials(file, creds);
    }
  } else {
    const load = demoLoadOutput(log, ctx.log, config.logFormat === 'text');
    creds = await createTenant(ctx, { name: 'Demo Agency', slug: 'demo', demoData: true, scale: 1, seed: 1, log: load.log, progress: load.progress });
    load.done();
    await writeCredentials(file, creds);
  }
  const base = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  log(
    [
      `Demo tenant credentials (also in ${file}):`,
      `  X-AppTenant: ${creds.tenantId} (or slug ${creds.slug}: base URL ${creds.baseUrl})`,
      `  X-AppId:     ${creds.appId}`,
      `  X-AppSecret: ${creds.appSecret}`,
      `  Administrator login: ${creds.username} / ${creds.password}`,
      'Try:',
      `  curl -s -X POST ${base}/api/v3/analytics/named-query/DE-Jobs/dynamic-execute \\`,
      `    -H 'Content-Type: application/json' -H 'X-AppTenant: ${creds.tenantId}' \\`,
      `    -H 'X-AppId: ${creds.appId}' -H 'X-AppSecret: ${creds.appSecret}' \\`,
      `    -d '{"queryBuilder":{"skip":0,"take":5}}'`,
      'or with no X-AppTenant, under the base URL:',
      `  curl -s -X POST ${creds.baseUrl}/api/auth/token -H 'Content-Type: application/json' \\`,
      `    -d '{"UserName":"${creds.username}","Password":"${creds.password}"}'`,
      `API reference: ${base}/docs`,
    ].join('\n'),
  );
}

/**
 * The first start's demo load as one progress line (rewritten in place on a terminal, else printed once) and
 * one summary; the per-table figures go to the process log at debug level.
 */
function demoLoadOutput(log: Log, logger: AppContext['log'], text: boolean) {
  const started = Date.now();
  const tty = text && process.stderr.isTTY === true;
  let rows = 0;
  let tables = 0;
  let shown = 0;
  const line = 'Creating the "Demo Agency" tenant with demo data (first start)';
  if (tty) process.stderr.write(`${line}...`);
  else log(`${line}...`);
  return {
    log: (text: string) => {
      const table = /^(\w+): (\d+) rows in \d+ ms$/.exec(text);
      if (table) {
        rows += Number(table[2]);
        tables++;
      }
      logger.debug({ component: 'demo-data' }, text);
    },
    progress: (p: LoadProgress) => {
      if (!tty || Date.now() - shown < 500) return;
      shown = Date.now();
      process.stderr.write(`\r\x1b[2K${line}: ${tables} tables loaded, ${p.table} ${Math.floor(Math.min(p.fraction, 1) * 100)} %`);
    },
    done: () => {
      if (tty) process.stderr.write('\r\x1b[2K');
      log(`Demo data loaded: ${rows.toLocaleString('en-US')} rows in ${tables} tables, ${((Date.now() - started) / 1000).toFixed(1)} s`);
    },
  };
}

async function writeCredentials(file: string, creds: TenantCredentials): Promise<void> {
  await writeFile(file, `${JSON.stringify(creds, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}
