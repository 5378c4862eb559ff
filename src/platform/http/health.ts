// Liveness (the process answers) and readiness (database reachable, migrations applied).
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { migrationsApplied } from '../db/migrate.ts';
import type { App } from './app.ts';

const Health = Type.Object({ status: Type.String(), checks: Type.Optional(Type.Record(Type.String(), Type.String())) });

export async function healthRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/health/live',
    { config: { auth: 'none' }, schema: { tags: ['Health'], operationId: 'health_live', summary: 'Liveness: the process answers', response: { 200: Health } } },
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
        summary: 'Readiness: the database is reachable and migrated',
        response: { 200: Health, 503: Health },
      },
    },
    async (_request, reply) => {
      const checks: Record<string, string> = {};
      try {
        await sql`select 1`.execute(ctx.db.kysely);
        checks.database = 'ok';
        migrated ||= await migrationsApplied(ctx.db.kysely);
        checks.migrations = migrated ? 'ok' : 'pending';
      } catch (err) {
        checks.database = `unreachable: ${(err as Error).message}`;
      }
      const ok = checks.database === 'ok' && checks.migrations === 'ok';
      return reply.code(ok ? 200 : 503).send({ status: ok ? 'ok' : 'unavailable', checks });
    },
  );
}
