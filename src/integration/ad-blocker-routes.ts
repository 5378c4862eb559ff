// The Active Directory blocker's routes (ad-blocker.ts; docs/integration-api.md): the paths and bodies the
// platform's public agent (SkillsWorkflow/ADBlocker) calls, with its app headers. Every route needs the role
// AdBlockerAgent (or Administrator).
import { Type } from 'typebox';
import type { Principal } from '../platform/auth/principal.ts';
import type { AppContext } from '../platform/context.ts';
import type { Trx } from '../platform/db/database.ts';
import type { App } from '../platform/http/app.ts';
import { named } from '../platform/http/openapi.ts';
import { GUID_PATTERN, Guid } from '../platform/http/schemas.ts';
import {
  answerBlockedLogin,
  answerUnblock,
  pendingBlockedLogins,
  pendingUnblocks,
  type RequestAnswer,
  recordBlock,
  recordTaskRuntime,
  type UserScope,
  usersToBlock,
} from './ad-blocker.ts';

const tags = ['Integration API'];
const config = { roles: ['AdBlockerAgent'] as const };
const DATETIME = '^\\d{4}-\\d{2}-\\d{2}([T ]\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,9})?)?(Z|[+-]\\d{2}(:?\\d{2})?)?)?$';
const maybeId = Type.Optional(Type.String({ pattern: `^$|${GUID_PATTERN}` }));
const maybeName = Type.Optional(Type.String({ maxLength: 400 }));
/** The agent's (and the Postman collection's) query: empty values mean any. */
const Scope = Type.Object({ countryName: maybeName, countryId: maybeId, companyName: maybeName, companyId: maybeId });

const UserToBlock = named('AdUserToBlock', Type.Object({ Oid: Guid, UserName: Type.String(), AdUserName: Type.String() }));
const BlockBody = named(
  'AdBlockBody',
  Type.Object({
    Oid: Guid,
    AccountExpirationDate: Type.Optional(
      Type.Union([Type.String({ pattern: DATETIME }), Type.Null()], {
        description: 'The AD account’s expiry before the agent blocked it (restored on unblock), or null',
      }),
    ),
  }),
);
const BlockedLoginRequest = named(
  'AdBlockedLoginRequest',
  Type.Object({
    Id: Guid,
    AdUserName: Type.String(),
    Password: Type.String({ description: 'The sign-in’s password, answered once: a later GET lists the request no more' }),
  }),
);
const Answer = named(
  'AdRequestAnswer',
  Type.Object({ Id: Guid, RequestResult: Type.Boolean(), RequestResultMessage: Type.Optional(Type.Union([Type.String({ maxLength: 4000 }), Type.Null()])) }),
);
const UnblockUserRequest = named(
  'AdUnblockUserRequest',
  Type.Object({ Id: Guid, AdUserName: Type.String(), AccountExpirationDate: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]) }),
);
const Done = Type.Object({ Id: Guid });

export async function adBlockerRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/blockedloginrequests/userstoblock',
    {
      config,
      schema: {
        tags,
        operationId: 'adBlocker_usersToBlock',
        summary: 'Users with an AD account whose access ended (inactive or expired) and whose account is not blocked yet',
        querystring: Scope,
        response: { 200: Type.Array(UserToBlock) },
      },
    },
    async (request) => request.readTenant((trx) => usersToBlock(trx, request.query as UserScope)) as never,
  );

  app.post(
    '/api/blockedloginrequests/block',
    {
      config,
      schema: {
        tags,
        operationId: 'adBlocker_block',
        summary: 'The agent blocked a user’s AD account',
        description: 'Event: Updated on User (AdBlocked true). The user leaves DE-UsersToBlock; its ModifiedOn changes in DE-Users.',
        body: BlockBody,
        response: { 200: Type.Object({ Oid: Guid }) },
      },
    },
    async (request) => {
      const body = request.body as { Oid: string; AccountExpirationDate?: string | null };
      const id = body.Oid.toLowerCase();
      await request.writeTenant((trx: Trx, actor: Principal) => recordBlock(trx, actor, id, body.AccountExpirationDate ?? null));
      return { Oid: id };
    },
  );

  app.get(
    '/api/blockedloginrequests',
    {
      config,
      schema: {
        tags,
        operationId: 'adBlocker_blockedLoginRequests',
        summary: 'Sign-ins of AD-blocked users waiting for the agent’s verdict, each password answered once',
        description: 'A request lives 15 minutes; its password is cleared as it is answered here.',
        response: { 200: Type.Array(BlockedLoginRequest) },
      },
    },
    async (request) => request.writeTenant((trx) => pendingBlockedLogins(trx, ctx.box)) as never,
  );

  answerRoute(app, '/api/blockedloginrequests', answerBlockedLogin, {
    operationId: 'adBlocker_answerBlockedLogin',
    summary: 'The agent’s verdict on a blocked sign-in',
    description: 'Event: LoginSucceeded or LoginFailed on User (LoginType ActiveDirectory). The request is deleted.',
  });

  app.get(
    '/api/unblockuserrequests',
    {
      config,
      schema: {
        tags,
        operationId: 'adBlocker_unblockUserRequests',
        summary: 'Requests to unblock the AD accounts of users whose access is back',
        description: 'Made for every AD-blocked user whose access is back and who has no open request; DE-UsersToUnblock lists them.',
        querystring: Scope,
        response: { 200: Type.Array(UnblockUserRequest) },
      },
    },
    async (request) => request.writeTenant((trx) => pendingUnblocks(trx, request.query as UserScope)) as never,
  );

  answerRoute(app, '/api/unblockuserrequests', answerUnblock, {
    operationId: 'adBlocker_answerUnblock',
    summary: 'The agent’s answer to an unblock request',
    description: 'RequestResult true clears the user’s AD block (Updated on User, AdBlocked false); the request is closed either way.',
  });

  app.post(
    '/api/blockedloginrequests/taskruntime',
    {
      config,
      schema: {
        tags,
        operationId: 'adBlocker_taskRuntime',
        summary: 'The agent’s last run (an empty body)',
        response: { 200: Type.Object({ LastRunOnUtc: Type.String({ format: 'date-time' }) }) },
      },
    },
    async (request) => request.writeTenant((trx: Trx, actor: Principal) => recordTaskRuntime(trx, actor)),
  );
}

/** The agent's answer to a request it was given (a blocked sign-in, an unblock): PUT of the request's Id and result. */
function answerRoute(
  app: App,
  url: string,
  answer: (trx: Trx, actor: Principal, body: RequestAnswer) => Promise<void>,
  doc: { operationId: string; summary: string; description: string },
): void {
  app.put(url, { config, schema: { tags, ...doc, body: Answer, response: { 200: Done } } }, async (request) => {
    const body: RequestAnswer = request.body;
    await request.writeTenant((trx: Trx, actor: Principal) => answer(trx, actor, body));
    return { Id: body.Id.toLowerCase() };
  });
}
