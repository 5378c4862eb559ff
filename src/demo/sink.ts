// Demo data: the row sink. Rows of each table are serialised to COPY text as they are added, and loaded
// in LOAD_ORDER (parents before children).
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';

export type Db = pg.PoolClient | pg.Client;

function esc(s: string): string {
  if (!/[\\\t\n\r]/.test(s)) return s;
  return s.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}
function val(v: unknown): string {
  if (v === null || v === undefined) return '\\N';
  switch (typeof v) {
    case 'string':
      return esc(v);
    case 'number':
      if (!Number.isFinite(v)) throw new Error(`non-finite number in demo row: ${v}`);
      return String(v);
    case 'boolean':
      return v ? 't' : 'f';
    default:
      return esc(JSON.stringify(v));
  }
}

/** Rows of one table serialised to COPY text as they are added (objects would not fit at scale 50). */
export class Table {
  readonly name: string;
  private readonly tenantId: string;
  cols: string[] | null = null;
  private colSet = new Set<string>();
  private chunks: string[] = [];
  private buf = '';
  count = 0;
  constructor(name: string, tenantId: string) {
    this.name = name;
    this.tenantId = tenantId;
  }
  add(row: Record<string, unknown>): void {
    if (this.cols === null) {
      this.cols = Object.keys(row);
      this.colSet = new Set(this.cols);
    } else {
      for (const k in row) if (!this.colSet.has(k)) throw new Error(`${this.name}: column ${k} not in first row`);
    }
    let line = this.tenantId;
    for (const c of this.cols) line += `\t${val(row[c])}`;
    this.buf += `${line}\n`;
    this.count++;
    if (this.buf.length > 65_536) {
      this.chunks.push(this.buf);
      this.buf = '';
    }
  }
  drain(): string[] {
    if (this.buf) this.chunks.push(this.buf);
    const out = this.chunks;
    this.chunks = [];
    this.buf = '';
    return out;
  }
}

export async function copyInto(db: Db, table: string, cols: readonly string[], chunks: Iterable<string> | AsyncIterable<string>): Promise<void> {
  const stream = db.query(copyFrom(`copy ${table} (tenant_id, ${cols.join(', ')}) from stdin`));
  await pipeline(Readable.from(chunks, { objectMode: false }), stream);
}

/** Tables analysed as soon as they are loaded, because later steps of the load join them. */
export const BULK_TABLES = ['timesheets', 'attendances', 'attendance_details', 'workloads'] as const;

export const LOAD_ORDER = [
  'business_object_types',
  'folders',
  'files',
  'countries',
  'cities',
  'currencies',
  'companies',
  'divisions',
  'departments',
  'vats',
  'payment_conditions',
  'workflows',
  'workflow_stages',
  'teams',
  'workflow_stage_write_teams',
  'workflow_transitions',
  'typology_groups',
  'typology_group_companies',
  'typology_group_departments',
  'typologies',
  'employees',
  'users',
  'user_typology_histories',
  'user_costs',
  'user_fields',
  'user_field_values',
  'client_groups',
  'commercial_clients',
  'billing_clients',
  'commercial_client_companies',
  'client_companies',
  'commercial_client_users',
  'brands',
  'products',
  'service_groups',
  'services',
  'work_types',
  'suppliers',
  'project_types',
  'project_classifications',
  'project_natures',
  'briefing_templates',
  'job_types',
  'workflow_transition_types',
  'rate_cards',
  'rate_card_columns',
  'rate_card_items',
  'rate_card_item_values',
  'contracts',
  'projects',
  'jobs',
  'requests',
  'estimates',
  'estimate_items',
  'estimate_item_details',
  'estimate_item_detail_months',
  'estimate_billing_conditions',
  'project_planned_times',
  'purchase_orders',
  'purchase_order_items',
  'bills',
  'bill_items',
  'expense_types',
  'expense_sheets',
  'expense_items',
  'leave_types',
  'leaves',
  'holidays',
  'timesheets',
  'attendances',
  'attendance_details',
  'workloads',
  'assignments',
  'approvals',
  'comments',
  'comment_replies',
  'descriptions',
  'document_history',
  'document_reads',
  'favorites',
  'configuration_keys',
  'system_preferences',
] as const;
export type TableName = (typeof LOAD_ORDER)[number];

export const TIMESHEET_COLS = [
  'id',
  'user_id',
  'job_id',
  'work_type_id',
  'date',
  'duration_minutes',
  'is_billable',
  'status',
  'requested_approval',
  'deleted_on',
  'created_on_utc',
  'created_by_id',
  'modified_on_utc',
  'modified_by_id',
  'booked_company_id',
  'booked_department_id',
  'booked_typology_id',
  'booked_hourly_cost',
] as const;
