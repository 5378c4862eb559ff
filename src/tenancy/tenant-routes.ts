// A tenant's own administration over its API: its apps (create, rotate, revoke; a secret is shown
// once) and its users with their roles. The operator API (/admin) does the same across tenants with
// the operator token; these routes are the tenant's, for its Administrators (the web console uses them).
import { Type } from 'typebox';
import type { AppContext } from '../platform/context.ts';
import type { App } from '../platform/http/app.ts';
import { named } from '../platform/http/openapi.ts';
import { requirePrincipal } from '../platform/http/tenant-seam.ts';
import { createApp, listApps, listUsersWithRoles, revokeApp, rotateApp } from './service.ts';

const tags = ['Tenant administration'];
const config = { roles: ['Administrator'] as const };
const DateTime = Type.String({ format: 'date-time' });
const AppSummary = named(
  'TenantApp',
  Type.Object({
    appId: Type.String(),
    name: Type.String(),
    roles: Type.Array(Type.String()),
    createdOnUtc: DateTime,
    rotatedOnUtc: Type.Union([DateTime, Type.Null()]),
    revokedOnUtc: Type.Union([DateTime, Type.Null()]),
  }),
);
const AppCredentials = named(
  'TenantAppCredentials',
  Type.Object({ appId: Type.String(), appSecret: Type.String({ description: 'Shown only in this answer' }), roles: Type.Array(Type.String()) }),
);
const AppParams = Type.Object({ appId: Type.String({ minLength: 1, maxLength: 200 }) });

export async function tenantAdministrationRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/v3/apps',
    {
      config,
      schema: {
        tags,
        operationId: 'tenantApps_list',
        summary: "The tenant's API apps with their roles (revoked ones too)",
        response: { 200: Type.Array(AppSummary) },
      },
    },
    async (request) => request.readTenant((trx) => listApps(trx)),
  );
  app.post(
    '/api/v3/apps',
    {
      config,
      schema: {
        tags,
        operationId: 'tenantApps_create',
        summary: 'Create an API app; its secret is shown once',
        body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }), roles: Type.Optional(Type.Array(Type.String(), { maxItems: 50 })) }),
        response: { 201: AppCredentials },
      },
    },
    async (request, reply) => {
      const { appId, appSecret, roles } = await createApp(ctx, requirePrincipal(request).tenantId, {
        name: request.body.name,
        roles: request.body.roles ?? [],
      });
      return reply.code(201).send({ appId, appSecret, roles });
    },
  );
  app.post(
    '/api/v3/apps/:appId/rotate',
    {
      config,
      schema: {
        tags,
        operationId: 'tenantApps_rotate',
        summary: 'Replace the secret of an app; the new one is shown once',
        params: AppParams,
        response: { 200: AppCredentials },
      },
    },
    async (request) => {
      const { appId, appSecret, roles } = await rotateApp(ctx, requirePrincipal(request).tenantId, request.params.appId);
      return { appId, appSecret, roles };
    },
  );
  app.delete(
    '/api/v3/apps/:appId',
    {
      config,
      schema: {
        tags,
        operationId: 'tenantApps_revoke',
        summary: 'Revoke an app: its credentials stop working at once',
        params: AppParams,
        response: { 200: Type.Object({ appId: Type.String(), revoked: Type.Boolean() }) },
      },
    },
    async (request) => {
      const { appId, revoked } = await revokeApp(ctx, requirePrincipal(request).tenantId, request.params.appId);
      return { appId, revoked };
    },
  );
  app.get(
    '/api/v3/users',
    {
      config,
      schema: {
        tags,
        operationId: 'tenantUsers_listWithRoles',
        summary: "The tenant's users (first 1000 by user name) with their roles, and the tenant's roles",
        response: {
          200: Type.Object({
            users: Type.Array(
              Type.Object({
                id: Type.String({ format: 'uuid' }),
                userName: Type.String(),
                name: Type.Union([Type.String(), Type.Null()]),
                email: Type.Union([Type.String(), Type.Null()]),
                isActive: Type.Boolean(),
                roles: Type.Array(Type.String()),
              }),
            ),
            roles: Type.Array(Type.Object({ name: Type.String(), description: Type.Union([Type.String(), Type.Null()]) })),
          }),
        },
      },
    },
    async (request) => request.readTenant((trx) => listUsersWithRoles(trx)),
  );
}
