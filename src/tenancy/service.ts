// Tenants, their API apps and users: what the operator CLI and /admin routes do. A new tenant gets
// everything it needs to start (company, division, department, typology, user types, roles, an
// Administrator user and an Administrator app) under the tenant's own RLS binding, and its demo data if
// asked, all in one transaction: an interrupted or failed creation leaves no part of the tenant.
import { randomUUID } from 'node:crypto';
import { chmod, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { sql } from 'kysely';
import type pg from 'pg';
import { type DemoOptions, generateDemoData } from '../demo/demo-data.ts';
import { createTenantDefaults, type TenantDefaults } from '../domain/bootstrap.ts';
import { hashSecret, randomToken } from '../platform/auth/hashing.ts';
import { ADMINISTRATOR, BUILT_IN_ROLES } from '../platform/auth/roles.ts';
import type { AppContext } from '../platform/context.ts';
import { kyselyOnClient, type Trx, tenantBinding } from '../platform/db/database.ts';
import { badRequest, HttpProblem } from '../platform/errors.ts';
import { appendEvent } from '../platform/events/outbox.ts';
import { SLUG_RE, tenantBaseUrl } from '../platform/http/tenant-address.ts';

export type TenantCredentials = {
  tenantId: string;
  /** The tenant's name in a base path (`/t/{slug}`) or a host (ATRIUM_TENANT_HOST_PATTERN). */
  slug: string;
  /** Where its clients point: the tenant's host, or ATRIUM_PUBLIC_URL + `/t/{slug}`. */
  baseUrl: string;
  appId: string;
  appSecret: string;
  userId: string;
  username: string;
  password: string;
} & Omit<TenantDefaults, 'userTypeIds'>;

export interface CreateTenantOptions {
  name: string;
  /** Default: derived from the name, made unique. */
  slug?: string;
  demoData?: boolean;
  scale?: number;
  seed?: number;
  log?: (line: string) => void;
  progress?: DemoOptions['progress'];
  /**
   * Aborting cancels the running statement and rolls the whole creation back: the tenant, its bootstrap
   * and its demo data are one transaction, so an interrupted creation leaves nothing behind.
   */
  signal?: AbortSignal;
}

export class TenantCreationAborted extends Error {
  constructor() {
    super('tenant creation interrupted; nothing was created (rolled back)');
  }
}

/**
 * Runs fn in one transaction on one owner connection; an abort cancels the statement running on it
 * (pg_cancel_backend from another connection) and rolls back. fn gets the raw client (COPY) and Kysely on it.
 */
async function inOneTransaction<T>(ctx: AppContext, signal: AbortSignal | undefined, fn: (client: pg.PoolClient, trx: Trx) => Promise<T>): Promise<T> {
  if (signal?.aborted) throw new TenantCreationAborted();
  const client = await ctx.db.pool.connect();
  const pid = (client as pg.PoolClient & { processID: number }).processID;
  const cancel = () => {
    ctx.db.pool.query('select pg_cancel_backend($1)', [pid]).catch(() => {});
  };
  signal?.addEventListener('abort', cancel, { once: true });
  let broken = false;
  try {
    await client.query('begin');
    const result = await fn(client, kyselyOnClient(client));
    if (signal?.aborted) throw new TenantCreationAborted();
    await client.query('commit');
    return result;
  } catch (err) {
    await client.query('rollback').catch(() => {
      broken = true;
    });
    throw signal?.aborted ? new TenantCreationAborted() : err;
  } finally {
    signal?.removeEventListener('abort', cancel);
    client.release(broken);
  }
}

export async function createTenant(ctx: AppContext, opts: CreateTenantOptions): Promise<TenantCredentials> {
  const tenantId = randomUUID();
  const password = randomToken(12);
  const passwordHash = await hashSecret(password);
  const appSecret = randomToken(32);
  const appSecretHash = await hashSecret(appSecret);
  const appKey = newAppKey();
  let slug = await chooseSlug(ctx, opts);
  const create = () =>
    inOneTransaction(ctx, opts.signal, async (client, trx) => {
      // The bootstrap runs bound to the tenant (RLS, request role); a concurrent creation holding the same
      // slug uncommitted (a long demo load) makes the insert wait, so past a short wait it counts as taken.
      await client.query(`${tenantBinding(tenantId)}, set_config('lock_timeout', '2s', true)`);
      await trx.insertInto('tenants').values({ id: tenantId, name: opts.name, slug }).execute();
      await client.query("select set_config('lock_timeout', '0', true)");
      await trx
        .insertInto('roles')
        .values(BUILT_IN_ROLES.map((r) => ({ tenant_id: tenantId, name: r.name, description: r.description })))
        .execute();
      const defaults = await createTenantDefaults(trx, tenantId, opts.name);
      const user = await insertUser(trx, tenantId, defaults, { userName: 'admin', name: 'Administrator', passwordHash, email: null });
      await assignRoles(trx, tenantId, user, [ADMINISTRATOR], null);
      const app = await trx
        .insertInto('apps')
        .values({ tenant_id: tenantId, app_id: appKey, name: 'Administrator app', secret_hash: appSecretHash })
        .returning('id')
        .executeTakeFirstOrThrow();
      await setAppRoles(trx, tenantId, app.id, [ADMINISTRATOR]);
      if (opts.demoData) {
        // The demo load runs as the owner (it may bypass per-row FK triggers), still in the same transaction,
        // in a subtransaction: its rows carry an xmin of their own, which tells them from the bootstrap's
        // (test/demo-data.test.ts digests the generated rows by it).
        await client.query('set local role none');
        await client.query('savepoint atrium_demo_data');
        await generateDemoData(client, tenantId, defaults, {
          scale: opts.scale ?? 1,
          seed: opts.seed,
          log: opts.log,
          progress: opts.progress,
          signal: opts.signal,
        });
        await client.query('release savepoint atrium_demo_data');
      }
      return { defaults, userId: user };
    });
  let created: Awaited<ReturnType<typeof create>> | undefined;
  // Two tenants created at once may derive the same slug; the unique constraint decides, the later one takes the next.
  for (let attempt = 0; !created; attempt++) {
    try {
      created = await create();
    } catch (err) {
      if (!isSlugTaken(err)) throw err;
      if (opts.slug !== undefined || attempt >= 3) throw slugTaken(slug);
      slug = await chooseSlug(ctx, opts);
    }
  }
  const { defaults, userId } = created;
  ctx.auth.invalidateCaches();
  const { userTypeIds: _userTypes, ...org } = defaults;
  return { tenantId, slug, baseUrl: tenantBaseUrl(ctx.config, slug), appId: appKey, appSecret, userId, username: 'admin', password, ...org };
}

const SLUG_MAX = 63;

/** The slug a name gives: ASCII letters and digits, lowercased, other runs as one '-'. */
export function slugFromName(name: string): string {
  const base = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, SLUG_MAX)
    .replace(/-+$/, '');
  return base || 'tenant';
}

/** The slug asked for (checked and free), or one derived from the name and made unique with -2, -3, … */
async function chooseSlug(ctx: AppContext, opts: CreateTenantOptions): Promise<string> {
  if (opts.slug !== undefined) {
    if (!SLUG_RE.test(opts.slug)) {
      throw badRequest('slug must be 1 to 63 lowercase letters, digits and -, not starting or ending with -.', [
        { path: '/body/slug', message: 'must be lowercase letters, digits and -' },
      ]);
    }
    if (await ctx.auth.tenantIdForSlug(opts.slug)) throw slugTaken(opts.slug);
    return opts.slug;
  }
  const base = slugFromName(opts.name);
  // Slugs are unique across tenants, so the check reads every tenant's: an owner-level query.
  const rows = await ctx.db.kysely
    .selectFrom('tenants')
    .select('slug')
    .where((eb) => eb.or([eb('slug', '=', base), eb('slug', 'like', `${base.slice(0, SLUG_MAX - 2)}%-%`)]))
    .execute();
  const taken = new Set(rows.map((r) => r.slug));
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) {
    const suffix = `-${n}`;
    const candidate = `${base.slice(0, SLUG_MAX - suffix.length).replace(/-+$/, '')}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

const isSlugTaken = (err: unknown): boolean => {
  const { code, constraint } = err as { code?: string; constraint?: string };
  // 55P03: the lock_timeout of the tenants insert, i.e. another creation holds the slug uncommitted.
  return (code === '23505' && constraint === 'tenants_slug_key') || code === '55P03';
};
const slugTaken = (slug: string): HttpProblem => new HttpProblem(409, `The slug ${slug} is taken by another tenant.`);

const newAppKey = (): string => `app_${randomToken(12)}`;

async function roleIds(trx: Trx, names: string[]): Promise<{ id: string; name: string }[]> {
  if (names.length === 0) return [];
  const rows = await trx.selectFrom('roles').select(['id', 'name']).where('name', 'in', names).execute();
  const missing = names.filter((n) => !rows.some((r) => r.name === n));
  if (missing.length) throw new HttpProblem(422, `Unknown role(s): ${missing.join(', ')}.`);
  return rows;
}

async function setAppRoles(trx: Trx, tenantId: string, appId: string, names: string[]): Promise<void> {
  const roles = await roleIds(trx, names);
  if (roles.length) {
    await trx
      .insertInto('app_roles')
      .values(roles.map((r) => ({ tenant_id: tenantId, app_id: appId, role_id: r.id })))
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
}

/** Assigns roles to a user; each new assignment emits UserRoleAdded. */
export async function assignRoles(trx: Trx, tenantId: string, userId: string, names: string[], actorId: string | null): Promise<void> {
  for (const role of await roleIds(trx, names)) {
    const added = await trx
      .insertInto('user_roles')
      .values({ tenant_id: tenantId, user_id: userId, role_id: role.id })
      .onConflict((oc) => oc.doNothing())
      .returning('role_id')
      .executeTakeFirst();
    if (added) {
      await appendEvent(trx, {
        tenantId,
        actionType: 'UserRoleAdded',
        documentType: 'User',
        documentId: userId,
        userId: actorId,
        detail: { RoleId: role.id, RoleName: role.name },
      });
    }
  }
}

/** Removes roles from a user; each removed assignment emits UserRoleRemoved. */
export async function removeRoles(trx: Trx, tenantId: string, userId: string, names: string[], actorId: string | null): Promise<void> {
  for (const role of await roleIds(trx, names)) {
    const removed = await trx.deleteFrom('user_roles').where('user_id', '=', userId).where('role_id', '=', role.id).returning('role_id').executeTakeFirst();
    if (removed) {
      await appendEvent(trx, {
        tenantId,
        actionType: 'UserRoleRemoved',
        documentType: 'User',
        documentId: userId,
        userId: actorId,
        detail: { RoleId: role.id, RoleName: role.name },
      });
    }
  }
}

/** Where a new user lands; a tenant whose bootstrap units were deleted places users nowhere (the columns are nullable). */
type OrgUnit = { companyId: string | null; departmentId: string | null; typologyId: string | null; userTypeIds: { regular: string | null } };

async function insertUser(
  trx: Trx,
  tenantId: string,
  defaults: OrgUnit,
  u: { userName: string; name: string | null; passwordHash: string | null; email: string | null },
): Promise<string> {
  const row = await trx
    .insertInto('users')
    .values({
      tenant_id: tenantId,
      user_name: u.userName,
      name: u.name,
      email: u.email,
      password_hash: u.passwordHash,
      is_active: true,
      company_id: defaults.companyId,
      department_id: defaults.departmentId,
      typology_id: defaults.typologyId,
      user_type_id: defaults.userTypeIds.regular,
      timesheet_required: true,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  await appendEvent(trx, {
    tenantId,
    actionType: 'Created',
    documentType: 'User',
    documentId: row.id,
    detail: { UserName: u.userName, Name: u.name, Mail: u.email, IsActive: true },
  });
  return row.id;
}

async function requireTenant(trx: Trx): Promise<void> {
  const t = await trx.selectFrom('tenants').select('id').executeTakeFirst();
  if (!t) throw new HttpProblem(404, 'Tenant not found.');
}

export interface AppCredentials {
  tenantId: string;
  appId: string;
  appSecret: string;
  roles: string[];
}

export async function createApp(ctx: AppContext, tenantId: string, opts: { name: string; roles: string[] }): Promise<AppCredentials> {
  const appSecret = randomToken(32);
  const secretHash = await hashSecret(appSecret);
  const appKey = newAppKey();
  await ctx.db.withTenant(tenantId, async (trx) => {
    await requireTenant(trx);
    const app = await trx
      .insertInto('apps')
      .values({ tenant_id: tenantId, app_id: appKey, name: opts.name, secret_hash: secretHash })
      .returning('id')
      .executeTakeFirstOrThrow();
    await setAppRoles(trx, tenantId, app.id, opts.roles);
  });
  return { tenantId, appId: appKey, appSecret, roles: opts.roles };
}

export async function rotateApp(ctx: AppContext, tenantId: string, appKey: string): Promise<AppCredentials> {
  const appSecret = randomToken(32);
  const secretHash = await hashSecret(appSecret);
  const roles = await ctx.db.withTenant(tenantId, async (trx) => {
    const app = await trx
      .updateTable('apps')
      .set({ secret_hash: secretHash, rotated_on_utc: new Date() })
      .where('app_id', '=', appKey)
      .where('revoked_on_utc', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!app) throw new HttpProblem(404, `No active app ${appKey} in this tenant.`);
    const rows = await trx
      .selectFrom('app_roles')
      .innerJoin('roles', 'roles.id', 'app_roles.role_id')
      .select('roles.name')
      .where('app_id', '=', app.id)
      .execute();
    return rows.map((r) => r.name);
  });
  ctx.auth.invalidateCaches();
  await refreshDemoCredentials(ctx, tenantId, appKey, appSecret);
  return { tenantId, appId: appKey, appSecret, roles };
}

/**
 * Rotating the demo tenant's app (over HTTP or the CLI) writes the new secret to DATA_DIR/demo-credentials.json,
 * so the file, and the banner the next start prints from it, never show a dead secret.
 */
async function refreshDemoCredentials(ctx: AppContext, tenantId: string, appKey: string, appSecret: string): Promise<void> {
  const file = path.join(ctx.config.dataDir, 'demo-credentials.json');
  let creds: Record<string, unknown>;
  try {
    creds = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return; // no demo file (not an embedded first start), or one we cannot read: nothing to bring up to date
  }
  if (creds.tenantId !== tenantId || creds.appId !== appKey) return;
  await writeFile(file, `${JSON.stringify({ ...creds, appSecret }, null, 2)}\n`, { mode: 0o600 });
  await chmod(file, 0o600);
}

export async function revokeApp(ctx: AppContext, tenantId: string, appKey: string): Promise<{ tenantId: string; appId: string; revoked: true }> {
  await ctx.db.withTenant(tenantId, async (trx) => {
    const app = await trx
      .updateTable('apps')
      .set({ revoked_on_utc: new Date() })
      .where('app_id', '=', appKey)
      .where('revoked_on_utc', 'is', null)
      .returning('id')
      .executeTakeFirst();
    if (!app) throw new HttpProblem(404, `No active app ${appKey} in this tenant.`);
  });
  ctx.auth.invalidateCaches();
  return { tenantId, appId: appKey, revoked: true };
}

export interface NewUser {
  userName: string;
  password?: string;
  name?: string | null;
  email?: string | null;
  roles?: string[];
}

export async function createUser(
  ctx: AppContext,
  tenantId: string,
  u: NewUser,
): Promise<{ tenantId: string; userId: string; username: string; password: string; roles: string[] }> {
  const password = u.password ?? randomToken(12);
  const passwordHash = await hashSecret(password);
  const userId = await ctx.db.withTenant(tenantId, async (trx) => {
    await requireTenant(trx);
    const taken = await trx.selectFrom('users').select('id').where(sql`lower(user_name)`, '=', u.userName.toLowerCase()).executeTakeFirst();
    if (taken) throw new HttpProblem(409, `A user named ${u.userName} already exists.`);
    const defaults = await firstOrgUnit(trx);
    const id = await insertUser(trx, tenantId, defaults, { userName: u.userName, name: u.name ?? null, email: u.email ?? null, passwordHash });
    await assignRoles(trx, tenantId, id, u.roles ?? [], null);
    return id;
  });
  ctx.auth.invalidateCaches();
  return { tenantId, userId, username: u.userName, password, roles: u.roles ?? [] };
}

/** The tenant's first company, department, typology and the Regular user type: where a new user lands by default. */
async function firstOrgUnit(trx: Trx): Promise<OrgUnit> {
  const dep = await trx.selectFrom('departments').select(['id', 'company_id']).orderBy('created_on_utc').limit(1).executeTakeFirst();
  const typ = await trx.selectFrom('typologies').select('id').orderBy('created_on_utc').limit(1).executeTakeFirst();
  const types = await trx.selectFrom('user_types').select(['id', 'name']).execute();
  const regular = types.find((t) => t.name === 'Regular/Permanent')?.id ?? types[0]?.id ?? null;
  return { companyId: dep?.company_id ?? null, departmentId: dep?.id ?? null, typologyId: typ?.id ?? null, userTypeIds: { regular } };
}

export async function listTenants(ctx: AppContext): Promise<{ id: string; name: string; slug: string; baseUrl: string; createdOnUtc: Date }[]> {
  const rows = await ctx.db.asOwner((trx) => trx.selectFrom('tenants').select(['id', 'name', 'slug', 'created_on_utc']).orderBy('created_on_utc').execute());
  return rows.map((r) => ({ id: r.id, name: r.name, slug: r.slug, baseUrl: tenantBaseUrl(ctx.config, r.slug), createdOnUtc: r.created_on_utc }));
}

export interface AppSummary {
  appId: string;
  name: string;
  roles: string[];
  createdOnUtc: string;
  rotatedOnUtc: string | null;
  revokedOnUtc: string | null;
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** The tenant's apps with their roles (never a secret, which only its creation or rotation shows). */
export async function listApps(trx: Trx): Promise<AppSummary[]> {
  const apps = await trx
    .selectFrom('apps')
    .select(['id', 'app_id', 'name', 'created_on_utc', 'rotated_on_utc', 'revoked_on_utc'])
    .orderBy('created_on_utc')
    .orderBy('app_id')
    .execute();
  const roles = await trx.selectFrom('app_roles').innerJoin('roles', 'roles.id', 'app_roles.role_id').select(['app_roles.app_id', 'roles.name']).execute();
  return apps.map((a) => ({
    appId: a.app_id,
    name: a.name,
    roles: roles
      .filter((r) => r.app_id === a.id)
      .map((r) => r.name)
      .sort(),
    createdOnUtc: iso(a.created_on_utc) as string,
    rotatedOnUtc: iso(a.rotated_on_utc),
    revokedOnUtc: iso(a.revoked_on_utc),
  }));
}

export interface UserWithRoles {
  id: string;
  userName: string;
  name: string | null;
  email: string | null;
  isActive: boolean;
  roles: string[];
}

/** The tenant's first 1000 users by user name with their roles, and the roles that exist. */
export async function listUsersWithRoles(trx: Trx): Promise<{ users: UserWithRoles[]; roles: { name: string; description: string | null }[] }> {
  const users = await trx.selectFrom('users').select(['id', 'user_name', 'name', 'email', 'is_active']).orderBy('user_name').limit(1000).execute();
  const assigned = await trx
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select(['user_roles.user_id', 'roles.name'])
    .execute();
  const byUser = new Map<string, string[]>();
  for (const r of assigned) byUser.set(r.user_id, [...(byUser.get(r.user_id) ?? []), r.name]);
  const roles = await trx.selectFrom('roles').select(['name', 'description']).orderBy('name').execute();
  return {
    users: users.map((u) => ({
      id: u.id,
      userName: u.user_name,
      name: u.name,
      email: u.email,
      isActive: u.is_active,
      roles: (byUser.get(u.id) ?? []).sort(),
    })),
    roles,
  };
}
