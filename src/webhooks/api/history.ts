// Invocation history of a subscription: newest first, with every attempt, paged by an opaque
// continuation token (sealed by the SecretBox, so a tampered or foreign token is refused).
import { sql } from 'kysely';
import type { SecretBox } from '../../platform/auth/hashing.ts';
import type { Trx } from '../../platform/db/database.ts';
import { badRequest, notFound } from '../../platform/errors.ts';

export interface AttemptView {
  attempt: number;
  startedOnUtc: string;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
}

export interface InvocationView {
  id: string;
  webhookId: string;
  eventId: string | null;
  kind: 'event' | 'test';
  actionType: string;
  documentType: string;
  documentId: string | null;
  createdOnUtc: string;
  status: 'Pending' | 'Retrying' | 'Succeeded' | 'Failed';
  attempts: AttemptView[];
  nextAttemptOnUtc: string | null;
}

export interface HistoryQuery {
  fromDateUtc?: string;
  toDateUtc?: string;
  take?: number;
  continuationToken?: string;
}

interface Cursor {
  /** subscription the token belongs to */
  s: string;
  /** seq of the last invocation answered */
  q: string;
  f: string | null;
  t: string | null;
}

export const DEFAULT_TAKE = 100;
export const MAX_TAKE = 1000;

function readToken(box: SecretBox, token: string, subscriptionId: string, query: HistoryQuery): Cursor {
  let cursor: Cursor;
  try {
    cursor = JSON.parse(box.decrypt(`enc:v1:${token}`)) as Cursor;
  } catch {
    throw badRequest('continuationToken is not a token this API issued.', [{ path: '/querystring/continuationToken', message: 'is not valid' }]);
  }
  if (cursor.s !== subscriptionId || cursor.f !== (query.fromDateUtc ?? null) || cursor.t !== (query.toDateUtc ?? null)) {
    throw badRequest('continuationToken belongs to another subscription or other date limits.', [
      { path: '/querystring/continuationToken', message: 'does not match this request' },
    ]);
  }
  return cursor;
}

const writeToken = (box: SecretBox, cursor: Cursor): string => box.encrypt(JSON.stringify(cursor)).slice('enc:v1:'.length);

function date(value: string | undefined, path: string): Date | null {
  if (value === undefined) return null;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) throw badRequest(`${path.split('/').pop()} is not a date-time.`, [{ path, message: 'must be an ISO 8601 date-time' }]);
  return d;
}

export async function invocationHistory(
  trx: Trx,
  box: SecretBox,
  subscriptionId: string,
  query: HistoryQuery,
): Promise<{ items: InvocationView[]; continuationToken: string | null }> {
  const from = date(query.fromDateUtc, '/querystring/fromDateUtc');
  const to = date(query.toDateUtc, '/querystring/toDateUtc');
  const cursor = query.continuationToken ? readToken(box, query.continuationToken, subscriptionId, query) : null;
  const take = query.take ?? DEFAULT_TAKE;
  const exists = await trx.selectFrom('webhook_subscriptions').select('id').where('id', '=', subscriptionId).executeTakeFirst();
  if (!exists) throw notFound(`No webhook subscription ${subscriptionId}.`);

  let q = trx
    .selectFrom('webhook_invocations as i')
    .select([
      'i.id',
      'i.seq',
      'i.event_id',
      'i.kind',
      'i.action_type',
      'i.document_type',
      'i.document_id',
      'i.created_on_utc',
      'i.status',
      'i.next_attempt_on_utc',
      sql<AttemptView[]>`coalesce((
        select jsonb_agg(jsonb_build_object('attempt', a.attempt, 'startedOnUtc', a.started_on_utc, 'durationMs', a.duration_ms,
          'statusCode', a.status_code, 'responseBody', a.response_body, 'error', a.error) order by a.attempt)
        from webhook_attempts a where a.tenant_id = i.tenant_id and a.invocation_id = i.id), '[]'::jsonb)`.as('attempts'),
    ])
    .where('i.subscription_id', '=', subscriptionId)
    .orderBy('i.seq', 'desc')
    .limit(take + 1);
  if (from) q = q.where('i.created_on_utc', '>=', from);
  if (to) q = q.where('i.created_on_utc', '<=', to);
  if (cursor) q = q.where('i.seq', '<', cursor.q);
  const rows = await q.execute();
  const page = rows.slice(0, take);
  const more = rows.length > take;
  return {
    items: page.map((r) => ({
      id: r.id,
      webhookId: r.id,
      eventId: r.event_id,
      kind: r.kind,
      actionType: r.action_type,
      documentType: r.document_type,
      documentId: r.document_id,
      createdOnUtc: r.created_on_utc.toISOString(),
      status: r.status,
      attempts: r.attempts.map((a) => ({ ...a, startedOnUtc: new Date(a.startedOnUtc).toISOString() })),
      nextAttemptOnUtc: r.status === 'Pending' || r.status === 'Retrying' ? (r.next_attempt_on_utc?.toISOString() ?? null) : null,
    })),
    continuationToken: more
      ? writeToken(box, { s: subscriptionId, q: String(page[page.length - 1].seq), f: query.fromDateUtc ?? null, t: query.toDateUtc ?? null })
      : null,
  };
}
