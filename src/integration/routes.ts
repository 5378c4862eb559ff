// Integration API routes ({integration_url} is Atrium's own base address). HTTP only: schemas and
// thin handlers over ./service.ts.
import { Type } from 'typebox';
import type { AppContext } from '../platform/context.ts';
import { type App, requirePrincipal } from '../platform/http/app.ts';
import { findUserTypeByName } from './service.ts';

const tags = ['Integration API'];
const UserType = Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() });

export async function integrationRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/usertypes/name',
    {
      config: { auth: 'app' },
      schema: {
        tags,
        summary: 'Look a user type up by its name',
        querystring: Type.Object({ name: Type.String({ minLength: 1 }) }),
        response: { 200: UserType },
      },
    },
    async (request) => {
      const principal = requirePrincipal(request);
      return ctx.db.withTenant(principal.tenantId, (trx) => findUserTypeByName(trx, request.query.name), { deadline: request.deadline });
    },
  );
}
