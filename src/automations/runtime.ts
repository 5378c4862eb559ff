// The engine's services, one set per process context: routes (execute, run now) and the worker share
// them. Also where the process tells automations the address its API listens on (isApiCall's default).
import { CLIENT_DOCUMENT_TYPES, documentView, requireRead } from '../client-api/service.ts';
import { dynamicExecute } from '../extraction/service.ts';
import { getConfigurationKey } from '../integration/service.ts';
import { appRoles } from '../platform/auth/service.ts';
import type { AppContext } from '../platform/context.ts';
import { HttpProblem, notFound } from '../platform/errors.ts';
import { Mailer } from '../platform/mail/mailer.ts';
import { createOutboundAgent } from '../platform/outbound.ts';
import { enqueueBackgroundWork } from './background-queue.ts';
import type { Handler } from './engine.ts';
import { HANDLERS } from './handlers.ts';
import type { RunServices } from './run-services.ts';
import { toRunnable } from './runs.ts';

/** isApiCall's app tokens are reused until this long before they expire; at most this many are kept. */
const TOKEN_MARGIN_MS = 60_000;
const MAX_KEPT_TOKENS = 10_000;

const byContext = new WeakMap<AppContext, RunServices & { close: () => Promise<void> }>();
const listening = new WeakMap<AppContext, string>();
const surfaceActions = new WeakMap<AppContext, Readonly<Record<string, SurfaceAction>>>();

/** A built-in action type of another surface: its handler and the fields it cannot run without (validation). */
export interface SurfaceAction {
  handler: Handler;
  fields: readonly string[];
}

/**
 * Adds other surfaces' built-in action types to a context's runs and to the definitions its routes accept
 * (server.ts, createContext). Before the context's first run: its run services are built once.
 */
export function useActionHandlers(ctx: AppContext, actions: Readonly<Record<string, SurfaceAction>>): void {
  if (byContext.has(ctx)) throw new Error('action handlers are added before the context runs an automation');
  for (const type of Object.keys(actions)) if (Object.hasOwn(HANDLERS, type)) throw new Error(`action type ${type} is the engine's own`);
  surfaceActions.set(ctx, { ...surfaceActions.get(ctx), ...actions });
}

/** The other surfaces' action types a context's definitions may use, with their required fields (DefinitionLimits.actionTypes). */
export function actionTypesFor(ctx: AppContext): Record<string, readonly string[]> {
  const out: Record<string, readonly string[]> = Object.create(null);
  for (const [type, a] of Object.entries(surfaceActions.get(ctx) ?? {})) out[type] = a.fields;
  return out;
}

/** Called once the HTTP server listens: isApiCall reaches the API there unless ATRIUM_AUTOMATION_API_URL says otherwise. */
export function setApiAddress(ctx: AppContext, address: string): void {
  listening.set(ctx, address.replace(/\/+$/, ''));
}

export function servicesFor(ctx: AppContext): RunServices {
  let s = byContext.get(ctx);
  if (s) return s;
  const mailer = new Mailer(ctx.config);
  const agent = createOutboundAgent({
    allowPrivate: ctx.config.webhookAllowPrivateNetworks,
    connections: ctx.config.automationConcurrency,
    connectTimeoutMs: 10_000,
  });
  const tokens = new Map<string, { token: string; until: number }>();
  const handlers: Record<string, Handler> = Object.assign(Object.create(null), HANDLERS);
  for (const [type, a] of Object.entries(surfaceActions.get(ctx) ?? {})) handlers[type] = a.handler;
  s = {
    config: ctx.config,
    handlers,
    db: ctx.db,
    box: ctx.box,
    mailer,
    agent,
    apiBaseUrl: () => ctx.config.automationApiUrl ?? listening.get(ctx) ?? ctx.config.publicUrl,
    loadAutomation: async (tenantId, id) => {
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return null;
      const row = await ctx.db.withTenant(tenantId, (trx) => trx.selectFrom('automations').selectAll().where('id', '=', id).executeTakeFirst());
      return row?.active ? toRunnable(row) : null;
    },
    configurationKey: async (tenantId, key) => ctx.db.withTenant(tenantId, async (trx) => (await getConfigurationKey(trx, ctx.box, key, true)).value),
    appRoles: (tenantId, appId) => ctx.db.withTenant(tenantId, (trx) => appRoles(trx, appId)),
    namedQuery: async (principal, name, body) =>
      (await ctx.db.withTenant(principal.tenantId, (trx) => dynamicExecute(trx, principal, name, body as never, ctx.db))).toString('utf8'),
    documentView: async (tenantId, appId, documentType, documentId) => {
      const def = CLIENT_DOCUMENT_TYPES.find(documentType);
      if (!def) throw new HttpProblem(422, `documentType "${documentType}" is not a document type of the Client API`);
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(documentId)) throw notFound(`There is no ${def.type} with id ${documentId}.`);
      return ctx.db.withTenant(tenantId, async (trx) => {
        requireRead({ tenantId, appId, userId: null, userName: null, roles: new Set(await appRoles(trx, appId)), via: 'token' }, def);
        return documentView(trx, def, documentId);
      });
    },
    issueAppToken: async (tenantId, appId) => {
      // Reused until shortly before it expires; kept per context (a token is its auth service's).
      const key = `${tenantId}/${appId}`;
      const hit = tokens.get(key);
      if (hit && hit.until > Date.now()) return { accessToken: hit.token, expiresIn: Math.floor((hit.until - Date.now()) / 1000) };
      const t = await ctx.auth.issueForApp({ tenantId, appId, userId: null, userName: null, roles: new Set(), via: 'token' });
      if (tokens.size >= MAX_KEPT_TOKENS) tokens.clear();
      tokens.set(key, { token: t.accessToken, until: Date.now() + t.expiresIn * 1000 - TOKEN_MARGIN_MS });
      return { accessToken: t.accessToken, expiresIn: t.expiresIn };
    },
    enqueueBackgroundWork: (tenantId, work) => enqueueBackgroundWork(ctx, tenantId, work),
    openCredentials: async (sealed) => ctx.box.decrypt(sealed),
    close: async () => {
      byContext.delete(ctx);
      mailer.close();
      await agent.close().catch(() => {});
    },
  };
  byContext.set(ctx, s);
  return s;
}

export async function closeServices(ctx: AppContext): Promise<void> {
  await byContext.get(ctx)?.close();
}
