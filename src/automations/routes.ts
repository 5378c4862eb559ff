// Automations API: definitions under /api/v3/automations (roles AutomationGet/Create/Write/Delete), run
// now, runs with their action log, and the platform's execute URL /api/integration-workflows/{id}/execute,
// which runs the automation with the HTTP request as ['#HttpRequest'] and answers with its Result.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { type Static, Type } from 'typebox';
import type { AppContext } from '../platform/context.ts';
import { isUuid } from '../platform/db/database.ts';
import { badRequest, FieldErrorList, HttpProblem, notFound, unauthorized } from '../platform/errors.ts';
import { type App, authenticate, type FastifyRequest } from '../platform/http/app.ts';
import { named } from '../platform/http/openapi.ts';
import { Guid, nullable } from '../platform/http/schemas.ts';
import { basePathOf } from '../platform/http/tenant-address.ts';
import { literalAddressErrors } from '../platform/outbound.ts';
import type { HttpRequestValue } from './engine.ts';
import { MASK } from './mask.ts';
import { runAndRecord } from './run-and-record.ts';
import { actionTypesFor, servicesFor } from './runtime.ts';
import {
  automationView,
  createAutomation,
  deleteAutomation,
  findAutomation,
  findRun,
  listAutomations,
  listRuns,
  toRunnable,
  updateAutomation,
} from './service.ts';

const tags = ['Automations'];

/**
 * A definition naming a refused literal address in an action's own settings (`url`, `ftpHostIp`) is refused at
 * save, not at its first run. Only the actions' own fields are looked at: a body or a template may carry any text as data.
 */
function refuseLiteralAddresses(body: unknown, allowPrivate: boolean): void {
  const errors = new FieldErrorList();
  const actionsOf = (owner: unknown, at: string) => {
    const actions = (owner as { actions?: unknown } | null)?.actions;
    if (!Array.isArray(actions)) return;
    for (let i = 0; i < actions.length; i++) errors.push(...literalAddressErrors(actions[i], `${at}/actions/${i}`, allowPrivate, { depth: 1 }));
  };
  actionsOf(body, '/body');
  const subs = (body as { subWorkflows?: unknown } | null)?.subWorkflows;
  if (Array.isArray(subs)) for (let i = 0; i < subs.length; i++) actionsOf(subs[i], `/body/subWorkflows/${i}`);
  if (errors.length) throw badRequest(`The automation names an address it may not reach: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, errors);
}

const base = '/api/v3/automations';

const DefinitionBody = named(
  'AutomationDefinition',
  Type.Object(
    {
      name: Type.Optional(Type.String()),
      active: Type.Optional(Type.Boolean()),
      version: Type.Optional(Type.Unknown({ description: 'Ignored on save: the server counts versions.' })),
      logLevelType: Type.Optional(Type.String({ description: 'Info (default), Warning or Error' })),
      requiresAuthentication: Type.Optional(Type.Boolean()),
      actions: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()))),
      subWorkflows: Type.Optional(nullable(Type.Array(Type.Record(Type.String(), Type.Unknown())))),
      scheduler: Type.Optional(nullable(Type.Record(Type.String(), Type.Unknown()))),
    },
    { additionalProperties: true, description: "The platform's automation definition; docs/automations.md lists every action and its fields." },
  ),
);

const Automation = named(
  'Automation',
  Type.Object({
    id: Guid,
    tenantId: Guid,
    name: Type.String(),
    active: Type.Boolean(),
    version: Type.Integer(),
    logLevelType: Type.String(),
    requiresAuthentication: Type.Boolean(),
    actions: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    subWorkflows: Type.Array(Type.Record(Type.String(), Type.Unknown())),
    scheduler: nullable(Type.Record(Type.String(), Type.Unknown())),
    nextRunUtc: nullable(Type.String({ format: 'date-time' })),
    createdOnUtc: Type.String({ format: 'date-time' }),
    createdById: nullable(Guid),
    modifiedOnUtc: Type.String({ format: 'date-time' }),
    modifiedById: nullable(Guid),
  }),
);

const runFields = {
  id: Guid,
  automationId: Guid,
  version: Type.Integer(),
  trigger: Type.Union([Type.Literal('webhook'), Type.Literal('schedule'), Type.Literal('manual'), Type.Literal('http'), Type.Literal('workflow')]),
  status: Type.Union([Type.Literal('Running'), Type.Literal('Succeeded'), Type.Literal('Failed')]),
  eventId: nullable(Guid),
  invocationId: nullable(Guid),
  fireTimeUtc: nullable(Type.String({ format: 'date-time' })),
  startedOnUtc: Type.String({ format: 'date-time' }),
  finishedOnUtc: nullable(Type.String({ format: 'date-time' })),
  error: nullable(Type.String()),
  result: Type.Unknown({ description: "The Result's httpResponse {statusCode, headers, body}, or null." }),
};
/** One entry of a run's action log (engine.ts ActionLogEntry). */
const ActionLogEntry = named(
  'AutomationActionLogEntry',
  Type.Object({
    name: Type.String(),
    type: Type.String({ description: "The action's actionType." }),
    // Optional: runs logged by earlier versions may lack them.
    workflow: Type.Optional(nullable(Type.String({ description: 'The sub-workflow the action belongs to; null for the main flow.' }))),
    startedOnUtc: Type.Optional(Type.String({ format: 'date-time' })),
    durationMs: Type.Optional(Type.Number()),
    input: Type.Optional(Type.Unknown({ description: "The action's resolved fields (trimmed, secrets masked)." })),
    output: Type.Optional(Type.Unknown({ description: "The action's output (trimmed, secrets masked)." })),
    error: Type.Optional(Type.String()),
    next: Type.Optional(nullable(Type.String({ description: 'The action that ran next.' }))),
  }),
);
const RunSummary = named('AutomationRunSummary', Type.Object(runFields));
const Run = named(
  'AutomationRun',
  Type.Object({
    ...runFields,
    actions: Type.Array(ActionLogEntry, { description: 'The action log: one entry per action run, in order.' }),
  }),
);

const IdParams = Type.Object({ id: Guid });
const RunParams = Type.Object({ id: Guid, runId: Guid });
const TenantIdParams = Type.Object({ tenantId: Guid, id: Guid });
/** The params of either execute URL. */
type ExecuteParams = Static<typeof IdParams> & Partial<Static<typeof TenantIdParams>>;
const RunsQuery = Type.Object(
  {
    skip: Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$', description: 'Runs to skip; default 0' })),
    take: Type.Optional(Type.String({ pattern: '^(1000|[1-9][0-9]{0,2})$', description: '1 to 1000; default 50' })),
  },
  { additionalProperties: false },
);
const RunBody = Type.Object({ input: Type.Optional(Type.Unknown({ description: "The run's ['#HttpRequest']$.Body." })) } as const, {
  additionalProperties: false,
});

const definitionBodyLimit = (ctx: AppContext) => Math.min(ctx.config.bodyLimitBytes, 2 * ctx.config.automationMaxDefinitionBytes);
const limitsOf = (ctx: AppContext) => ({
  maxBytes: ctx.config.automationMaxDefinitionBytes,
  maxActions: ctx.config.automationMaxActions,
  actionTypes: actionTypesFor(ctx),
});

/** The caller's credentials: never handed to the run (it sees that they were sent, as ********). */
const CALLER_CREDENTIAL = /^(authorization|proxy-authorization|cookie|x-appsecret|x-accesstoken)$/i;

/** The request as the automation reads it: {Scheme, Host, Path, Method, Query, Headers, Body}. */
function requestValue(request: FastifyRequest, body: unknown): HttpRequestValue {
  const url = new URL(request.url, 'http://x');
  // Query and Headers values are lists of strings, as the platform hands them (§6.3); the engine reads them
  // as text (joined with ",") where a text is wanted.
  const headers: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(request.headers)) if (v !== undefined) headers[k] = CALLER_CREDENTIAL.test(k) ? [MASK] : Array.isArray(v) ? v : [v];
  const query: Record<string, string[]> = {};
  for (const k of new Set(url.searchParams.keys())) query[k] = url.searchParams.getAll(k);
  return {
    Scheme: request.protocol,
    Host: request.host,
    Path: url.pathname,
    Method: request.method,
    Query: query,
    Headers: headers,
    Body: body,
  };
}

/** The saving request's app credentials, sealed: isApiCall sends them as the platform sends the tenant's. */
function sealedCredentials(ctx: AppContext, request: FastifyRequest): string | null {
  const h = request.headers;
  if (typeof h['x-appid'] !== 'string' || typeof h['x-appsecret'] !== 'string') return null;
  const appUser = typeof h['x-appuser'] === 'string' && h['x-appuser'] !== '' ? h['x-appuser'] : undefined;
  return ctx.box.encrypt(JSON.stringify({ appId: h['x-appid'], appSecret: h['x-appsecret'], appUser }));
}

export async function automationRoutes(app: App, ctx: AppContext): Promise<void> {
  app.get(
    base,
    {
      schema: { tags, operationId: 'automations_list', summary: 'List the automations of the tenant', response: { 200: Type.Array(Automation) } },
      config: { roles: ['AutomationGet'] },
    },
    async (request) => request.readTenant((trx) => listAutomations(trx)),
  );

  app.get(
    `${base}/:id`,
    {
      schema: { tags, operationId: 'automations_get', summary: 'Get one automation', params: IdParams, response: { 200: Automation } },
      config: { roles: ['AutomationGet'] },
    },
    async (request) => request.readTenant(async (trx) => automationView(await findAutomation(trx, request.params.id))),
  );

  app.post(
    base,
    {
      schema: {
        tags,
        operationId: 'automations_create',
        summary: 'Create an automation',
        description:
          'The body is validated as a whole; a 400 lists every error with its JSON path. Runs act as the saving app (isApiCall, AnalyticsNamedQuery).',
        body: DefinitionBody,
        response: { 201: Automation },
      },
      config: { roles: ['AutomationCreate'] },
      // A definition's body is refused past twice its limit before it is read (whitespace allowed for).
      bodyLimit: definitionBodyLimit(ctx),
    },
    async (request, reply) => {
      refuseLiteralAddresses(request.body, ctx.config.webhookAllowPrivateNetworks);
      const view = await request.writeTenant((trx, p) => createAutomation(trx, p, request.body, sealedCredentials(ctx, request), limitsOf(ctx)));
      return reply
        .code(201)
        .header('location', `${basePathOf(request)}${base}/${view.id}`)
        .send(view);
    },
  );

  app.put(
    `${base}/:id`,
    {
      schema: {
        tags,
        operationId: 'automations_update',
        summary: 'Replace an automation (a new version)',
        params: IdParams,
        body: DefinitionBody,
        response: { 200: Automation },
      },
      config: { roles: ['AutomationWrite'] },
      // A definition's body is refused past twice its limit before it is read (whitespace allowed for).
      bodyLimit: definitionBodyLimit(ctx),
    },
    async (request) => {
      refuseLiteralAddresses(request.body, ctx.config.webhookAllowPrivateNetworks);
      return request.writeTenant((trx, p) => updateAutomation(trx, p, request.params.id, request.body, sealedCredentials(ctx, request), limitsOf(ctx)));
    },
  );

  app.delete(
    `${base}/:id`,
    {
      schema: { tags, operationId: 'automations_delete', summary: 'Delete an automation and its runs', params: IdParams, response: { 204: Type.Null() } },
      config: { roles: ['AutomationDelete'] },
    },
    async (request, reply) => {
      await request.writeTenant((trx) => deleteAutomation(trx, request.params.id));
      return reply.code(204).send(null);
    },
  );

  app.post(
    `${base}/:id/run`,
    {
      schema: {
        tags,
        operationId: 'automations_run',
        summary: 'Run the automation now with a given input',
        description: "`input` becomes ['#HttpRequest']$.Body. Answers the finished run with its action log.",
        params: IdParams,
        body: Type.Optional(RunBody),
        response: { 200: Run },
      },
      config: { roles: ['AutomationWrite'] },
    },
    async (request) => {
      const automation = toRunnable(await request.readTenant((trx) => findAutomation(trx, request.params.id)));
      // A run now is recorded before it starts: it leaves a record whatever happens to the process.
      const { runId } = await runAndRecord(ctx, automation, requestValue(request, request.body?.input ?? null), { trigger: 'manual', recording: 'start' });
      return request.readTenant((trx) => findRun(trx, request.params.id, runId as string));
    },
  );

  app.get(
    `${base}/:id/runs`,
    {
      schema: {
        tags,
        operationId: 'automations_listRuns',
        summary: 'Runs of the automation, newest first',
        params: IdParams,
        querystring: RunsQuery,
        response: { 200: Type.Array(RunSummary) },
      },
      config: { roles: ['AutomationGet'] },
    },
    async (request) => request.readTenant((trx) => listRuns(trx, request.params.id, Number(request.query.skip ?? 0), Number(request.query.take ?? 50))),
  );

  app.get(
    `${base}/:id/runs/:runId`,
    {
      schema: { tags, operationId: 'automations_getRun', summary: 'One run with its action log', params: RunParams, response: { 200: Run } },
      config: { roles: ['AutomationGet'] },
    },
    async (request) => request.readTenant((trx) => findRun(trx, request.params.id, request.params.runId)),
  );

  // The execute URL takes any body: the automation reads it (JSON parsed, anything else as text).
  await app.register(async (plain) => {
    const sub = plain.withTypeProvider<TypeBoxTypeProvider>();
    sub.removeAllContentTypeParsers();
    sub.addContentTypeParser('*', { parseAs: 'string', bodyLimit: ctx.config.bodyLimitBytes }, (request, body, done) => {
      const type = request.headers['content-type'] ?? '';
      if (/json/i.test(type) && body !== '')
        try {
          return done(null, JSON.parse(body as string));
        } catch {}
      done(null, body);
    });
    const description =
      "Runs the automation with this request as ['#HttpRequest'] and answers with its Result's httpResponse (status, headers, body). " +
      'With requiresAuthentication the app headers or a token are required; without, the automation checks its caller itself. ' +
      'A run that fails answers 500 with the reason; every run is in the automation runs.';
    const handler = async (request: FastifyRequest<{ Params: ExecuteParams }>, reply: import('fastify').FastifyReply) => {
      const params = request.params;
      const tenantId = await executeTenant(ctx, request, params);
      // Before authentication (an automation may check its caller itself): the tenant is the one the address names.
      const automation = await servicesFor(ctx).loadAutomation(tenantId, params.id);
      if (!automation) throw notFound(`No active automation ${params.id}.`);
      if (automation.definition.requiresAuthentication) {
        request.addressedTenantId ??= tenantId;
        const principal = await authenticate(ctx, request, 'appOrToken');
        if (principal.tenantId !== tenantId) throw unauthorized();
      }
      // The hot path: recorded once, at the run's end.
      const { outcome } = await runAndRecord(ctx, automation, requestValue(request, request.body ?? null), { trigger: 'http', recording: 'end' });
      if (outcome.status === 'Failed') throw new HttpProblem(500, `The automation failed: ${outcome.error}`);
      const r = outcome.result ?? { statusCode: 204, headers: {}, body: null };
      for (const [k, v] of Object.entries(r.headers)) if (/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(k) && !/[\r\n]/.test(v)) reply.header(k, v);
      reply.code(r.statusCode);
      if (r.body === null || r.body === undefined) return reply.send();
      if (typeof r.body === 'string') {
        if (!reply.hasHeader('content-type')) reply.type('text/plain; charset=utf-8');
        return reply.send(r.body);
      }
      if (!reply.hasHeader('content-type')) reply.type('application/json; charset=utf-8');
      return reply.send(JSON.stringify(r.body));
    };
    const schema = (operationId: string, params: ReturnType<typeof Type.Object>) => ({
      tags,
      operationId,
      summary: 'Execute an automation over HTTP',
      description,
      params,
      response: { default: { description: "The Result's httpResponse", content: { '*/*': { schema: {} } } } },
    });
    for (const method of ['POST', 'GET'] as const) {
      const suffix = method === 'POST' ? '' : 'Get';
      sub.route({
        method,
        url: '/api/integration-workflows/:id/execute',
        schema: schema(`automations_execute${suffix}`, IdParams),
        config: { auth: 'none' },
        handler,
      });
      sub.route({
        method,
        url: '/api/tenants/:tenantId/integration-workflows/:id/execute',
        schema: schema(`automations_executeForTenant${suffix}`, TenantIdParams),
        config: { auth: 'none' },
        handler,
      });
    }
  });
}

/** The tenant of an execute call: the path's, else the one the request names (X-AppTenant, base path, Host), else the automation's. */
async function executeTenant(ctx: AppContext, request: FastifyRequest, params: ExecuteParams): Promise<string> {
  if (params.tenantId) {
    if (request.addressedTenantId && request.addressedTenantId !== params.tenantId.toLowerCase()) throw unauthorized();
    return params.tenantId.toLowerCase();
  }
  if (request.addressedTenantId) return request.addressedTenantId;
  if (!isUuid(params.id)) throw notFound(`No active automation ${params.id}.`);
  // Automation ids are GUIDs: one names one automation across tenants.
  const row = await ctx.db.asOwner((trx) => trx.selectFrom('automations').select('tenant_id').where('id', '=', params.id).executeTakeFirst());
  if (!row) throw notFound(`No active automation ${params.id}.`);
  return row.tenant_id;
}
