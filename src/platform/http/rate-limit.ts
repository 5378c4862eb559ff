// Per-caller token bucket shared by every API process (decision 0027): `perMinute` requests a minute on
// average, bursts up to ten seconds' worth; 0 turns it off. The bucket lives in PostgreSQL
// (rate_limit_buckets, atrium_rate_take); a process takes tokens from it in grants that grow while the
// caller is busy (up to a twentieth of the bucket), so a busy caller costs the database one statement per
// grant rather than one per request. A grant left unspent for a second is dropped, so the processes
// together never admit more than the bucket allows; a caller that stops may lose one grant's worth.
import type pg from 'pg';

/** A grant not spent within this long is dropped rather than kept as a private reserve. */
const GRANT_TTL_MS = 1000;
/** A grant spent faster than this was too small: the next is twice as large. */
const FAST_SPEND_MS = 250;

interface Grant {
  tokens: number;
  size: number;
  at: number;
}

const TAKE = 'select granted, remaining from atrium_rate_take($1, $2, $3, $4)';

export class RateLimiter {
  readonly #pool: pg.Pool;
  readonly #perSecond: number;
  readonly #capacity: number;
  readonly #maxGrant: number;
  readonly #grants = new Map<string, Grant>();

  constructor(perMinute: number, pool: pg.Pool) {
    this.#pool = pool;
    this.#perSecond = perMinute / 60;
    this.#capacity = Math.max(1, perMinute / 6);
    this.#maxGrant = Math.max(1, Math.floor(this.#capacity / 20));
  }

  /**
   * Answers how many seconds to wait, 0 when the request may pass: at once (no promise) while the caller's
   * grant lasts, after one statement when a new grant is needed.
   */
  take(key: string, now = Date.now()): number | Promise<number> {
    if (this.#perSecond === 0) return 0;
    const grant = this.#grants.get(key);
    if (grant && grant.tokens >= 1 && now - grant.at < GRANT_TTL_MS) {
      grant.tokens -= 1;
      return 0;
    }
    return this.#takeGrant(key, grant, now);
  }

  async #takeGrant(key: string, grant: Grant | undefined, now: number): Promise<number> {
    const size = !grant ? 1 : now - grant.at < FAST_SPEND_MS ? Math.min(this.#maxGrant, grant.size * 2) : Math.max(1, Math.floor(grant.size / 2));
    const { rows } = await this.#pool.query<{ granted: number; remaining: number }>({
      name: 'atrium_rate_take',
      text: TAKE,
      values: [key, this.#capacity, this.#perSecond, size],
    });
    const { granted, remaining } = rows[0];
    // Requests of this caller that ran out together each fetched a grant: the tokens add up, none is dropped.
    const held = this.#grants.get(key);
    const fresh = held && now - held.at < GRANT_TTL_MS ? held : null;
    const tokens = (fresh?.tokens ?? 0) + granted;
    if (tokens < 1) {
      if (fresh) fresh.size = 1;
      return Math.max(1, Math.ceil((1 - remaining) / this.#perSecond));
    }
    if (!held && this.#grants.size > 100_000) this.#grants.clear();
    this.#grants.set(key, { tokens: tokens - 1, size, at: Date.now() });
    return 0;
  }
}
