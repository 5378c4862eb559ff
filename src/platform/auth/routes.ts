// POST /api/auth/token (client credentials via app headers, or the platform's login body) and
// POST /api/auth/token/refresh.
import { type Static, Type } from 'typebox';
import type { AppContext } from '../context.ts';
import { badRequest } from '../errors.ts';
import type { App } from '../http/app.ts';
import { named } from '../http/openapi.ts';
import { requirePrincipal } from '../http/tenant-seam.ts';
import type { LoginBody } from './service.ts';

const TokenResponse = named(
  'AccessToken',
  Type.Object({
    accessToken: Type.String(),
    tokenType: Type.Literal('Bearer'),
    expiresIn: Type.Integer({ description: 'Lifetime of the access token in seconds' }),
    refreshToken: Type.String(),
    UserId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
    User: Type.Union([Type.Object({ Id: Type.String(), UserName: Type.String(), Name: Type.Union([Type.String(), Type.Null()]) }), Type.Null()]),
  }),
);

const LoginRequest = Type.Object(
  {
    UserName: Type.Optional(Type.String()),
    Password: Type.Optional(Type.String()),
    Persistent: Type.Optional(Type.Boolean()),
    LoginAsDelegate: Type.Optional(Type.Boolean()),
    DelegatedUserName: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { description: 'Property names are matched case-insensitively. Omit the body to use the app headers (client credentials).' },
);

/** The login body (its property names already in the schema's spelling, whatever case the client sent). */
function readLogin(body: Static<typeof LoginRequest> | null | undefined): LoginBody | null {
  if (!body || (body.UserName === undefined && body.Password === undefined)) return null;
  const text = (v: unknown, name: string): string => {
    if (typeof v !== 'string' || v === '')
      throw badRequest(`${name} is required and must be a string.`, [{ path: `/body/${name}`, message: 'must be a non-empty string' }]);
    return v;
  };
  const optionalBool = (v: unknown, name: string): boolean | undefined => {
    if (v === undefined || v === null) return undefined;
    if (typeof v !== 'boolean') throw badRequest(`${name} must be a boolean.`, [{ path: `/body/${name}`, message: 'must be boolean' }]);
    return v;
  };
  return {
    userName: text(body.UserName, 'UserName'),
    password: text(body.Password, 'Password'),
    persistent: optionalBool(body.Persistent, 'Persistent'),
    loginAsDelegate: optionalBool(body.LoginAsDelegate, 'LoginAsDelegate'),
    delegatedUserName: body.DelegatedUserName ?? null,
  };
}

const WhoAmI = Type.Object({
  tenantId: Type.String({ format: 'uuid' }),
  appId: Type.Union([Type.String(), Type.Null()]),
  userId: Type.Union([Type.String(), Type.Null()]),
  userName: Type.Union([Type.String(), Type.Null()]),
  roles: Type.Array(Type.String()),
  via: Type.String(),
});

export async function authRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/v3/whoami',
    { schema: { tags: ['Authentication'], operationId: 'auth_whoAmI', summary: 'Who the credentials act as, with their roles', response: { 200: WhoAmI } } },
    async (request) => {
      const p = requirePrincipal(request);
      return { tenantId: p.tenantId, appId: p.appId, userId: p.userId, userName: p.userName, roles: [...p.roles].sort(), via: p.via };
    },
  );

  app.post(
    '/api/auth/token',
    {
      config: { auth: 'none' },
      schema: {
        tags: ['Authentication'],
        operationId: 'auth_token',
        summary: 'Obtain an access token',
        description:
          'Either send the app headers X-AppTenant, X-AppId and X-AppSecret (client credentials), or the login body {UserName, Password, Persistent, LoginAsDelegate, DelegatedUserName}. ' +
          'The tenant comes from X-AppTenant, the base path /t/{slug} or the host (ATRIUM_TENANT_HOST_PATTERN).',
        body: LoginRequest,
        response: { 200: TokenResponse },
      },
      // Client credentials come without a body.
      preValidation: async (request) => {
        request.body ??= {};
      },
    },
    async (request) => {
      const login = readLogin(request.body);
      if (login) return ctx.auth.login(request.addressedTenantId, login);
      const h = request.headers;
      const principal = await ctx.auth.authenticateApp(request.addressedTenantId, h['x-appid'], h['x-appsecret'], undefined);
      return ctx.auth.issueForApp(principal);
    },
  );

  app.post(
    '/api/auth/token/refresh',
    {
      config: { auth: 'none' },
      schema: {
        tags: ['Authentication'],
        operationId: 'auth_refreshToken',
        summary: 'Exchange a refresh token for new tokens (single use)',
        body: Type.Object({ refreshToken: Type.String({ minLength: 1 }) }),
        response: { 200: TokenResponse },
      },
    },
    async (request) => ctx.auth.refresh(request.body.refreshToken, request.addressedTenantId),
  );
}
