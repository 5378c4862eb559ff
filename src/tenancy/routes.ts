// The operator API under /admin: tenants, apps and users. Registered only when ATRIUM_ADMIN_TOKEN is
// set, and every call needs `Authorization: Bearer <that token>`.
import { Type } from 'typebox';
import type { AppContext } from '../platform/context.ts';
import type { App } from '../platform/http/app.ts';
import { SLUG_PATTERN } from '../platform/http/tenant-address.ts';
import { createApp, createTenant, createUser, listTenants, revokeApp, rotateApp } from './service.ts';

const Uuid = Type.String({ format: 'uuid' });
const Slug = Type.String({ pattern: SLUG_PATTERN, description: 'Lowercase letters, digits and -; the tenant in /t/{slug} and in hosts' });
const TenantCredentials = Type.Object({
  tenantId: Uuid,
  slug: Slug,
  baseUrl: Type.String({ description: "Base URL of the tenant's APIs (its host, or ATRIUM_PUBLIC_URL/t/{slug})" }),
  appId: Type.String(),
  appSecret: Type.String(),
  userId: Uuid,
  username: Type.String(),
  password: Type.String(),
  companyId: Uuid,
  companyCode: Type.String(),
  divisionId: Uuid,
  departmentId: Uuid,
  departmentExternalId: Type.String(),
  typologyGroupId: Uuid,
  typologyId: Uuid,
  typologyExternalId: Type.String(),
});
const AppCredentials = Type.Object({ tenantId: Uuid, appId: Type.String(), appSecret: Type.String(), roles: Type.Array(Type.String()) });
const TenantParams = Type.Object({ tenantId: Uuid });
const AppParams = Type.Object({ tenantId: Uuid, appId: Type.String() });
const tags = ['Operator'];

export async function adminRoutes(app: App, ctx: AppContext): Promise<void> {
  const config = { auth: 'admin' as const };
  app.post(
    '/admin/tenants',
    {
      config,
      schema: {
        tags,
        operationId: 'operator_createTenant',
        summary: 'Create a tenant with its first company, roles, Administrator user and app',
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 200 }),
          slug: Type.Optional({ ...Slug, description: 'Default: derived from the name, made unique' }),
          demoData: Type.Optional(Type.Boolean({ default: false })),
          scale: Type.Optional(Type.Number({ minimum: 0.01, maximum: 100, default: 1 })),
        }),
        response: { 201: TenantCredentials },
      },
    },
    async (request, reply) => {
      const { name, slug, demoData, scale } = request.body;
      const created = await createTenant(ctx, { name, slug, demoData, scale, log: (line) => request.log.info(line) });
      return reply.code(201).send(created);
    },
  );
  app.get(
    '/admin/tenants',
    {
      config,
      schema: {
        tags,
        operationId: 'operator_listTenants',
        summary: 'List the tenants with their slugs and base URLs',
        response: {
          200: Type.Array(
            Type.Object({ id: Uuid, name: Type.String(), slug: Slug, baseUrl: Type.String(), createdOnUtc: Type.String({ format: 'date-time' }) }),
          ),
        },
      },
    },
    async () => (await listTenants(ctx)).map((t) => ({ ...t, createdOnUtc: t.createdOnUtc.toISOString() })),
  );
  app.post(
    '/admin/tenants/:tenantId/apps',
    {
      config,
      schema: {
        tags,
        operationId: 'operator_createApp',
        summary: 'Create an API app; its secret is shown once',
        params: TenantParams,
        body: Type.Object({
          name: Type.String({ minLength: 1, maxLength: 200 }),
          roles: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 })),
        }),
        response: { 201: AppCredentials },
      },
    },
    async (request, reply) => reply.code(201).send(await createApp(ctx, request.params.tenantId, { name: request.body.name, roles: request.body.roles ?? [] })),
  );
  app.post(
    '/admin/tenants/:tenantId/apps/:appId/rotate',
    {
      config,
      schema: { tags, operationId: 'operator_rotateApp', summary: 'Replace the secret of an app', params: AppParams, response: { 200: AppCredentials } },
    },
    async (request) => rotateApp(ctx, request.params.tenantId, request.params.appId),
  );
  app.delete(
    '/admin/tenants/:tenantId/apps/:appId',
    {
      config,
      schema: {
        tags,
        operationId: 'operator_revokeApp',
        summary: 'Revoke an app',
        params: AppParams,
        response: { 200: Type.Object({ tenantId: Uuid, appId: Type.String(), revoked: Type.Boolean() }) },
      },
    },
    async (request) => revokeApp(ctx, request.params.tenantId, request.params.appId),
  );
  app.post(
    '/admin/tenants/:tenantId/users',
    {
      config,
      schema: {
        tags,
        operationId: 'operator_createUser',
        summary: 'Create a user who can log in with a password',
        params: TenantParams,
        body: Type.Object({
          userName: Type.String({ minLength: 1, maxLength: 200 }),
          password: Type.Optional(Type.String({ minLength: 8 })),
          name: Type.Optional(Type.String()),
          email: Type.Optional(Type.String()),
          roles: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 100 })),
        }),
        response: { 201: Type.Object({ tenantId: Uuid, userId: Uuid, username: Type.String(), password: Type.String(), roles: Type.Array(Type.String()) }) },
      },
    },
    async (request, reply) => reply.code(201).send(await createUser(ctx, request.params.tenantId, request.body)),
  );
}
