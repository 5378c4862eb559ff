// The shared token bucket: limiters of several processes (here two instances on their own pools) draw
// from one bucket in PostgreSQL, so together they admit what one would; unspent grants are not lost.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { createTestDatabase } from '../../../test/helpers.ts';
import { RateLimiter } from './rate-limit.ts';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
const pools: pg.Pool[] = [];

before(async () => {
  database = await createTestDatabase();
  for (let i = 0; i < 2; i++) {
    const pool = new pg.Pool({ connectionString: database.connectionString, max: 4 });
    // An idle client ended by the database's drop at teardown (57P01) is not a failure of the limiter.
    pool.on('error', () => {});
    pools.push(pool);
  }
});
after(async () => {
  for (const pool of pools) await pool.end();
  await database.drop();
});

test('two limiters share one bucket: a burst of 60 per minute admits 10 (plus refill), however the requests are spread', async () => {
  const limiters = pools.map((pool) => new RateLimiter(60, pool));
  const started = Date.now();
  const waits = await Promise.all(Array.from({ length: 40 }, (_, i) => limiters[i % 2].take('tenant:app-a')));
  const seconds = (Date.now() - started) / 1000;
  const passed = waits.filter((w) => w === 0).length;
  assert.ok(passed >= 10, `the burst (10) is available: ${passed}`);
  assert.ok(passed <= 10 + Math.ceil(seconds), `${passed} passed in ${seconds.toFixed(2)} s`);
  for (const w of waits.filter((w) => w > 0)) assert.ok(w >= 1 && w <= 60, `Retry-After ${w}`);
  // Another caller has a bucket of its own.
  assert.equal(await limiters[0].take('tenant:app-b'), 0);
});

test('a busy caller takes grants, not a statement per request', async () => {
  let statements = 0;
  const query = pools[0].query.bind(pools[0]) as (...a: unknown[]) => unknown;
  const counting = {
    query: (...args: unknown[]) => {
      statements++;
      return query(...args);
    },
  } as unknown as pg.Pool;
  const limiter = new RateLimiter(600_000, counting);
  for (let i = 0; i < 300; i++) assert.equal(await limiter.take('tenant:busy'), 0);
  // Grants double while they are spent quickly (1, 2, 4, … up to a twentieth of the bucket).
  assert.ok(statements <= 12, `${statements} statements for 300 requests`);
  const { rows } = await pools[1].query<{ tokens: number }>(`select tokens from rate_limit_buckets where key = 'tenant:busy'`);
  // Capacity 100,000: the grants taken from the shared bucket cover the 300 requests and at most one grant besides.
  assert.ok(rows[0].tokens >= 100_000 - 300 - 5000, `tokens left ${rows[0].tokens}`);
});
