// Idempotency-Key for POSTs, reusable by any surface: wrap a route handler with idempotent(ctx, handler).
// The key row is claimed first, in its own transaction (INSERT … ON CONFLICT DO NOTHING), so of two
// concurrent requests with one key only one does the work; the other answers 409 "in progress". When the
// work succeeds its status and serialized body are stored and any replay within 24 hours gets them back
// unchanged (header Idempotent-Replayed: true); the same key with another method, path or body is a 422.
// A request that fails releases its key (it changed nothing, so it may be retried), and a claim left
// unfinished by a crashed process is taken over after ABANDONED_AFTER_MS.
import { Type } from 'typebox';
import { sha256 } from '../auth/hashing.ts';
import type { AppContext } from '../context.ts';
import type { RowOf } from '../db/schema.ts';
import { badRequest, conflict, HttpProblem } from '../errors.ts';
import type { FastifyReply, FastifyRequest } from './app.ts';
import { requirePrincipal } from './tenant-seam.ts';

export const IDEMPOTENCY_HEADER = 'idempotency-key';
const TTL_MS = 24 * 60 * 60 * 1000;
const ABANDONED_AFTER_MS = 5 * 60 * 1000;
const KEY_RE = /^[\x21-\x7e]{1,255}$/;

/** Route `headers` schema documenting the header (merge into other header schemas if a route has them). */
export const IdempotencyHeaders = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Makes the POST safe to retry: a repeat within 24 hours with the same key and body returns the first response without redoing the work.',
    }),
  ),
});

type Handler = (request: any, reply: FastifyReply) => Promise<unknown>;

const STORED = ['method', 'path', 'body_hash', 'status_code', 'response_body', 'response_headers', 'created_on_utc'] as const;
type StoredKey = Pick<RowOf<'idempotency_keys'>, (typeof STORED)[number]>;

export function idempotent<H extends Handler>(ctx: AppContext, handler: H): H {
  const wrapped = async (request: FastifyRequest, reply: FastifyReply): Promise<unknown> => {
    const key = request.headers[IDEMPOTENCY_HEADER];
    if (key === undefined) return handler(request, reply);
    if (typeof key !== 'string' || !KEY_RE.test(key)) {
      throw badRequest('Idempotency-Key must be 1 to 255 visible ASCII characters.', [
        { path: '/headers/idempotency-key', message: 'must be 1 to 255 visible ASCII characters' },
      ]);
    }
    const principal = requirePrincipal(request);
    const owner = principal.appId ? `app:${principal.appId}` : principal.scimTokenId ? `scim:${principal.scimTokenId}` : `user:${principal.userId}`;
    const request_ = {
      method: request.method,
      path: request.url.split('?')[0],
      bodyHash: sha256(canonicalJson({ query: request.query ?? null, body: request.body ?? null })),
    };
    const where = { tenantId: principal.tenantId, owner, key };
    const stored = await claim(ctx, where, request_, request.deadline);
    if (stored) return replay(reply, stored);
    try {
      const payload = await handler(request, reply);
      const body = typeof payload === 'string' ? payload : String(reply.serialize(payload));
      const contentType = String(reply.getHeader('content-type') ?? 'application/json; charset=utf-8');
      await ctx.db.withTenant(principal.tenantId, (trx) =>
        trx
          .updateTable('idempotency_keys')
          .set({ status_code: reply.statusCode, response_body: body, response_headers: JSON.stringify({ 'content-type': contentType }) })
          .where('principal', '=', owner)
          .where('key', '=', key)
          .execute(),
      );
      reply.type(contentType);
      return body;
    } catch (err) {
      await release(ctx, where).catch(() => {});
      throw err;
    }
  };
  return wrapped as H;
}

interface KeyRef {
  tenantId: string;
  owner: string;
  key: string;
}

/** Claims the key; null when this request owns it now, else the finished response to replay. */
async function claim(ctx: AppContext, ref: KeyRef, req: { method: string; path: string; bodyHash: string }, deadline: number): Promise<StoredKey | null> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const outcome = await ctx.db.withTenant(
      ref.tenantId,
      async (trx) => {
        const inserted = await trx
          .insertInto('idempotency_keys')
          .values({ tenant_id: ref.tenantId, key: ref.key, principal: ref.owner, method: req.method, path: req.path, body_hash: req.bodyHash })
          .onConflict((oc) => oc.columns(['tenant_id', 'principal', 'key']).doNothing())
          .returning('key')
          .executeTakeFirst();
        if (inserted) return { claimed: true as const };
        const row = await trx.selectFrom('idempotency_keys').select(STORED).where('principal', '=', ref.owner).where('key', '=', ref.key).executeTakeFirst();
        if (!row) return { claimed: false as const, row: null };
        const age = Date.now() - new Date(row.created_on_utc).getTime();
        if (age > TTL_MS || (row.status_code === null && age > ABANDONED_AFTER_MS)) {
          await trx
            .deleteFrom('idempotency_keys')
            .where('principal', '=', ref.owner)
            .where('key', '=', ref.key)
            .where('created_on_utc', '=', row.created_on_utc)
            .execute();
          return { claimed: false as const, row: null };
        }
        return { claimed: false as const, row };
      },
      { deadline },
    );
    if (outcome.claimed) return null;
    const row = outcome.row;
    if (!row) continue; // expired, abandoned or released meanwhile: claim again
    if (row.method !== req.method || row.path !== req.path || row.body_hash !== req.bodyHash) {
      throw new HttpProblem(422, 'This Idempotency-Key was already used with a different request; use a new key for a new request.', {
        errors: [{ path: '/headers/idempotency-key', message: 'already used with a different method, path or body' }],
      });
    }
    if (row.status_code === null) {
      throw conflict('A request with this Idempotency-Key is still in progress; retry after it finishes.', { 'retry-after': '1' });
    }
    return row;
  }
  throw conflict('The Idempotency-Key is contended; retry shortly.', { 'retry-after': '1' });
}

async function release(ctx: AppContext, ref: KeyRef): Promise<void> {
  await ctx.db.withTenant(ref.tenantId, (trx) =>
    trx.deleteFrom('idempotency_keys').where('principal', '=', ref.owner).where('key', '=', ref.key).where('status_code', 'is', null).execute(),
  );
}

function replay(reply: FastifyReply, stored: StoredKey): string {
  const headers = (typeof stored.response_headers === 'string' ? JSON.parse(stored.response_headers) : (stored.response_headers ?? {})) as Record<
    string,
    string
  >;
  reply.code(stored.status_code ?? 200);
  for (const [name, value] of Object.entries(headers)) reply.header(name, value);
  reply.header('idempotent-replayed', 'true');
  return stored.response_body ?? '';
}

/** JSON with object keys sorted, so equal bodies hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}
