// The database handle: an owner pool, and tenant-bound connections for requests. Request work runs
// with atrium.tenant_id set and as the non-owner role atrium_app, so row-level security applies even
// where a query forgets its WHERE tenant_id.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Kysely, PostgresDialect, sql, type Transaction } from 'kysely';
import pg from 'pg';
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

/** The tenant a tenant-pool checkout is for (set by withTenant / readAsTenant around the checkout). */
const checkoutTenant = new AsyncLocalStorage<string>();

type TaggedClient = pg.PoolClient & { atriumTenant?: string };

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
    const tenantId = checkoutTenant.getStore();
    if (!tenantId || !isUuid(tenantId)) throw new Error('tenant pool used outside withTenant/readAsTenant');
    const client = (await this.#pool.connect()) as TaggedClient;
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
    return client;
  }

  get options(): object {
    return this.#pool.options;
  }

  end(): Promise<void> {
    return this.#pool.end();
  }
}

export class DatabaseHandle {
  /** Owner connections: migrations, tenant creation, health, work that spans tenants. */
  readonly pool: pg.Pool;
  readonly kysely: Kysely<Database>;
  readonly connectionString: string;
  /** Tenant-bound connections (TenantBoundPool); reached only through withTenant and readAsTenant. */
  readonly #tenantKysely: Kysely<Database>;

  constructor(connectionString: string, opts: { poolSize?: number; statementTimeoutMs?: number } = {}) {
    this.connectionString = connectionString;
    const make = (max: number) => {
      const pool = new pg.Pool({ connectionString, max, idleTimeoutMillis: 30_000, application_name: 'atrium' });
      // An idle client that loses its server (PostgreSQL restart) must not crash the process.
      pool.on('error', () => {});
      return pool;
    };
    this.pool = make(5);
    this.kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: this.pool }) });
    const tenantPool = new TenantBoundPool(make(opts.poolSize ?? 20), opts.statementTimeoutMs ?? 30_000);
    this.#tenantKysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: tenantPool }) });
  }

  /**
   * Runs fn in one transaction bound to the tenant; commit on success, rollback on error. BEGIN, the
   * transaction-local binding and the statement timeout left until the deadline travel in one round
   * trip (a simple-protocol query; every value in it is validated first).
   */
  async withTenant<T>(tenantId: string, fn: (trx: Trx) => Promise<T>, opts: TenantTxOptions = {}): Promise<T> {
    const binding = tenantBinding(tenantId, opts.deadline);
    return checkoutTenant.run(tenantId, () =>
      this.#tenantKysely.connection().execute(async (conn) => {
        await sql.raw(`begin; ${binding}`).execute(conn);
        let result: T;
        try {
          // The connection is inside the transaction opened above, so it serves as the transaction handle.
          result = await fn(conn as unknown as Trx);
        } catch (err) {
          await sql
            .raw('rollback')
            .execute(conn)
            .catch(() => {});
          throw err;
        }
        await sql.raw('commit').execute(conn);
        return result;
      }),
    );
  }

  /**
   * Read-only work for one tenant without a transaction: each statement runs on its own on a
   * connection bound to the tenant (RLS and the request role apply), so a one-statement lookup is one
   * round trip. For anything that writes, or needs one snapshot across statements, use withTenant.
   */
  async readAsTenant<T>(tenantId: string, fn: (db: Trx) => Promise<T>): Promise<T> {
    return checkoutTenant.run(tenantId, () => this.#tenantKysely.connection().execute((conn) => fn(conn as unknown as Trx)));
  }

  /** Owner-level transaction (migrations, tenant creation, workers that span tenants). */
  async asOwner<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return this.kysely.transaction().execute(fn);
  }

  async close(): Promise<void> {
    await this.#tenantKysely.destroy();
    await this.kysely.destroy();
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

/** Binds a transaction opened elsewhere (benchmarks replaying the service's statements). */
export async function bindTenant(trx: Trx, tenantId: string, deadline?: number): Promise<void> {
  await sql.raw(tenantBinding(tenantId, deadline)).execute(trx);
}

/** PostgreSQL's uuid syntax; checked before a value reaches a uuid column or parameter. */
export const UUID_RE = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const isUuid = (v: unknown): v is string => typeof v === 'string' && UUID_RE.test(v);
