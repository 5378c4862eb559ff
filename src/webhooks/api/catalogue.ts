// The event catalogue as an integrator reads it: every event with its detail fields, the tenant's
// document types, and an example payload for a document type, exactly as a subscription would receive
// it: the tenant's own newest event of that type when there is one (a real payload), else one built
// from the catalogue. "Send example" delivers that payload to a subscription as a test invocation.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Trx } from '../../platform/db/database.ts';
import { HttpProblem } from '../../platform/errors.ts';
import { EVENTS, type EventEntry } from '../../platform/events/catalogue.ts';
import { buildPayload, type PayloadEvent } from '../invocations.ts';
import { canonicalActionType, documentTypes, resolveDocumentType } from './subscriptions.ts';

/** How far back (in the tenant's newest events) an example is looked for: a bounded scan, however large the tenant. */
export const EXAMPLE_SCAN = 5000;
/** The subscription id an example shows before it is sent to one. */
const NO_SUBSCRIPTION = '00000000-0000-0000-0000-000000000000';

export interface CatalogueView {
  events: EventEntry[];
  documentTypes: { name: string; fullName: string }[];
}

export async function eventCatalogue(trx: Trx): Promise<CatalogueView> {
  const types = await documentTypes(trx);
  return { events: EVENTS, documentTypes: types.map((t) => ({ name: t.name, fullName: t.fullName })) };
}

export interface ExampleView {
  /** `event`: the tenant's newest event of this kind; `catalogue`: built from the catalogue (no such event yet). */
  source: 'event' | 'catalogue';
  actionType: string;
  documentType: string;
  payload: Record<string, unknown>;
}

/** An example value for a detail field, by the shape its name suggests. */
function exampleValue(fieldName: string): unknown {
  if (/Id$/.test(fieldName)) return '00000000-0000-0000-0000-000000000000';
  if (/^(Is|Login(As)?Delegate)/.test(fieldName)) return false;
  if (fieldName === 'Value') return 'New value';
  if (fieldName === 'Url') return 'https://example.com/api/v3/batch';
  return `${fieldName.replace(/([a-z])([A-Z])/g, '$1 $2')} example`;
}

async function newestEvent(trx: Trx, documentType: string, actionType: string | null) {
  // The newest events of the tenant (row-level security keeps them the tenant's) first, then the kind asked for.
  const newest = trx
    .selectFrom('events')
    .select(['id', 'tenant_id', 'action_type', 'document_type', 'document_id', 'business_object_type_name', 'detail', 'occurred_on_utc', 'seq'])
    .orderBy('seq', 'desc')
    .limit(EXAMPLE_SCAN)
    .as('e');
  let q = trx.selectFrom(newest).selectAll().where('e.document_type', '=', documentType);
  if (actionType) q = q.where(sql`lower(e.action_type)`, '=', actionType.toLowerCase());
  return q.orderBy('e.seq', 'desc').limit(1).executeTakeFirst();
}

/** The payload a subscription to `actionType` on `documentType` receives, as an example. */
export async function examplePayload(
  trx: Trx,
  tenantId: string,
  baseUrl: string,
  wanted: { documentType: string; actionType?: string | null },
  subscriptionId = NO_SUBSCRIPTION,
  action?: string,
): Promise<ExampleView> {
  const documentType = await resolveDocumentType(trx, wanted.documentType, '/querystring/documentType');
  const actionType = wanted.actionType ? canonicalActionType(wanted.actionType) : null;
  const found = await newestEvent(trx, documentType, actionType);
  let event: PayloadEvent;
  let source: ExampleView['source'];
  if (found) {
    source = 'event';
    event = {
      id: found.id,
      tenantId: found.tenant_id,
      actionType: found.action_type,
      documentType: found.document_type,
      documentId: found.document_id,
      businessObjectTypeName: found.business_object_type_name,
      detail: found.detail,
      occurredOnUtc: found.occurred_on_utc,
    };
  } else {
    source = 'catalogue';
    const entry = EVENTS.find((e) => e.actionType === (actionType ?? 'Created'));
    const fields = entry && entry.detailFields !== 'dynamic' ? entry.detailFields : [];
    event = {
      id: randomUUID(),
      tenantId,
      actionType: actionType ?? 'Created',
      documentType,
      documentId: randomUUID(),
      businessObjectTypeName: null,
      // A dynamic event carries the changed persistent properties of the document: none to show without one.
      detail: Object.fromEntries(fields.map((f) => [f, exampleValue(f)])),
      occurredOnUtc: new Date(),
    };
  }
  const payload = JSON.parse(buildPayload(baseUrl, event, subscriptionId, action)) as Record<string, unknown>;
  return { source, actionType: event.actionType, documentType, payload };
}

/** POST …/send-example: the subscription's example payload, marked as a test (action "test"), queued for delivery now. */
export async function sendExample(
  trx: Trx,
  tenantId: string,
  subscriptionId: string,
  baseUrl: string,
): Promise<{ invocationId: string; source: ExampleView['source'] }> {
  const sub = await trx
    .selectFrom('webhook_subscriptions')
    .select(['id', 'action_type', 'document_type', 'is_automation'])
    .where('id', '=', subscriptionId)
    .executeTakeFirst();
  if (!sub) throw new HttpProblem(404, `No webhook subscription ${subscriptionId}.`);
  if (sub.is_automation) throw new HttpProblem(409, 'This subscription starts an automation; it has no URL to deliver to.');
  const example = await examplePayload(trx, tenantId, baseUrl, { documentType: sub.document_type, actionType: sub.action_type }, sub.id, 'test');
  // A new id: the receiver must not take the example for the real event it was copied from.
  const payload = { ...example.payload, id: randomUUID() };
  const row = await trx
    .insertInto('webhook_invocations')
    .values({
      tenant_id: tenantId,
      subscription_id: sub.id,
      kind: 'test',
      action_type: sub.action_type,
      document_type: sub.document_type,
      payload: JSON.stringify(payload),
      next_attempt_on_utc: sql`now()`,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return { invocationId: row.id, source: example.source };
}
