// One PostgreSQL pool, one Kysely instance, and the tenant-scoped transaction every request runs in:
// the transaction sets atrium.tenant_id and switches to the non-owner role atrium_app, so row-level
// security applies even where a query forgets its WHERE tenant_id.
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

export class DatabaseHandle {
  readonly pool: pg.Pool;
  readonly kysely: Kysely<Database>;
  readonly connectionString: string;

  constructor(connectionString: string, poolSize = 20) {
    this.connectionString = connectionString;
    this.pool = new pg.Pool({ connectionString, max: poolSize, idleTimeoutMillis: 30_000, application_name: 'atrium' });
    // An idle client that loses its server (PostgreSQL restart) must not crash the process.
    this.pool.on('error', () => {});
    this.kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool: this.pool }) });
  }

  /**
   * Runs fn in one transaction bound to the tenant; commit on success, rollback on error.
   * BEGIN and the binding travel in one round trip (a simple-protocol query; every value in it is
   * validated first), which matters on short requests where round trips are most of the cost.
   */
  async withTenant<T>(tenantId: string, fn: (trx: Trx) => Promise<T>, opts: TenantTxOptions = {}): Promise<T> {
    const binding = tenantBinding(tenantId, opts.deadline);
    return this.kysely.connection().execute(async (conn) => {
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
    });
  }

  /** Owner-level transaction (migrations, tenant creation, workers that span tenants). */
  async asOwner<T>(fn: (trx: Trx) => Promise<T>): Promise<T> {
    return this.kysely.transaction().execute(fn);
  }

  async close(): Promise<void> {
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
