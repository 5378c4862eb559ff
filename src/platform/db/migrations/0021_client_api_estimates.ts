// Client API, second half (decision 0033): the estimate item fields the API publishes that the data model
// had no column for (approval and billing flags, the agency commission percentage), the item's own quote
// line (the income and cost an item carries by itself, beside its resource / third-party / expense
// details, so the one money rule over quote lines keeps covering every amount), and the estimate roles
// for tenants created before them (new tenants get them from BUILT_IN_ROLES); the expense fields the API
// publishes (item type level and mileage, the sheet's department and its workflow, the item's fields).
import { type Kysely, sql } from 'kysely';

const ROLES: [string, string][] = [
  ['EstimateRead', 'Read estimates through the Client API'],
  ['EstimateWrite', 'Create and change estimates and their billing conditions through the Client API'],
  ['ExpenseRead', 'Read expense sheets through the Client API'],
  ['ExpenseWrite', 'Create expense sheets and their items through the Client API'],
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

-- Expenses: an item type's level names the document an item is charged to (0 none, 1 client, 2 project,
-- 3 job, 4 estimate, 5 product); a mileage type is kilometres × rate (its value is the default rate).
alter table expense_types
  add column level integer not null default 0 check (level between 0 and 5),
  add column is_mileage boolean not null default false;

-- A department's expense workflow: the workflow of the expense sheets of that department.
alter table departments
  add column expense_workflow_id uuid,
  add foreign key (tenant_id, expense_workflow_id) references workflows (tenant_id, id);

alter table expense_sheets
  add column department_id uuid,
  add column payment_condition_id uuid,
  add column supplier_id uuid,
  add column entry_date date,
  add column external_document_type text,
  add column document_number text,
  add foreign key (tenant_id, department_id) references departments (tenant_id, id),
  add foreign key (tenant_id, payment_condition_id) references payment_conditions (tenant_id, id),
  add foreign key (tenant_id, supplier_id) references suppliers (tenant_id, id);

alter table expense_items
  add column item_group integer not null default 0 check (item_group in (0, 1, 2)),
  add column commercial_client_id uuid,
  add column estimate_id uuid,
  add column product_id uuid,
  add column supplier_id uuid,
  add column department_id uuid,
  add column number text,
  add column status integer not null default 0,
  add column paid boolean not null default false,
  add column kilometers numeric(12,4),
  add column kilometers_value numeric(19,4),
  add column origin text,
  add column destination text,
  add column participants text,
  add column vehicle text,
  add column start_on timestamptz,
  add column end_on timestamptz,
  add foreign key (tenant_id, commercial_client_id) references commercial_clients (tenant_id, id),
  add foreign key (tenant_id, estimate_id) references estimates (tenant_id, id),
  add foreign key (tenant_id, product_id) references products (tenant_id, id),
  add foreign key (tenant_id, supplier_id) references suppliers (tenant_id, id),
  add foreign key (tenant_id, department_id) references departments (tenant_id, id);
`.execute(db);
  // Only a role that bypasses row-level security (the owner in the embedded cluster) sees every tenant here.
  for (const [name, description] of ROLES) {
    await sql`insert into roles (tenant_id, name, description) select id, ${name}, ${description} from tenants
      on conflict (tenant_id, name) do nothing`.execute(db);
  }
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`
alter table expense_items drop column item_group, drop column commercial_client_id, drop column estimate_id, drop column product_id,
  drop column supplier_id, drop column department_id, drop column number, drop column status, drop column paid, drop column kilometers,
  drop column kilometers_value, drop column origin, drop column destination, drop column participants, drop column vehicle,
  drop column start_on, drop column end_on;
alter table expense_sheets drop column department_id, drop column payment_condition_id, drop column supplier_id, drop column entry_date,
  drop column external_document_type, drop column document_number;
alter table departments drop column expense_workflow_id;
alter table expense_types drop column level, drop column is_mileage;
drop index if exists estimate_item_details_item_line_idx;
alter table estimate_item_details drop column is_item_line;
alter table estimate_items drop column approved, drop column billed, drop column agency_commission_percentage;
`.execute(db);
}
