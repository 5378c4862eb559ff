// Webhook subscriptions of a tenant: validation of the spec's body, storage with the Secret sealed
// by the app's SecretBox, and the subscription view the API answers.
import { sql } from 'kysely';
import type { SecretBox } from '../../platform/auth/hashing.ts';
import type { Trx } from '../../platform/db/database.ts';
import type { RowOf } from '../../platform/db/schema.ts';
import { type FieldError, HttpProblem, notFound } from '../../platform/errors.ts';
import { ACTION_TYPES } from '../../platform/events/catalogue.ts';
import { literalHostProblem } from '../../platform/outbound.ts';
import { type DetailFilter, parsePath } from '../match.ts';
import { generateSecret, secretProblem } from '../sign.ts';
import type { SubscriptionInput } from './schemas.ts';

export interface SubscriptionView {
  id: string;
  tenantId: string;
  name: string;
  description: string | null;
  url: string | null;
  secret: string;
  actionType: string;
  documentType: string;
  active: boolean;
  isAutomation: boolean;
  automationId: string | null;
  businessObjectTypeName: string | null;
  detailFilters: DetailFilter[];
  createdOnUtc: string;
  createdById: string | null;
  modifiedOnUtc: string;
  modifiedById: string | null;
}

export interface SubscriptionContext {
  box: SecretBox;
  allowPrivateNetworks: boolean;
  userId: string | null;
}

export interface DocumentTypeRow {
  id: string;
  name: string;
  className: string;
  fullName: string;
}

/** The tenant's document types, as `GET /api/v3/document-types/lookup` lists them. */
export async function documentTypes(trx: Trx): Promise<DocumentTypeRow[]> {
  const rows = await trx.selectFrom('document_types').select(['id', 'name', 'class_name', 'full_name']).orderBy('name').execute();
  return rows.map((r) => ({ id: r.id, name: r.name, className: r.class_name, fullName: r.full_name }));
}

/** A full type name the tenant has (the class name is accepted too); 400 listing the valid ones otherwise. */
export async function resolveDocumentType(trx: Trx, value: string, path: string): Promise<string> {
  const types = await documentTypes(trx);
  const wanted = value.trim().toLowerCase();
  const found = types.find((t) => t.fullName.toLowerCase() === wanted) ?? types.find((t) => t.className.toLowerCase() === wanted);
  if (found) return found.fullName;
  const valid = types.map((t) => t.fullName);
  throw new HttpProblem(400, `DocumentType "${value}" is not a document type of this tenant; see GET /api/v3/document-types/lookup.`, {
    errors: [{ path, message: `must be one of: ${valid.join(', ')}` }],
    extra: { validDocumentTypes: valid },
  });
}

/** Catalogue events keep the catalogue's spelling; other values are custom action types as typed. */
export function canonicalActionType(value: string): string {
  const trimmed = value.trim();
  for (const known of ACTION_TYPES) if (known.toLowerCase() === trimmed.toLowerCase()) return known;
  return trimmed;
}

function validate(input: SubscriptionInput, allowPrivate: boolean): FieldError[] {
  const errors: FieldError[] = [];
  if (input.IsAutomation) {
    if (!input.AutomationId) errors.push({ path: '/body/AutomationId', message: 'is required when IsAutomation is true' });
  } else if (!input.Url) {
    errors.push({ path: '/body/Url', message: 'is required unless IsAutomation is true' });
  }
  if (input.Url) {
    let url: URL | null = null;
    try {
      url = new URL(input.Url);
    } catch {
      errors.push({ path: '/body/Url', message: 'must be an absolute http or https URL' });
    }
    if (url && url.protocol !== 'http:' && url.protocol !== 'https:') errors.push({ path: '/body/Url', message: 'must use http or https' });
    else if (url && (url.username || url.password)) errors.push({ path: '/body/Url', message: 'must not carry credentials; use Secret' });
    else if (url) {
      const refused = literalHostProblem(url, allowPrivate);
      if (refused) errors.push({ path: '/body/Url', message: refused });
    }
  }
  if (input.Secret) {
    const problem = secretProblem(input.Secret);
    if (problem) errors.push({ path: '/body/Secret', message: problem });
  }
  if (!input.ActionType.trim()) errors.push({ path: '/body/ActionType', message: 'must not be blank' });
  (input.DetailFilters ?? []).forEach((f, i) => {
    if (!parsePath(f.jsonPathExpression)) {
      errors.push({ path: `/body/DetailFilters/${i}/jsonPathExpression`, message: 'must name a property of the event detail (Name, a.b or $.a.b)' });
    }
  });
  return errors;
}

type SubscriptionRow = RowOf<'webhook_subscriptions'> & { detail_filters: DetailFilter[] };

const FILTERS_JSON = sql<DetailFilter[]>`coalesce((
  select jsonb_agg(jsonb_build_object('groupCondition', f.group_condition, 'jsonPathExpression', f.json_path_expression, 'condition', f.condition, 'value', f.value) order by f.position)
  from webhook_detail_filters f where f.tenant_id = s.tenant_id and f.subscription_id = s.id), '[]'::jsonb)`;

function view(row: SubscriptionRow, box: SecretBox): SubscriptionView {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    description: row.description,
    url: row.url,
    secret: box.decrypt(row.secret),
    actionType: row.action_type,
    documentType: row.document_type,
    active: row.active,
    isAutomation: row.is_automation,
    automationId: row.automation_id,
    businessObjectTypeName: row.business_object_type_name,
    detailFilters: row.detail_filters,
    createdOnUtc: row.created_on_utc.toISOString(),
    createdById: row.created_by_id,
    modifiedOnUtc: row.modified_on_utc.toISOString(),
    modifiedById: row.modified_by_id,
  };
}

async function selectSubscriptions(trx: Trx, id?: string): Promise<SubscriptionRow[]> {
  let q = trx.selectFrom('webhook_subscriptions as s').selectAll('s').select(FILTERS_JSON.as('detail_filters')).orderBy('s.created_on_utc').orderBy('s.id');
  if (id) q = q.where('s.id', '=', id);
  return q.execute();
}

export async function listSubscriptions(trx: Trx, box: SecretBox): Promise<SubscriptionView[]> {
  return (await selectSubscriptions(trx)).map((r) => view(r, box));
}

export async function getSubscription(trx: Trx, box: SecretBox, id: string): Promise<SubscriptionView> {
  const [row] = await selectSubscriptions(trx, id);
  if (!row) throw notFound(`No webhook subscription ${id}.`);
  return view(row, box);
}

async function prepare(trx: Trx, input: SubscriptionInput, ctx: SubscriptionContext) {
  const errors = validate(input, ctx.allowPrivateNetworks);
  if (errors.length) throw new HttpProblem(400, 'The webhook subscription is not valid.', { errors });
  return {
    name: input.Name,
    description: input.Description ?? null,
    action_type: canonicalActionType(input.ActionType),
    document_type: await resolveDocumentType(trx, input.DocumentType, '/body/DocumentType'),
    url: input.Url || null,
    active: input.Active ?? false,
    is_automation: input.IsAutomation ?? false,
    automation_id: input.AutomationId || null,
    business_object_type_name: input.BusinessObjectTypeName || null,
  };
}

async function writeFilters(trx: Trx, tenantId: string, subscriptionId: string, filters: DetailFilter[]): Promise<void> {
  await trx.deleteFrom('webhook_detail_filters').where('subscription_id', '=', subscriptionId).execute();
  if (filters.length === 0) return;
  await trx
    .insertInto('webhook_detail_filters')
    .values(
      filters.map((f, position) => ({
        tenant_id: tenantId,
        subscription_id: subscriptionId,
        position,
        group_condition: f.groupCondition,
        json_path_expression: f.jsonPathExpression,
        condition: f.condition,
        value: f.value,
      })),
    )
    .execute();
}

export async function createSubscription(trx: Trx, tenantId: string, input: SubscriptionInput, ctx: SubscriptionContext): Promise<SubscriptionView> {
  const values = await prepare(trx, input, ctx);
  // Every delivery is signed: without a Secret the subscription gets one, answered once here and on GET.
  const secret = input.Secret || generateSecret();
  const { id } = await trx
    .insertInto('webhook_subscriptions')
    .values({ ...values, tenant_id: tenantId, secret: ctx.box.encrypt(secret), created_by_id: ctx.userId, modified_by_id: ctx.userId })
    .returning('id')
    .executeTakeFirstOrThrow();
  await writeFilters(trx, tenantId, id, input.DetailFilters ?? []);
  return getSubscription(trx, ctx.box, id);
}

/** PUT: the whole body replaces the subscription; a Secret left out keeps the current one. */
export async function updateSubscription(
  trx: Trx,
  tenantId: string,
  id: string,
  input: SubscriptionInput,
  ctx: SubscriptionContext,
): Promise<SubscriptionView> {
  const values = await prepare(trx, input, ctx);
  const updated = await trx
    .updateTable('webhook_subscriptions')
    .set({
      ...values,
      ...(input.Secret ? { secret: ctx.box.encrypt(input.Secret) } : {}),
      // A changed subscription starts a new failure window.
      failing_since: null,
      modified_on_utc: sql`now()`,
      modified_by_id: ctx.userId,
    })
    .where('id', '=', id)
    .returning('id')
    .executeTakeFirst();
  if (!updated) throw notFound(`No webhook subscription ${id}.`);
  await writeFilters(trx, tenantId, id, input.DetailFilters ?? []);
  return getSubscription(trx, ctx.box, id);
}

export async function deleteSubscription(trx: Trx, box: SecretBox, id: string): Promise<SubscriptionView> {
  const existing = await getSubscription(trx, box, id);
  await trx.deleteFrom('webhook_subscriptions').where('id', '=', id).execute();
  return existing;
}

/** The id of the event this transaction appended last (events carry their transaction id). */
export async function raisedEventId(trx: Trx): Promise<{ id: string }> {
  const { rows } = await sql<{ id: string }>`select id from events where txid = pg_current_xact_id() order by seq desc limit 1`.execute(trx);
  return rows[0];
}

/**
 * The import (src/import): a subscription of the source tenant under its own id. Created inactive, with a
 * new secret (the source's cannot be read back) that is answered once; an existing one takes the source's
 * fields and keeps its secret and whether it is active. `changed` says whether anything was written.
 */
export async function mirrorSubscription(
  trx: Trx,
  tenantId: string,
  id: string,
  input: SubscriptionInput,
  ctx: SubscriptionContext,
): Promise<{ secret: string | null; changed: boolean }> {
  const { active: _active, ...values } = await prepare(trx, input, ctx);
  const filters = input.DetailFilters ?? [];
  const [existing] = await selectSubscriptions(trx, id);
  if (!existing) {
    const secret = generateSecret();
    await trx
      .insertInto('webhook_subscriptions')
      .values({ ...values, id, tenant_id: tenantId, active: false, secret: ctx.box.encrypt(secret), created_by_id: ctx.userId, modified_by_id: ctx.userId })
      .execute();
    await writeFilters(trx, tenantId, id, filters);
    return { secret, changed: true };
  }
  const same =
    (Object.keys(values) as (keyof typeof values)[]).every((k) => existing[k] === values[k]) &&
    // Compared field by field: jsonb keeps its own key order.
    existing.detail_filters.length === filters.length &&
    existing.detail_filters.every(
      (e, i) =>
        e.groupCondition === filters[i].groupCondition &&
        e.jsonPathExpression === filters[i].jsonPathExpression &&
        e.condition === filters[i].condition &&
        e.value === filters[i].value,
    );
  if (same) return { secret: null, changed: false };
  await trx
    .updateTable('webhook_subscriptions')
    .set({ ...values, modified_on_utc: sql`now()`, modified_by_id: ctx.userId })
    .where('id', '=', id)
    .execute();
  await writeFilters(trx, tenantId, id, filters);
  return { secret: null, changed: true };
}
