// DE-UsersToBlock and DE-UsersToUnblock: the Active Directory blocker's two lists (integration/ad-blocker.ts,
// docs/integration-api.md), Atrium's own queries named by issue 31. "Access ended" is one condition with
// the agent's routes (ACCESS_ENDED), so a row here is exactly what the agent is answered.
import { ACCESS_ENDED } from '../../../integration/service.ts';
import { type NamedQueryDefinition, sql } from '../../definition.ts';

export const adBlocker: NamedQueryDefinition[] = [
  {
    name: 'DE-UsersToBlock',
    key: ['Oid'],
    source: (ctx) => sql`
      select u.id as "Oid", u.user_name as "UserName", u.ad_user_name as "AdUserName", coalesce(u.name, u.user_name) as "User",
             u.is_active as "IsActive", u.expiration_date as "ExpirationDate", u.inactivated_on_utc as "InactivatedOnUtc",
             c.id as "CompanyId", c.name as "Company", u.modified_on_utc as "ModifiedOn"
        from users u
        left join companies c on c.tenant_id = u.tenant_id and c.id = u.company_id
       where u.tenant_id = ${ctx.tenantId} and coalesce(u.ad_user_name, '') <> '' and u.ad_blocked_on_utc is null and ${ACCESS_ENDED}`,
  },
  {
    name: 'DE-UsersToUnblock',
    key: ['UserId'],
    source: (ctx) => sql`
      select u.id as "UserId", u.user_name as "UserName", u.ad_user_name as "AdUserName", u.is_active as "IsActive",
             u.expiration_date as "ExpirationDate", u.ad_blocked_on_utc as "AdBlockedOnUtc", u.ad_account_expiration_date as "AccountExpirationDate",
             q.id as "RequestId", q.created_on_utc as "RequestedOnUtc"
        from users u
        left join ad_unblock_requests q on q.tenant_id = u.tenant_id and q.user_id = u.id and q.answered_on_utc is null
       where u.tenant_id = ${ctx.tenantId} and u.ad_blocked_on_utc is not null and coalesce(u.ad_user_name, '') <> '' and not ${ACCESS_ENDED}`,
  },
];
