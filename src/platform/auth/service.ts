// Authentication: app credentials (cached after a successful scrypt check), password logins,
// signed access tokens and rotating refresh tokens. Every login attempt leaves an event.
import { jwtVerify, SignJWT } from 'jose';
import { sql } from 'kysely';
import type { DatabaseHandle, Trx } from '../db/database.ts';
import { isUuid } from '../db/database.ts';
import type { RowOf } from '../db/schema.ts';
import { unauthorized } from '../errors.ts';
import { appendEvent } from '../events/outbox.ts';
import { DUMMY_HASH, randomToken, type SecretBox, sha256, verifySecret } from './hashing.ts';
import type { Principal } from './principal.ts';
import { ADMINISTRATOR } from './roles.ts';

const APP_CACHE_TTL_MS = 30_000;
const USER_CACHE_TTL_MS = 5_000;
// Slugs never change once given; a miss is remembered briefly so that unknown names cost few queries.
const SLUG_CACHE_TTL_MS = 60_000;
const SLUG_MISS_TTL_MS = 5_000;
const CACHE_MAX = 10_000;
export const SCIM_TOKEN_RE = /^scim_([0-9a-fA-F-]{36})_([A-Za-z0-9_-]{20,200})$/;

export interface TokenResponse {
  accessToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  refreshToken: string;
  UserId: string | null;
  User: { Id: string; UserName: string; Name: string | null } | null;
}

export interface LoginBody {
  userName: string;
  password: string;
  persistent?: boolean;
  loginAsDelegate?: boolean;
  delegatedUserName?: string | null;
}

/** Sign-in attempts of one AD-blocked user that may wait for the AD agent at once. */
const MAX_HELD_LOGINS = 5;

const USER_COLUMNS = ['id', 'user_name', 'name', 'is_active', 'password_hash', 'ad_user_name', 'ad_blocked_on_utc'] as const;
type UserRow = Pick<RowOf<'users'>, (typeof USER_COLUMNS)[number]>;

class TtlCache<V> {
  readonly #map = new Map<string, { value: V; expires: number }>();
  readonly ttlMs: number;
  constructor(ttlMs: number) {
    this.ttlMs = ttlMs;
  }
  get(key: string): V | undefined {
    const hit = this.#map.get(key);
    if (!hit) return undefined;
    if (hit.expires < Date.now()) {
      this.#map.delete(key);
      return undefined;
    }
    return hit.value;
  }
  set(key: string, value: V): void {
    if (this.#map.size >= CACHE_MAX) this.#map.clear();
    this.#map.set(key, { value, expires: Date.now() + this.ttlMs });
  }
  clear(): void {
    this.#map.clear();
  }
}

export class AuthService {
  readonly #db: DatabaseHandle;
  readonly #jwtKey: Uint8Array;
  /** Seals the passwords of sign-ins that wait for the Active Directory agent. */
  readonly #box: SecretBox;
  readonly #tokenLifetime: number;
  readonly #refreshLifetime: number;
  readonly #appCache = new TtlCache<{ appId: string; roles: string[] }>(APP_CACHE_TTL_MS);
  readonly #userCache = new TtlCache<{ userName: string; roles: string[] } | null>(USER_CACHE_TTL_MS);
  readonly #slugCache = new TtlCache<string>(SLUG_CACHE_TTL_MS);
  readonly #slugMisses = new TtlCache<true>(SLUG_MISS_TTL_MS);
  readonly #scimCache = new TtlCache<string>(APP_CACHE_TTL_MS);
  /**
   * Counts invalidations: a verification that read the database before one (an app rotated or revoked
   * meanwhile) answers its request but is not cached, so a stale secret cannot outlive the invalidation.
   */
  #generation = 0;

  constructor(db: DatabaseHandle, box: SecretBox, opts: { tokenLifetimeSeconds: number; refreshTokenLifetimeSeconds: number }) {
    this.#db = db;
    this.#jwtKey = box.derive('jwt');
    this.#box = box;
    this.#tokenLifetime = opts.tokenLifetimeSeconds;
    this.#refreshLifetime = opts.refreshTokenLifetimeSeconds;
  }

  /**
   * Changes whenever cached verifications are forgotten: a principal verified under an older generation may
   * have lost its secret, app or roles since, and must be verified again (app.ts keeps one per connection).
   */
  get generation(): number {
    return this.#generation;
  }

  /** Forget cached verifications (after a rotate, revoke or role change in this process). */
  invalidateCaches(): void {
    this.#generation++;
    this.#appCache.clear();
    this.#userCache.clear();
    this.#scimCache.clear();
    this.#slugMisses.clear();
  }

  /** The id of the tenant with this slug (a base path or host names it), or null. */
  async tenantIdForSlug(slug: string): Promise<string | null> {
    const hit = this.#slugCache.get(slug);
    if (hit) return hit;
    if (this.#slugMisses.get(slug)) return null;
    // Which tenant a name means is asked before any tenant is bound, so it is an owner-level lookup.
    const row = await this.#db.kysely.selectFrom('tenants').select('id').where('slug', '=', slug).executeTakeFirst();
    if (row) this.#slugCache.set(slug, row.id);
    else this.#slugMisses.set(slug, true);
    return row?.id ?? null;
  }

  async authenticateApp(tenantId: unknown, appKey: unknown, secret: unknown, appUser: unknown): Promise<Principal> {
    if (!isUuid(tenantId) || typeof appKey !== 'string' || typeof secret !== 'string' || !appKey || !secret) {
      throw unauthorized();
    }
    const cacheKey = `${tenantId}\n${appKey}\n${sha256(secret)}`;
    let app = this.#appCache.get(cacheKey);
    if (!app) {
      const generation = this.#generation;
      const row = await this.#db.withTenant(tenantId, async (trx) => {
        const found = await trx
          .selectFrom('apps')
          .select(['id', 'secret_hash'])
          .where('app_id', '=', appKey)
          .where('revoked_on_utc', 'is', null)
          .executeTakeFirst();
        return found ? { ...found, roles: await appRoles(trx, found.id) } : undefined;
      });
      // Unknown tenant, unknown app and wrong secret all cost one scrypt and answer the same 401.
      const ok = await verifySecret(secret, row?.secret_hash ?? DUMMY_HASH);
      if (!row || !ok) throw unauthorized();
      app = { appId: row.id, roles: row.roles };
      if (generation === this.#generation) this.#appCache.set(cacheKey, app);
    }
    const principal: Principal = {
      tenantId,
      appId: app.appId,
      userId: null,
      userName: null,
      roles: new Set(app.roles),
      via: 'app-headers',
    };
    if (appUser !== undefined && appUser !== '') return this.actAsUser(principal, appUser);
    return principal;
  }

  /** X-AppUser: the call acts as that user, whose roles then apply. Not a user of the tenant: 401. */
  async actAsUser(principal: Principal, userId: unknown): Promise<Principal> {
    if (!isUuid(userId)) throw unauthorized('X-AppUser is not a user of this tenant.');
    const key = `${principal.tenantId}\n${userId}`;
    let user = this.#userCache.get(key);
    if (user === undefined) {
      const generation = this.#generation;
      user = await this.#db.withTenant(principal.tenantId, async (trx) => {
        const row = await trx.selectFrom('users').select(['user_name', 'is_active']).where('id', '=', userId).executeTakeFirst();
        if (!row?.is_active) return null;
        return { userName: row.user_name, roles: await userRoles(trx, userId) };
      });
      if (generation === this.#generation) this.#userCache.set(key, user);
    }
    if (!user) throw unauthorized('X-AppUser is not a user of this tenant.');
    return { ...principal, userId, userName: user.userName, roles: new Set(user.roles) };
  }

  async issueForApp(principal: Principal): Promise<TokenResponse> {
    return this.#db.withTenant(principal.tenantId, (trx) => this.#issue(trx, principal.tenantId, principal.appId, null, false));
  }

  async login(tenantId: unknown, body: LoginBody): Promise<TokenResponse> {
    if (!isUuid(tenantId)) throw unauthorized();
    const detail = {
      LoginType: 'Token',
      Username: body.userName,
      LoginAsDelegate: Boolean(body.loginAsDelegate),
      DelegatedUserName: body.delegatedUserName ?? null,
    };
    let failure: string | null = null;
    let userId: string | null = null;
    let result: TokenResponse | undefined;
    const tenantExists = await this.#db.withTenant(tenantId, async (trx) => {
      const t = await trx.selectFrom('tenants').select('id').executeTakeFirst();
      if (!t) return false;
      const user = await findUserByName(trx, body.userName);
      userId = user?.id ?? null;
      if (user?.ad_blocked_on_utc && user.ad_user_name) {
        // Its AD account is blocked by the Active Directory agent: only the agent can check the password
        // against AD (integration/ad-blocker.ts), so the attempt waits for its verdict, sealed.
        await this.#holdForAdAgent(trx, tenantId, user.id, user.ad_user_name, body.password);
        failure = 'The Active Directory account is blocked; the sign-in waits for the AD agent’s verdict.';
      }
      const passwordOk = await verifySecret(body.password, user?.password_hash ?? DUMMY_HASH);
      if (!failure && (!user || !passwordOk)) failure = 'Invalid user name or password.';
      else if (!failure && user && !user.is_active) failure = 'User is inactive.';
      let actAs: UserRow | undefined = user;
      if (!failure && user && body.loginAsDelegate) {
        const roles = await userRoles(trx, user.id);
        const target = body.delegatedUserName ? await findUserByName(trx, body.delegatedUserName) : undefined;
        if (!roles.includes(ADMINISTRATOR)) failure = 'Only an Administrator may log in as a delegate.';
        else if (!target?.is_active) failure = 'Delegated user not found.';
        else actAs = target;
      }
      if (!failure && actAs) result = await this.#issue(trx, tenantId, null, actAs, Boolean(body.loginAsDelegate));
      return true;
    });
    if (!tenantExists) throw unauthorized();
    // The event is written in its own transaction so that a failed login leaves it too.
    await this.#db.withTenant(tenantId, (trx) =>
      appendEvent(trx, {
        tenantId,
        actionType: failure ? 'LoginFailed' : 'LoginSucceeded',
        documentType: 'User',
        documentId: userId,
        userId,
        detail: failure ? { ...detail, FailureReason: failure } : detail,
      }),
    );
    if (failure || !result) throw unauthorized(failure ?? undefined);
    return result;
  }

  /** At most MAX_HELD_LOGINS attempts per user wait for the AD agent (a flood of guesses holds no more); each lives 15 minutes. */
  async #holdForAdAgent(trx: Trx, tenantId: string, userId: string, adUserName: string, password: string): Promise<void> {
    await sql`delete from ad_blocked_login_requests where created_on_utc < now() - interval '15 minutes'`.execute(trx);
    const { rows } = await sql<{
      n: number;
    }>`select count(*)::int as n from ad_blocked_login_requests where user_id = ${userId} and answered_on_utc is null`.execute(trx);
    if (rows[0].n >= MAX_HELD_LOGINS) return;
    await sql`insert into ad_blocked_login_requests (tenant_id, user_id, ad_user_name, password_sealed)
              values (${tenantId}, ${userId}, ${adUserName}, ${this.#box.encrypt(password)})`.execute(trx);
  }

  /** addressedTenantId: the tenant the request names (base path, host, X-AppTenant), if any; another tenant's token is refused. */
  async refresh(refreshToken: unknown, addressedTenantId: string | null = null): Promise<TokenResponse> {
    if (typeof refreshToken !== 'string') throw unauthorized('Invalid refresh token.');
    const [tenantId, secret] = refreshToken.split('.');
    if (!isUuid(tenantId) || !secret) throw unauthorized('Invalid refresh token.');
    if (addressedTenantId && addressedTenantId !== tenantId.toLowerCase()) throw unauthorized();
    let failure: string | null = null;
    let userName = '';
    let userId: string | null = null;
    const result = await this.#db.withTenant(tenantId, async (trx) => {
      // Single use: the row is consumed atomically, so a replayed token fails.
      const row = await trx
        .updateTable('refresh_tokens')
        .set({ used_on_utc: new Date() })
        .where('token_hash', '=', sha256(secret))
        .where('used_on_utc', 'is', null)
        .returning(['user_id', 'app_id', 'expires_on_utc', 'acting_as_delegate'])
        .executeTakeFirst();
      if (!row) {
        failure = 'Refresh token is unknown or already used.';
        return undefined;
      }
      if (row.expires_on_utc.getTime() < Date.now()) {
        failure = 'Refresh token has expired.';
        return undefined;
      }
      let user: UserRow | undefined;
      if (row.user_id) {
        user = await trx.selectFrom('users').select(USER_COLUMNS).where('id', '=', row.user_id).executeTakeFirst();
        userId = row.user_id;
        userName = user?.user_name ?? '';
        if (!user?.is_active) {
          failure = 'User is inactive.';
          return undefined;
        }
      }
      if (row.app_id) {
        const app = await trx.selectFrom('apps').select('id').where('id', '=', row.app_id).where('revoked_on_utc', 'is', null).executeTakeFirst();
        if (!app) {
          failure = 'App was revoked.';
          return undefined;
        }
      }
      return this.#issue(trx, tenantId, row.app_id, user ?? null, row.acting_as_delegate);
    });
    await this.#db.withTenant(tenantId, async (trx) => {
      const tenant = await trx.selectFrom('tenants').select('id').executeTakeFirst();
      if (!tenant) return;
      await appendEvent(trx, {
        tenantId,
        actionType: failure ? 'LoginFailed' : 'LoginSucceeded',
        documentType: 'User',
        documentId: userId,
        userId,
        detail: {
          LoginType: 'RefreshToken',
          Username: userName,
          LoginAsDelegate: false,
          DelegatedUserName: null,
          ...(failure ? { FailureReason: failure } : {}),
        },
      });
    });
    if (failure || !result) throw unauthorized(failure ?? 'Invalid refresh token.');
    return result;
  }

  async verifyAccessToken(token: string): Promise<Principal> {
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.#jwtKey, { issuer: 'atrium', algorithms: ['HS256'] }));
    } catch {
      throw unauthorized('Access token is invalid or expired.');
    }
    const tenantId = payload.tid;
    if (!isUuid(tenantId) || payload.typ !== 'access') throw unauthorized('Access token is invalid or expired.');
    const appId = typeof payload.aid === 'string' ? payload.aid : null;
    const userId = typeof payload.uid === 'string' ? payload.uid : null;
    // A user token carries that user's current roles; an app token its app's, while the app is not revoked.
    if (userId) return this.actAsUser({ tenantId, appId, userId: null, userName: null, roles: new Set(), via: 'token' }, userId);
    if (!appId) throw unauthorized('Access token is invalid or expired.');
    const key = `token-app\n${tenantId}\n${appId}`;
    let roles = this.#appCache.get(key)?.roles;
    if (!roles) {
      const found = await this.#db.withTenant(tenantId, async (trx) => {
        const app = await trx.selectFrom('apps').select('id').where('id', '=', appId).where('revoked_on_utc', 'is', null).executeTakeFirst();
        return app ? appRoles(trx, appId) : null;
      });
      if (!found) throw unauthorized('Access token is invalid or expired.');
      roles = found;
      this.#appCache.set(key, { appId, roles });
    }
    return { tenantId, appId, userId: null, userName: null, roles: new Set(roles), via: 'token' };
  }

  /**
   * A SCIM bearer token (`scim_<tenant id>_<secret>`, decision 0047): the tenant it names, looked up by the
   * secret's SHA-256 among that tenant's tokens not revoked, and cached like app verifications: a revocation
   * notifies every process (atrium_auth), which drops the cache. The principal has no roles: it reaches only
   * the SCIM routes.
   */
  async verifyScimToken(token: string, addressedTenantId: string | null): Promise<Principal> {
    const m = SCIM_TOKEN_RE.exec(token);
    if (!m || !isUuid(m[1])) throw unauthorized();
    const tenantId = m[1].toLowerCase();
    if (addressedTenantId && addressedTenantId !== tenantId) throw unauthorized();
    const key = `scim\n${tenantId}\n${sha256(m[2])}`;
    let tokenId = this.#scimCache.get(key);
    if (!tokenId) {
      const generation = this.#generation;
      const row = await this.#db.readAsTenant(tenantId, (trx) =>
        trx.selectFrom('scim_tokens').select('id').where('token_hash', '=', sha256(m[2])).where('revoked_on_utc', 'is', null).executeTakeFirst(),
      );
      if (!row) throw unauthorized();
      tokenId = row.id;
      if (generation === this.#generation) this.#scimCache.set(key, tokenId);
    }
    return { tenantId, appId: null, userId: null, userName: null, roles: new Set(), via: 'scim', scimTokenId: tokenId };
  }

  async #issue(trx: Trx, tenantId: string, appId: string | null, user: UserRow | null, delegate: boolean): Promise<TokenResponse> {
    const accessToken = await new SignJWT({ tid: tenantId, typ: 'access', ...(appId ? { aid: appId } : {}), ...(user ? { uid: user.id } : {}) })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer('atrium')
      .setSubject(user ? user.id : `app:${appId}`)
      .setIssuedAt()
      .setJti(randomToken(12))
      .setExpirationTime(`${this.#tokenLifetime}s`)
      .sign(this.#jwtKey);
    const secret = randomToken(32);
    await trx
      .insertInto('refresh_tokens')
      .values({
        tenant_id: tenantId,
        token_hash: sha256(secret),
        user_id: user?.id ?? null,
        app_id: appId,
        acting_as_delegate: delegate,
        expires_on_utc: new Date(Date.now() + this.#refreshLifetime * 1000),
      })
      .execute();
    return {
      accessToken,
      tokenType: 'Bearer',
      expiresIn: this.#tokenLifetime,
      refreshToken: `${tenantId}.${secret}`,
      UserId: user?.id ?? null,
      User: user ? { Id: user.id, UserName: user.user_name, Name: user.name } : null,
    };
  }
}

async function findUserByName(trx: Trx, userName: string): Promise<UserRow | undefined> {
  return trx.selectFrom('users').select(USER_COLUMNS).where(sql`lower(user_name)`, '=', userName.toLowerCase()).executeTakeFirst();
}

export async function appRoles(trx: Trx, appId: string): Promise<string[]> {
  const rows = await trx
    .selectFrom('app_roles')
    .innerJoin('roles', 'roles.id', 'app_roles.role_id')
    .select('roles.name')
    .where('app_roles.app_id', '=', appId)
    .execute();
  return rows.map((r) => r.name);
}

export async function userRoles(trx: Trx, userId: string): Promise<string[]> {
  const rows = await trx
    .selectFrom('user_roles')
    .innerJoin('roles', 'roles.id', 'user_roles.role_id')
    .select('roles.name')
    .where('user_roles.user_id', '=', userId)
    .execute();
  return rows.map((r) => r.name);
}
