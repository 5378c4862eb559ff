// Who a request acts as: its tenant, the app or user, and the roles that apply.
import { ADMINISTRATOR } from './roles.ts';

export interface Principal {
  tenantId: string;
  /** apps.id of the authenticating app, when an app authenticated (headers or client-credentials token). */
  appId: string | null;
  /** The user the call acts as (X-AppUser, a password login, or a delegate). */
  userId: string | null;
  userName: string | null;
  roles: ReadonlySet<string>;
  via: 'app-headers' | 'token' | 'scim';
  /** scim_tokens.id when a SCIM bearer token authenticated (via 'scim'): such a principal reaches only /scim/v2. */
  scimTokenId?: string;
}

export const hasRole = (p: Principal, role: string): boolean => p.roles.has(role) || p.roles.has(ADMINISTRATOR);
export const isAdministrator = (p: Principal): boolean => p.roles.has(ADMINISTRATOR);
