// The one transaction of an Integration API write, retried when PostgreSQL reports a conflict that only
// concurrency causes: two inserts racing on a unique index that is not the ON CONFLICT arbiter (the
// loser's unique violation turns into an update on retry), a serialization failure or a deadlock.
import type { Principal } from '../platform/auth/principal.ts';
import type { AppContext } from '../platform/context.ts';
import type { Trx } from '../platform/db/database.ts';
import type { Actor } from './upsert.ts';

const RETRYABLE = new Set(['23505', '40001', '40P01']);
const ATTEMPTS = 3;

const pgCode = (err: unknown): string | undefined => {
  const e = err as { code?: unknown; cause?: { code?: unknown } };
  const code = typeof e?.code === 'string' ? e.code : typeof e?.cause?.code === 'string' ? e.cause.code : undefined;
  return code;
};

export async function inTenantWrite<T>(ctx: AppContext, principal: Principal, deadline: number, fn: (trx: Trx, actor: Actor) => Promise<T>): Promise<T> {
  const actor: Actor = { tenantId: principal.tenantId, userId: principal.userId };
  for (let attempt = 1; ; attempt++) {
    try {
      return await ctx.db.withTenant(principal.tenantId, (trx) => fn(trx, actor), { deadline });
    } catch (err) {
      const code = pgCode(err);
      if (attempt >= ATTEMPTS || !code || !RETRYABLE.has(code) || Date.now() >= deadline) throw err;
    }
  }
}
