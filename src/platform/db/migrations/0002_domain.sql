-- Atrium agency data model (PostgreSQL 18): every table the Data Extraction views, the Integration API
-- and the Client API read or write. Run once, inside one transaction, by the domain migration.
--
-- Conventions (see docs/data-model.md):
--   * tenant_id is the first column of every table and leads every primary key, unique key and index
--     (Citus-ready: tables can be distributed on tenant_id); foreign keys are composite on (tenant_id, ...).
--   * Names (of clients, companies, stages...) live only in their own table; views join for them.
--   * Money numeric(19,4); percentages numeric(9,4); exchange rates numeric(19,8).
--   * Time actually spent or booked (timesheets, leaves, workloads, attendances) is integer minutes, so sums
--     are exact; planned/contracted quantities and user settings are numeric(12,4) hours, because the APIs
--     carry them as decimal hours.
--   * created_by_id / modified_by_id carry no foreign key: audit columns must survive user deletion and
--     may name system actors.
--   * Polymorphic links to "any document" (assignments, comments, history...) are (document_type_id,
--     document_id); document_type_id references the tenant's document type catalogue.

-- ---------------------------------------------------------------------------------------------------
-- Catalogues: document types, business object types
-- ---------------------------------------------------------------------------------------------------

create table document_types (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  class_name text not null,
  full_name text not null,
  primary key (tenant_id, id),
  unique (tenant_id, full_name),
  unique (tenant_id, class_name)
);
select atrium_enable_rls('document_types');

create table business_object_types (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  document_type_id uuid not null,
  name text not null,
  is_default boolean not null default false,
  configuration jsonb,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, document_type_id, name),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id)
);
select atrium_enable_rls('business_object_types');

-- ---------------------------------------------------------------------------------------------------
-- Files and folders (created early: companies, users and clients point at their image file)
-- ---------------------------------------------------------------------------------------------------

create table folders (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  parent_id uuid,
  name text not null,
  document_type_id uuid,
  document_id uuid,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, parent_id) references folders (tenant_id, id),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id)
);
select atrium_enable_rls('folders');
create index folders_parent_idx on folders (tenant_id, parent_id);
create index folders_document_idx on folders (tenant_id, document_id);

create table files (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  folder_id uuid not null,
  name text not null,
  content_type text,
  size_bytes bigint,
  -- Where the bytes are kept (object store key); null for a link.
  storage_key text,
  -- A file "link" (POST /folders/{id}/links) points at an external URL instead of stored bytes.
  link_url text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, folder_id) references folders (tenant_id, id) on delete cascade
);
select atrium_enable_rls('files');
create index files_folder_idx on files (tenant_id, folder_id);

-- ---------------------------------------------------------------------------------------------------
-- Geography and money
-- ---------------------------------------------------------------------------------------------------

create table countries (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  iso_code text,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, external_id)
);
select atrium_enable_rls('countries');

create table cities (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  country_id uuid not null,
  name text not null,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, external_id),
  foreign key (tenant_id, country_id) references countries (tenant_id, id)
);
select atrium_enable_rls('cities');
create index cities_country_idx on cities (tenant_id, country_id);

create table currencies (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  iso_code text not null,
  symbol text,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, iso_code),
  unique (tenant_id, external_id)
);
select atrium_enable_rls('currencies');

-- ---------------------------------------------------------------------------------------------------
-- Organisation: companies, divisions, departments, taxes, payment conditions
-- ---------------------------------------------------------------------------------------------------

create table companies (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  code text not null,
  name text not null,
  currency_id uuid,
  country_id uuid,
  image_file_id uuid,
  timesheet_start date,
  -- Enumerations kept as the integers the platform exposes (GanttChartResourceType, hours type, margin type).
  resource_type integer not null default 0,
  hours_type integer not null default 0,
  margin_type integer not null default 0,
  required_hours numeric(12,4) not null default 8,
  -- Default billing article (service) of the company and the one used for projects; FKs added after services.
  article_id uuid,
  project_article_id uuid,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, code),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id),
  foreign key (tenant_id, country_id) references countries (tenant_id, id),
  foreign key (tenant_id, image_file_id) references files (tenant_id, id) on delete set null (image_file_id)
);
select atrium_enable_rls('companies');

create table divisions (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  name text not null,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, company_id, external_id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('divisions');

create table departments (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  division_id uuid,
  name text not null,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, company_id, external_id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, division_id) references divisions (tenant_id, id)
);
select atrium_enable_rls('departments');
create index departments_division_idx on departments (tenant_id, division_id);

create table vats (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  name text not null,
  percentage numeric(9,4) not null,
  is_active boolean not null default true,
  is_default boolean not null default false,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, company_id, external_id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('vats');

create table payment_conditions (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  name text not null,
  days integer not null default 0,
  is_default boolean not null default false,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, company_id, external_id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('payment_conditions');

-- ---------------------------------------------------------------------------------------------------
-- Workflows: stage types, workflows, stages, teams, transitions
-- ---------------------------------------------------------------------------------------------------

-- Stage types classify stages across workflows (Draft, In Progress, Completed, Canceled...); views filter on them.
create table workflow_stage_types (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  color text,
  sort_order integer not null default 0,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, name)
);
select atrium_enable_rls('workflow_stage_types');

create table workflows (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  document_type_id uuid not null,
  name text not null,
  is_default boolean not null default false,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id)
);
select atrium_enable_rls('workflows');
create index workflows_document_type_idx on workflows (tenant_id, document_type_id);

create table workflow_stages (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  workflow_id uuid not null,
  stage_type_id uuid not null,
  name text not null,
  color text,
  sort_order integer not null default 0,
  is_initial boolean not null default false,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  -- Target of the (tenant_id, workflow_id, stage_id) foreign keys: a document's stage must be in its workflow.
  unique (tenant_id, workflow_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id) on delete cascade,
  foreign key (tenant_id, stage_type_id) references workflow_stage_types (tenant_id, id)
);
select atrium_enable_rls('workflow_stages');

-- Teams are the roles a user can hold in a document's team (Account Manager, Creative, Approver...).
create table teams (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, name)
);
select atrium_enable_rls('teams');

-- Which teams may edit a document while it sits in a stage (DE-Transitions From/ToAllowWriteTeams).
create table workflow_stage_write_teams (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  stage_id uuid not null,
  team_id uuid not null,
  primary key (tenant_id, id),
  unique (tenant_id, stage_id, team_id),
  foreign key (tenant_id, stage_id) references workflow_stages (tenant_id, id) on delete cascade,
  foreign key (tenant_id, team_id) references teams (tenant_id, id) on delete cascade
);
select atrium_enable_rls('workflow_stage_write_teams');

create table workflow_transitions (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  workflow_id uuid not null,
  from_stage_id uuid not null,
  to_stage_id uuid not null,
  name text not null,
  external_id text,
  sort_order integer not null default 0,
  request_confirmation boolean not null default false,
  must_send_notification boolean not null default false,
  comment_required boolean not null default false,
  hours_required boolean not null default false,
  file_upload_required boolean not null default false,
  file_upload_folder text,
  query_validation text,
  -- Free-text lists without an entity of their own: motives offered to the user, actions run on
  -- transition, and the names of the roles allowed to run it (roles belong to the auth module).
  motives jsonb not null default '[]',
  actions jsonb not null default '[]',
  roles jsonb not null default '[]',
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id) on delete cascade,
  foreign key (tenant_id, workflow_id, from_stage_id) references workflow_stages (tenant_id, workflow_id, id),
  foreign key (tenant_id, workflow_id, to_stage_id) references workflow_stages (tenant_id, workflow_id, id)
);
select atrium_enable_rls('workflow_transitions');
create index workflow_transitions_workflow_idx on workflow_transitions (tenant_id, workflow_id);

-- ---------------------------------------------------------------------------------------------------
-- People: user types, typology groups, typologies, employees, users, user costs
-- ---------------------------------------------------------------------------------------------------

create table user_types (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, name)
);
select atrium_enable_rls('user_types');

create table typology_groups (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  external_id text,
  -- Owning company; nullable because the user feed creates groups by name alone.
  company_id uuid,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, external_id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('typology_groups');
create index typology_groups_name_idx on typology_groups (tenant_id, name);

create table typology_group_companies (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  typology_group_id uuid not null,
  company_id uuid not null,
  primary key (tenant_id, id),
  unique (tenant_id, typology_group_id, company_id),
  foreign key (tenant_id, typology_group_id) references typology_groups (tenant_id, id) on delete cascade,
  foreign key (tenant_id, company_id) references companies (tenant_id, id) on delete cascade
);
select atrium_enable_rls('typology_group_companies');

create table typology_group_departments (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  typology_group_id uuid not null,
  department_id uuid not null,
  primary key (tenant_id, id),
  unique (tenant_id, typology_group_id, department_id),
  foreign key (tenant_id, typology_group_id) references typology_groups (tenant_id, id) on delete cascade,
  foreign key (tenant_id, department_id) references departments (tenant_id, id) on delete cascade
);
select atrium_enable_rls('typology_group_departments');

create table typologies (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  department_id uuid not null,
  typology_group_id uuid,
  name text not null,
  external_id text,
  plannable boolean not null default true,
  is_active boolean not null default true,
  -- Standard hourly sell value of the typology.
  hourly_value numeric(19,4),
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, department_id, external_id),
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, typology_group_id) references typology_groups (tenant_id, id)
);
select atrium_enable_rls('typologies');
create index typologies_group_idx on typologies (tenant_id, typology_group_id);

create table employees (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  name text not null,
  external_id text,
  is_active boolean not null default true,
  max_value numeric(19,4),
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, external_id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('employees');

-- Users: login accounts and HR settings. Country is not stored: it is the city's country, else the company's.
create table users (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_name text not null,
  name text,
  email text,
  password_hash text,
  is_active boolean not null default true,
  inactivated_on_utc timestamptz,
  external_id text,
  external_number text,
  company_id uuid,
  department_id uuid,
  typology_id uuid,
  user_type_id uuid,
  employee_id uuid,
  responsible_id uuid,
  city_id uuid,
  image_file_id uuid,
  timesheet_required boolean default true,
  hire_date date,
  start_date date,
  expiration_date date,
  sso_user_name text,
  sso_only boolean not null default false,
  ad_user_name text,
  phone text,
  tax_payer_number text,
  change_password_on_first_logon boolean not null default false,
  required_weekly_hours numeric(12,4),
  required_hours numeric(12,4),
  leave_day_hours numeric(12,4),
  weekly_overtime_threshold_hours numeric(12,4),
  tolerance integer,
  entry_time_total_minutes integer,
  exit_time_total_minutes integer,
  entry_time_tolerance_total_minutes integer,
  exit_time_tolerance_total_minutes integer,
  offset_total_minutes integer,
  paid_undertime boolean not null default false,
  paid_overtime boolean not null default false,
  -- Labels attached to the user (DE-Requests CreatedByTags), a JSON array.
  tags jsonb,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, external_id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, typology_id) references typologies (tenant_id, id),
  foreign key (tenant_id, user_type_id) references user_types (tenant_id, id),
  foreign key (tenant_id, employee_id) references employees (tenant_id, id) on delete set null (employee_id),
  foreign key (tenant_id, responsible_id) references users (tenant_id, id) on delete set null (responsible_id),
  foreign key (tenant_id, city_id) references cities (tenant_id, id),
  foreign key (tenant_id, image_file_id) references files (tenant_id, id) on delete set null (image_file_id)
);
select atrium_enable_rls('users');
create unique index users_user_name_key on users (tenant_id, lower(user_name));
create index users_email_idx on users (tenant_id, lower(email));
create index users_sso_user_name_idx on users (tenant_id, lower(sso_user_name));
create index users_company_idx on users (tenant_id, company_id);
create index users_department_idx on users (tenant_id, department_id);
create index users_employee_idx on users (tenant_id, employee_id);
create index users_responsible_idx on users (tenant_id, responsible_id);
create index users_modified_idx on users (tenant_id, modified_on_utc);

-- Typology a user held over time (Client API user-typology-histories).
create table user_typology_histories (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  typology_id uuid not null,
  start_date date not null,
  end_date date,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade,
  foreign key (tenant_id, typology_id) references typologies (tenant_id, id),
  check (end_date is null or end_date >= start_date)
);
select atrium_enable_rls('user_typology_histories');
create index user_typology_histories_user_idx on user_typology_histories (tenant_id, user_id, start_date);

-- Cost of a user over a period (end_date null = open). A timesheet's hourly cost is the row covering its date.
create table user_costs (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  company_id uuid not null,
  currency_id uuid not null,
  monthly_value numeric(19,4),
  hourly_value numeric(19,4) not null,
  start_date date not null,
  end_date date,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade,
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id),
  check (end_date is null or end_date >= start_date)
);
select atrium_enable_rls('user_costs');
create index user_costs_user_idx on user_costs (tenant_id, user_id, start_date);

-- ---------------------------------------------------------------------------------------------------
-- User-defined (custom) fields and their values per document (the *AdditionalInformation queries pivot them)
-- ---------------------------------------------------------------------------------------------------

create table user_fields (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  document_type_id uuid not null,
  -- Database-style name of the field: the column name in pivoted output and in UserFieldValueUpdated events.
  column_name text not null,
  label text not null,
  data_type text not null check (data_type in ('Text', 'Number', 'Date', 'Boolean', 'Guid')),
  sort_order integer not null default 0,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, document_type_id, column_name),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id)
);
select atrium_enable_rls('user_fields');

create table user_field_values (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_field_id uuid not null,
  document_id uuid not null,
  -- A JSON scalar of the field's data_type.
  value jsonb,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, user_field_id, document_id),
  foreign key (tenant_id, user_field_id) references user_fields (tenant_id, id) on delete cascade
);
select atrium_enable_rls('user_field_values');
create index user_field_values_document_idx on user_field_values (tenant_id, document_id);

-- ---------------------------------------------------------------------------------------------------
-- Clients: groups, commercial clients, billing clients and their per-company links, brands, products
-- ---------------------------------------------------------------------------------------------------

create table client_groups (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, external_id)
);
select atrium_enable_rls('client_groups');

-- The client the agency works for (DE-Clients "Client"); billing is done through per-company billing clients.
create table commercial_clients (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  external_id text,
  code text,
  number text,
  email text,
  phone text,
  head_office text,
  street text,
  street2 text,
  zip_postal text,
  state_province text,
  -- Free-text city/country as sent by the Integration API, next to the optional catalogue links.
  city text,
  country text,
  city_id uuid,
  country_id uuid,
  tax_payer_number text,
  company_id uuid,
  client_group_id uuid,
  commercial_payment_condition_id uuid,
  manager_id uuid,
  owner_id uuid,
  -- Opaque id sent by the Integration API (timesheetLevelId); no catalogue is published for it.
  timesheet_level_id uuid,
  classification text,
  allows_timesheet boolean not null default true,
  blocked boolean not null default false,
  margin numeric(9,4),
  supplier_margin numeric(9,4),
  full_time_employee_time numeric(12,4),
  workflow_id uuid,
  stage_id uuid,
  image_file_id uuid,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, external_id),
  foreign key (tenant_id, city_id) references cities (tenant_id, id),
  foreign key (tenant_id, country_id) references countries (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, client_group_id) references client_groups (tenant_id, id),
  foreign key (tenant_id, commercial_payment_condition_id) references payment_conditions (tenant_id, id),
  foreign key (tenant_id, manager_id) references users (tenant_id, id),
  foreign key (tenant_id, owner_id) references users (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id),
  foreign key (tenant_id, workflow_id, stage_id) references workflow_stages (tenant_id, workflow_id, id),
  foreign key (tenant_id, image_file_id) references files (tenant_id, id) on delete set null (image_file_id)
);
select atrium_enable_rls('commercial_clients');
create index commercial_clients_group_idx on commercial_clients (tenant_id, client_group_id);
create index commercial_clients_modified_idx on commercial_clients (tenant_id, modified_on_utc);

create table billing_clients (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  name text not null,
  external_id text,
  code text,
  number text,
  street text,
  street2 text,
  zip_postal text,
  state_province text,
  city text,
  country text,
  city_id uuid,
  country_id uuid,
  tax_payer_number text,
  payment_condition_id uuid,
  currency_id uuid,
  is_active boolean not null default true,
  other_debtor boolean not null default false,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, company_id, external_id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, city_id) references cities (tenant_id, id),
  foreign key (tenant_id, country_id) references countries (tenant_id, id),
  foreign key (tenant_id, payment_condition_id) references payment_conditions (tenant_id, id),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id)
);
select atrium_enable_rls('billing_clients');

-- One billing client per (commercial client, company): POST /api/commercial-client-companies.
create table commercial_client_companies (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  commercial_client_id uuid not null,
  billing_client_id uuid not null,
  external_id text,
  vat_external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, commercial_client_id, company_id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id) on delete cascade,
  foreign key (tenant_id, billing_client_id) references billing_clients (tenant_id, id) on delete cascade
);
select atrium_enable_rls('commercial_client_companies');
create index commercial_client_companies_billing_idx on commercial_client_companies (tenant_id, billing_client_id);

-- Companies allowed to work with a client (DE-ClientsCompanies); independent of billing links.
create table client_companies (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  commercial_client_id uuid not null,
  company_id uuid not null,
  primary key (tenant_id, id),
  unique (tenant_id, commercial_client_id, company_id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id) on delete cascade,
  foreign key (tenant_id, company_id) references companies (tenant_id, id) on delete cascade
);
select atrium_enable_rls('client_companies');

-- Users who belong to a client (client-portal users; DE-Users IsClient/ClientIds/Clients).
create table commercial_client_users (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  commercial_client_id uuid not null,
  user_id uuid not null,
  primary key (tenant_id, id),
  unique (tenant_id, user_id, commercial_client_id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id) on delete cascade,
  foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
);
select atrium_enable_rls('commercial_client_users');

create table brands (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  commercial_client_id uuid not null,
  name text not null,
  external_id text,
  is_active boolean not null default true,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id) on delete cascade
);
select atrium_enable_rls('brands');
create index brands_client_idx on brands (tenant_id, commercial_client_id);

-- A product belongs to a client, optionally under one of its brands (hence the client is stored).
create table products (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  commercial_client_id uuid not null,
  brand_id uuid,
  name text not null,
  code text,
  external_id text,
  is_active boolean not null default true,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id) on delete cascade,
  foreign key (tenant_id, brand_id) references brands (tenant_id, id)
);
select atrium_enable_rls('products');
create index products_client_idx on products (tenant_id, commercial_client_id);
create index products_brand_idx on products (tenant_id, brand_id);

-- ---------------------------------------------------------------------------------------------------
-- Services (articles), service groups, work types, suppliers
-- ---------------------------------------------------------------------------------------------------

create table service_groups (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  name text not null,
  external_id text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('service_groups');

create table services (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  service_group_id uuid,
  vat_id uuid,
  name text not null,
  external_id text,
  is_active boolean not null default true,
  internal_service boolean not null default false,
  department_required boolean not null default false,
  unit_hour boolean not null default false,
  unit text,
  default_margin numeric(9,4),
  vat_deductible_percentage numeric(9,4),
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, service_group_id) references service_groups (tenant_id, id),
  foreign key (tenant_id, vat_id) references vats (tenant_id, id)
);
select atrium_enable_rls('services');
create index services_company_idx on services (tenant_id, company_id);

alter table companies
  add foreign key (tenant_id, article_id) references services (tenant_id, id) on delete set null (article_id),
  add foreign key (tenant_id, project_article_id) references services (tenant_id, id) on delete set null (project_article_id);

create table work_types (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  name text not null,
  external_id text,
  is_active boolean not null default true,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('work_types');

create table suppliers (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  department_id uuid,
  -- Set when the supplier is another company of the group (intercompany purchases).
  related_company_id uuid,
  related_department_id uuid,
  name text not null,
  external_id text,
  category text,
  currency_id uuid,
  vat_id uuid,
  payment_condition_id uuid,
  email text,
  remarks text,
  discount_percentage numeric(9,4),
  volume_discount_percentage numeric(9,4),
  other_creditor boolean not null default false,
  street text,
  street2 text,
  zip_postal text,
  state_province text,
  city text,
  city_id uuid,
  country_id uuid,
  tax_payer_number text,
  is_active boolean not null default true,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, company_id, external_id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, related_company_id) references companies (tenant_id, id),
  foreign key (tenant_id, related_department_id) references departments (tenant_id, id),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id),
  foreign key (tenant_id, vat_id) references vats (tenant_id, id),
  foreign key (tenant_id, payment_condition_id) references payment_conditions (tenant_id, id),
  foreign key (tenant_id, city_id) references cities (tenant_id, id),
  foreign key (tenant_id, country_id) references countries (tenant_id, id)
);
select atrium_enable_rls('suppliers');

-- ---------------------------------------------------------------------------------------------------
-- Project and job catalogues
-- ---------------------------------------------------------------------------------------------------

create table project_types (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  document_type_id uuid not null,
  name text not null,
  template_file_name text,
  allows_timesheet boolean not null default true,
  is_deliverable boolean not null default false,
  is_active boolean not null default true,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id)
);
select atrium_enable_rls('project_types');

create table project_classifications (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  name text not null,
  code text,
  is_active boolean not null default true,
  billable boolean not null default true,
  is_default boolean not null default false,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('project_classifications');

create table project_natures (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  name text not null,
  code text,
  is_active boolean not null default true,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('project_natures');

create table briefing_templates (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  content_html text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id)
);
select atrium_enable_rls('briefing_templates');

-- "Types" (DE-Types): the kinds of jobs and, through document_type_id, of requests, estimates and contracts.
-- Division is not stored: it is the department's.
create table job_types (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  department_id uuid,
  document_type_id uuid not null,
  business_object_type_id uuid,
  workflow_id uuid,
  briefing_template_id uuid,
  service_id uuid,
  work_type_id uuid,
  name text not null,
  code text,
  duration_days integer,
  is_active boolean not null default true,
  is_retainer boolean not null default false,
  plannable boolean not null default true,
  is_deliverable boolean not null default true,
  allow_all_job_types boolean not null default false,
  accessible_to_all_departments boolean not null default true,
  allows_timesheet boolean not null default true,
  -- UI style (colour/icon) as JSON, exposed verbatim as TypeStyle.
  style jsonb,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id),
  foreign key (tenant_id, business_object_type_id) references business_object_types (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id),
  foreign key (tenant_id, briefing_template_id) references briefing_templates (tenant_id, id),
  foreign key (tenant_id, service_id) references services (tenant_id, id),
  foreign key (tenant_id, work_type_id) references work_types (tenant_id, id)
);
select atrium_enable_rls('job_types');

-- Types a transition is restricted to (DE-Transitions TypeIds/Types); none = all types.
create table workflow_transition_types (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  transition_id uuid not null,
  job_type_id uuid not null,
  primary key (tenant_id, id),
  unique (tenant_id, transition_id, job_type_id),
  foreign key (tenant_id, transition_id) references workflow_transitions (tenant_id, id) on delete cascade,
  foreign key (tenant_id, job_type_id) references job_types (tenant_id, id) on delete cascade
);
select atrium_enable_rls('workflow_transition_types');

-- ---------------------------------------------------------------------------------------------------
-- Rate cards: card (company, currency) -> columns (price lists with validity) x items (who) -> values
-- ---------------------------------------------------------------------------------------------------

create table rate_cards (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  currency_id uuid not null,
  name text not null,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id)
);
select atrium_enable_rls('rate_cards');

create table rate_card_columns (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  rate_card_id uuid not null,
  name text not null,
  is_active boolean not null default true,
  start_date date,
  end_date date,
  sort_order integer not null default 0,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, rate_card_id) references rate_cards (tenant_id, id) on delete cascade
);
select atrium_enable_rls('rate_card_columns');
create index rate_card_columns_card_idx on rate_card_columns (tenant_id, rate_card_id);

-- A rate card row: whom it prices (a department, a typology group and/or a specific user).
create table rate_card_items (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  rate_card_id uuid not null,
  department_id uuid,
  typology_group_id uuid,
  user_id uuid,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, rate_card_id) references rate_cards (tenant_id, id) on delete cascade,
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, typology_group_id) references typology_groups (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id)
);
select atrium_enable_rls('rate_card_items');
create index rate_card_items_card_idx on rate_card_items (tenant_id, rate_card_id);

create table rate_card_item_values (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  rate_card_item_id uuid not null,
  rate_card_column_id uuid not null,
  -- Hourly rate of that row in that column.
  value numeric(19,4) not null,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, rate_card_item_id, rate_card_column_id),
  foreign key (tenant_id, rate_card_item_id) references rate_card_items (tenant_id, id) on delete cascade,
  foreign key (tenant_id, rate_card_column_id) references rate_card_columns (tenant_id, id) on delete cascade
);
select atrium_enable_rls('rate_card_item_values');

-- ---------------------------------------------------------------------------------------------------
-- Commercial documents: contracts, projects, jobs, requests
-- Every document: workflow_id + stage_id (stage must belong to the workflow), audit columns.
-- ---------------------------------------------------------------------------------------------------

create table contracts (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  commercial_client_id uuid not null,
  brand_id uuid,
  product_id uuid,
  type_id uuid,
  currency_id uuid,
  workflow_id uuid,
  stage_id uuid,
  number text not null,
  name text not null,
  start_date date,
  end_date date,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, number),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id),
  foreign key (tenant_id, brand_id) references brands (tenant_id, id),
  foreign key (tenant_id, product_id) references products (tenant_id, id),
  foreign key (tenant_id, type_id) references job_types (tenant_id, id),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id),
  foreign key (tenant_id, workflow_id, stage_id) references workflow_stages (tenant_id, workflow_id, id)
);
select atrium_enable_rls('contracts');
create index contracts_client_idx on contracts (tenant_id, commercial_client_id);
create index contracts_modified_idx on contracts (tenant_id, modified_on_utc);

-- Projects. ProjectType "Isolated"/"Contract" is derived from contract_id; estimated values from estimates.
create table projects (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  commercial_client_id uuid not null,
  contract_id uuid,
  brand_id uuid,
  product_id uuid,
  project_type_id uuid,
  classification_id uuid,
  nature_id uuid,
  currency_id uuid,
  rate_card_id uuid,
  rate_card_column_id uuid,
  workflow_id uuid,
  stage_id uuid,
  number text not null,
  name text not null,
  start_date date,
  end_date date,
  investment boolean not null default false,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, number),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id),
  foreign key (tenant_id, contract_id) references contracts (tenant_id, id),
  foreign key (tenant_id, brand_id) references brands (tenant_id, id),
  foreign key (tenant_id, product_id) references products (tenant_id, id),
  foreign key (tenant_id, project_type_id) references project_types (tenant_id, id),
  foreign key (tenant_id, classification_id) references project_classifications (tenant_id, id),
  foreign key (tenant_id, nature_id) references project_natures (tenant_id, id),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id),
  foreign key (tenant_id, rate_card_id) references rate_cards (tenant_id, id),
  foreign key (tenant_id, rate_card_column_id) references rate_card_columns (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id),
  foreign key (tenant_id, workflow_id, stage_id) references workflow_stages (tenant_id, workflow_id, id)
);
select atrium_enable_rls('projects');
create index projects_client_idx on projects (tenant_id, commercial_client_id);
create index projects_contract_idx on projects (tenant_id, contract_id);
create index projects_modified_idx on projects (tenant_id, modified_on_utc);

-- Jobs (document type Deliverable). Client, brand and product are the project's; company and division the department's.
create table jobs (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  project_id uuid not null,
  department_id uuid not null,
  job_type_id uuid,
  workflow_id uuid,
  stage_id uuid,
  number text not null,
  name text not null,
  business_value integer,
  -- Entry date and agreed (due) date; "delayed" is computed from end_date and the stage type.
  start_date date,
  end_date date,
  version integer not null default 1,
  -- Motive given on the last stage transition.
  motive text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, number),
  foreign key (tenant_id, project_id) references projects (tenant_id, id),
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, job_type_id) references job_types (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id),
  foreign key (tenant_id, workflow_id, stage_id) references workflow_stages (tenant_id, workflow_id, id)
);
select atrium_enable_rls('jobs');
create index jobs_project_idx on jobs (tenant_id, project_id);
create index jobs_department_idx on jobs (tenant_id, department_id);
create index jobs_stage_idx on jobs (tenant_id, stage_id);
create index jobs_modified_idx on jobs (tenant_id, modified_on_utc);

-- Requests (briefs coming in). Company and division are the department's.
create table requests (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  department_id uuid not null,
  commercial_client_id uuid,
  brand_id uuid,
  product_id uuid,
  contract_id uuid,
  type_id uuid,
  workflow_id uuid,
  stage_id uuid,
  number text not null,
  name text not null,
  begin_date_utc timestamptz,
  end_date_utc timestamptz,
  -- Labels as a JSON array of {"label": ...} objects (exposed verbatim as TagsJson).
  tags jsonb,
  is_activated boolean not null default false,
  priority integer not null default 0,
  version integer not null default 1,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, number),
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id),
  foreign key (tenant_id, brand_id) references brands (tenant_id, id),
  foreign key (tenant_id, product_id) references products (tenant_id, id),
  foreign key (tenant_id, contract_id) references contracts (tenant_id, id),
  foreign key (tenant_id, type_id) references job_types (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id),
  foreign key (tenant_id, workflow_id, stage_id) references workflow_stages (tenant_id, workflow_id, id)
);
select atrium_enable_rls('requests');
create index requests_client_idx on requests (tenant_id, commercial_client_id);
create index requests_modified_idx on requests (tenant_id, modified_on_utc);

-- ---------------------------------------------------------------------------------------------------
-- Estimates: estimate -> items -> details (quote lines) -> monthly split; billing conditions.
-- Only inputs are stored; line values are quantity * unit price - discount, VAT from the VAT rate,
-- estimate/project/contract totals are sums.
-- ---------------------------------------------------------------------------------------------------

create table estimates (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  department_id uuid not null,
  commercial_client_id uuid not null,
  brand_id uuid,
  product_id uuid,
  contract_id uuid,
  project_id uuid,
  type_id uuid,
  currency_id uuid not null,
  -- Rate from the estimate currency to the company currency.
  exchange numeric(19,8) not null default 1,
  rate_card_id uuid,
  rate_card_column_id uuid,
  workflow_id uuid,
  stage_id uuid,
  number text not null,
  name text not null,
  date date,
  expiration_date date,
  tags jsonb,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, number),
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id),
  foreign key (tenant_id, brand_id) references brands (tenant_id, id),
  foreign key (tenant_id, product_id) references products (tenant_id, id),
  foreign key (tenant_id, contract_id) references contracts (tenant_id, id),
  foreign key (tenant_id, project_id) references projects (tenant_id, id),
  foreign key (tenant_id, type_id) references job_types (tenant_id, id),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id),
  foreign key (tenant_id, rate_card_id) references rate_cards (tenant_id, id),
  foreign key (tenant_id, rate_card_column_id) references rate_card_columns (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id),
  foreign key (tenant_id, workflow_id, stage_id) references workflow_stages (tenant_id, workflow_id, id)
);
select atrium_enable_rls('estimates');
create index estimates_project_idx on estimates (tenant_id, project_id);
create index estimates_contract_idx on estimates (tenant_id, contract_id);
create index estimates_client_idx on estimates (tenant_id, commercial_client_id);
create index estimates_modified_idx on estimates (tenant_id, modified_on_utc);

create table estimate_items (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  estimate_id uuid not null,
  sort_order integer not null default 0,
  name text not null,
  description text,
  service_id uuid,
  -- VAT applied to the item's income.
  vat_id uuid,
  is_retainer boolean not null default false,
  quantity numeric(12,4) not null default 1,
  -- Costs the client pays directly to third parties, shown on the quote but outside the agency's income.
  client_direct_value numeric(19,4) not null default 0,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, estimate_id) references estimates (tenant_id, id) on delete cascade,
  foreign key (tenant_id, service_id) references services (tenant_id, id),
  foreign key (tenant_id, vat_id) references vats (tenant_id, id)
);
select atrium_enable_rls('estimate_items');
create index estimate_items_estimate_idx on estimate_items (tenant_id, estimate_id);

-- Quote lines. detail_type: 0 resource (time of a department/typology group/user), 1 third party
-- (supplier), 2 expense. For resources quantity_* are hours.
create table estimate_item_details (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  estimate_item_id uuid not null,
  detail_type integer not null check (detail_type in (0, 1, 2)),
  description text,
  supplier_id uuid,
  service_id uuid,
  department_id uuid,
  typology_group_id uuid,
  user_id uuid,
  -- VAT on the cost side (supplier VAT).
  vat_id uuid,
  quantity_cost numeric(12,4) not null default 0,
  unit_price_cost numeric(19,4) not null default 0,
  discount_cost numeric(19,4) not null default 0,
  quantity_income numeric(12,4) not null default 0,
  unit_price_income numeric(19,4) not null default 0,
  discount_income numeric(19,4) not null default 0,
  agency_commission_value numeric(19,4) not null default 0,
  -- Rate-card rate at quoting time (a snapshot: rate cards change later).
  table_rate numeric(19,4),
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, estimate_item_id) references estimate_items (tenant_id, id) on delete cascade,
  foreign key (tenant_id, supplier_id) references suppliers (tenant_id, id),
  foreign key (tenant_id, service_id) references services (tenant_id, id),
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, typology_group_id) references typology_groups (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id),
  foreign key (tenant_id, vat_id) references vats (tenant_id, id)
);
select atrium_enable_rls('estimate_item_details');
create index estimate_item_details_item_idx on estimate_item_details (tenant_id, estimate_item_id);

-- Monthly split of a quote line (entered, not derivable); its sums equal the line's totals.
create table estimate_item_detail_months (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  estimate_item_detail_id uuid not null,
  month date not null check (extract(day from month) = 1),
  hours numeric(12,4) not null default 0,
  cost numeric(19,4) not null default 0,
  income numeric(19,4) not null default 0,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, estimate_item_detail_id, month),
  foreign key (tenant_id, estimate_item_detail_id) references estimate_item_details (tenant_id, id) on delete cascade
);
select atrium_enable_rls('estimate_item_detail_months');

-- condition_type, frequency and amount_type are the platform's integer enumerations.
create table estimate_billing_conditions (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  estimate_id uuid not null,
  billing_client_id uuid,
  payment_condition_id uuid,
  condition_type integer not null default 0,
  frequency integer not null default 0,
  amount_type integer not null default 0,
  percentage numeric(9,4),
  value numeric(19,4),
  your_reference text,
  date date,
  day_of_month integer check (day_of_month between 1 and 31),
  day_of_week integer check (day_of_week between 0 and 6),
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, estimate_id) references estimates (tenant_id, id) on delete cascade,
  foreign key (tenant_id, billing_client_id) references billing_clients (tenant_id, id),
  foreign key (tenant_id, payment_condition_id) references payment_conditions (tenant_id, id)
);
select atrium_enable_rls('estimate_billing_conditions');
create index estimate_billing_conditions_estimate_idx on estimate_billing_conditions (tenant_id, estimate_id);

-- Planned time per project, month and resource. Contracted time is the linked quote line's monthly split;
-- planned income = planned_hours * actual_sell_rate. The three rates are snapshots taken when planning.
create table project_planned_times (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  project_id uuid not null,
  department_id uuid,
  typology_group_id uuid,
  user_id uuid,
  estimate_item_detail_id uuid,
  month date not null check (extract(day from month) = 1),
  planned_hours numeric(12,4) not null default 0,
  actual_sell_rate numeric(19,4),
  contracted_sell_rate numeric(19,4),
  rate_card_sell_rate numeric(19,4),
  comments text,
  description text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, project_id) references projects (tenant_id, id) on delete cascade,
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, typology_group_id) references typology_groups (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id),
  foreign key (tenant_id, estimate_item_detail_id) references estimate_item_details (tenant_id, id) on delete set null (estimate_item_detail_id)
);
select atrium_enable_rls('project_planned_times');
create index project_planned_times_project_idx on project_planned_times (tenant_id, project_id, month);
create index project_planned_times_user_idx on project_planned_times (tenant_id, user_id, month);

-- ---------------------------------------------------------------------------------------------------
-- Purchases and billing: purchase orders, bills (values are sums of their items)
-- ---------------------------------------------------------------------------------------------------

-- status and financial_status are the platform's integer enumerations; the document name is its number.
create table purchase_orders (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  department_id uuid,
  supplier_id uuid not null,
  commercial_client_id uuid,
  contract_id uuid,
  project_id uuid,
  estimate_id uuid,
  currency_id uuid not null,
  workflow_id uuid,
  stage_id uuid,
  number text not null,
  date date not null,
  delivery_date date,
  status integer not null default 0,
  financial_status integer not null default 0,
  invoiced boolean not null default false,
  invoiced_value numeric(19,4) not null default 0,
  controlled_value numeric(19,4) not null default 0,
  -- Export to the ERP: External is "external_id is not null".
  external_id text,
  external_error text,
  remarks text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, company_id, number),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, supplier_id) references suppliers (tenant_id, id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id),
  foreign key (tenant_id, contract_id) references contracts (tenant_id, id),
  foreign key (tenant_id, project_id) references projects (tenant_id, id),
  foreign key (tenant_id, estimate_id) references estimates (tenant_id, id),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id),
  foreign key (tenant_id, workflow_id, stage_id) references workflow_stages (tenant_id, workflow_id, id)
);
select atrium_enable_rls('purchase_orders');
create index purchase_orders_project_idx on purchase_orders (tenant_id, project_id);
create index purchase_orders_supplier_idx on purchase_orders (tenant_id, supplier_id);
create index purchase_orders_modified_idx on purchase_orders (tenant_id, modified_on_utc);

create table purchase_order_items (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  purchase_order_id uuid not null,
  sort_order integer not null default 0,
  service_id uuid,
  estimate_item_detail_id uuid,
  description text,
  quantity numeric(12,4) not null default 1,
  unit_price numeric(19,4) not null default 0,
  vat_id uuid,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, purchase_order_id) references purchase_orders (tenant_id, id) on delete cascade,
  foreign key (tenant_id, service_id) references services (tenant_id, id),
  foreign key (tenant_id, estimate_item_detail_id) references estimate_item_details (tenant_id, id) on delete set null (estimate_item_detail_id),
  foreign key (tenant_id, vat_id) references vats (tenant_id, id)
);
select atrium_enable_rls('purchase_order_items');
create index purchase_order_items_order_idx on purchase_order_items (tenant_id, purchase_order_id);

create table bills (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  department_id uuid,
  commercial_client_id uuid not null,
  billing_client_id uuid not null,
  project_id uuid,
  contract_id uuid,
  estimate_id uuid,
  currency_id uuid not null,
  payment_condition_id uuid,
  workflow_id uuid,
  stage_id uuid,
  number text not null,
  name text not null,
  date date not null,
  due_date date,
  management_date date,
  your_reference text,
  paid boolean not null default false,
  paid_value numeric(19,4) not null default 0,
  remarks text,
  external_id text,
  external_error text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, company_id, number),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, department_id) references departments (tenant_id, id),
  foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id),
  foreign key (tenant_id, billing_client_id) references billing_clients (tenant_id, id),
  foreign key (tenant_id, project_id) references projects (tenant_id, id),
  foreign key (tenant_id, contract_id) references contracts (tenant_id, id),
  foreign key (tenant_id, estimate_id) references estimates (tenant_id, id),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id),
  foreign key (tenant_id, payment_condition_id) references payment_conditions (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id),
  foreign key (tenant_id, workflow_id, stage_id) references workflow_stages (tenant_id, workflow_id, id)
);
select atrium_enable_rls('bills');
create index bills_project_idx on bills (tenant_id, project_id);
create index bills_client_idx on bills (tenant_id, commercial_client_id);
create index bills_modified_idx on bills (tenant_id, modified_on_utc);

create table bill_items (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  bill_id uuid not null,
  sort_order integer not null default 0,
  service_id uuid,
  estimate_item_id uuid,
  description text,
  quantity numeric(12,4) not null default 1,
  unit_price numeric(19,4) not null default 0,
  vat_id uuid,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, bill_id) references bills (tenant_id, id) on delete cascade,
  foreign key (tenant_id, service_id) references services (tenant_id, id),
  foreign key (tenant_id, estimate_item_id) references estimate_items (tenant_id, id) on delete set null (estimate_item_id),
  foreign key (tenant_id, vat_id) references vats (tenant_id, id)
);
select atrium_enable_rls('bill_items');
create index bill_items_bill_idx on bill_items (tenant_id, bill_id);

-- ---------------------------------------------------------------------------------------------------
-- Expenses: types, sheets (one per employee and period), items
-- ---------------------------------------------------------------------------------------------------

create table expense_types (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  vat_id uuid,
  name text not null,
  external_id text,
  vat_deductible_percentage numeric(9,4),
  -- Default unit value (e.g. per km), null when free.
  value numeric(19,4),
  is_active boolean not null default true,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, vat_id) references vats (tenant_id, id)
);
select atrium_enable_rls('expense_types');

create table expense_sheets (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  user_id uuid not null,
  currency_id uuid not null,
  workflow_id uuid,
  stage_id uuid,
  number text not null,
  external_name text,
  external_error text,
  emission_date date not null,
  due_date date,
  exchange numeric(19,8) not null default 1,
  blocked boolean not null default false,
  paid boolean not null default false,
  paid_value numeric(19,4) not null default 0,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, company_id, number),
  foreign key (tenant_id, company_id) references companies (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id),
  foreign key (tenant_id, currency_id) references currencies (tenant_id, id),
  foreign key (tenant_id, workflow_id) references workflows (tenant_id, id),
  foreign key (tenant_id, workflow_id, stage_id) references workflow_stages (tenant_id, workflow_id, id)
);
select atrium_enable_rls('expense_sheets');
create index expense_sheets_user_idx on expense_sheets (tenant_id, user_id);

create table expense_items (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  expense_sheet_id uuid not null,
  expense_type_id uuid not null,
  vat_id uuid,
  project_id uuid,
  job_id uuid,
  date date not null,
  billable boolean not null default false,
  motive text,
  quantity numeric(12,4) not null default 1,
  value_without_vat numeric(19,4) not null,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, expense_sheet_id) references expense_sheets (tenant_id, id) on delete cascade,
  foreign key (tenant_id, expense_type_id) references expense_types (tenant_id, id),
  foreign key (tenant_id, vat_id) references vats (tenant_id, id),
  foreign key (tenant_id, project_id) references projects (tenant_id, id),
  foreign key (tenant_id, job_id) references jobs (tenant_id, id)
);
select atrium_enable_rls('expense_items');
create index expense_items_sheet_idx on expense_items (tenant_id, expense_sheet_id);

-- ---------------------------------------------------------------------------------------------------
-- Time: timesheets, leaves, attendances, holidays, workloads
-- ---------------------------------------------------------------------------------------------------

-- One time entry of a user on a job and day. Client/project/product/brand come through the job; the
-- typology is the user's on that date (user_typology_histories, else users.typology_id); the hourly cost
-- is the user_costs row covering the date. Approval: status is the decision (modified_by_id decided it);
-- the approvers are the job's "Approver" team (assignments), else the user's responsible.
-- Deleted entries stay as tombstones (deleted_on; DE-TimeSheetsDeleted).
create table timesheets (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  job_id uuid not null,
  work_type_id uuid,
  date date not null,
  duration_minutes integer not null check (duration_minutes > 0 and duration_minutes <= 1440),
  is_billable boolean not null default true,
  status text not null default 'Draft' check (status in ('Draft', 'New', 'Approved', 'Rejected', 'Canceled')),
  requested_approval boolean not null default false,
  description text,
  deleted_on timestamptz,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id),
  foreign key (tenant_id, job_id) references jobs (tenant_id, id),
  foreign key (tenant_id, work_type_id) references work_types (tenant_id, id)
);
select atrium_enable_rls('timesheets');
create index timesheets_date_idx on timesheets (tenant_id, date);
create index timesheets_job_idx on timesheets (tenant_id, job_id);
create index timesheets_user_date_idx on timesheets (tenant_id, user_id, date);
create index timesheets_modified_idx on timesheets (tenant_id, modified_on_utc);
create index timesheets_deleted_idx on timesheets (tenant_id, deleted_on) where deleted_on is not null;

create table leave_types (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  name text not null,
  external_id text,
  -- Allowance year and expiry of the leave type (e.g. "Vacation 2025", expires 2026-03-31).
  year integer,
  expires_on date,
  -- Hour-based types are booked in hours; others in (half) days.
  is_hourly boolean not null default false,
  is_active boolean not null default true,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('leave_types');

-- One leave day of a user (DE-Leaves lists days). Approvers are in approvals. Deleted days stay as tombstones.
create table leaves (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  leave_type_id uuid not null,
  day date not null,
  is_half_day boolean not null default false,
  total_minutes integer not null check (total_minutes >= 0 and total_minutes <= 1440),
  status text not null default 'New' check (status in ('Draft', 'New', 'Approved', 'Rejected', 'Canceled')),
  requested_approval boolean not null default true,
  remarks text,
  deleted_on timestamptz,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id),
  foreign key (tenant_id, leave_type_id) references leave_types (tenant_id, id)
);
select atrium_enable_rls('leaves');
create index leaves_user_day_idx on leaves (tenant_id, user_id, day);
create index leaves_day_idx on leaves (tenant_id, day);
create index leaves_modified_idx on leaves (tenant_id, modified_on_utc);
create index leaves_deleted_idx on leaves (tenant_id, deleted_on) where deleted_on is not null;

-- Daily attendance summary of a user; its clock events are attendance_details.
create table attendances (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  day date not null,
  worked_minutes integer not null default 0,
  offset_total_minutes integer not null default 0,
  tardiness_total_minutes integer not null default 0,
  break_total_minutes integer not null default 0,
  home_office boolean not null default false,
  half_day boolean not null default false,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, user_id, day),
  foreign key (tenant_id, user_id) references users (tenant_id, id)
);
select atrium_enable_rls('attendances');
create index attendances_day_idx on attendances (tenant_id, day);

-- entry_type: 0 clock-in, 1 clock-out, 2 break start, 3 break end.
create table attendance_details (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  attendance_id uuid not null,
  time timestamptz not null,
  entry_type integer not null check (entry_type between 0 and 3),
  adjusted_time timestamptz,
  motive text,
  is_offset boolean not null default false,
  offset_minutes integer not null default 0,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, attendance_id) references attendances (tenant_id, id) on delete cascade
);
select atrium_enable_rls('attendance_details');
create index attendance_details_attendance_idx on attendance_details (tenant_id, attendance_id);

create table holidays (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  company_id uuid not null,
  date date not null,
  name text not null,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, company_id, date),
  foreign key (tenant_id, company_id) references companies (tenant_id, id)
);
select atrium_enable_rls('holidays');

-- Time planned for a user on a document and day; timesheet_id links the entry that consumed it, if any.
create table workloads (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  document_type_id uuid not null,
  document_id uuid not null,
  user_id uuid not null,
  timesheet_id uuid,
  day date not null,
  workload_minutes integer not null check (workload_minutes >= 0),
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id),
  foreign key (tenant_id, timesheet_id) references timesheets (tenant_id, id) on delete set null (timesheet_id)
);
select atrium_enable_rls('workloads');
create index workloads_document_idx on workloads (tenant_id, document_id);
create index workloads_user_day_idx on workloads (tenant_id, user_id, day);

-- ---------------------------------------------------------------------------------------------------
-- Collaboration on any document: teams (assignments), approvals, comments, descriptions, history,
-- per-user read marks and favourites
-- ---------------------------------------------------------------------------------------------------

create table assignments (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  document_type_id uuid not null,
  document_id uuid not null,
  team_id uuid not null,
  user_id uuid not null,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, document_id, team_id, user_id),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id),
  foreign key (tenant_id, team_id) references teams (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade
);
select atrium_enable_rls('assignments');
create index assignments_user_idx on assignments (tenant_id, user_id);

-- Approval requests on a document (leaves, jobs, estimates, purchase orders...); role 'HR' is the HR
-- approver of leaves. A Pending row makes the document "pending" for that approver (CurrentUserPending).
-- Timesheets have no rows here: see the timesheets table.
create table approvals (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  document_type_id uuid not null,
  document_id uuid not null,
  approver_id uuid not null,
  role text not null default 'Approver' check (role in ('Approver', 'HR')),
  status text not null default 'Pending' check (status in ('Pending', 'Approved', 'Rejected')),
  requested_on_utc timestamptz not null default now(),
  decided_on_utc timestamptz,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id),
  foreign key (tenant_id, approver_id) references users (tenant_id, id) on delete cascade
);
select atrium_enable_rls('approvals');
create index approvals_document_idx on approvals (tenant_id, document_id);
create index approvals_pending_idx on approvals (tenant_id, approver_id) where status = 'Pending';

-- Feed comments (posts). HasReplies is derived from comment_replies.
create table comments (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  document_type_id uuid not null,
  document_id uuid not null,
  text text not null,
  is_visible_to_client boolean not null default false,
  actions jsonb,
  reactions jsonb,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id)
);
select atrium_enable_rls('comments');
create index comments_document_idx on comments (tenant_id, document_id);

create table comment_replies (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  comment_id uuid not null,
  text text not null,
  reactions jsonb,
  mentions jsonb,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  foreign key (tenant_id, comment_id) references comments (tenant_id, id) on delete cascade
);
select atrium_enable_rls('comment_replies');
create index comment_replies_comment_idx on comment_replies (tenant_id, comment_id);

-- Document briefs, one row per version. plain_text is the editor's text rendition of text_html
-- (kept because stripping HTML in SQL is lossy). modified_on_utc is the edit time.
create table descriptions (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  document_type_id uuid not null,
  document_id uuid not null,
  version integer not null,
  text_html text,
  plain_text text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, document_id, version),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id)
);
select atrium_enable_rls('descriptions');

-- One row per document version / stage period (start_date..end_date, end open while current).
create table document_history (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  document_type_id uuid not null,
  document_id uuid not null,
  version integer not null,
  start_date timestamptz not null,
  end_date timestamptz,
  user_id uuid,
  action text not null,
  stage_id uuid,
  created_on_utc timestamptz not null default now(),
  primary key (tenant_id, id),
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id),
  foreign key (tenant_id, user_id) references users (tenant_id, id) on delete set null (user_id),
  foreign key (tenant_id, stage_id) references workflow_stages (tenant_id, id)
);
select atrium_enable_rls('document_history');
create index document_history_document_idx on document_history (tenant_id, document_id, version);

-- Per-user "already read" marks (BaseObjectReadId / AlreadyRead).
create table document_reads (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  document_type_id uuid not null,
  document_id uuid not null,
  read_on_utc timestamptz not null default now(),
  primary key (tenant_id, id),
  unique (tenant_id, user_id, document_id),
  foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade,
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id)
);
select atrium_enable_rls('document_reads');

-- Per-user favourites (FavoriteId / IsFavorite).
create table favorites (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  user_id uuid not null,
  document_type_id uuid not null,
  document_id uuid not null,
  created_on_utc timestamptz not null default now(),
  primary key (tenant_id, id),
  unique (tenant_id, user_id, document_id),
  foreign key (tenant_id, user_id) references users (tenant_id, id) on delete cascade,
  foreign key (tenant_id, document_type_id) references document_types (tenant_id, id)
);
select atrium_enable_rls('favorites');

-- ---------------------------------------------------------------------------------------------------
-- Settings
-- ---------------------------------------------------------------------------------------------------

-- Named configuration blobs (e.g. SFTP-HRFEED). Secrets inside value are stored encrypted by the app.
create table configuration_keys (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  key text not null,
  value jsonb not null,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, key)
);
select atrium_enable_rls('configuration_keys');

-- System preferences referenced by webhook filters as {{Name/Key}}.
create table system_preferences (
  tenant_id uuid not null references tenants (id) on delete cascade,
  id uuid not null default gen_random_uuid(),
  name text not null,
  key text not null,
  value text,
  created_on_utc timestamptz not null default now(),
  created_by_id uuid,
  modified_on_utc timestamptz not null default now(),
  modified_by_id uuid,
  primary key (tenant_id, id),
  unique (tenant_id, name, key)
);
select atrium_enable_rls('system_preferences');
