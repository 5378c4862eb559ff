// The Active Directory blocker's exchange (the platform's public SkillsWorkflow/ADBlocker agent): an
// on-premises agent asks for the users whose access ended and blocks their AD accounts, verifies the AD
// credentials of blocked users who try to sign in, and unblocks the accounts of users whose access is back.
// A password held for the agent is sealed by the SecretBox, handed out once (then cleared), and its request
// is deleted when answered or 15 minutes after it was made; it is never logged nor put in an event.
// The flow is in docs/integration-api.md ("Active Directory blocker"); decision 0045.
import { sql } from 'kysely';
import type { SecretBox } from '../platform/auth/hashing.ts';
import type { Principal } from '../platform/auth/principal.ts';
import type { Trx } from '../platform/db/database.ts';
import { notFound } from '../platform/errors.ts';
import { appendEvent } from '../platform/events/outbox.ts';

/** How long a blocked login request (and its sealed password) lives. */
export const BLOCKED_LOGIN_TTL_MINUTES = 15;
/** At most this many requests are answered per GET: the agent runs again for the rest. */
export const MAX_LISTED = 1000;

/** Access ended: inactive, or past its expiration date. The condition DE-UsersToBlock and userstoblock share. */
export const ACCESS_ENDED = sql`(not u.is_active or (u.expiration_date is not null and u.expiration_date < current_date))`;

/** The agent's optional query (countryName, countryId, companyName, companyId; empty means any): the user's company and its country. */
export interface UserScope {
  companyId?: string;
  companyName?: string;
  countryId?: string;
  countryName?: string;
}

const given = (v: string | undefined): string | null => (v && v.trim() !== '' ? v.trim() : null);

function inScope(scope: UserScope) {
  const companyId = given(scope.companyId)?.toLowerCase() ?? null;
  const companyName = given(scope.companyName)?.toLowerCase() ?? null;
  const countryId = given(scope.countryId)?.toLowerCase() ?? null;
  const countryName = given(scope.countryName)?.toLowerCase() ?? null;
  if (!companyId && !companyName && !countryId && !countryName) return sql`true`;
  return sql`exists (select 1 from companies c left join countries k on k.tenant_id = c.tenant_id and k.id = c.country_id
                      where c.tenant_id = u.tenant_id and c.id = u.company_id
                        and (${companyId}::uuid is null or c.id = ${companyId}::uuid)
                        and (${companyName}::text is null or lower(c.name) = ${companyName}::text)
                        and (${countryId}::uuid is null or c.country_id = ${countryId}::uuid)
                        and (${countryName}::text is null or lower(k.name) = ${countryName}::text))`;
}

export interface UserToBlock {
  Oid: string;
  UserName: string;
  AdUserName: string;
}

/** Users with an AD account whose access ended and whose account the agent has not blocked yet. */
export async function usersToBlock(trx: Trx, scope: UserScope = {}): Promise<UserToBlock[]> {
  const { rows } = await sql<UserToBlock>`
    select u.id as "Oid", u.user_name as "UserName", u.ad_user_name as "AdUserName"
      from users u
     where coalesce(u.ad_user_name, '') <> '' and u.ad_blocked_on_utc is null and ${ACCESS_ENDED} and ${inScope(scope)}
     order by u.user_name, u.id
     limit ${MAX_LISTED}`.execute(trx);
  return rows;
}

/** The agent blocked a user's AD account; AccountExpirationDate is the account's own expiry before, to restore. */
export async function recordBlock(trx: Trx, actor: Principal, userId: string, accountExpirationDate: string | null): Promise<void> {
  const { rows } = await sql<{ id: string }>`
    update users set ad_blocked_on_utc = now(), ad_account_expiration_date = ${accountExpirationDate}::timestamptz,
                     modified_on_utc = now(), modified_by_id = ${actor.userId}
     where id = ${userId} returning id`.execute(trx);
  if (!rows.length) throw notFound(`There is no user with id ${userId}.`);
  await appendEvent(trx, {
    tenantId: actor.tenantId,
    actionType: 'Updated',
    documentType: 'User',
    documentId: userId,
    userId: actor.userId,
    detail: { AdBlocked: true, AccountExpirationDate: accountExpirationDate, PropertyTypes: { AdBlocked: 'Boolean', AccountExpirationDate: 'DateTime' } },
  });
}

/** Drops the tenant's blocked login requests older than the time-to-live (the maintenance sweep does it for all). */
async function dropExpired(trx: Trx): Promise<void> {
  await sql`delete from ad_blocked_login_requests where created_on_utc < now() - make_interval(mins => ${BLOCKED_LOGIN_TTL_MINUTES})`.execute(trx);
}

/** The maintenance sweep: every tenant's expired blocked login requests (run as the owner). */
export async function sweepBlockedLogins(trx: Trx): Promise<void> {
  await dropExpired(trx);
}

export interface BlockedLoginRequest {
  Id: string;
  AdUserName: string;
  Password: string;
}

/**
 * Login attempts of AD-blocked users waiting for the agent: each password is answered once (the sealed
 * value is cleared in the same transaction), so a second GET lists the request without it no more.
 */
export async function pendingBlockedLogins(trx: Trx, box: SecretBox): Promise<BlockedLoginRequest[]> {
  await dropExpired(trx);
  const { rows } = await sql<{ id: string; ad_user_name: string; password_sealed: string }>`
    with p as (select id, password_sealed from ad_blocked_login_requests where password_sealed is not null and answered_on_utc is null
                order by created_on_utc, id limit ${MAX_LISTED} for update)
    update ad_blocked_login_requests r set password_sealed = null, handed_on_utc = now()
      from p where r.id = p.id
     returning r.id, r.ad_user_name, p.password_sealed`.execute(trx);
  return rows.map((r) => ({ Id: r.id, AdUserName: r.ad_user_name, Password: box.decrypt(r.password_sealed) }));
}

export interface RequestAnswer {
  Id: string;
  RequestResult: boolean;
  RequestResultMessage?: string | null;
}

/** The agent's verdict on a blocked login: raised as LoginSucceeded / LoginFailed (LoginType ActiveDirectory); the request is deleted. */
export async function answerBlockedLogin(trx: Trx, actor: Principal, answer: RequestAnswer): Promise<void> {
  const { rows } = await sql<{ user_id: string; ad_user_name: string }>`
    delete from ad_blocked_login_requests where id = ${answer.Id.toLowerCase()} returning user_id, ad_user_name`.execute(trx);
  if (!rows.length) throw notFound(`There is no blocked login request ${answer.Id} (answered, or older than ${BLOCKED_LOGIN_TTL_MINUTES} minutes).`);
  const [r] = rows;
  await appendEvent(trx, {
    tenantId: actor.tenantId,
    actionType: answer.RequestResult ? 'LoginSucceeded' : 'LoginFailed',
    documentType: 'User',
    documentId: r.user_id,
    userId: r.user_id,
    detail: {
      LoginType: 'ActiveDirectory',
      Username: r.ad_user_name,
      BlockedLoginRequestId: answer.Id.toLowerCase(),
      ...(answer.RequestResult ? {} : { FailureReason: answer.RequestResultMessage || 'AD User credentials are invalid.' }),
    },
  });
}

export interface UnblockUserRequest {
  Id: string;
  AdUserName: string;
  AccountExpirationDate: string | null;
}

/**
 * Requests to unblock the AD accounts of users whose access is back (active, not expired) while the agent
 * keeps them blocked: made here for such users without an open request, then every open one is answered.
 */
export async function pendingUnblocks(trx: Trx, scope: UserScope = {}): Promise<UnblockUserRequest[]> {
  await sql`
    insert into ad_unblock_requests (tenant_id, user_id)
    select u.tenant_id, u.id from users u
     where u.ad_blocked_on_utc is not null and coalesce(u.ad_user_name, '') <> '' and not ${ACCESS_ENDED}
       and not exists (select 1 from ad_unblock_requests q where q.tenant_id = u.tenant_id and q.user_id = u.id and q.answered_on_utc is null)
    on conflict do nothing`.execute(trx);
  const { rows } = await sql<{ id: string; ad_user_name: string; account_expiration_date: Date | null }>`
    select q.id, u.ad_user_name, u.ad_account_expiration_date as account_expiration_date
      from ad_unblock_requests q join users u on u.tenant_id = q.tenant_id and u.id = q.user_id
     where q.answered_on_utc is null and ${inScope(scope)}
     order by q.created_on_utc, q.id
     limit ${MAX_LISTED}`.execute(trx);
  return rows.map((r) => ({ Id: r.id, AdUserName: r.ad_user_name, AccountExpirationDate: r.account_expiration_date?.toISOString() ?? null }));
}

/** The agent's answer to an unblock request: true clears the user's AD block; either way the request is closed. */
export async function answerUnblock(trx: Trx, actor: Principal, answer: RequestAnswer): Promise<void> {
  const { rows } = await sql<{ user_id: string }>`
    update ad_unblock_requests set answered_on_utc = now(), request_result = ${answer.RequestResult},
                                   request_result_message = ${answer.RequestResultMessage ?? null}
     where id = ${answer.Id.toLowerCase()} and answered_on_utc is null returning user_id`.execute(trx);
  if (!rows.length) throw notFound(`There is no open unblock request ${answer.Id}.`);
  if (!answer.RequestResult) return;
  const userId = rows[0].user_id;
  await sql`update users set ad_blocked_on_utc = null, ad_account_expiration_date = null, modified_on_utc = now(), modified_by_id = ${actor.userId}
             where id = ${userId}`.execute(trx);
  await appendEvent(trx, {
    tenantId: actor.tenantId,
    actionType: 'Updated',
    documentType: 'User',
    documentId: userId,
    userId: actor.userId,
    detail: { AdBlocked: false, PropertyTypes: { AdBlocked: 'Boolean' } },
  });
}

/** The agent's last run (POST taskruntime, an empty body). */
export async function recordTaskRuntime(trx: Trx, actor: Principal): Promise<{ LastRunOnUtc: string }> {
  const { rows } = await sql<{ last_run_on_utc: Date }>`
    insert into ad_blocker_runs (tenant_id, last_run_on_utc, app_id) values (${actor.tenantId}, now(), ${actor.appId})
    on conflict (tenant_id) do update set last_run_on_utc = excluded.last_run_on_utc, app_id = excluded.app_id
    returning last_run_on_utc`.execute(trx);
  return { LastRunOnUtc: rows[0].last_run_on_utc.toISOString() };
}
