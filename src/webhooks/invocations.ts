// Invocations: the payload a subscription receives for an event (fixed when the invocation is made,
// so every attempt sends the same bytes), test events, and resending.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Trx } from '../platform/db/database.ts';
import { HttpProblem, notFound } from '../platform/errors.ts';
import { TYPE_NAMESPACE } from '../platform/events/catalogue.ts';

export interface PayloadEvent {
  id: string;
  tenantId: string;
  actionType: string;
  documentType: string;
  documentId: string | null;
  businessObjectTypeName: string | null;
  detail: unknown;
  occurredOnUtc: Date;
}

/** Documents with an API of their own; others link to the generic document address. */
const DOCUMENT_PATHS: Record<string, string> = { User: '/api/users' };

/** baseUrl: the tenant's base URL (or, for a test event, the address the caller used), without a trailing '/'. */
export function documentUrl(baseUrl: string, documentType: string, documentId: string | null): string | null {
  if (!documentId) return null;
  const className = documentType.startsWith(`${TYPE_NAMESPACE}.`) ? documentType.slice(TYPE_NAMESPACE.length + 1) : documentType;
  const base = DOCUMENT_PATHS[className] ?? `/api/v3/documents/${encodeURIComponent(className)}`;
  return `${baseUrl}${base}/${documentId}`;
}

/** The body every attempt sends, as text (signatures cover these exact bytes). */
export function buildPayload(baseUrl: string, event: PayloadEvent, subscriptionId: string, action = event.actionType.toLowerCase()): string {
  return JSON.stringify({
    id: event.id,
    action,
    actionType: event.actionType,
    document: { type: event.documentType, id: event.documentId, url: documentUrl(baseUrl, event.documentType, event.documentId) },
    businessObjectTypeName: event.businessObjectTypeName,
    detail: event.detail ?? {},
    tenantId: event.tenantId,
    occurredOnUtc: event.occurredOnUtc.toISOString(),
    subscriptionId,
  });
}

interface SubscriptionForInvocation {
  id: string;
  action_type: string;
  document_type: string;
  is_automation: boolean;
}

async function subscriptionFor(trx: Trx, id: string): Promise<SubscriptionForInvocation> {
  const sub = await trx
    .selectFrom('webhook_subscriptions')
    .select(['id', 'action_type', 'document_type', 'is_automation'])
    .where('id', '=', id)
    .executeTakeFirst();
  if (!sub) throw notFound(`No webhook subscription ${id}.`);
  if (sub.is_automation) throw new HttpProblem(409, 'This subscription starts an automation; it has no URL to deliver to.');
  return sub;
}

/** POST …/test: a test event (action "test") queued for immediate delivery; answers the invocation id. */
export async function createTestInvocation(trx: Trx, tenantId: string, subscriptionId: string, baseUrl: string): Promise<string> {
  const sub = await subscriptionFor(trx, subscriptionId);
  const event: PayloadEvent = {
    id: randomUUID(),
    tenantId,
    actionType: sub.action_type,
    documentType: sub.document_type,
    documentId: null,
    businessObjectTypeName: null,
    detail: { Test: true },
    occurredOnUtc: new Date(),
  };
  const row = await trx
    .insertInto('webhook_invocations')
    .values({
      tenant_id: tenantId,
      subscription_id: sub.id,
      kind: 'test',
      action_type: sub.action_type,
      document_type: sub.document_type,
      payload: buildPayload(baseUrl, event, sub.id, 'test'),
      next_attempt_on_utc: sql`now()`,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** POST …/invocations/{id}/resend: the same invocation (same webhook-id) delivered again with a fresh schedule. */
export async function resendInvocation(trx: Trx, subscriptionId: string, invocationId: string): Promise<void> {
  await subscriptionFor(trx, subscriptionId);
  const row = await trx
    .selectFrom('webhook_invocations')
    // In flight: claimed under a lease that has not lapsed, or awaiting the dispatch batch that is delivering it.
    .select([
      'id',
      sql<boolean>`coalesce(lease_until > now(), false)
        or (status = 'Pending' and destination = 'url' and next_attempt_on_utc is null and lease_token is null)`.as('in_flight'),
    ])
    .where('id', '=', invocationId)
    .where('subscription_id', '=', subscriptionId)
    .forUpdate()
    .executeTakeFirst();
  if (!row) throw notFound(`No invocation ${invocationId} of webhook subscription ${subscriptionId}.`);
  if (row.in_flight) throw new HttpProblem(409, 'The invocation is being delivered right now; resend it when the attempt has finished.');
  await trx
    .updateTable('webhook_invocations')
    .set({
      status: 'Pending',
      round_attempts: 0,
      next_attempt_on_utc: sql`now()`,
      completed_on_utc: null,
      lease_until: null,
      lease_token: null,
    })
    .where('id', '=', invocationId)
    .execute();
}
