// Client API (decision 0023): the document fields the platform publishes that the data model had no
// column for, the precise custom-field types of the spec (Boolean 0 … UniqueIdentifier 9), the options
// of a file link, a sequence for document numbers the client does not send, and the document roles for
// tenants created before them (new tenants get them from BUILT_IN_ROLES).
import { type Kysely, sql } from 'kysely';

const ROLES: [string, string][] = [
  ['ProjectRead', 'Read projects through the Client API'],
  ['ProjectWrite', 'Create and change projects through the Client API'],
  ['JobRead', 'Read jobs through the Client API'],
  ['JobWrite', 'Create and change jobs through the Client API'],
  ['ContractRead', 'Read contracts through the Client API'],
  ['ContractWrite', 'Create and change contracts through the Client API'],
  ['RequestRead', 'Read requests through the Client API'],
  ['RequestWrite', 'Create and change requests through the Client API'],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
alter table projects
  add column business_object_type_id uuid,
  add column allows_timesheet boolean not null default true,
  add column is_deliverable boolean not null default false,
  add column is_activated boolean not null default true,
  add foreign key (tenant_id, business_object_type_id) references business_object_types (tenant_id, id);

alter table jobs
  add column parent_job_id uuid,
  add column classification_id uuid,
  add column priority integer not null default 0,
  add column requested_date date,
  add column subject text,
  add column to_integrate boolean not null default false,
  add foreign key (tenant_id, parent_job_id) references jobs (tenant_id, id),
  add foreign key (tenant_id, classification_id) references project_classifications (tenant_id, id);

-- The spec's ColumnDataTypeId; null on fields made before it, whose data_type then decides.
alter table user_fields
  add column data_type_id smallint check (data_type_id between 0 and 9);

alter table files
  add column external_id text,
  add column description text,
  add column is_flagged boolean not null default false,
  add column is_protected boolean not null default false;

-- Numbers of documents created without one: a sequence needs no lock, so concurrent creates do not queue.
create sequence document_number_seq;
grant usage, select on sequence document_number_seq to atrium_app;
`.execute(db);
  // Only a role that bypasses row-level security (the owner in the embedded cluster) sees every tenant here.
  for (const [name, description] of ROLES) {
    await sql`insert into roles (tenant_id, name, description) select id, ${name}, ${description} from tenants
      on conflict (tenant_id, name) do nothing`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
drop sequence if exists document_number_seq;
alter table files drop column external_id, drop column description, drop column is_flagged, drop column is_protected;
alter table user_fields drop column data_type_id;
alter table jobs drop column parent_job_id, drop column classification_id, drop column priority, drop column requested_date,
  drop column subject, drop column to_integrate;
alter table projects drop column business_object_type_id, drop column allows_timesheet, drop column is_deliverable, drop column is_activated;
`.execute(db);
}
