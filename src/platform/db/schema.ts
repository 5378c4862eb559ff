// Kysely types of the platform's own tables. Domain tables (src/domain/schema.sql) are reached
// through the same Kysely instance; their rows are typed where a service reads them.
import type { ColumnType, Generated } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;

export interface TenantsTable {
  id: Generated<string>;
  name: string;
  slug: string;
  created_on_utc: Timestamp;
}

export interface AppsTable {
  tenant_id: string;
  id: Generated<string>;
  app_id: string;
  name: string;
  secret_hash: string;
  created_on_utc: Timestamp;
  rotated_on_utc: Date | null;
  revoked_on_utc: Date | null;
}

export interface RolesTable {
  tenant_id: string;
  id: Generated<string>;
  name: string;
  description: string | null;
  created_on_utc: Timestamp;
}

export interface AppRolesTable {
  tenant_id: string;
  app_id: string;
  role_id: string;
}

export interface UserRolesTable {
  tenant_id: string;
  user_id: string;
  role_id: string;
}

export interface EventsTable {
  tenant_id: string;
  id: Generated<string>;
  seq: Generated<string>;
  action_type: string;
  document_type: string;
  document_id: string | null;
  business_object_type_name: string | null;
  detail: unknown;
  user_id: string | null;
  occurred_on_utc: Timestamp;
}

export interface RefreshTokensTable {
  tenant_id: string;
  id: Generated<string>;
  token_hash: string;
  user_id: string | null;
  app_id: string | null;
  acting_as_delegate: boolean;
  expires_on_utc: Date;
  created_on_utc: Timestamp;
  used_on_utc: Date | null;
}

export interface IdempotencyKeysTable {
  tenant_id: string;
  key: string;
  principal: string;
  method: string;
  path: string;
  body_hash: string;
  status_code: number | null;
  response_body: string | null;
  response_headers: unknown;
  created_on_utc: Timestamp;
}

export interface Database {
  tenants: TenantsTable;
  apps: AppsTable;
  roles: RolesTable;
  app_roles: AppRolesTable;
  user_roles: UserRolesTable;
  events: EventsTable;
  refresh_tokens: RefreshTokensTable;
  idempotency_keys: IdempotencyKeysTable;
  [table: string]: any;
}
