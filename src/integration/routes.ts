// Integration API routes ({integration_url} is Atrium's own base address). HTTP only: schemas and
// thin handlers over the services. Every route authenticates with the app headers; every POST that
// creates or updates honours Idempotency-Key; property names are matched case-insensitively.

import { type TSchema, Type } from 'typebox';
import { nullable, requestProperties, requestSchema, responseProperties } from '../domain/fields.ts';
import { isAdministrator, type Principal } from '../platform/auth/principal.ts';
import type { AppContext } from '../platform/context.ts';
import type { Trx } from '../platform/db/database.ts';
import { badRequest, notFound } from '../platform/errors.ts';
import type { App } from '../platform/http/app.ts';
import { IdempotencyHeaders, idempotent } from '../platform/http/idempotency.ts';
import { named } from '../platform/http/openapi.ts';
import { Guid, unwrap } from '../platform/http/schemas.ts';
import { requirePrincipal } from '../platform/http/tenant-seam.ts';
import { literalAddressErrors } from '../platform/outbound.ts';
import { adBlockerRoutes } from './ad-blocker-routes.ts';
import { associate, billingClients, commercialClients, suppliers } from './clients.ts';
import { getConfigurationKey, type JsonObject, putConfigurationKey } from './configuration-keys.ts';
import { departments, MASTER_DATA, typologies } from './master-data.ts';
import { bodySchema, findResource, type ResourceDef, upsertResource, viewSchema } from './resources.ts';
import { findUserTypeByNameKept } from './service.ts';
import {
  EMPLOYEE_FIELDS,
  getUserByExternalId,
  getUserById,
  patchUser,
  USER_PATCH_FIELDS,
  USER_POST_FIELDS,
  USER_REFERENCE_FIELDS,
  USER_VIEW_FIELDS,
  upsertEmployee,
  upsertUser,
} from './users.ts';

const tags = ['Integration API'];
const app_ = { auth: 'app' as const };
const ActionSchema = Type.Union([Type.Literal('Created'), Type.Literal('Updated')], { description: 'Created (201) or Updated (200)' });

const UserType = named('UserType', Type.Object({ id: Type.String({ format: 'uuid' }), name: Type.String() }));

const UserPostBody = named(
  'UserBody',
  Type.Object(
    {
      ...requestProperties(USER_POST_FIELDS),
      ...Object.fromEntries(USER_REFERENCE_FIELDS.map((name) => [name, Type.String({ minLength: 1, maxLength: 4000 })])),
    },
    { additionalProperties: false },
  ),
);
const userViewProperties = {
  ...responseProperties(USER_VIEW_FIELDS),
  CompanyCode: nullable(Type.String()),
  DepartmentExternalId: nullable(Type.String()),
  TypologyExternalId: nullable(Type.String()),
  HasPassword: Type.Boolean({ description: 'Whether a login password is set (the password itself is never answered)' }),
  CreatedOnUtc: nullable(Type.String({ format: 'date-time' })),
  ModifiedOnUtc: nullable(Type.String({ format: 'date-time' })),
};
const User = named('User', Type.Object(userViewProperties));
const UserSaved = named('UserSaved', Type.Object({ ...userViewProperties, Action: ActionSchema }));

const wrapped = (s: TSchema) => Type.Object({ value: s }, { additionalProperties: false, description: 'The new value, as {"value": …} ("Value" accepted)' });
const UserPatchBody = named(
  'UserPatchBody',
  Type.Object(
    {
      Password: Type.Optional(wrapped(Type.String({ minLength: 1, maxLength: 1000, description: 'Login password; stored hashed' }))),
      ...Object.fromEntries(USER_PATCH_FIELDS.map((f) => [f.name, Type.Optional(wrapped(requestSchema(f)))])),
    },
    { additionalProperties: false },
  ),
);

const EmployeeBody = named('EmployeeBody', Type.Object(requestProperties(EMPLOYEE_FIELDS), { additionalProperties: false }));
const EmployeeSaved = named(
  'EmployeeSaved',
  Type.Object({ ...responseProperties(EMPLOYEE_FIELDS.map((f) => ({ ...f, required: true }))), Action: ActionSchema }),
);

const AssociationBody = named(
  'CommercialClientCompanyBody',
  Type.Object(
    {
      companyId: Guid,
      commercialClientId: Guid,
      billingClientId: Guid,
      externalId: Type.Optional(nullable(Type.String({ maxLength: 4000 }))),
      vatExternalId: Type.Optional(nullable(Type.String({ maxLength: 4000 }))),
    },
    { additionalProperties: false },
  ),
);
const Association = named(
  'CommercialClientCompany',
  Type.Object({
    id: Type.String({ format: 'uuid' }),
    companyId: Type.String({ format: 'uuid' }),
    commercialClientId: Type.String({ format: 'uuid' }),
    billingClientId: Type.String({ format: 'uuid' }),
    externalId: nullable(Type.String()),
    vatExternalId: nullable(Type.String()),
  }),
);

const JsonObjectSchema = Type.Object({}, { additionalProperties: true, description: 'A JSON object' });
const ConfigurationKey = named(
  'ConfigurationKey',
  Type.Object({
    key: Type.String(),
    value: JsonObjectSchema,
    modifiedOnUtc: Type.String({ format: 'date-time' }),
  }),
);
const KeyParams = Type.Object({ key: Type.String({ minLength: 1, maxLength: 200 }) });
const ExternalIdQuery = Type.Object({ externalId: Type.String({ minLength: 1 }) });

const RESOURCES: ResourceDef[] = [billingClients, commercialClients, suppliers, ...MASTER_DATA];

/** Service views are plain records; their shape is the route's response schema, which serializes them. */
const answer = (view: object): never => view as never;

export async function integrationRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    '/api/usertypes/name',
    {
      config: { ...app_, roles: ['IntegrationRead', 'IntegrationWrite'] },
      schema: {
        tags,
        operationId: 'userTypes_getByName',
        summary: 'Look a user type up by its name',
        querystring: Type.Object({ name: Type.String({ minLength: 1 }) }),
        response: { 200: UserType },
      },
    },
    // Kept while the tenant's user types are unchanged, checked after the request arrived (decisions 0060, 0069);
    // a lookup that is not kept runs on a read lane of the primary, as readTenant's `lane` reads do.
    async (request) => findUserTypeByNameKept(ctx.db, requirePrincipal(request).tenantId, request.query.name),
  );

  // Users ------------------------------------------------------------------------------------------

  app.post(
    '/api/users',
    {
      config: { ...app_, roles: ['IntegrationWrite'] },
      schema: {
        tags,
        operationId: 'users_upsert',
        summary: 'Create or update a user',
        description:
          'Matched by Id when sent, else by ExternalId. CompanyCode, DepartmentExternalId (a department of that company) and TypologyExternalId ' +
          'must resolve (422 naming the field otherwise). Fields not sent are left unchanged on update; null clears. 201 when created, 200 when updated.',
        headers: IdempotencyHeaders,
        body: UserPostBody,
        response: { 200: UserSaved, 201: UserSaved },
      },
    },
    idempotent(ctx, async (request, reply) => {
      const { user, action } = await request.writeTenant((trx: Trx, actor: Principal) =>
        upsertUser(trx, actor, request.body as Record<string, unknown>, {}, { last: true }),
      );
      reply.code(action === 'Created' ? 201 : 200);
      return answer({ ...user, Action: action });
    }),
  );

  app.patch(
    '/api/users/:id',
    {
      config: {
        ...app_,
        roles: ['IntegrationWrite'],
        readOnly: {
          Id: 'the user’s identity',
          CompanyCode: 'the POST’s reference by code: PATCH CompanyId',
          DepartmentExternalId: 'the POST’s reference by code: PATCH DepartmentId',
          TypologyExternalId: 'the POST’s reference by code: PATCH TypologyId',
          HasPassword: 'follows from Password',
          CreatedOnUtc: 'kept by the server',
          ModifiedOnUtc: 'kept by the server',
        },
      },
      schema: {
        tags,
        operationId: 'users_patch',
        summary: 'Change some fields of a user',
        description: 'Each field is sent as {"value": …}; only the fields sent change. Password sets the login password (stored hashed).',
        params: Type.Object({ id: Guid }),
        body: UserPatchBody,
        response: { 200: User },
      },
    },
    async (request) =>
      answer(
        await request.writeTenant((trx: Trx, actor: Principal) =>
          patchUser(trx, actor, request.params.id.toLowerCase(), unwrap(request.body as Record<string, { value: unknown }>)),
        ),
      ),
  );

  app.get(
    '/api/users/external',
    {
      config: { ...app_, roles: ['IntegrationRead', 'IntegrationWrite'] },
      schema: { tags, operationId: 'users_getByExternalId', summary: 'Look a user up by external id', querystring: ExternalIdQuery, response: { 200: User } },
    },
    async (request) => answer(await request.readTenant((db) => getUserByExternalId(db, request.query.externalId), { lane: true })),
  );

  app.get(
    '/api/users/:id',
    {
      config: { ...app_, roles: ['IntegrationRead', 'IntegrationWrite'] },
      schema: { tags, operationId: 'users_get', summary: 'Get a user by id', params: Type.Object({ id: Guid }), response: { 200: User } },
    },
    async (request) => answer(await request.readTenant((db) => getUserById(db, request.params.id), { lane: true })),
  );

  app.post(
    '/api/employees',
    {
      config: { ...app_, roles: ['IntegrationWrite'], readOnly: { Action: 'what the upsert did: Created or Updated' } },
      schema: {
        tags,
        operationId: 'employees_upsert',
        summary: 'Create or update an employee',
        description: 'Matched by Id when sent, else by ExternalId. Events: Created/Updated on document type Person.',
        headers: IdempotencyHeaders,
        body: EmployeeBody,
        response: { 200: EmployeeSaved, 201: EmployeeSaved },
      },
    },
    idempotent(ctx, async (request, reply) => {
      const { employee, action } = await request.writeTenant((trx: Trx, actor: Principal) =>
        upsertEmployee(trx, actor, request.body as Record<string, unknown>),
      );
      reply.code(action === 'Created' ? 201 : 200);
      return answer({ ...employee, Action: action });
    }),
  );

  // Clients, suppliers and master data --------------------------------------------------------------

  for (const def of RESOURCES) {
    const body = named(`${def.documentType}Body`, bodySchema(def));
    const saved = named(`${def.documentType}Saved`, viewSchema(def));
    const operationId = `${def.path.split('/').pop()}_upsert`;
    // What the answer shows and the body does not take (the action, and views such as billingClients).
    const readOnly: Record<string, string> = { action: 'what the upsert did: Created or Updated' };
    for (const name of Object.keys(def.extraView ?? {})) readOnly[name] = 'derived: written by its own resource';
    if (def.company === 'id') readOnly.companyCode = 'the company is sent as companyId';
    if (!def.fields.some((f) => f.name === 'id')) readOnly.id = 'the record’s identity: matched by its key';
    app.post(
      def.path,
      {
        config: { ...app_, roles: ['IntegrationWrite'], readOnly },
        schema: {
          tags,
          operationId,
          summary: def.summary,
          description: def.description,
          headers: IdempotencyHeaders,
          body,
          response: { 200: saved, 201: saved },
        },
      },
      idempotent(ctx, async (request, reply) => {
        const { view, inserted } = await request.writeTenant((trx: Trx, actor: Principal) =>
          upsertResource(trx, actor, def, request.body as Record<string, unknown>),
        );
        reply.code(inserted ? 201 : 200);
        return answer({ ...view, action: inserted ? 'Created' : 'Updated' });
      }),
    );
  }

  app.post(
    '/api/commercial-client-companies',
    {
      config: { ...app_, roles: ['IntegrationWrite'] },
      schema: {
        tags,
        operationId: 'commercialClientCompanies_associate',
        summary: 'Associate a commercial client with its billing client for one company',
        description:
          'One billing client per commercial client and company: a second association for the same pair is a 409. The billing client must belong to companyId, ' +
          'and vatExternalId (when sent) must be a VAT rate of that company (422 otherwise).',
        headers: IdempotencyHeaders,
        body: AssociationBody,
        response: { 201: Association },
      },
    },
    idempotent(ctx, async (request, reply) => {
      const view = await request.writeTenant((trx: Trx, actor: Principal) => associate(trx, actor, request.body));
      reply.code(201);
      return answer(view);
    }),
  );

  // Lookups the user feed calls -----------------------------------------------------------------------

  const DepartmentView = named('Department', viewSchema(departments, false));
  app.get(
    '/api/companies/:companyId/departments/external',
    {
      config: { ...app_, roles: ['IntegrationRead', 'IntegrationWrite'] },
      schema: {
        tags,
        operationId: 'departments_getByExternalId',
        summary: 'Look a department of a company up by external id',
        params: Type.Object({ companyId: Guid }),
        querystring: ExternalIdQuery,
        response: { 200: DepartmentView },
      },
    },
    async (request) => {
      const { companyId } = request.params;
      const { externalId } = request.query;
      const found = await request.readTenant(
        (db) =>
          findResource(db, departments, [
            ['company_id', companyId],
            ['external_id', externalId],
          ]),
        { lane: true },
      );
      if (!found) throw notFound(`Company ${companyId} has no department with externalId "${externalId}".`);
      return answer(found);
    },
  );

  const TypologyView = named('UserTypology', viewSchema(typologies, false));
  app.get(
    '/api/departments/:departmentId/usertypologies/external',
    {
      config: { ...app_, roles: ['IntegrationRead', 'IntegrationWrite'] },
      schema: {
        tags,
        operationId: 'userTypologies_getByExternalId',
        summary: 'Look a user typology of a department up by external id',
        params: Type.Object({ departmentId: Guid }),
        querystring: ExternalIdQuery,
        response: { 200: TypologyView },
      },
    },
    async (request) => {
      const { departmentId } = request.params;
      const { externalId } = request.query;
      const found = await request.readTenant(
        (db) =>
          findResource(db, typologies, [
            ['department_id', departmentId],
            ['external_id', externalId],
          ]),
        { lane: true },
      );
      if (!found) throw notFound(`Department ${departmentId} has no user typology with externalId "${externalId}".`);
      return answer(found);
    },
  );

  // Configuration keys -----------------------------------------------------------------------------------

  app.get(
    '/api/configuration-keys/:key',
    {
      config: { ...app_, roles: ['ConfigurationKeyRead', 'ConfigurationKeyWrite'] },
      schema: {
        tags,
        operationId: 'configurationKeys_get',
        summary: 'Read a configuration key',
        description: 'Properties named like password, secret or token are answered in clear only to the Administrator role; others see "********".',
        params: KeyParams,
        response: { 200: ConfigurationKey },
      },
    },
    async (request) => request.readTenant((db, p) => getConfigurationKey(db, ctx.box, request.params.key, isAdministrator(p)), { lane: true }),
  );

  app.put(
    '/api/configuration-keys/:key',
    {
      config: { ...app_, roles: ['ConfigurationKeyWrite'] },
      schema: {
        tags,
        operationId: 'configurationKeys_put',
        summary: 'Create or replace a configuration key',
        description:
          'The body is the JSON object to store. Properties named like password, secret or token are stored encrypted; sending "********" for one keeps the stored value. ' +
          '201 when created, 200 when replaced.',
        params: KeyParams,
        body: JsonObjectSchema,
        response: { 200: ConfigurationKey, 201: ConfigurationKey },
      },
    },
    async (request, reply) => {
      // Feed and automation settings live here: a refused literal address (ftpHostIp, a url) is refused at save.
      const refused = literalAddressErrors(request.body, '/body', ctx.config.webhookAllowPrivateNetworks);
      if (refused.length)
        throw badRequest(`The key names an address Atrium may not reach: ${refused.map((e) => `${e.path}: ${e.message}`).join('; ')}`, refused);
      const { view, inserted } = await request.writeTenant((trx, p) =>
        putConfigurationKey(trx, p, ctx.box, request.params.key, request.body as JsonObject, isAdministrator(p)),
      );
      reply.code(inserted ? 201 : 200);
      return view;
    },
  );

  await adBlockerRoutes(app, ctx);
}
