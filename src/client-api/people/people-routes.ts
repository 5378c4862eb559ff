// Client API routes for users, commercial clients, their links and typology histories: HTTP only (v3
// envelopes over people.ts and typology-histories.ts). CreateMany is one transaction: all or none, the
// failing item named by its path. Managing people needs the Administrator role.
import { Type } from 'typebox';
import { nullable } from '../../domain/fields.ts';
import type { Principal } from '../../platform/auth/principal.ts';
import type { AppContext } from '../../platform/context.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { App } from '../../platform/http/app.ts';
import { IdempotencyHeaders, idempotent } from '../../platform/http/idempotency.ts';
import { named } from '../../platform/http/openapi.ts';
import { Guid, unwrap } from '../../platform/http/schemas.ts';
import { type Envelope, envelopeSchema, type Operation, openEnvelope, wrapped } from '../documents/envelope.ts';
import { fieldSchema, modelProperties } from '../documents/fields.ts';
import type { Row } from '../documents/registry.ts';
import { CLIENT_EXTRA, CLIENT_MAPPED, createCommercialClient, createUsers, duplicateUser, linkCommercialClientUser, USER_MODEL } from './people.ts';
import { createTypologyHistory, HISTORY_CHECKED, HISTORY_FIELDS, patchTypologyHistory } from './typology-histories.ts';

const tags = ['Client API'];
const config = { roles: ['Administrator'] as const };
const answer = (view: unknown): never => view as never;
const Id = Type.String({ format: 'uuid' });
const AnyObject = Type.Object({}, { additionalProperties: true });

const UserModel = named(
  'UserCreateModel',
  Type.Object(
    {
      ...modelProperties(USER_MODEL),
      DivisionId: Type.Optional(nullable({ ...Id, description: 'Not stored: a division is its department’s (accepted, not checked)' } as typeof Id)),
    },
    { additionalProperties: false },
  ),
);
const UserDuplicateModel = named(
  'UserDuplicateModel',
  Type.Object(
    { UserToDuplicateId: Guid, Name: Type.String({ minLength: 1, maxLength: 400 }), UserName: Type.String({ minLength: 1, maxLength: 400 }) },
    { additionalProperties: false },
  ),
);
const CommercialClientUserModel = named(
  'CommercialClientUserModel',
  Type.Object({ CommercialClientId: Guid, UserId: Guid, Active: Type.Optional(nullable(Type.Boolean())) }, { additionalProperties: false }),
);
const S = Type.Optional(nullable(Type.String({ maxLength: 4000 })));
const OptId = Type.Optional(nullable(Id));
const CommercialClientModel = named(
  'CommercialClientCreateModel',
  Type.Object(
    {
      ...Object.fromEntries(
        CLIENT_MAPPED.map((n) => [n, n.endsWith('Id') && n !== 'ExternalId' ? OptId : n === 'Name' ? Type.String({ minLength: 1, maxLength: 400 }) : S]),
      ),
      ...modelProperties(CLIENT_EXTRA),
      // Published, with no column in the data model: accepted and not stored.
      ...Object.fromEntries(
        [
          'Website',
          'LinkCompaniesDisabled',
          'Overheads',
          'RateCardSuggestionId',
          'RateCardColumnSuggestionId',
          'RateCardColumnSellSuggestionId',
          'PriceTableSuggestionId',
          'PriceTableColumnSuggestionId',
          'SectorId',
          'ClientClassificationId',
        ].map((n) => [n, Type.Optional(Type.Unknown({ description: 'Accepted, not stored (no column in the data model)' }))]),
      ),
    },
    { additionalProperties: false },
  ),
);
const HistoryModel = named(
  'UserTypologyHistoryModel',
  Type.Object({ ...modelProperties(HISTORY_FIELDS), ...modelProperties(HISTORY_CHECKED) }, { additionalProperties: false }),
);
const HistoryView = named(
  'UserTypologyHistory',
  Type.Object({ Id, UserId: Id, TypologyId: Id, StartDate: Type.String({ format: 'date' }), EndDate: nullable(Type.String({ format: 'date' })) }),
);
const HistoryPatch = named(
  'UserTypologyHistoryPatchBody',
  Type.Object(Object.fromEntries([...HISTORY_FIELDS, ...HISTORY_CHECKED].map((f) => [f.name, Type.Optional(wrapped(fieldSchema(f)))])), {
    additionalProperties: false,
  }),
);
const CommercialClientUser = named('CommercialClientUser', Type.Object({ Id: nullable(Id), CommercialClientId: Id, UserId: Id, Active: Type.Boolean() }));

type Create = (trx: Trx, actor: Principal, model: Row, path: string) => Promise<Row>;
/** A set-based writer of all the items of a Create / CreateMany at once. */
type CreateAll = (trx: Trx, actor: Principal, items: { model: Row; path: string }[]) => Promise<Row[]>;

/** A v3 create route: Create answers the record, CreateMany the records in order (one transaction). */
function v3Create(
  app: App,
  ctx: AppContext,
  path: string,
  o: {
    id: string;
    summary: string;
    description: string;
    body: ReturnType<typeof envelopeSchema>;
    view: unknown;
    create?: Create;
    createAll?: CreateAll;
    duplicate?: Create;
  },
) {
  const allowed: Operation[] = o.duplicate ? ['Create', 'Duplicate', 'CreateMany'] : ['Create', 'CreateMany'];
  app.post(
    path,
    {
      config,
      schema: {
        tags,
        operationId: o.id,
        summary: o.summary,
        description: o.description,
        headers: IdempotencyHeaders,
        body: o.body,
        response: { 201: Type.Union([o.view as never, Type.Array(o.view as never)]) },
      },
    },
    idempotent(ctx, async (request, reply) => {
      const opened = openEnvelope(request.body as Envelope, allowed);
      const out = await request.writeTenant(async (trx: Trx, actor: Principal) => {
        if (opened.operation !== 'Duplicate' && o.createAll) return o.createAll(trx, actor, opened.items);
        const one = opened.operation === 'Duplicate' && o.duplicate ? o.duplicate : o.create;
        if (!one) throw new Error(`no writer for ${opened.operation}`);
        const rows: Row[] = [];
        for (const item of opened.items) rows.push(await one(trx, actor, item.model, item.path));
        return rows;
      });
      reply.code(201);
      return answer(opened.operation === 'CreateMany' ? out : out[0]);
    }),
  );
}

export async function peopleRoutes(app: App, ctx: AppContext): Promise<void> {
  v3Create(app, ctx, '/api/v3/users', {
    id: 'users_create',
    summary: 'Create users (Create, CreateMany) or duplicate one',
    description:
      'Create / CreateMany with the published user model (CreateMany: all or none, the failing item named by its path); Duplicate ({"UserToDuplicateId","Name","UserName"}) ' +
      'makes a user with the roles, team places, commercial clients, typology, company and department of UserToDuplicateId. Events: Created on User; UserRoleAdded per copied role.',
    body: named('UserCreateBody', envelopeSchema(UserModel, UserDuplicateModel)),
    view: AnyObject,
    createAll: createUsers,
    duplicate: (trx, actor, model, path) => duplicateUser(trx, actor, model as { UserToDuplicateId: string; Name: string; UserName: string }, path),
  });
  v3Create(app, ctx, '/api/v3/commercial-client-users', {
    id: 'commercialClientUsers_create',
    summary: 'Link users to commercial clients',
    description: 'Active false removes the link. Event: Updated on CommercialClient (UserAdded / UserRemoved).',
    body: named('CommercialClientUserCreateBody', envelopeSchema(CommercialClientUserModel)),
    view: CommercialClientUser,
    create: (trx, actor, model, path) => linkCommercialClientUser(trx, actor, model as { CommercialClientId: string; UserId: string; Active?: boolean }, path),
  });
  v3Create(app, ctx, '/api/v3/commercial-clients', {
    id: 'commercialClients_create',
    summary: 'Create commercial clients',
    description:
      'The published item fields. Ordering rule (as POST /api/commercialclients): a billing client with the same ExternalId must exist first, else 409 with missingBillingClients. Events: Created on CommercialClient.',
    body: named('CommercialClientCreateBody', envelopeSchema(CommercialClientModel)),
    view: AnyObject,
    create: createCommercialClient,
  });
  v3Create(app, ctx, '/api/v3/user-typology-histories', {
    id: 'userTypologyHistories_create',
    summary: 'Add periods to users’ typology histories',
    description: 'Periods of one user may not overlap (409). The user’s typology follows the history (Updated on User with TypologyId).',
    body: named('UserTypologyHistoryCreateBody', envelopeSchema(HistoryModel)),
    view: HistoryView,
    create: createTypologyHistory,
  });
  app.patch(
    '/api/v3/user-typology-histories/:id',
    {
      config,
      schema: {
        tags,
        operationId: 'userTypologyHistories_patch',
        summary: 'Change a typology history period',
        description: 'Value-wrapped fields; an overlap with another period of the user is 409.',
        headers: IdempotencyHeaders,
        params: Type.Object({ id: Guid }),
        body: HistoryPatch,
        response: { 200: HistoryView },
      },
    },
    idempotent(ctx, async (request) =>
      answer(
        await request.writeTenant((trx: Trx, actor: Principal) =>
          patchTypologyHistory(trx, actor, request.params.id, unwrap(request.body as Record<string, { value: unknown }>)),
        ),
      ),
    ),
  );
}
