// Client API, second half (decision 0033): the estimate item fields the API publishes that the data model
// had no column for (approval and billing flags, the agency commission percentage), the item's own quote
// line (the income and cost an item carries by itself, beside its resource / third-party / expense
// details, so the one money rule over quote lines keeps covering every amount), and the estimate roles
// for tenants created before them (new tenants get them from BUILT_IN_ROLES).
import { type Kysely, sql } from 'kysely';

const ROLES: [string, string][] = [
  ['EstimateRead', 'Read estimates through the Client API'],
  ['EstimateWrite', 'Create and change estimates and their billing conditions through the Client API'],
];

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
alter table estimate_items
  add column approved boolean not null default false,
  add column billed boolean not null default false,
  add column agency_commission_percentage numeric(9,4) not null default 0;

-- At most one own line per item: PUT /api/estimates/{id}/items writes it, the details endpoints add the others.
alter table estimate_item_details
  add column is_item_line boolean not null default false;
create unique index estimate_item_details_item_line_idx on estimate_item_details (tenant_id, estimate_item_id) where is_item_line;
`.execute(db);
  // Only a role that bypasses row-level security (the owner in the embedded cluster) sees every tenant here.
  for (const [name, description] of ROLES) {
    await sql`insert into roles (tenant_id, name, description) select id, ${name}, ${description} from tenants
      on conflict (tenant_id, name) do nothing`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
drop index if exists estimate_item_details_item_line_idx;
alter table estimate_item_details drop column is_item_line;
alter table estimate_items drop column approved, drop column billed, drop column agency_commission_percentage;
`.execute(db);
}
