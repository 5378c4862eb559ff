// Liveness (the process answers) and readiness: the database reachable and migrated and, in a process that
// works jobs, its worker side too: pg-boss working, each background loop ticking, and no backlog older than
// ATRIUM_READY_MAX_BACKLOG_AGE. Every component's state is in the body; any one not ok makes it a 503.
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { migrationsApplied } from '../db/migrate.ts';
import type { Backlog } from '../jobs/work-status.ts';
import type { App } from './app.ts';

const BacklogSchema = Type.Object({ count: Type.Integer(), oldestAgeSeconds: Type.Number() });
const Health = Type.Object({
  status: Type.String(),
  checks: Type.Optional(Type.Record(Type.String(), Type.String(), { description: 'Each component: ok, off (not run by this process), or what is wrong' })),
  backlog: Type.Optional(Type.Record(Type.String(), BacklogSchema)),
});

/** A component this process does not run (ATRIUM_ROLE=api) is off, which does not hold readiness back. */
const OFF = 'off';

export async function healthRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/health/live',
    { config: { auth: 'none' }, schema: { tags: ['Health'], operationId: 'health_live', summary: 'Liveness: the process answers', response: { 200: Health } } },
    async () => ({ status: 'ok' }),
  );
  // The name people try first answers as liveness does.
  app.get(
    '/health',
    { config: { auth: 'none' }, schema: { tags: ['Health'], operationId: 'health_get', summary: 'Liveness, as /health/live', response: { 200: Health } } },
    async () => ({ status: 'ok' }),
  );

  let migrated = false;
  app.get(
    '/health/ready',
    {
      config: { auth: 'none' },
      schema: {
        tags: ['Health'],
        operationId: 'health_ready',
        summary: 'Readiness: the database reachable and migrated and, in a process that works jobs, its worker side (each component in checks)',
        response: { 200: Health, 503: Health },
      },
    },
    async (_request, reply) => {
      const checks: Record<string, string> = {};
      let backlog: Record<string, Backlog> | undefined;
      try {
        await sql`select 1`.execute(ctx.db.kysely);
        checks.database = 'ok';
        migrated ||= await migrationsApplied(ctx.db.kysely);
        checks.migrations = migrated ? 'ok' : 'pending';
      } catch (err) {
        checks.database = `unreachable: ${(err as Error).message}`;
      }
      const jobs = ctx.jobs;
      const works = jobs !== null && ctx.config.role !== 'api';
      if (!works) {
        checks.jobs = OFF;
        checks.webhookDispatcher = OFF;
        checks.backlog = OFF;
      } else {
        checks.jobs = jobs.working ? 'ok' : 'stopped';
        checks.webhookDispatcher = OFF;
        for (const h of jobs.status.heartbeats()) {
          checks[h.name] = h.alive ? 'ok' : `stalled: no pass for ${Math.round(h.silentMs / 1000)} s`;
        }
        if (checks.database === 'ok') {
          try {
            backlog = await jobs.status.backlogs();
            checks.backlog = backlogState(backlog, ctx.config.readyMaxBacklogAgeMs);
          } catch (err) {
            checks.backlog = `unreadable: ${(err as Error).message}`;
          }
        } else checks.backlog = 'unknown: the database is unreachable';
      }
      const ok = Object.values(checks).every((state) => state === 'ok' || state === OFF);
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks, ...(backlog ? { backlog } : {}) });
    },
  );
}

function backlogState(backlog: Record<string, Backlog>, maxAgeMs: number): string {
  const late = Object.entries(backlog).filter(([, b]) => b.oldestAgeSeconds * 1000 > maxAgeMs);
  if (late.length === 0) return 'ok';
  const limit = Math.round(maxAgeMs / 1000);
  return `behind: ${late.map(([name, b]) => `${name} oldest ${Math.round(b.oldestAgeSeconds)} s`).join(', ')} (limit ${limit} s, ATRIUM_READY_MAX_BACKLOG_AGE)`;
}
