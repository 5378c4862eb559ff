// Per-caller token bucket (in process): `perMinute` requests a minute on average, bursts up to ten
// seconds' worth. 0 turns it off. Answers how many seconds to wait, 0 when the request may pass.
export class RateLimiter {
  readonly #ratePerMs: number;
  readonly #capacity: number;
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(perMinute: number) {
    this.#ratePerMs = perMinute / 60_000;
    this.#capacity = Math.max(1, perMinute / 6);
  }

  take(key: string, now = Date.now()): number {
    if (this.#ratePerMs === 0) return 0;
    let bucket = this.#buckets.get(key);
    if (!bucket) {
      if (this.#buckets.size > 100_000) this.#buckets.clear();
      bucket = { tokens: this.#capacity, at: now };
      this.#buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(this.#capacity, bucket.tokens + (now - bucket.at) * this.#ratePerMs);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.#ratePerMs / 1000));
  }
}
