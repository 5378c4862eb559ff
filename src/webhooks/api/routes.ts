// Webhook subscription API (/api/webhook-subscriptions), invocation history, test and resend, the
// document-type lookup and POST /api/v3/events (a custom event on a document). HTTP only.
import { Type } from 'typebox';
import type { Principal } from '../../platform/auth/principal.ts';
import type { RoleName } from '../../platform/auth/roles.ts';
import type { AppContext } from '../../platform/context.ts';
import { appendEvent } from '../../platform/events/outbox.ts';
import type { App, FastifyReply, FastifyRequest } from '../../platform/http/app.ts';
import { named } from '../../platform/http/openapi.ts';
import { Guid, nullable } from '../../platform/http/schemas.ts';
import { basePathOf, requestBaseUrl } from '../../platform/http/tenant-address.ts';
import { createTestInvocation, resendInvocation } from '../invocations.ts';
import { FILTER_CONDITIONS, GROUP_CONDITIONS } from '../match.ts';
import { EXAMPLE_SCAN, eventCatalogue, examplePayload, sendExample } from './catalogue.ts';
import { DEFAULT_TAKE, invocationHistory, MAX_TAKE } from './history.ts';
import { DetailFilterSchema, Literals, SubscriptionBody } from './schemas.ts';
import {
  canonicalActionType,
  createSubscription,
  deleteSubscription,
  documentTypes,
  getSubscription,
  listSubscriptions,
  raisedEventId,
  resolveDocumentType,
  updateSubscription,
} from './subscriptions.ts';

const tags = ['Webhooks'];
const Subscription = named(
  'WebhookSubscription',
  Type.Object({
    id: Guid,
    tenantId: Guid,
    name: Type.String(),
    description: nullable(Type.String()),
    url: nullable(Type.String()),
    secret: Type.String(),
    actionType: Type.String(),
    documentType: Type.String(),
    active: Type.Boolean(),
    isAutomation: Type.Boolean(),
    automationId: nullable(Type.String()),
    businessObjectTypeName: nullable(Type.String()),
    detailFilters: Type.Array(DetailFilterSchema),
    createdOnUtc: Type.String({ format: 'date-time' }),
    createdById: nullable(Type.String()),
    modifiedOnUtc: Type.String({ format: 'date-time' }),
    modifiedById: nullable(Type.String()),
  }),
);

const Attempt = named(
  'WebhookAttempt',
  Type.Object({
    attempt: Type.Integer(),
    startedOnUtc: Type.String({ format: 'date-time' }),
    durationMs: Type.Integer(),
    statusCode: nullable(Type.Integer()),
    responseBody: nullable(Type.String({ description: 'First 4 KB of the answer' })),
    error: nullable(Type.String()),
  }),
);
const Invocation = named(
  'WebhookInvocation',
  Type.Object({
    id: Guid,
    webhookId: Type.String({ description: 'The webhook-id header of every attempt' }),
    eventId: nullable(Type.String()),
    kind: Literals(['event', 'test']),
    actionType: Type.String(),
    documentType: Type.String(),
    documentId: nullable(Type.String()),
    createdOnUtc: Type.String({ format: 'date-time' }),
    status: Literals(['Pending', 'Retrying', 'Succeeded', 'Failed']),
    attempts: Type.Array(Attempt),
    nextAttemptOnUtc: nullable(Type.String({ format: 'date-time' })),
  }),
);
const Queued = named('WebhookQueued', Type.Object({ invocationId: Guid, webhookId: Type.String(), status: Type.Literal('Pending') }));
const ExampleQueued = named(
  'WebhookExampleQueued',
  Type.Object({
    invocationId: Guid,
    webhookId: Type.String(),
    status: Type.Literal('Pending'),
    source: Type.Union([Type.Literal('event'), Type.Literal('catalogue')]),
  }),
);

const CatalogueEvent = named(
  'WebhookCatalogueEvent',
  Type.Object({
    actionType: Type.String(),
    group: Type.String(),
    firesWhen: Type.String(),
    detailFields: Type.Union([Type.Array(Type.String()), Type.Literal('dynamic')], {
      description: "The event detail's fields (what DetailFilters test); dynamic: every changed persistent property of the document",
    }),
  }),
);
const EventCatalogue = named(
  'WebhookEventCatalogue',
  Type.Object({
    events: Type.Array(CatalogueEvent),
    documentTypes: Type.Array(Type.Object({ name: Type.String(), fullName: Type.String() })),
  }),
);
const EventExample = named(
  'WebhookEventExample',
  Type.Object({
    source: Type.Union([Type.Literal('event'), Type.Literal('catalogue')]),
    actionType: Type.String(),
    documentType: Type.String(),
    payload: Type.Object({}, { additionalProperties: true, description: 'The JSON body a subscription receives (signed as every delivery is)' }),
  }),
);
const ExampleQuery = Type.Object(
  {
    documentType: Type.String({ minLength: 1, maxLength: 400, description: 'Full type name or class name, as GET /api/v3/document-types/lookup lists' }),
    actionType: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);
const CATALOGUE_ROLES: RoleName[] = ['WebhookSubscriptionGet', 'WebhookSubscriptionCreate', 'WebhookSubscriptionWrite', 'WebhookSubscriptionNavigate'];

const IdParams = Type.Object({ id: Guid });
const HistoryQuery = Type.Object(
  {
    fromDateUtc: Type.Optional(Type.String({ format: 'date-time' })),
    toDateUtc: Type.Optional(Type.String({ format: 'date-time' })),
    take: Type.Optional(Type.String({ pattern: '^(1000|[1-9][0-9]{0,2})$', description: `1 to ${MAX_TAKE}; default ${DEFAULT_TAKE}` })),
    continuationToken: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
  },
  { additionalProperties: false },
);

const DocumentType = named(
  'DocumentType',
  Type.Object({
    id: Type.String({ format: 'uuid', description: 'What GET /api/v3/document-types/{id}/workflows takes (a name is accepted in its place)' }),
    name: Type.String(),
    className: Type.String(),
    fullName: Type.String(),
  }),
);

const EventBody = named(
  'EventBody',
  Type.Object(
    {
      actionType: Type.String({ minLength: 1, maxLength: 200 }),
      documentType: Type.String({ minLength: 1, maxLength: 400 }),
      documentId: Guid,
      businessObjectTypeName: Type.Optional(nullable(Type.String({ maxLength: 200 }))),
      detail: Type.Optional(Type.Object({}, { additionalProperties: true })),
    },
    { additionalProperties: false },
  ),
);
const RaisedEvent = named('RaisedEvent', Type.Object({ id: Guid, actionType: Type.String(), documentType: Type.String(), documentId: Guid }));

/** Enum values of detail filters as the spec spells them, whatever the caller's casing (property names are app.ts's). */
function canonicalBody(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  const body = request.body as { DetailFilters?: unknown } | null;
  if (body && Array.isArray(body.DetailFilters)) body.DetailFilters = body.DetailFilters.map(canonicalFilter);
  done();
}

function canonicalFilter(filter: unknown): unknown {
  if (!filter || typeof filter !== 'object' || Array.isArray(filter)) return filter;
  const out = filter as Record<string, unknown>;
  const pick = (values: readonly string[], v: unknown) => (typeof v === 'string' ? (values.find((x) => x.toLowerCase() === v.toLowerCase()) ?? v) : v);
  out.groupCondition = pick(GROUP_CONDITIONS, out.groupCondition);
  out.condition = pick(FILTER_CONDITIONS, out.condition);
  return out;
}

export async function webhookRoutes(app: App, ctx: AppContext): Promise<void> {
  const roles = (role: RoleName) => ({ roles: [role] });
  const subscriptionCtx = (principal: Principal) => ({
    box: ctx.box,
    allowPrivateNetworks: ctx.config.webhookAllowPrivateNetworks,
    userId: principal.userId,
  });
  const answer = (view: object): never => view as never;

  app.get(
    '/api/webhook-subscriptions',
    {
      config: roles('WebhookSubscriptionGet'),
      schema: {
        tags,
        operationId: 'webhookSubscriptions_list',
        summary: 'List the webhook subscriptions of the tenant',
        response: { 200: Type.Array(Subscription) },
      },
    },
    async (request) => answer(await request.readTenant((trx) => listSubscriptions(trx, ctx.box))),
  );

  app.get(
    '/api/webhook-subscriptions/:id',
    {
      config: roles('WebhookSubscriptionGet'),
      schema: { tags, operationId: 'webhookSubscriptions_get', summary: 'Get one webhook subscription', params: IdParams, response: { 200: Subscription } },
    },
    async (request) => answer(await request.readTenant((trx) => getSubscription(trx, ctx.box, request.params.id))),
  );

  app.post(
    '/api/webhook-subscriptions',
    {
      config: roles('WebhookSubscriptionCreate'),
      preValidation: canonicalBody,
      schema: {
        tags,
        operationId: 'webhookSubscriptions_create',
        summary: 'Create a webhook subscription',
        description: 'Without a Secret one is generated (whsec_…) and answered, so that every delivery is signed.',
        body: SubscriptionBody,
        response: { 201: Subscription },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const created = await request.writeTenant((trx, p) => createSubscription(trx, p.tenantId, body, subscriptionCtx(p)));
      reply.code(201).header('location', `${basePathOf(request)}/api/webhook-subscriptions/${created.id}`);
      return answer(created);
    },
  );

  app.put(
    '/api/webhook-subscriptions/:id',
    {
      config: roles('WebhookSubscriptionWrite'),
      preValidation: canonicalBody,
      schema: {
        tags,
        operationId: 'webhookSubscriptions_replace',
        summary: 'Replace a webhook subscription',
        params: IdParams,
        body: SubscriptionBody,
        response: { 200: Subscription },
      },
    },
    async (request) => answer(await request.writeTenant((trx, p) => updateSubscription(trx, p.tenantId, request.params.id, request.body, subscriptionCtx(p)))),
  );

  app.delete(
    '/api/webhook-subscriptions/:id',
    {
      config: roles('WebhookSubscriptionDelete'),
      schema: {
        tags,
        operationId: 'webhookSubscriptions_delete',
        summary: 'Delete a webhook subscription and its invocation history',
        params: IdParams,
        response: { 200: Subscription },
      },
    },
    async (request) => answer(await request.writeTenant((trx) => deleteSubscription(trx, ctx.box, request.params.id))),
  );

  app.get(
    '/api/webhook-subscriptions/:id/invocation-history',
    {
      config: roles('WebhookSubscriptionGet'),
      schema: {
        tags,
        operationId: 'webhookSubscriptions_invocationHistory',
        summary: 'Invocations of a subscription, newest first, with every attempt',
        description:
          'take defaults to 100 (at most 1000). When more remain, the X-Continuation-Token header (and Link rel="next") carries the token of the next page; ' +
          'send it back as continuationToken with the same date limits.',
        params: IdParams,
        querystring: HistoryQuery,
        response: { 200: Type.Array(Invocation) },
      },
    },
    async (request, reply) => {
      const { items, continuationToken } = await request.readTenant((trx) =>
        invocationHistory(trx, ctx.box, request.params.id, { ...request.query, take: request.query.take ? Number(request.query.take) : undefined }),
      );
      if (continuationToken) {
        const next = new URLSearchParams();
        for (const [k, v] of Object.entries(request.query)) if (v !== undefined && k !== 'continuationToken') next.set(k, String(v));
        next.set('continuationToken', continuationToken);
        reply.header('x-continuation-token', continuationToken);
        reply.header('link', `<${basePathOf(request)}/api/webhook-subscriptions/${request.params.id}/invocation-history?${next}>; rel="next"`);
      }
      return answer(items);
    },
  );

  app.post(
    '/api/webhook-subscriptions/:id/test',
    {
      config: roles('WebhookSubscriptionWrite'),
      schema: {
        tags,
        operationId: 'webhookSubscriptions_test',
        summary: 'Send a test event (action "test") to the subscription',
        params: IdParams,
        response: { 202: Queued },
      },
    },
    async (request, reply) => {
      const id = await request.writeTenant((trx, p) => createTestInvocation(trx, p.tenantId, request.params.id, requestBaseUrl(request)));
      reply.code(202);
      return { invocationId: id, webhookId: id, status: 'Pending' as const };
    },
  );

  app.post(
    '/api/webhook-subscriptions/:id/invocations/:invocationId/resend',
    {
      config: roles('WebhookSubscriptionWrite'),
      schema: {
        tags,
        operationId: 'webhookSubscriptions_resendInvocation',
        summary: 'Deliver an invocation again, with the same webhook-id and a fresh retry schedule',
        params: Type.Object({ id: Guid, invocationId: Guid }),
        response: { 202: Queued },
      },
    },
    async (request, reply) => {
      await request.writeTenant((trx) => resendInvocation(trx, request.params.id, request.params.invocationId));
      reply.code(202);
      return { invocationId: request.params.invocationId, webhookId: request.params.invocationId, status: 'Pending' as const };
    },
  );

  app.post(
    '/api/webhook-subscriptions/:id/send-example',
    {
      config: roles('WebhookSubscriptionWrite'),
      schema: {
        tags,
        operationId: 'webhookSubscriptions_sendExample',
        summary: "Send the subscription's example payload (as GET /api/v3/webhook-events/example shows it) as a test delivery",
        description:
          "The payload of the tenant's newest event of the subscription's action and document type (source event), else one built from the catalogue " +
          '(source catalogue); with action "test" and a new id. Delivered and recorded like POST …/test.',
        params: IdParams,
        response: { 202: ExampleQueued },
      },
    },
    async (request, reply) => {
      const sent = await request.writeTenant((trx, p) => sendExample(trx, p.tenantId, request.params.id, requestBaseUrl(request)));
      reply.code(202);
      return { invocationId: sent.invocationId, webhookId: sent.invocationId, status: 'Pending' as const, source: sent.source };
    },
  );

  app.get(
    '/api/v3/webhook-events',
    {
      config: { roles: CATALOGUE_ROLES },
      schema: {
        tags,
        operationId: 'webhookEvents_catalogue',
        summary: 'The event catalogue: every event with its detail fields, and the document types of the tenant',
        response: { 200: EventCatalogue },
      },
    },
    async (request) => request.readTenant((trx) => eventCatalogue(trx)),
  );

  app.get(
    '/api/v3/webhook-events/example',
    {
      config: { roles: CATALOGUE_ROLES },
      schema: {
        tags,
        operationId: 'webhookEvents_example',
        summary: 'An example payload of an event on a document type, as a subscription receives it',
        description: `The tenant's newest event of the kind (among its newest ${EXAMPLE_SCAN}) when there is one (source event), else one built from the catalogue (source catalogue). Without actionType, any event of the document type.`,
        querystring: ExampleQuery,
        response: { 200: EventExample },
      },
    },
    async (request) =>
      answer(
        await request.readTenant((trx, p) =>
          examplePayload(trx, p.tenantId, requestBaseUrl(request), { documentType: request.query.documentType, actionType: request.query.actionType }),
        ),
      ),
  );

  app.get(
    '/api/v3/document-types/lookup',
    {
      config: {
        roles: ['DataExtractionRead', 'WebhookSubscriptionGet', 'WebhookSubscriptionCreate', 'WebhookSubscriptionWrite', 'WebhookSubscriptionNavigate'],
      },
      schema: {
        tags,
        operationId: 'documentTypes_lookup',
        summary: 'The document types of the tenant, with the full names DocumentType takes',
        response: { 200: Type.Array(DocumentType) },
      },
    },
    async (request) => request.readTenant((db) => documentTypes(db), { lane: true }),
  );

  app.post(
    '/api/v3/events',
    {
      config: { roles: ['EventRaise'] },
      schema: {
        tags,
        operationId: 'events_raise',
        summary: 'Raise a custom event on a document',
        description:
          'Appends the event to the outbox; subscriptions whose ActionType is this (custom) value fire for it. documentType is a full type name of the tenant.',
        body: EventBody,
        response: { 201: RaisedEvent },
      },
    },
    async (request, reply) => {
      const body = request.body;
      const raised = await request.writeTenant(async (trx, p) => {
        const documentType = await resolveDocumentType(trx, body.documentType, '/body/documentType');
        const actionType = canonicalActionType(body.actionType);
        await appendEvent(trx, {
          tenantId: p.tenantId,
          actionType,
          documentType,
          documentId: body.documentId,
          businessObjectTypeName: body.businessObjectTypeName ?? null,
          detail: { ...(body.detail ?? {}) },
          userId: p.userId,
        });
        const { id } = await raisedEventId(trx);
        return { id, actionType, documentType, documentId: body.documentId };
      });
      reply.code(201);
      return raised;
    },
  );
}
