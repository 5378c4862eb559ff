// The database handle: an owner pool, tenant-bound connections for request transactions, and
// pipelined tenant-bound read lanes for one-statement lookups. Request work runs with
// atrium.tenant_id set and as the non-owner role atrium_app, so row-level security applies even where
// a query forgets its WHERE tenant_id.
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';
import {
  type Compilable,
  CompiledQuery,
  type DatabaseConnection,
  type Driver,
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type QueryResult,
  type RawBuilder,
  sql,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import { statementSpan, traceparentOf, tracingOn, withSpan } from '../tracing.ts';
import { coalesceWrites } from './coalesced-writes.ts';
import { Notifications } from './notifications.ts';
import { TenantReadLanes } from './read-lanes.ts';
import type { ReadReplicas } from './replicas.ts';
import type { Database } from './schema.ts';

// Dates stay strings in JSON responses the way PostgreSQL gives them back only for `date`;
// timestamps become Date objects. numeric and bigint come back as strings; we convert at use sites.
pg.types.setTypeParser(1082, (v: string) => v); // date -> 'yyyy-mm-dd'

export const APP_ROLE = 'atrium_app';

export type Trx = Transaction<Database>;

export interface TenantTxOptions {
  /** Absolute epoch ms after which the statement is cancelled by PostgreSQL (57014 -> 504). */
  deadline?: number;
}

/**
 * The tenant a tenant-pool checkout or a read is for (set by withTenant / readAsTenant around it). For
 * withTenant, `begin` gives the transaction's opening text (BEGIN and the binding), which is written right
 * before the transaction's first statement without waiting for its answer, and `begun` its outcome (the
 * error, or null); undefined while nothing has been sent (decision 0088).
 */
interface Checkout {
  tenantId: string;
  begin?: () => string;
  begun?: Promise<unknown>;
  /** The connection checked out (withTenant). */
  client?: TaggedClient;
  /** A statement text after which COMMIT is written at once: the transaction's last statement (executePrepared's `last`). */
  commitAfter?: string;
  /** That COMMIT's outcome, once written: the error (a COMMIT that rolled back is one), or null. */
  committed?: Promise<unknown>;
}
const checkoutTenant = new AsyncLocalStorage<Checkout>();

type TaggedClient = pg.PoolClient & { atriumTenant?: string; atriumPrepared?: boolean; atriumStale?: boolean; atriumCheckout?: Checkout };

/**
 * Statement texts that run as named prepared statements inside tenant transactions (decision 0061): the hot
 * writes of the request path, marked by `prepared()` where they are built. Bounded: past the cap a text runs
 * unnamed, so no connection holds more than this many prepared statements.
 */
export const MAX_PREPARED_IN_TRANSACTIONS = 64;
const preparedNames = new Map<string, string>();

function preparedName(text: string): string | undefined {
  let name = preparedNames.get(text);
  if (name === undefined && preparedNames.size < MAX_PREPARED_IN_TRANSACTIONS) {
    name = `w${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
    preparedNames.set(text, name);
  }
  return name;
}

/** A prepared statement whose result type changed under it (another process migrated): the connection re-prepares. */
const isStalePlan = (err: unknown): boolean =>
  (err as { code?: string }).code === '0A000' && /cached plan must not change result type/i.test((err as Error).message);

/**
 * Runs a hot statement of a write path as a named prepared statement on the transaction's connection
 * (prepared once per connection: no parse, RLS rewrite or, once PostgreSQL settles on a generic plan, planning
 * per call). Only for statement texts written in code whose shapes are few (the values are bound); on a read
 * lane or any other executor it runs as usual.
 */
export async function executePrepared<R>(
  trx: Trx,
  query: Compilable<R> | RawBuilder<R> | CompiledQuery<R>,
  opts: { last?: boolean } = {},
): Promise<QueryResult<R>> {
  const compiled = isCompiled(query) ? query : isRawBuilder(query) ? query.compile(trx) : query.compile();
  preparedName(compiled.sql);
  if (opts.last) commitAfter(trx, compiled.sql);
  return trx.executeQuery(compiled);
}

/**
 * The transaction's last statement (decision 0085): COMMIT is written right behind it, in the same socket write,
 * and withTenant awaits it instead of sending its own. Only for withTenant's own transaction; elsewhere it does nothing.
 */
function commitAfter(trx: Trx, text: string): void {
  const checkout = transactionsOf.get(trx)?.checkout;
  if (checkout?.client && !checkout.committed) checkout.commitAfter = text;
}

/**
 * Runs a read as the caller's transaction's last statement, unprepared (a statement whose texts are many: a
 * page's rows), with COMMIT written right behind it (decision 0085). What follows it on the connection runs
 * outside the transaction, on the connection's session binding (the same tenant and role): reads only.
 */
export async function executeLast<R>(trx: Trx, query: RawBuilder<R>): Promise<QueryResult<R>> {
  const compiled = query.compile(trx);
  commitAfter(trx, compiled.sql);
  return trx.executeQuery(compiled);
}

/** withTenant's transactions -> where their counter draws run (the tenant and the handle's lanes), and their checkout. */
const transactionsOf = new WeakMap<object, { tenantId: string; lanes: TenantReadLanes; checkout: Checkout }>();

/**
 * Runs a counter draw (an INSERT … ON CONFLICT DO UPDATE … RETURNING of a counter row, decision 0068) for the
 * transaction's tenant outside the transaction, committed at once as nextval is: the counter's row lock lasts
 * the one statement, so concurrent transactions of a tenant do not queue behind it until each commits. What
 * it takes stays taken should the transaction roll back (the caller may give it back, see documents.ts).
 * Outside withTenant (an owner transaction, a client's own), it runs in the transaction, as it always did.
 */
export async function executeDraw<R>(trx: Trx, query: RawBuilder<R>): Promise<{ rows: R[]; outside: boolean }> {
  const compiled = query.compile(trx);
  const draws = transactionsOf.get(trx);
  if (!draws) return { rows: (await trx.executeQuery(compiled)).rows, outside: false };
  const { rows } = await draws.lanes.draw(draws.tenantId, compiled.sql, compiled.parameters);
  return { rows: rows as R[], outside: true };
}

const isRawBuilder = <R>(q: Compilable<R> | RawBuilder<R>): q is RawBuilder<R> => (q as { isRawBuilder?: boolean }).isRawBuilder === true;
const isCompiled = <R>(q: Compilable<R> | RawBuilder<R> | CompiledQuery<R>): q is CompiledQuery<R> =>
  typeof (q as CompiledQuery<R>).sql === 'string' && Array.isArray((q as CompiledQuery<R>).parameters);

/**
 * The tenant pool's clients send the marked texts by name. Kysely's connection calls `query(text, values)`;
 * a marked text becomes `query({ name, text, values })`, which pg prepares on first use per connection.
 */
function prepareMarkedStatements(client: TaggedClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => Promise<unknown>;
  (client as { query: unknown }).query = (config: unknown, values?: unknown, callback?: unknown) => {
    // The checkout the connection serves now (set when it is handed out, whatever async context its statements
    // come from later: an import's side lane writes from others).
    const checkout = client.atriumCheckout;
    // The transaction's opening goes right before its first statement, in the same socket write (decision 0088):
    // a transaction whose request first looks things up on a read lane does not send it alone.
    if (checkout?.begin && !checkout.begun) {
      checkout.begun = query(checkout.begin()).then(
        () => null,
        (err: unknown) => err,
      );
    }
    const name = typeof config === 'string' && Array.isArray(values) && callback === undefined ? preparedNames.get(config) : undefined;
    const sent =
      name === undefined
        ? query(config, values, callback)
        : query({ name, text: config, values }).catch((err: unknown) => {
            if (isStalePlan(err)) client.atriumStale = true;
            throw err;
          });
    if (checkout && typeof config === 'string' && checkout.commitAfter === config) {
      // Pipelined behind the statement: should the statement fail, PostgreSQL answers this COMMIT with ROLLBACK.
      checkout.commitAfter = undefined;
      checkout.committed = query('commit').then(
        (r) => ((r as pg.QueryResult).command === 'COMMIT' ? null : new Error('the transaction was rolled back')),
        (err: unknown) => err,
      );
    }
    return sent;
  };
  client.atriumPrepared = true;
}

/**
 * A pg pool whose connections are bound to one tenant at a time, at session level: the RLS setting,
 * the request role atrium_app and a default statement timeout. A checkout for another tenant rebinds
 * first, so a connection never serves a tenant it is not bound to; a checkout for the tenant it
 * already serves costs no extra round trip.
 */
class TenantBoundPool {
  readonly #pool: pg.Pool;
  readonly #statementTimeoutMs: number;

  constructor(pool: pg.Pool, statementTimeoutMs: number) {
    this.#pool = pool;
    this.#statementTimeoutMs = statementTimeoutMs;
  }

  async connect(): Promise<pg.PoolClient> {
    const checkout = checkoutTenant.getStore();
    const tenantId = checkout?.tenantId;
    if (!checkout || !tenantId || !isUuid(tenantId)) throw new Error('tenant pool used outside withTenant/readAsTenant');
    const client = (await this.#pool.connect()) as TaggedClient;
    if (!client.atriumPrepared) prepareMarkedStatements(client);
    if (client.atriumStale) {
      try {
        await client.query('deallocate all');
        (client as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements = {};
        client.atriumStale = false;
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
    }
    if (client.atriumTenant !== tenantId) {
      try {
        client.atriumTenant = undefined;
        await client.query(
          `select set_config('atrium.tenant_id', '${tenantId}', false), set_config('role', '${APP_ROLE}', false), set_config('statement_timeout', '${this.#statementTimeoutMs}', false)`,
        );
        client.atriumTenant = tenantId;
      } catch (err) {
        client.release(err as Error);
        throw err;
      }
    }
    // The connection is in pipeline mode: the transaction's opening is written with its first statement
    // (prepareMarkedStatements), with no round trip between (PostgreSQL runs them in order; should the opening
    // fail, the statement fails with the transaction, and withTenant reports the opening's error). The
    // connection is the checkout's from here: the rebinding above is not the transaction's first statement.
    checkout.client = client;
    client.atriumCheckout = checkout;
    return client;
  }

  get options(): object {
    return this.#pool.options;
  }

  get stats(): PoolStats {
    return poolStats(this.#pool);
  }

  end(): Promise<void> {
    return this.#pool.end();
  }
}

/** Connections of one pool: checked out now, idle, and checkouts waiting for one. */
export interface PoolStats {
  inUse: number;
  idle: number;
  waiting: number;
  max: number;
}

function poolStats(pool: pg.Pool): PoolStats {
  return { inUse: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount, max: pool.options.max ?? 10 };
}

export class DatabaseHandle {
  /** Owner connections: migrations, tenant creation, health, work that spans tenants. */
  readonly pool: pg.Pool;
  readonly kysely: Kysely<Database>;
  readonly connectionString: string;
  /** LISTEN/NOTIFY wake-ups of this process (one connection, opened on the first listen). */
  readonly notifications: Notifications;
  /** Tenant-bound connections (TenantBoundPool); reached only through withTenant. */
  readonly #tenantKysely: Kysely<Database>;
  readonly #tenantPool: TenantBoundPool;
  /** Pipelined tenant-bound read lanes; reached only through readAsTenant. */
  readonly #readKysely: Kysely<Database>;
  readonly #lanes: TenantReadLanes;
  #replicas: ReadReplicas | null = null;

  constructor(connectionString: string, opts: { poolSize?: number; readLanes?: number; statementTimeoutMs?: number; applicationName?: string } = {}) {
    this.connectionString = connectionString;
    this.notifications = new Notifications(connectionString);
    const make = (max: number, pipeline = false) => {
      const pool = new pg.Pool({
        connectionString,
        max,
        idleTimeoutMillis: 30_000,
        application_name: opts.applicationName ?? 'atrium',
        pipeline,
      } as pg.PoolConfig);
      // An idle client that loses its server (PostgreSQL restart) must not crash the process.
      pool.on('error', () => {});
      // What a connection writes together (BEGIN, a statement's messages, COMMIT) leaves in one write.
      pool.on('connect', (client) => coalesceWrites(client));
      return pool;
    };
    this.pool = make(5);
    // Traced (decision 0048): every statement through Kysely is a span; untraced, Kysely times nothing.
    const log = tracingOn() ? { log: statementSpan } : {};
    this.kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: this.pool }), ...log });
    // Pipeline mode (decision 0061): a transaction's BEGIN and binding leave with its first statement. The
    // pool's work uses SQL cursors (DECLARE/FETCH), which pipeline; pg-cursor and the `rows` option it refuses.
    const tenantPool = new TenantBoundPool(make(opts.poolSize ?? 20, true), opts.statementTimeoutMs ?? 30_000);
    this.#tenantPool = tenantPool;
    this.#tenantKysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: tenantPool }), ...log });
    const lanes = new TenantReadLanes({
      connectionString,
      lanes: opts.readLanes ?? 2,
      role: APP_ROLE,
      statementTimeoutMs: opts.statementTimeoutMs ?? 30_000,
    });
    this.#lanes = lanes;
    const driver = new ReadLaneDriver(lanes);
    this.#readKysely = new Kysely<Database>({
      dialect: { ...postgresDialect, createDriver: () => driver },
      ...log,
    });
  }

  /**
   * Runs fn in one transaction bound to the tenant; commit on success, rollback on error. BEGIN, the
   * transaction-local binding and the statement timeout left until the deadline are one simple-protocol
   * query (every value in it is validated first), written on checkout without waiting for its answer, so it
   * travels with fn's first statement (decision 0061).
   */
  async withTenant<T>(tenantId: string, fn: (trx: Trx) => Promise<T>, opts: TenantTxOptions = {}): Promise<T> {
    if (tracingOn())
      return withSpan('db transaction', { attributes: { 'db.system.name': 'postgresql', 'atrium.tenant.id': tenantId } }, () =>
        this.#withTenant(tenantId, fn, opts),
      );
    return this.#withTenant(tenantId, fn, opts);
  }

  async #withTenant<T>(tenantId: string, fn: (trx: Trx) => Promise<T>, opts: TenantTxOptions): Promise<T> {
    // The opening's text is made when it is sent (the statement timeout is what is left of the deadline then);
    // the trace binding names the transaction's span, so it is taken now.
    const trace = traceBinding();
    const checkout: Checkout = { tenantId, begin: () => `begin; ${tenantBinding(tenantId, opts.deadline)}${trace}` };
    return checkoutTenant.run(checkout, () =>
      this.#tenantKysely.connection().execute(async (conn) => {
        let result: T;
        transactionsOf.set(conn, { tenantId, lanes: this.#lanes, checkout });
        try {
          // The connection opens the transaction with its first statement, so it serves as the transaction handle.
          result = await fn(conn as unknown as Trx);
          const failed = await checkout.begun;
          if (failed) throw failed;
        } catch (err) {
          // A COMMIT written behind the last statement ended the transaction (as ROLLBACK, had anything failed).
          if (checkout.committed) await checkout.committed;
          else if (checkout.begun)
            await sql
              .raw('rollback')
              .execute(conn)
              .catch(() => {});
          // Had the opening failed, fn's statements failed with it (25P02): its error is the one to report.
          throw (await checkout.begun) ?? err;
        } finally {
          transactionsOf.delete(conn);
          checkout.commitAfter = undefined;
          // Nothing after this opens the transaction (the COMMIT below is sent only when it was opened).
          checkout.begin = undefined;
        }
        if (checkout.committed) {
          const failed = await checkout.committed;
          if (failed) throw failed;
        } else if (checkout.begun) await sql.raw('commit').execute(conn);
        return result;
      }),
    );
  }

  /**
   * Read-only lookups for one tenant without a transaction: each statement (a SELECT or WITH) runs
   * on its own, as a prepared statement, on a pipelined read lane bound to the tenant (RLS and the
   * request role apply; see read-lanes.ts), so a lookup costs no checkout and no parse or plan. For
   * anything that writes, needs one snapshot across statements, or may run long (a slow statement
   * holds up the lookups queued behind it on its lane), use withTenant. The statement texts must be a
   * bounded set (lookups written in code, not SQL assembled from input): each is prepared per lane.
   */
  async readAsTenant<T>(tenantId: string, fn: (db: Trx) => Promise<T>): Promise<T> {
    if (!isUuid(tenantId)) throw new Error('readAsTenant needs a tenant uuid');
    return checkoutTenant.run({ tenantId }, () => fn(this.#readKysely as unknown as Trx));
  }

  /** Reads that may lag go to these replicas from now on (DATABASE_READ_URL); they are closed with this handle. */
  useReplicas(replicas: ReadReplicas): void {
    this.#replicas = replicas;
  }

  /**
   * Runs a read that may lag the primary by a replica's lag on a read replica (DATABASE_READ_URL) when one is
   * usable, else on this primary; fn must be safe to run again on the primary should the replica fail under it.
   */
  onReplica<T>(fn: (db: DatabaseHandle) => Promise<T>): Promise<T> {
    return this.#replicas ? this.#replicas.read(fn) : fn(this);
  }

  /** The owner pool (migrations, workers' reads, exports) and the tenant-bound pool (request transactions). */
  poolStats(): { owner: PoolStats; tenant: PoolStats } {
    return { owner: poolStats(this.pool), tenant: this.#tenantPool.stats };
  }

  /** Owner-level transaction (migrations, tenant creation, workers that span tenants). */
  async asOwner<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    if (tracingOn())
      return withSpan('db transaction', { attributes: { 'db.system.name': 'postgresql' } }, () =>
        this.kysely.transaction().execute(async (trx) => {
          const binding = traceBinding();
          if (binding) await sql.raw(`select ${binding.slice(2)}`).execute(trx);
          return fn(trx);
        }),
      );
    return this.kysely.transaction().execute(fn);
  }

  async close(): Promise<void> {
    await this.notifications.close();
    await this.#replicas?.close();
    await this.#readKysely.destroy();
    await this.#tenantKysely.destroy();
    await this.kysely.destroy();
  }
}

/**
 * Kysely's driver for readAsTenant: each statement goes to a read lane for the tenant of the
 * surrounding readAsTenant; there is no checkout to hold and no transaction to open.
 */
class ReadLaneDriver implements Driver {
  readonly #lanes: TenantReadLanes;
  constructor(lanes: TenantReadLanes) {
    this.#lanes = lanes;
  }
  async init(): Promise<void> {}
  async acquireConnection(): Promise<DatabaseConnection> {
    const tenantId = checkoutTenant.getStore()?.tenantId;
    if (!tenantId || !isUuid(tenantId)) throw new Error('read lanes used outside readAsTenant');
    const lanes = this.#lanes;
    return {
      async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
        // Lanes take SELECT and WITH only, so there is never an affected-row count to report.
        const { rows } = await lanes.read(tenantId, query.sql, query.parameters);
        return { rows: (rows ?? []) as R[] };
      },
      streamQuery(): AsyncIterableIterator<QueryResult<never>> {
        throw new Error('readAsTenant does not stream; use withTenant');
      },
    };
  }
  async beginTransaction(): Promise<void> {
    throw new Error('readAsTenant runs no transactions; use withTenant');
  }
  async commitTransaction(): Promise<void> {
    throw new Error('readAsTenant runs no transactions; use withTenant');
  }
  async rollbackTransaction(): Promise<void> {
    throw new Error('readAsTenant runs no transactions; use withTenant');
  }
  async releaseConnection(): Promise<void> {}
  async destroy(): Promise<void> {
    await this.#lanes.close();
  }
}

/**
 * The statement that binds a transaction to a tenant: the RLS setting, the statement timeout left
 * until the deadline, and the request role (set_config('role', …, true) is SET LOCAL ROLE). Its only
 * inputs are a validated uuid, an integer and a constant, so it can travel as plain SQL text.
 */
export function tenantBinding(tenantId: string, deadline?: number): string {
  if (!isUuid(tenantId)) throw new Error('a tenant binding needs a tenant uuid');
  const timeoutMs = deadline === undefined ? 0 : Math.max(1, Math.floor(deadline - Date.now()));
  return `select set_config('atrium.tenant_id', '${tenantId}', true), set_config('statement_timeout', '${timeoutMs}', true), set_config('role', '${APP_ROLE}', true)`;
}

/**
 * Traced: `, set_config('atrium.traceparent', …, true)`, naming the transaction's span, which the outbox's and
 * the invocations' trace_context columns take as their default (migration 0029). Its only input is a
 * traceparent built from hex ids, so it can travel as plain SQL text. Untraced: empty.
 */
function traceBinding(): string {
  const traceparent = traceparentOf();
  return traceparent ? `, set_config('atrium.traceparent', '${traceparent}', true)` : '';
}

const postgresDialect = {
  createAdapter: () => new PostgresAdapter(),
  createIntrospector: (db: Kysely<unknown>) => new PostgresIntrospector(db),
  createQueryCompiler: () => new PostgresQueryCompiler(),
};
/** Compiles queries only (never connected). */
const compiler = new Kysely<Database>({ dialect: { ...postgresDialect, createDriver: () => new DummyDriver() } });

/**
 * A hot query built once with the query builder and compiled once; each call runs the same SQL text
 * with new parameters ($1, $2, … in the order the builder placed the values), skipping Kysely's build
 * and compile per request. For lookups on the request path; everything else uses the builder.
 */
export function compileOnce<R>(build: (db: Kysely<Database>) => Compilable<R>): (db: Trx, parameters: readonly unknown[]) => Promise<R[]> {
  const text = build(compiler).compile().sql;
  return async (db, parameters) => (await db.executeQuery<R>(CompiledQuery.raw(text, [...parameters]))).rows;
}

/** A value of a shaped statement, bound per call: `slot('name')` in the statement's builder. */
const SLOT = Symbol('slot');
interface Slot {
  [SLOT]: string;
}
const isSlot = (v: unknown): v is Slot => typeof v === 'object' && v !== null && SLOT in v;

/** Shapes kept per process; past the cap a statement is built and compiled per call, as any other. */
export const MAX_SHAPES = 256;
const shapes = new Map<string, { sql: string; parameters: readonly unknown[] }>();

/**
 * A statement whose text depends only on `shape` (what decides its structure: the columns it writes, its key):
 * built and compiled once per shape with `slot(name)` in place of each value that differs between calls, and
 * afterwards only bound, each slot taking `values[name]` (decision 0087). Every other value the builder uses must
 * be fixed for the shape (constants of the code), since later calls do not run the builder.
 */
export function compileShaped<R>(shape: string, values: Record<string, unknown>, build: (slot: (name: string) => unknown) => RawBuilder<R>): CompiledQuery<R> {
  let kept = shapes.get(shape);
  if (!kept) {
    const compiled = build((name) => ({ [SLOT]: name }) satisfies Slot).compile(compiler);
    for (const p of compiled.parameters) if (isSlot(p) && !(p[SLOT] in values)) throw new Error(`compileShaped: no value for slot ${p[SLOT]}`);
    kept = { sql: compiled.sql, parameters: compiled.parameters };
    if (shapes.size < MAX_SHAPES) shapes.set(shape, kept);
  }
  return CompiledQuery.raw(
    kept.sql,
    kept.parameters.map((p) => (isSlot(p) ? values[p[SLOT]] : p)),
  ) as CompiledQuery<R>;
}

/**
 * Kysely over one checked-out client, for work that mixes builder queries with what only the raw client
 * does (COPY) in the client's one open transaction; the caller owns the client (begin, commit, release).
 */
export function kyselyOnClient(client: pg.PoolClient): Trx {
  const pool = {
    options: {},
    // release is a no-op: the client stays checked out, in its transaction, until the caller releases it.
    connect: async () => ({ query: client.query.bind(client), release: () => {} }) as unknown as pg.PoolClient,
    end: async () => {},
  };
  return new Kysely<Database>({ dialect: new PostgresDialect({ pool }) }) as unknown as Trx;
}

/** Binds a transaction opened elsewhere (benchmarks replaying the service's statements). */
export async function bindTenant(trx: Trx, tenantId: string, deadline?: number): Promise<void> {
  await sql.raw(tenantBinding(tenantId, deadline)).execute(trx);
}

/** PostgreSQL's uuid syntax; checked before a value reaches a uuid column or parameter. */
export const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID_RE.test(v);
