// Several processes on one database (decision 0027): commits that write events wake the webhook
// dispatchers (NOTIFY atrium_events), changes to apps and their roles (rotate, revoke) tell every process to
// drop its cached verifications (NOTIFY atrium_auth), and the rate limit's token buckets are shared. Users are
// left out: the Integration API writes them at high rates, and each write would cost every cached app a scrypt
// check; the user cache keeps its 5-second expiry.
// The triggers are per statement: a batch of 1000 events costs one notification, and PostgreSQL folds
// identical notifications of one transaction into one.
import { type Kysely, sql } from 'kysely';

const AUTH_TABLES = ['apps', 'app_roles'];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`create function atrium_notify_events() returns trigger language plpgsql as $$
    begin
      perform pg_notify('atrium_events', '');
      return null;
    end $$`.execute(db);
  await sql`create trigger events_notify after insert on events for each statement execute function atrium_notify_events()`.execute(db);
  await sql`create function atrium_notify_auth() returns trigger language plpgsql as $$
    begin
      perform pg_notify('atrium_auth', '');
      return null;
    end $$`.execute(db);
  for (const table of AUTH_TABLES) {
    await sql`create trigger ${sql.raw(`${table}_notify_auth`)} after update or delete or insert on ${sql.table(table)}
      for each statement execute function atrium_notify_auth()`.execute(db);
  }
  // Unlogged: the buckets are a minute of traffic, not data; after a crash they start full, as in a new process.
  await sql`create unlogged table rate_limit_buckets (
    key text primary key,
    tokens double precision not null,
    updated_on_utc timestamptz not null
  )`.execute(db);
  // Takes up to p_want tokens from the shared bucket (refilled at p_per_second up to p_capacity); answers how
  // many were granted and the tokens left, in one round trip and one row lock.
  await sql`create function atrium_rate_take(p_key text, p_capacity double precision, p_per_second double precision, p_want integer,
      out granted integer, out remaining double precision) language plpgsql as $$
    declare
      t timestamptz := clock_timestamp();
    begin
      insert into rate_limit_buckets (key, tokens, updated_on_utc) values (p_key, p_capacity, t) on conflict (key) do nothing;
      select least(p_capacity, b.tokens + greatest(0, extract(epoch from t - b.updated_on_utc)) * p_per_second)
        into remaining from rate_limit_buckets b where b.key = p_key for update;
      granted := least(p_want, floor(remaining))::integer;
      remaining := remaining - granted;
      update rate_limit_buckets set tokens = remaining, updated_on_utc = t where key = p_key;
    end $$`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`drop function atrium_rate_take(text, double precision, double precision, integer)`.execute(db);
  await sql`drop table rate_limit_buckets`.execute(db);
  for (const table of AUTH_TABLES) await sql`drop trigger ${sql.raw(`${table}_notify_auth`)} on ${sql.table(table)}`.execute(db);
  await sql`drop function atrium_notify_auth()`.execute(db);
  await sql`drop trigger events_notify on events`.execute(db);
  await sql`drop function atrium_notify_events()`.execute(db);
}
