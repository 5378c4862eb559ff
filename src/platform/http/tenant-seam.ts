// The one way routes reach tenant data: request.readTenant and request.writeTenant, bound to the
// authenticated principal's tenant and the request's deadline; and the static roles a route declares in
// `config.roles`, checked in one hook and shown in the route's OpenAPI description.
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify';
import { hasRole, type Principal } from '../auth/principal.ts';
import type { RoleName } from '../auth/roles.ts';
import { retryOnConflict } from '../db/conflict-retry.ts';
import type { DatabaseHandle, Trx } from '../db/database.ts';
import { forbidden, unauthorized } from '../errors.ts';

export interface ReadOptions {
  /**
   * A single short lookup (one SELECT, or a few independent ones, with statement texts written in code):
   * runs on a pipelined read lane without a transaction (DatabaseHandle.readAsTenant, decision 0010).
   * Without it the read is one transaction: one snapshot, the request's deadline, cursors and row locks
   * (custom-table reads hold FOR SHARE on the table's definition, which READ ONLY would refuse).
   */
  lane?: boolean;
  /**
   * The read may lag the primary by a replica's lag (Data Extraction pages, OData): it runs on a read replica
   * (DATABASE_READ_URL) when one is usable, else on the primary. Never for a read that must see the caller's own writes.
   */
  replica?: boolean;
}

export interface WriteOptions {
  /** false when `fn` cannot run twice, e.g. it consumes the request body as a stream. */
  retry?: boolean;
}

/** Work in a tenant transaction; `db` is the handle it runs on (the primary, or a replica for replica reads). */
type TenantWork<T> = (trx: Trx, principal: Principal, db: DatabaseHandle) => Promise<T>;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Static roles the route needs: any one of them (Administrator has every role). */
    roles?: readonly RoleName[];
  }
  interface FastifyRequest {
    /** Reads of the principal's tenant; see ReadOptions for lane or transaction. */
    readTenant<T>(fn: TenantWork<T>, opts?: ReadOptions): Promise<T>;
    /** One transaction of the principal's tenant, bounded by the request's deadline and run again on a concurrency conflict. */
    writeTenant<T>(fn: TenantWork<T>, opts?: WriteOptions): Promise<T>;
  }
}

export function requirePrincipal(request: FastifyRequest): Principal {
  if (!request.principal) throw unauthorized();
  return request.principal;
}

/** Decorates requests with the seam and checks `config.roles`; call before any route is added. */
export function registerTenantSeam(app: FastifyInstance<any, any, any, any, any>, db: DatabaseHandle): void {
  app.decorateRequest('readTenant', function readTenant<T>(this: FastifyRequest, fn: TenantWork<T>, opts: ReadOptions = {}): Promise<T> {
    const principal = requirePrincipal(this);
    const read = (on: DatabaseHandle) =>
      opts.lane
        ? on.readAsTenant(principal.tenantId, (trx) => fn(trx, principal, on))
        : on.withTenant(principal.tenantId, (trx) => fn(trx, principal, on), { deadline: this.deadline });
    return opts.replica ? db.onReplica(read) : read(db);
  });

  app.decorateRequest('writeTenant', function writeTenant<T>(this: FastifyRequest, fn: TenantWork<T>, opts: WriteOptions = {}): Promise<T> {
    const principal = requirePrincipal(this);
    const deadline = this.deadline;
    const once = () => db.withTenant(principal.tenantId, (trx) => fn(trx, principal, db), { deadline });
    return opts.retry === false ? once() : retryOnConflict(once, deadline);
  });

  app.addHook('onRoute', (route: RouteOptions) => {
    const roles = rolesOf(route);
    if (!roles.length) return;
    const schema = (route.schema ?? {}) as { description?: string };
    const line = `Roles: ${roles.join(' or ')}${roles.includes('Administrator') ? '' : ' (or Administrator)'}.`;
    route.schema = { ...schema, description: schema.description ? `${schema.description}\n\n${line}` : line };
  });

  // Routes that authenticate themselves (OData) set the principal in their own onRequest: checked here, before validation.
  app.addHook('preValidation', async (request) => checkRoles(request));
}

/**
 * 403 unless the principal holds one of the route's `config.roles`. Called as soon as the request is
 * authenticated (app.ts), so a caller without the role never has its body parsed or validated (issue 26);
 * again before validation for routes that authenticate themselves.
 */
export function checkRoles(request: FastifyRequest): void {
  const roles = request.routeOptions.config.roles;
  if (!roles?.length) return;
  const principal = requirePrincipal(request);
  if (!roles.some((role) => hasRole(principal, role))) throw forbidden(roles);
}

export const rolesOf = (route: Pick<RouteOptions, 'config'>): readonly string[] => (route.config as { roles?: readonly string[] } | undefined)?.roles ?? [];
