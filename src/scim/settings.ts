// A tenant's SCIM tokens (created by an Administrator, shown once, kept as a SHA-256, revocable) and its
// SCIM settings: the defaults and mapping rules for what the Integration API needs and SCIM does not carry
// (company, department, typology group and typology, user type, SSO user name).
import { sql } from 'kysely';
import { randomToken, sha256 } from '../platform/auth/hashing.ts';
import type { Trx } from '../platform/db/database.ts';
import { HttpProblem, notFound } from '../platform/errors.ts';

// ---------------------------------------------------------------------------------------------------
// Tokens
// ---------------------------------------------------------------------------------------------------

export interface ScimTokenView {
  id: string;
  name: string;
  createdOnUtc: string;
  revokedOnUtc: string | null;
}

/** The token carries its tenant (`scim_<tenant id>_<secret>`); only the secret's SHA-256 is stored. */
export async function createScimToken(trx: Trx, tenantId: string, name: string, userId: string | null): Promise<ScimTokenView & { token: string }> {
  const secret = randomToken(32);
  const row = await trx
    .insertInto('scim_tokens')
    .values({ tenant_id: tenantId, name, token_hash: sha256(secret), created_by_id: userId })
    .returning(['id', 'name', 'created_on_utc', 'revoked_on_utc'])
    .executeTakeFirstOrThrow();
  return { ...tokenView(row), token: `scim_${tenantId}_${secret}` };
}

export async function listScimTokens(trx: Trx): Promise<ScimTokenView[]> {
  const rows = await trx.selectFrom('scim_tokens').select(['id', 'name', 'created_on_utc', 'revoked_on_utc']).orderBy('created_on_utc').execute();
  return rows.map(tokenView);
}

export async function revokeScimToken(trx: Trx, id: string): Promise<void> {
  const row = await trx
    .updateTable('scim_tokens')
    .set({ revoked_on_utc: new Date() })
    .where('id', '=', id)
    .where('revoked_on_utc', 'is', null)
    .returning('id')
    .executeTakeFirst();
  if (!row) throw notFound(`No active SCIM token ${id}.`);
}

const tokenView = (r: { id: string; name: string; created_on_utc: Date; revoked_on_utc: Date | null }): ScimTokenView => ({
  id: r.id,
  name: r.name,
  createdOnUtc: r.created_on_utc.toISOString(),
  revokedOnUtc: r.revoked_on_utc?.toISOString() ?? null,
});

// ---------------------------------------------------------------------------------------------------
// Settings
// ---------------------------------------------------------------------------------------------------

export interface ScimSettings {
  /** The company of a user whose `organization` is not sent. */
  companyCode: string;
  /** The department (external id, in that company) of a user whose `department` is not sent. */
  departmentExternalId: string;
  /** The typology group new typologies join (created if missing, as the user feed does). */
  typologyGroup: string;
  /** The typology (external id or name, in the user's department; created if missing) when title does not give one. */
  typology: string;
  /** `title` names the typology (the business title, as the feed's resourceType). */
  typologyFromTitle: boolean;
  /** The user type of a user whose `userType` is not sent or not mapped. */
  userType: string;
  /** SCIM userType -> Atrium user type name (a value not listed is looked up as a user type name itself). */
  userTypes: Record<string, string>;
  /** SsoUserName: the userName, or left alone. */
  ssoUserName: 'userName' | 'none';
}

export type StoredSettings = Partial<ScimSettings>;

/** The settings with the tenant's defaults where none is stored: its first company, department, typology and group. */
export async function effectiveSettings(trx: Trx): Promise<ScimSettings> {
  const { rows } = await sql<{
    settings: StoredSettings | null;
    company_code: string | null;
    department_external_id: string | null;
    typology: string | null;
    typology_group: string | null;
    user_type: string | null;
  }>`
    select s.settings,
      (select code from companies order by created_on_utc, id limit 1) as company_code,
      (select d.external_id from departments d join companies c on c.id = d.company_id
        where d.external_id is not null order by c.created_on_utc, d.created_on_utc, d.id limit 1) as department_external_id,
      (select coalesce(external_id, name) from typologies order by created_on_utc, id limit 1) as typology,
      (select name from typology_groups order by created_on_utc, id limit 1) as typology_group,
      (select name from user_types order by (name = 'Regular/Permanent') desc, created_on_utc, id limit 1) as user_type
    from (select 1) one left join scim_settings s on true`.execute(trx);
  const r = rows[0];
  const stored = r.settings ?? {};
  return {
    companyCode: stored.companyCode ?? r.company_code ?? '',
    departmentExternalId: stored.departmentExternalId ?? r.department_external_id ?? '',
    typologyGroup: stored.typologyGroup ?? r.typology_group ?? 'SCIM',
    typology: stored.typology ?? r.typology ?? 'SCIM',
    typologyFromTitle: stored.typologyFromTitle ?? false,
    userType: stored.userType ?? r.user_type ?? 'Regular/Permanent',
    userTypes: stored.userTypes ?? {},
    ssoUserName: stored.ssoUserName ?? 'userName',
  };
}

/**
 * The settings a provisioning request works with: kept per tenant for a few seconds, since every SCIM write
 * needs them and they change rarely. A PUT in this process drops them at once; another process sees it
 * within SETTINGS_TTL_MS.
 */
const SETTINGS_TTL_MS = 5_000;
const settingsCache = new Map<string, { settings: ScimSettings; expires: number }>();

export async function cachedSettings(trx: Trx, tenantId: string): Promise<ScimSettings> {
  const hit = settingsCache.get(tenantId);
  if (hit && hit.expires > Date.now()) return hit.settings;
  const settings = await effectiveSettings(trx);
  if (settingsCache.size >= 10_000) settingsCache.clear();
  settingsCache.set(tenantId, { settings, expires: Date.now() + SETTINGS_TTL_MS });
  return settings;
}

const settingProblem = (field: string, detail: string): HttpProblem =>
  new HttpProblem(422, detail, { errors: [{ path: `/body/${field}`, message: detail }], extra: { field } });

/** Replaces the settings after checking every reference they make (a setting that cannot work is a 422 now, not a failed provisioning later). */
export async function putSettings(trx: Trx, tenantId: string, userId: string | null, settings: StoredSettings): Promise<ScimSettings> {
  if (settings.companyCode !== undefined) {
    const c = await trx.selectFrom('companies').select('id').where('code', '=', settings.companyCode).executeTakeFirst();
    if (!c) throw settingProblem('companyCode', `No company has the code "${settings.companyCode}".`);
  }
  settingsCache.delete(tenantId);
  const stored = { ...settings };
  await sql`
    insert into scim_settings (tenant_id, settings, modified_by_id) values (${tenantId}, ${JSON.stringify(stored)}::jsonb, ${userId})
    on conflict (tenant_id) do update set settings = excluded.settings, modified_on_utc = now(), modified_by_id = excluded.modified_by_id`.execute(trx);
  const effective = await effectiveSettings(trx);
  const dep = await sql<{ id: string }>`
    select d.id from departments d join companies c on c.id = d.company_id
    where c.code = ${effective.companyCode} and d.external_id = ${effective.departmentExternalId}`.execute(trx);
  if (!dep.rows[0]) {
    throw settingProblem('departmentExternalId', `Company "${effective.companyCode}" has no department with external id "${effective.departmentExternalId}".`);
  }
  const names = [effective.userType, ...Object.values(effective.userTypes)];
  const found = await trx
    .selectFrom('user_types')
    .select('name')
    .where(
      sql`lower(name)`,
      'in',
      names.map((n) => n.toLowerCase()),
    )
    .execute();
  const known = new Set(found.map((f) => f.name.toLowerCase()));
  const missing = names.find((n) => !known.has(n.toLowerCase()));
  if (missing) throw settingProblem(missing === effective.userType ? 'userType' : 'userTypes', `No user type is named "${missing}".`);
  return effective;
}
