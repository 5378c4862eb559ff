// Demo data generator: fills every table of the agency model (schema.sql) with one coherent, deterministic
// agency (same seed + scale => same rows and ids). Rows are loaded with COPY; timesheets are streamed.
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { companyCodeFromName, type TenantDefaults } from './bootstrap.ts';

export interface DemoOptions {
  scale: number;
  seed?: number;
  log?: (line: string) => void;
}

type Db = pg.PoolClient | pg.Client;

// ---------------------------------------------------------------------------------------------------
// Deterministic randomness
// ---------------------------------------------------------------------------------------------------

function hashString(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
function hex32(n: number): string {
  return HEX[n >>> 24] + HEX[(n >>> 16) & 255] + HEX[(n >>> 8) & 255] + HEX[n & 255];
}

/** mulberry32: tiny, fast and good enough for demo data. */
class Rng {
  private a: number;
  constructor(seed: number) {
    this.a = seed >>> 0;
  }
  u32(): number {
    this.a = (this.a + 0x6d2b79f5) | 0;
    let t = this.a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  next(): number {
    return this.u32() / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(arr: readonly T[]): T {
    return arr[Math.floor(this.next() * arr.length)];
  }
  sample<T>(arr: readonly T[], k: number): T[] {
    const copy = arr.slice();
    const out: T[] = [];
    for (let i = 0; i < k && copy.length > 0; i++) out.push(copy.splice(Math.floor(this.next() * copy.length), 1)[0]);
    return out;
  }
  /** A random (version 4 shaped) uuid drawn from this stream. */
  uuid(): string {
    const a = this.u32();
    const b = hex32(((this.u32() & 0xffff0fff) | 0x4000) >>> 0);
    const c = hex32(((this.u32() & 0x3fffffff) | 0x80000000) >>> 0);
    const d = this.u32();
    return `${hex32(a)}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${hex32(d)}`;
  }
}

/** Ascending ids for the big tables: appends to the primary-key btree instead of splitting random pages. */
class SeqIds {
  private readonly prefix: string;
  private n = 0;
  constructor(rng: Rng) {
    this.prefix = rng.uuid().slice(0, 24);
  }
  next(): string {
    this.n++;
    const h = this.n.toString(16);
    return this.prefix + '000000000000'.slice(h.length) + h;
  }
}

// ---------------------------------------------------------------------------------------------------
// Dates: whole days since 1970-01-01 (UTC). The demo agency lives in a fixed year so runs are reproducible.
// ---------------------------------------------------------------------------------------------------

const DAY_MS = 86_400_000;
const mkDay = (y: number, m: number, d: number): number => Date.UTC(y, m - 1, d) / DAY_MS;
const YEAR_START = mkDay(2025, 1, 1);
const YEAR_END = mkDay(2025, 12, 31);
const NOW = mkDay(2026, 1, 15);
const ATTENDANCE_FROM = mkDay(2025, 11, 1);

const dateCache = new Map<number, string>();
function ds(d: number): string {
  let s = dateCache.get(d);
  if (s === undefined) {
    s = new Date(d * DAY_MS).toISOString().slice(0, 10);
    dateCache.set(d, s);
  }
  return s;
}
const pad2 = (n: number): string => (n < 10 ? `0${n}` : String(n));
/** timestamptz text for a day plus minutes (may run past midnight). */
function ts(d: number, minute: number): string {
  const dd = d + Math.floor(minute / 1440);
  const m = ((minute % 1440) + 1440) % 1440;
  return `${ds(dd)} ${pad2(Math.floor(m / 60))}:${pad2(m % 60)}:00+00`;
}
const isWeekend = (d: number): boolean => {
  const w = (d + 4) % 7; // 1970-01-01 was a Thursday
  return w === 0 || w === 6;
};
function monthStart(d: number): number {
  const dt = new Date(d * DAY_MS);
  return Date.UTC(dt.getUTCFullYear(), dt.getUTCMonth(), 1) / DAY_MS;
}
function addMonths(monthDay: number, n: number): number {
  const dt = new Date(monthDay * DAY_MS);
  return Date.UTC(dt.getUTCFullYear(), dt.getUTCMonth() + n, 1) / DAY_MS;
}
const round2 = (x: number): number => Math.round(x * 100) / 100;

// ---------------------------------------------------------------------------------------------------
// COPY buffers
// ---------------------------------------------------------------------------------------------------

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
class Table {
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

async function copyInto(db: Db, table: string, cols: readonly string[], chunks: Iterable<string>): Promise<void> {
  const stream = db.query(copyFrom(`copy ${table} (tenant_id, ${cols.join(', ')}) from stdin`));
  await pipeline(Readable.from(chunks, { objectMode: false }), stream);
}

/** Tables analysed as soon as they are loaded, because later steps of the load join them. */
const BULK_TABLES = ['timesheets', 'attendances', 'attendance_details', 'workloads'] as const;

/**
 * Per-row FK triggers cost more than the insert itself (each check locks the parent row), so the load runs
 * with session_replication_role = replica when the role may set it (it also keeps other triggers, e.g.
 * event capture, from firing for generated rows). Returns whether the bypass is on; SET LOCAL ends with
 * the caller's transaction at the latest.
 */
async function bypassFkTriggers(db: Db): Promise<boolean> {
  try {
    await db.query('savepoint atrium_demo_fk');
    await db.query('set local session_replication_role = replica');
    await db.query('release savepoint atrium_demo_fk');
    return true;
  } catch {
    await db.query('rollback to savepoint atrium_demo_fk').catch(() => {});
    return false;
  }
}

/**
 * The set-based equivalent of the skipped FK triggers: per table, one scan left-joined to the parents of up
 * to six foreign keys at a time, counting child rows (with all key columns set) that found no parent.
 */
async function verifyForeignKeys(db: Db, tenantId: string, tables: readonly string[]): Promise<void> {
  const fks = await db.query<{ name: string; child: string; parent: string; child_cols: string[]; parent_cols: string[] }>(
    `select c.conname as name, c.conrelid::regclass::text as child, c.confrelid::regclass::text as parent,
            array(select a.attname::text from unnest(c.conkey) with ordinality k(n, o)
                    join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.o) as child_cols,
            array(select a.attname::text from unnest(c.confkey) with ordinality k(n, o)
                    join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.n order by k.o) as parent_cols
       from pg_constraint c
      where c.contype = 'f' and c.conrelid = any($1::regclass[]) and c.confrelid <> 'tenants'::regclass
      order by 2, 1`,
    [tables],
  );
  const byChild = new Map<string, typeof fks.rows>();
  for (const fk of fks.rows) byChild.set(fk.child, [...(byChild.get(fk.child) ?? []), fk]);
  for (const [child, list] of byChild) {
    for (let start = 0; start < list.length; start += 6) {
      const group = list.slice(start, start + 6);
      const counts = group.map((fk, i) => {
        const set = fk.child_cols.map((col) => `c.${col} is not null`).join(' and ');
        return `count(*) filter (where ${set} and p${i}.${fk.parent_cols[0]} is null) as v${i}`;
      });
      const joins = group.map(
        (fk, i) => `left join ${fk.parent} p${i} on ${fk.child_cols.map((col, k) => `p${i}.${fk.parent_cols[k]} = c.${col}`).join(' and ')}`,
      );
      const res = await db.query<Record<string, string>>(`select ${counts.join(', ')} from ${child} c ${joins.join(' ')} where c.tenant_id = $1`, [tenantId]);
      group.forEach((fk, i) => {
        const bad = Number(res.rows[0][`v${i}`]);
        if (bad > 0) throw new Error(`demo data violates ${fk.name} (${child} -> ${fk.parent}): ${bad} rows`);
      });
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Vocabulary
// ---------------------------------------------------------------------------------------------------

const FIRST = [
  'Ana',
  'Bruno',
  'Carla',
  'Daniel',
  'Eva',
  'Filipe',
  'Gina',
  'Hugo',
  'Ines',
  'Joao',
  'Karen',
  'Luis',
  'Marta',
  'Nuno',
  'Olga',
  'Pedro',
  'Quinn',
  'Rita',
  'Sofia',
  'Tiago',
  'Ursula',
  'Vasco',
  'Wendy',
  'Xavier',
  'Yara',
  'Alice',
  'Ben',
  'Chloe',
  'David',
  'Emma',
  'Frank',
  'Grace',
  'Henry',
  'Isla',
  'Jack',
  'Kate',
  'Leo',
  'Mia',
  'Noah',
  'Zoe',
];
const LAST = [
  'Silva',
  'Santos',
  'Ferreira',
  'Pereira',
  'Oliveira',
  'Costa',
  'Rodrigues',
  'Martins',
  'Sousa',
  'Fernandes',
  'Goncalves',
  'Gomes',
  'Lopes',
  'Marques',
  'Alves',
  'Almeida',
  'Ribeiro',
  'Pinto',
  'Carvalho',
  'Smith',
  'Jones',
  'Taylor',
  'Brown',
  'Williams',
  'Wilson',
  'Johnson',
  'Davies',
  'Garcia',
  'Martinez',
  'Moreau',
];
const CLIENT_ADJ = [
  'Northwind',
  'Blue Harbor',
  'Golden',
  'Silver Peak',
  'Red Oak',
  'Green Valley',
  'Atlantic',
  'Nova',
  'Summit',
  'Crystal',
  'Iron Bridge',
  'Bright',
  'Urban',
  'Coastal',
  'Prime',
  'Vertex',
];
const CLIENT_NOUN = ['Foods', 'Motors', 'Telecom', 'Bank', 'Retail', 'Pharma', 'Airlines', 'Energy', 'Insurance', 'Beverages', 'Cosmetics', 'Logistics'];
const BRAND_WORDS = ['Aurora', 'Zenith', 'Pulse', 'Essence', 'Vita', 'Orbit', 'Terra', 'Lumen', 'Nimbus', 'Solis', 'Verde', 'Astra'];
const PRODUCT_WORDS = ['Classic', 'Light', 'Max', 'Pro', 'Kids', 'Gold', 'Fresh', 'Plus', 'Zero', 'Original'];
const THINGS = [
  'Key Visual',
  'Social Media Pack',
  'TV Spot',
  'Landing Page',
  'Brochure',
  'Newsletter',
  'Banner Set',
  'Radio Spot',
  'Packaging',
  'Event Kit',
  'Brand Guidelines',
  'Product Video',
  'Website Update',
  'Outdoor Campaign',
  'Press Kit',
  'Annual Report',
];
const EXTRA_COMPANIES = [
  'Atlas Creative',
  'Beacon Digital',
  'Cobalt Media',
  'Delta Studio',
  'Echo Partners',
  'Fathom Labs',
  'Granite Works',
  'Horizon Group',
  'Indigo House',
  'Juniper Agency',
  'Kestrel Brands',
  'Lighthouse Co',
];
const SUPPLIERS: ReadonlyArray<[string, string]> = [
  ['PrintHouse', 'Printing'],
  ['Lens & Light Studio', 'Production'],
  ['CloudHost', 'IT'],
  ['Fast Couriers', 'Logistics'],
  ['Media Buyers Co', 'Media'],
  ['Sound Lab', 'Production'],
  ['Event Masters', 'Events'],
  ['Stock Images Ltd', 'Production'],
  ['Paper & Ink', 'Printing'],
  ['Pixel Freelancers', 'IT'],
];
const COMMENTS = [
  'Please review the latest version.',
  'Client asked for a warmer colour palette.',
  'Deadline moved to next Friday.',
  'Uploaded the final files to the project folder.',
  'Can we schedule a call to align on scope?',
  'Approved by the client, thanks all!',
  'Copy needs a second pass for tone of voice.',
  'Budget is tight, keep third-party costs low.',
];
const REPLIES = ['On it.', 'Done, see attached.', 'Agreed.', 'Will check with the client.', 'Thanks!', 'Can you clarify?'];
const HOLIDAYS_2025: ReadonlyArray<[number, number, string]> = [
  [1, 1, "New Year's Day"],
  [4, 18, 'Good Friday'],
  [4, 25, 'Freedom Day'],
  [5, 1, 'Labour Day'],
  [6, 10, 'National Day'],
  [6, 19, 'Corpus Christi'],
  [8, 15, 'Assumption Day'],
  [10, 5, 'Republic Day'],
  [11, 1, "All Saints' Day"],
  [12, 1, 'Restoration of Independence'],
  [12, 8, 'Immaculate Conception'],
  [12, 25, 'Christmas Day'],
];
const COUNTRIES: ReadonlyArray<{ iso: string; name: string; cities: string[]; currency: string; suffix: string }> = [
  { iso: 'PT', name: 'Portugal', cities: ['Lisbon', 'Porto'], currency: 'EUR', suffix: 'Lda.' },
  { iso: 'ES', name: 'Spain', cities: ['Madrid', 'Barcelona'], currency: 'EUR', suffix: 'S.L.' },
  { iso: 'GB', name: 'United Kingdom', cities: ['London', 'Manchester'], currency: 'GBP', suffix: 'Ltd' },
  { iso: 'US', name: 'United States', cities: ['New York', 'Chicago'], currency: 'USD', suffix: 'Inc.' },
  { iso: 'FR', name: 'France', cities: ['Paris', 'Lyon'], currency: 'EUR', suffix: 'SAS' },
];
const CURRENCIES: ReadonlyArray<{ iso: string; name: string; symbol: string }> = [
  { iso: 'EUR', name: 'Euro', symbol: '€' },
  { iso: 'USD', name: 'US Dollar', symbol: '$' },
  { iso: 'GBP', name: 'Pound Sterling', symbol: '£' },
];
/** Value of one unit of the currency in EUR. */
const TO_EUR: Record<string, number> = { EUR: 1, USD: 0.92, GBP: 1.17 };

type DeptKind = 'General' | 'Creative' | 'Digital' | 'Accounts';
const TYPOLOGIES: Record<DeptKind, ReadonlyArray<[string, string, number]>> = {
  // [name, typology group, hourly sell value]
  General: [
    ['Managing Director', 'Management', 180],
    ['Office Manager', 'Staff', 60],
  ],
  Creative: [
    ['Art Director', 'Creative', 140],
    ['Copywriter', 'Creative', 110],
    ['Designer', 'Creative', 95],
  ],
  Digital: [
    ['Developer', 'Production', 105],
    ['UX Designer', 'Creative', 110],
    ['Producer', 'Production', 90],
  ],
  Accounts: [
    ['Account Director', 'Account', 130],
    ['Account Manager', 'Account', 100],
    ['Strategist', 'Strategy', 140],
  ],
};
const TYPOLOGY_GROUPS = ['Creative', 'Account', 'Production', 'Strategy', 'Management'];

/** Stage names per workflow, in the order of the stage types Draft, In Progress, Completed, Canceled. */
const WORKFLOW_STAGES: Record<string, [string, string, string, string]> = {
  Deliverable: ['Draft', 'In Progress', 'Completed', 'Canceled'],
  Project: ['Draft', 'In Progress', 'Completed', 'Canceled'],
  Estimate: ['Draft', 'Sent', 'Approved', 'Rejected'],
  Contract: ['Draft', 'Active', 'Closed', 'Canceled'],
  Request: ['New', 'In Analysis', 'Accepted', 'Declined'],
  Bill: ['Draft', 'Issued', 'Paid', 'Voided'],
  PurchaseOrder: ['Draft', 'Ordered', 'Received', 'Canceled'],
  Expense: ['Draft', 'Submitted', 'Reimbursed', 'Rejected'],
  CommercialClient: ['Prospect', 'Active', 'Inactive', 'Lost'],
};
const STAGE_TYPE_NAMES = ['Draft', 'In Progress', 'Completed', 'Canceled'] as const;
type StageType = (typeof STAGE_TYPE_NAMES)[number];
const TRANSITIONS: ReadonlyArray<[string, StageType, StageType]> = [
  ['Start', 'Draft', 'In Progress'],
  ['Complete', 'In Progress', 'Completed'],
  ['Cancel', 'In Progress', 'Canceled'],
  ['Discard', 'Draft', 'Canceled'],
  ['Reopen', 'Completed', 'In Progress'],
];

// ---------------------------------------------------------------------------------------------------
// In-memory model of the generated agency (what later sections need to stay coherent)
// ---------------------------------------------------------------------------------------------------

interface Workflow {
  id: string;
  stage: Record<StageType, string>;
  transitions: Array<{ id: string; name: string }>;
}
interface Typology {
  id: string;
  name: string;
  groupId: string;
  sell: number;
}
interface Dept {
  id: string;
  kind: DeptKind;
  company: Company;
  typologies: Typology[];
  staff: User[];
}
interface JobType {
  id: string;
  name: string;
  kind: DeptKind | null;
  serviceId: string;
  workTypeId: string;
}
interface Company {
  id: string;
  code: string;
  name: string;
  currency: string;
  currencyId: string;
  countryIso: string;
  depts: Dept[];
  vat: { standard: string; intermediate: string; reduced: string; exempt: string };
  pay: { immediate: string; d30: string; d60: string };
  services: Record<string, string>;
  workTypes: Record<string, string>;
  suppliers: string[];
  projectTypes: Record<string, string>;
  classifications: Record<string, string>;
  natures: Record<string, string>;
  jobTypes: JobType[];
  requestTypes: string[];
  estimateTypes: string[];
  contractTypes: string[];
  rateCardId: string;
  rateColumns: { y2024: string; y2025: string };
  /** 2025 sell rate by department and typology group. */
  rates: Map<string, number>;
  leaveTypes: { vac2024: string; vac2025: string; sick: string; medical: string };
  expenseTypes: Array<{ id: string; name: string; vatId: string; unit: number | null }>;
  holidays: Set<number>;
  staff: User[];
  internalJobs: Job[];
  domain: string;
}
interface User {
  id: string;
  name: string;
  company: Company;
  dept: Dept;
  typology: Typology;
  responsibleId: string | null;
  regular: boolean;
  active: boolean;
  firstDay: number;
  lastDay: number;
  hourly2025H1: number;
  hourly2025H2: number;
  requiredMinutes: number;
  pool: Job[];
}
interface ClientE {
  id: string;
  name: string;
  home: Company;
  companies: Company[];
  brands: string[];
  products: Array<{ id: string; brandId: string | null }>;
  billing: Map<string, string>;
  managerId: string;
  internal: boolean;
  contracts: Contract[];
  users: string[];
}
interface Contract {
  id: string;
  company: Company;
  client: ClientE;
}
interface Project {
  id: string;
  number: string;
  name: string;
  company: Company;
  client: ClientE;
  contractId: string | null;
  brandId: string | null;
  productId: string | null;
  start: number;
  end: number;
  stage: StageType;
  billable: boolean;
  managerId: string;
  estimates: Array<{ id: string; deptId: string; items: string[] }>;
  jobs: Job[];
}
interface Job {
  id: string;
  project: Project;
  start: number;
  end: number;
  workTypeId: string;
  billable: boolean;
  internal: boolean;
  stage: StageType;
}

// ---------------------------------------------------------------------------------------------------
// Generator
// ---------------------------------------------------------------------------------------------------

const LOAD_ORDER = [
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
type TableName = (typeof LOAD_ORDER)[number];

const TIMESHEET_COLS = [
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
] as const;

export async function generateDemoData(db: Db, tenantId: string, defaults: TenantDefaults, opts: DemoOptions): Promise<{ rows: Record<string, number> }> {
  const scale = opts.scale > 0 ? opts.scale : 1;
  const seed = (opts.seed ?? 1) >>> 0;
  const log = opts.log ?? (() => {});
  const started = Date.now();
  // One independent stream per area, so adding rows to one area does not reshuffle all the others.
  const rngFor = (area: string): Rng => new Rng(hashString(area) ^ Math.imul(seed + 1, 0x9e3779b1));
  const n = (perScale: number, min = 1): number => Math.max(min, Math.round(perScale * scale));

  const tables = new Map<TableName, Table>(LOAD_ORDER.map((t) => [t, new Table(t, tenantId)]));
  const add = (t: TableName, row: Record<string, unknown>): void => tables.get(t)!.add(row);
  const audit = (day: number, minute: number, by: string | null, modDay = day, modMinute = minute, modBy = by) => ({
    created_on_utc: ts(day, minute),
    created_by_id: by,
    modified_on_utc: ts(modDay, modMinute),
    modified_by_id: modBy,
  });

  // ---- What bootstrap created ----------------------------------------------------------------------
  const q = async <R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> => (await db.query<R>(text, values)).rows;
  const docTypeRows = await q<{ id: string; class_name: string }>('select id, class_name from document_types where tenant_id = $1', [tenantId]);
  const docType = (cls: string): string => {
    const row = docTypeRows.find((r) => r.class_name === cls);
    if (!row) throw new Error(`document type ${cls} missing: run createTenantDefaults first`);
    return row.id;
  };
  const stageTypeRows = await q<{ id: string; name: string }>('select id, name from workflow_stage_types where tenant_id = $1', [tenantId]);
  const stageTypeId = (name: StageType): string => {
    const row = stageTypeRows.find((r) => r.name === name);
    if (!row) throw new Error(`stage type ${name} missing: run createTenantDefaults first`);
    return row.id;
  };
  const [mainRow] = await q<{ name: string; currency_id: string | null; country_id: string | null }>(
    'select name, currency_id, country_id from companies where tenant_id = $1 and id = $2',
    [tenantId, defaults.companyId],
  );
  if (!mainRow) throw new Error('bootstrap company not found');
  const existingCurrencies = await q<{ id: string; iso_code: string }>('select id, iso_code from currencies where tenant_id = $1', [tenantId]);
  const existingCountries = await q<{ id: string; iso_code: string | null }>('select id, iso_code from countries where tenant_id = $1', [tenantId]);
  const existingWorkflows = await q<{ id: string; class_name: string }>(
    `select w.id, d.class_name from workflows w join document_types d on d.tenant_id = w.tenant_id and d.id = w.document_type_id
      where w.tenant_id = $1 and w.is_default order by w.created_on_utc, w.id`,
    [tenantId],
  );
  const existingStages = await q<{ id: string; workflow_id: string; stage_type_id: string }>(
    'select id, workflow_id, stage_type_id from workflow_stages where tenant_id = $1 order by sort_order, id',
    [tenantId],
  );
  const existingTransitions = await q<{ id: string; workflow_id: string; name: string }>(
    'select id, workflow_id, name from workflow_transitions where tenant_id = $1 order by sort_order, id',
    [tenantId],
  );
  const T = {
    job: docType('Deliverable'),
    project: docType('Project'),
    request: docType('Request'),
    estimate: docType('Estimate'),
    contract: docType('Contract'),
    bill: docType('Bill'),
    po: docType('PurchaseOrder'),
    expense: docType('Expense'),
    timesheet: docType('Timesheet'),
    leave: docType('Leave'),
    user: docType('User'),
    company: docType('Company'),
    client: docType('CommercialClient'),
  };

  // ---- Geography, currencies ----------------------------------------------------------------------
  const rGeo = rngFor('geo');
  const countryId = new Map<string, string>();
  const cityIds = new Map<string, string[]>();
  for (const c of COUNTRIES) {
    const existing = existingCountries.find((r) => r.iso_code === c.iso);
    const id = existing?.id ?? rGeo.uuid();
    countryId.set(c.iso, id);
    if (!existing) add('countries', { id, name: c.name, iso_code: c.iso, external_id: c.iso, ...audit(mkDay(2024, 1, 2), 600, null) });
    const ids: string[] = [];
    for (const city of c.cities) {
      const cid = rGeo.uuid();
      ids.push(cid);
      add('cities', {
        id: cid,
        country_id: id,
        name: city,
        external_id: `CITY-${city.slice(0, 3).toUpperCase()}-${c.iso}`,
        ...audit(mkDay(2024, 1, 2), 610, null),
      });
    }
    cityIds.set(c.iso, ids);
  }
  const currencyId = new Map<string, string>();
  for (const c of CURRENCIES) {
    const existing = existingCurrencies.find((r) => r.iso_code === c.iso);
    const id = existing?.id ?? rGeo.uuid();
    currencyId.set(c.iso, id);
    if (!existing) add('currencies', { id, name: c.name, iso_code: c.iso, symbol: c.symbol, external_id: c.iso, ...audit(mkDay(2024, 1, 2), 620, null) });
  }
  const mainCountryIso = existingCountries.find((r) => r.id === mainRow.country_id)?.iso_code ?? 'PT';
  const mainCurrencyIso = existingCurrencies.find((r) => r.id === mainRow.currency_id)?.iso_code ?? 'EUR';

  // ---- Files and folders (images are needed by companies, users and clients) -----------------------
  const rFiles = rngFor('files');
  const imagesFolder = rFiles.uuid();
  const projectsFolder = rFiles.uuid();
  add('folders', { id: imagesFolder, parent_id: null, name: 'Images', document_type_id: null, document_id: null, ...audit(mkDay(2024, 1, 2), 540, null) });
  add('folders', { id: projectsFolder, parent_id: null, name: 'Projects', document_type_id: null, document_id: null, ...audit(mkDay(2024, 1, 2), 541, null) });
  const imageFile = (name: string): string => {
    const id = rFiles.uuid();
    add('files', {
      id,
      folder_id: imagesFolder,
      name,
      content_type: 'image/png',
      size_bytes: rFiles.int(8_000, 200_000),
      storage_key: `images/${id}.png`,
      link_url: null,
      ...audit(mkDay(2024, 1, 3), rFiles.int(540, 1000), null),
    });
    return id;
  };

  // ---- Companies, organisation, taxes, payment conditions ------------------------------------------
  const rOrg = rngFor('org');
  const companies: Company[] = [];
  const newCompany = (id: string, code: string, name: string, countryIso: string, currency: string): Company => ({
    id,
    code,
    name,
    currency,
    currencyId: currencyId.get(currency)!,
    countryIso,
    depts: [],
    vat: { standard: '', intermediate: '', reduced: '', exempt: '' },
    pay: { immediate: '', d30: '', d60: '' },
    services: {},
    workTypes: {},
    suppliers: [],
    projectTypes: {},
    classifications: {},
    natures: {},
    jobTypes: [],
    requestTypes: [],
    estimateTypes: [],
    contractTypes: [],
    rateCardId: '',
    rateColumns: { y2024: '', y2025: '' },
    rates: new Map(),
    leaveTypes: { vac2024: '', vac2025: '', sick: '', medical: '' },
    expenseTypes: [],
    holidays: new Set(),
    staff: [],
    internalJobs: [],
    domain: `${code.toLowerCase()}.example.com`,
  });
  companies.push(newCompany(defaults.companyId, defaults.companyCode, mainRow.name, mainCountryIso, mainCurrencyIso));
  const extraCount = Math.min(EXTRA_COMPANIES.length, 1 + Math.floor(scale / 10));
  const usedCodes = new Set([defaults.companyCode]);
  const companyImages = new Map<string, string>();
  companyImages.set(defaults.companyId, imageFile(`logo-${defaults.companyCode.toLowerCase()}.png`));
  for (let i = 0; i < extraCount; i++) {
    const name = EXTRA_COMPANIES[i];
    let code = companyCodeFromName(name);
    for (let k = 2; usedCodes.has(code); k++) code = `${companyCodeFromName(name).slice(0, 8)}${k}`;
    usedCodes.add(code);
    const country = COUNTRIES[(i + 1) % COUNTRIES.length];
    const c = newCompany(rOrg.uuid(), code, name, country.iso, country.currency);
    companies.push(c);
    const img = imageFile(`logo-${code.toLowerCase()}.png`);
    companyImages.set(c.id, img);
    add('companies', {
      id: c.id,
      code,
      name,
      currency_id: c.currencyId,
      country_id: countryId.get(country.iso),
      image_file_id: img,
      timesheet_start: ds(mkDay(2024, 1, 1)),
      resource_type: 0,
      hours_type: 0,
      margin_type: 1,
      required_hours: 8,
      ...audit(mkDay(2024, 1, 5), 600 + i, null),
    });
  }
  const mainCompany = companies[0];

  const divisionIds = new Map<string, string>();
  for (const c of companies) {
    const isMain = c === mainCompany;
    const divNames = isMain ? ['Creative', 'Business'] : ['Creative', 'Business'];
    divNames.forEach((dn, i) => {
      const id = rOrg.uuid();
      divisionIds.set(`${c.id}:${dn}`, id);
      add('divisions', { id, company_id: c.id, name: dn, external_id: `DIV-00${i + (isMain ? 2 : 1)}`, ...audit(mkDay(2024, 1, 5), 620, null) });
    });
    if (isMain) divisionIds.set(`${c.id}:General`, defaults.divisionId);
    const kinds: DeptKind[] = isMain ? ['General', 'Creative', 'Digital', 'Accounts'] : ['Creative', 'Digital', 'Accounts'];
    kinds.forEach((kind, i) => {
      const id = isMain && kind === 'General' ? defaults.departmentId : rOrg.uuid();
      c.depts.push({ id, kind, company: c, typologies: [], staff: [] });
      if (isMain && kind === 'General') return;
      const div = kind === 'Accounts' ? 'Business' : 'Creative';
      add('departments', {
        id,
        company_id: c.id,
        division_id: divisionIds.get(`${c.id}:${div}`),
        name: kind,
        external_id: `DEP-${String(i + 1).padStart(3, '0')}`,
        ...audit(mkDay(2024, 1, 5), 630 + i, null),
      });
    });
    const vat = (name: string, pct: number, ext: string, isDefault: boolean): string => {
      const id = rOrg.uuid();
      add('vats', {
        id,
        company_id: c.id,
        name,
        percentage: pct,
        is_active: true,
        is_default: isDefault,
        external_id: ext,
        ...audit(mkDay(2024, 1, 5), 640, null),
      });
      return id;
    };
    c.vat = {
      standard: vat('Standard', 23, 'VAT23', true),
      intermediate: vat('Intermediate', 13, 'VAT13', false),
      reduced: vat('Reduced', 6, 'VAT06', false),
      exempt: vat('Exempt', 0, 'VAT00', false),
    };
    const pc = (name: string, days: number, ext: string, isDefault: boolean): string => {
      const id = rOrg.uuid();
      add('payment_conditions', { id, company_id: c.id, name, days, is_default: isDefault, external_id: ext, ...audit(mkDay(2024, 1, 5), 650, null) });
      return id;
    };
    c.pay = { immediate: pc('Immediate', 0, 'PC00', false), d30: pc('30 days', 30, 'PC30', true), d60: pc('60 days', 60, 'PC60', false) };
    for (const [m, d, name] of HOLIDAYS_2025) {
      const day = mkDay(2025, m, d);
      c.holidays.add(day);
      add('holidays', { id: rOrg.uuid(), company_id: c.id, date: ds(day), name, ...audit(mkDay(2024, 11, 15), 600, null) });
    }
    add('holidays', { id: rOrg.uuid(), company_id: c.id, date: ds(mkDay(2026, 1, 1)), name: "New Year's Day", ...audit(mkDay(2025, 11, 15), 600, null) });
  }

  // ---- Workflows, stages, teams, transitions -------------------------------------------------------
  const rWf = rngFor('workflows');
  const teamNames = ['Account Manager', 'Project Manager', 'Creative', 'Producer', 'Approver', 'Client Contact'];
  const team: Record<string, string> = {};
  for (const name of teamNames) {
    team[name] = rWf.uuid();
    add('teams', { id: team[name], name, external_id: `TEAM-${name.replace(/\s+/g, '').toUpperCase()}`, ...audit(mkDay(2024, 1, 4), 600, null) });
  }
  const workflows = new Map<string, Workflow>();
  for (const [cls, names] of Object.entries(WORKFLOW_STAGES)) {
    const existing = existingWorkflows.find((w) => w.class_name === cls);
    let wf: Workflow;
    if (existing) {
      const stage = {} as Record<StageType, string>;
      for (const st of STAGE_TYPE_NAMES) {
        const s = existingStages.find((r) => r.workflow_id === existing.id && r.stage_type_id === stageTypeId(st));
        if (!s) throw new Error(`default workflow of ${cls} has no ${st} stage`);
        stage[st] = s.id;
      }
      wf = { id: existing.id, stage, transitions: existingTransitions.filter((t) => t.workflow_id === existing.id).map((t) => ({ id: t.id, name: t.name })) };
    } else {
      const id = rWf.uuid();
      add('workflows', {
        id,
        document_type_id: docType(cls),
        name: `${cls.replace(/([a-z])([A-Z])/g, '$1 $2')} Workflow`,
        is_default: true,
        external_id: `WF-${cls.toUpperCase()}`,
        ...audit(mkDay(2024, 1, 4), 610, null),
      });
      const stage = {} as Record<StageType, string>;
      STAGE_TYPE_NAMES.forEach((st, i) => {
        stage[st] = rWf.uuid();
        add('workflow_stages', {
          id: stage[st],
          workflow_id: id,
          stage_type_id: stageTypeId(st),
          name: names[i],
          color: ['#9E9E9E', '#2196F3', '#4CAF50', '#F44336'][i],
          sort_order: i,
          is_initial: i === 0,
          external_id: `${cls.toUpperCase()}-${i + 1}`,
          ...audit(mkDay(2024, 1, 4), 611, null),
        });
      });
      const transitions: Workflow['transitions'] = [];
      TRANSITIONS.forEach(([name, from, to], i) => {
        const tid = rWf.uuid();
        transitions.push({ id: tid, name });
        add('workflow_transitions', {
          id: tid,
          workflow_id: id,
          from_stage_id: stage[from],
          to_stage_id: stage[to],
          name: `${name}`,
          external_id: `${cls.toUpperCase()}-T${i + 1}`,
          sort_order: i,
          request_confirmation: to === 'Canceled',
          must_send_notification: to !== 'Canceled',
          comment_required: name === 'Cancel' || name === 'Reopen',
          hours_required: cls === 'Deliverable' && to === 'Completed',
          file_upload_required: cls === 'Bill' && to === 'Completed',
          file_upload_folder: cls === 'Bill' && to === 'Completed' ? 'Receipts' : null,
          query_validation:
            cls === 'Estimate' && to === 'Completed' ? 'select count(*) = 0 from estimate_items where estimate_id = @Id and quantity <= 0' : null,
          motives: to === 'Canceled' ? ['Client canceled', 'Budget cut', 'Duplicate'] : [],
          actions: to === 'Completed' ? [{ type: 'SendEmail', to: 'Team' }] : [],
          roles: name === 'Reopen' ? ['Administrator'] : ['Administrator', 'Producer'],
          ...audit(mkDay(2024, 1, 4), 612, null),
        });
      });
      wf = { id, stage, transitions };
    }
    workflows.set(cls, wf);
    for (const st of ['Draft', 'In Progress'] as const) {
      for (const tn of ['Account Manager', 'Project Manager']) add('workflow_stage_write_teams', { id: rWf.uuid(), stage_id: wf.stage[st], team_id: team[tn] });
    }
  }
  const wf = (cls: string): Workflow => workflows.get(cls)!;

  const botRows: Array<[string, string, boolean, unknown]> = [
    ['Deliverable', 'Standard Job', true, null],
    ['Deliverable', 'Retainer Job', false, { requiresContract: true }],
    ['Project', 'Standard Project', true, null],
    ['Request', 'Creative Request', true, { defaultPriority: 1 }],
    ['Estimate', 'Standard Estimate', true, { showMargins: true }],
    ['Contract', 'Standard Contract', true, null],
  ];
  const bot = new Map<string, string>();
  for (const [cls, name, isDefault, configuration] of botRows) {
    const id = rWf.uuid();
    bot.set(name, id);
    add('business_object_types', { id, document_type_id: docType(cls), name, is_default: isDefault, configuration, ...audit(mkDay(2024, 1, 4), 620, null) });
  }
  const briefing = [rWf.uuid(), rWf.uuid()];
  add('briefing_templates', {
    id: briefing[0],
    name: 'Creative Brief',
    content_html: '<h2>Objective</h2><p></p><h2>Audience</h2><p></p><h2>Deliverables</h2><p></p>',
    ...audit(mkDay(2024, 1, 4), 630, null),
  });
  add('briefing_templates', {
    id: briefing[1],
    name: 'Digital Brief',
    content_html: '<h2>Goal</h2><p></p><h2>Channels</h2><p></p><h2>KPIs</h2><p></p>',
    ...audit(mkDay(2024, 1, 4), 631, null),
  });

  // ---- Typology groups and typologies ---------------------------------------------------------------
  const rTyp = rngFor('typologies');
  const groupId = new Map<string, string>([['Staff', defaults.typologyGroupId]]);
  TYPOLOGY_GROUPS.forEach((g, i) => {
    const id = rTyp.uuid();
    groupId.set(g, id);
    add('typology_groups', {
      id,
      name: g,
      external_id: `TG-${String(i + 2).padStart(3, '0')}`,
      company_id: mainCompany.id,
      ...audit(mkDay(2024, 1, 6), 600, null),
    });
  });
  for (const c of companies) {
    for (const [g, id] of groupId) {
      if (g === 'Staff' && c === mainCompany) continue; // linked by bootstrap
      add('typology_group_companies', { id: rTyp.uuid(), typology_group_id: id, company_id: c.id });
    }
    for (const d of c.depts) {
      let seq = d.id === defaults.departmentId ? 1 : 0;
      if (d.id === defaults.departmentId) d.typologies.push({ id: defaults.typologyId, name: 'Staff', groupId: defaults.typologyGroupId, sell: 70 });
      const linked = new Set<string>(d.id === defaults.departmentId ? [defaults.typologyGroupId] : []);
      for (const [name, g, sell] of TYPOLOGIES[d.kind]) {
        seq++;
        const t: Typology = { id: rTyp.uuid(), name, groupId: groupId.get(g)!, sell };
        d.typologies.push(t);
        add('typologies', {
          id: t.id,
          department_id: d.id,
          typology_group_id: t.groupId,
          name,
          external_id: `TYP-${String(seq).padStart(3, '0')}`,
          plannable: d.kind !== 'General',
          is_active: true,
          hourly_value: sell,
          ...audit(mkDay(2024, 1, 6), 610, null),
        });
        if (!linked.has(t.groupId)) {
          linked.add(t.groupId);
          add('typology_group_departments', { id: rTyp.uuid(), typology_group_id: t.groupId, department_id: d.id });
        }
      }
    }
  }

  // ---- Users, employees, user costs, typology history -----------------------------------------------
  const rUsers = rngFor('users');
  const staffCount = n(20, 8);
  const users: User[] = [];
  const userNames = new Set<string>();
  const uniqueUserName = (first: string, last: string): string => {
    const base = `${first}.${last}`.toLowerCase();
    let name = base;
    for (let k = 2; userNames.has(name); k++) name = `${base}${k}`;
    userNames.add(name);
    return name;
  };
  const deptManager = new Map<string, User>();
  const extraCompanies = companies.slice(1);
  for (let i = 0; i < staffCount; i++) {
    let company: Company;
    let dept: Dept;
    if (i < 2) {
      company = mainCompany;
      dept = mainCompany.depts[0];
    } else {
      company = extraCompanies.length > 0 && (i - 2) % 2 === 1 ? extraCompanies[Math.floor((i - 2) / 2) % extraCompanies.length] : mainCompany;
      const workDepts = company.depts.filter((d) => d.kind !== 'General');
      dept = workDepts[(i + Math.floor(i / 7)) % workDepts.length];
    }
    const manager = deptManager.get(dept.id);
    const typology =
      i === 0
        ? dept.typologies.find((t) => t.name === 'Managing Director')!
        : i === 1
          ? dept.typologies.find((t) => t.name === 'Office Manager')!
          : manager
            ? rUsers.pick(dept.typologies.slice(1))
            : dept.typologies[0];
    const first = rUsers.pick(FIRST);
    const last = rUsers.pick(LAST);
    const regular = i < 2 || !manager || rUsers.chance(0.85);
    const inactive = i >= 2 && manager !== undefined && rUsers.chance(0.03);
    const lateHire = i >= 2 && manager !== undefined && !inactive && rUsers.chance(0.05);
    const hire = lateHire ? YEAR_START + rUsers.int(20, 160) : mkDay(rUsers.int(2012, 2024), rUsers.int(1, 12), rUsers.int(1, 28));
    const sell = typology.sell;
    const h1 = round2(sell * (0.33 + rUsers.next() * 0.12));
    const u: User = {
      id: rUsers.uuid(),
      name: `${first} ${last}`,
      company,
      dept,
      typology,
      responsibleId: i === 0 ? null : manager ? manager.id : users[0].id,
      regular,
      active: !inactive,
      firstDay: Math.max(YEAR_START, hire),
      lastDay: inactive ? mkDay(2025, 9, 30) : YEAR_END,
      hourly2025H1: h1,
      hourly2025H2: round2(h1 * 1.03),
      requiredMinutes: 480,
      pool: [],
    };
    if (!manager && i >= 2) deptManager.set(dept.id, u);
    if (i === 0) deptManager.set(dept.id, u);
    users.push(u);
    dept.staff.push(u);
    company.staff.push(u);
    const userName = uniqueUserName(first, last);
    const email = `${userName}@${company.domain}`;
    const ext = `EMP${String(10001 + i)}`;
    let employeeId: string | null = null;
    if (regular) {
      employeeId = rUsers.uuid();
      add('employees', {
        id: employeeId,
        company_id: company.id,
        name: u.name,
        external_id: ext,
        is_active: !inactive,
        max_value: 1500,
        ...audit(hire < YEAR_START ? mkDay(2024, 1, 8) : hire - 3, 600, null),
      });
    }
    const city = rUsers.pick(cityIds.get(company.countryIso)!);
    const createdDay = hire < mkDay(2024, 1, 8) ? mkDay(2024, 1, 8) : hire - 3;
    add('users', {
      id: u.id,
      user_name: userName,
      name: u.name,
      email,
      password_hash: null,
      is_active: !inactive,
      inactivated_on_utc: inactive ? ts(mkDay(2025, 10, 1), 540) : null,
      external_id: ext,
      external_number: `P${String(5001 + i)}`,
      company_id: company.id,
      department_id: dept.id,
      typology_id: typology.id,
      user_type_id: regular ? defaults.userTypeIds.regular : defaults.userTypeIds.temporary,
      employee_id: employeeId,
      responsible_id: u.responsibleId,
      city_id: city,
      image_file_id: rUsers.chance(0.5) ? imageFile(`avatar-${userName}.png`) : null,
      timesheet_required: regular,
      hire_date: ds(hire),
      start_date: ds(hire),
      expiration_date: inactive ? ds(mkDay(2025, 9, 30)) : null,
      sso_user_name: email,
      sso_only: rUsers.chance(0.3),
      ad_user_name: rUsers.chance(0.5) ? `CORP\\${userName}` : null,
      phone: `+351 21 ${rUsers.int(100, 999)} ${rUsers.int(1000, 9999)}`,
      tax_payer_number: String(rUsers.int(100000000, 299999999)),
      change_password_on_first_logon: false,
      required_weekly_hours: 40,
      required_hours: 8,
      leave_day_hours: 8,
      weekly_overtime_threshold_hours: 40,
      tolerance: 10,
      entry_time_total_minutes: 540,
      exit_time_total_minutes: 1080,
      entry_time_tolerance_total_minutes: 15,
      exit_time_tolerance_total_minutes: 15,
      offset_total_minutes: 0,
      paid_undertime: false,
      paid_overtime: rUsers.chance(0.4),
      tags: rUsers.chance(0.3) ? [rUsers.pick(['Senior', 'Remote', 'Mentor', 'New Joiner'])] : null,
      ...audit(createdDay, 600, users[0].id === u.id ? null : users[0].id, mkDay(2025, rUsers.int(1, 12), rUsers.int(1, 28)), 700),
    });
    add('user_costs', {
      id: rUsers.uuid(),
      user_id: u.id,
      company_id: company.id,
      currency_id: company.currencyId,
      monthly_value: round2(h1 * 168),
      hourly_value: h1,
      start_date: ds(mkDay(2024, 1, 1)),
      end_date: ds(mkDay(2025, 6, 30)),
      ...audit(mkDay(2024, 1, 8), 610, users[0].id),
    });
    add('user_costs', {
      id: rUsers.uuid(),
      user_id: u.id,
      company_id: company.id,
      currency_id: company.currencyId,
      monthly_value: round2(u.hourly2025H2 * 168),
      hourly_value: u.hourly2025H2,
      start_date: ds(mkDay(2025, 7, 1)),
      end_date: null,
      ...audit(mkDay(2025, 6, 20), 610, users[0].id),
    });
    const changed = dept.typologies.length > 1 && rUsers.chance(0.2) && hire < mkDay(2023, 1, 1);
    if (changed) {
      const prev = dept.typologies.find((t) => t.id !== typology.id)!;
      add('user_typology_histories', {
        id: rUsers.uuid(),
        user_id: u.id,
        typology_id: prev.id,
        start_date: ds(hire),
        end_date: ds(mkDay(2023, 6, 30)),
        ...audit(mkDay(2024, 1, 8), 620, users[0].id),
      });
    }
    add('user_typology_histories', {
      id: rUsers.uuid(),
      user_id: u.id,
      typology_id: typology.id,
      start_date: ds(changed ? mkDay(2023, 7, 1) : hire),
      end_date: null,
      ...audit(mkDay(2024, 1, 8), 621, users[0].id),
    });
  }
  const ceo = users[0];
  const officeManager = users[1];
  const staffOf = (c: Company): User[] => (c.staff.length > 0 ? c.staff : users);
  const staffOfDept = (d: Dept): User[] => (d.staff.length > 0 ? d.staff : staffOf(d.company));
  const accountsDept = (c: Company): Dept => c.depts.find((d) => d.kind === 'Accounts')!;

  // ---- Services, work types, suppliers, catalogues ---------------------------------------------------
  const rCat = rngFor('catalogues');
  const serviceDefs: ReadonlyArray<[string, string, boolean, string, boolean]> = [
    // name, group, unit_hour, unit, internal
    ['Project Management', 'Creative Services', true, 'h', false],
    ['Creative Hours', 'Creative Services', true, 'h', false],
    ['Copywriting', 'Creative Services', true, 'h', false],
    ['Web Development', 'Digital', true, 'h', false],
    ['Video Production', 'Production', false, 'day', false],
    ['Printing', 'Third Party', false, 'un', false],
    ['Photography', 'Third Party', false, 'un', false],
    ['Travel Expenses', 'Third Party', false, 'un', false],
    ['Internal Time', 'Creative Services', true, 'h', true],
  ];
  for (const c of companies) {
    const groups = new Map<string, string>();
    for (const g of ['Creative Services', 'Digital', 'Production', 'Third Party']) {
      const id = rCat.uuid();
      groups.set(g, id);
      add('service_groups', { id, company_id: c.id, name: g, external_id: `SG-${g.slice(0, 3).toUpperCase()}`, ...audit(mkDay(2024, 1, 7), 600, ceo.id) });
    }
    serviceDefs.forEach(([name, g, unitHour, unit, internal], i) => {
      const id = rCat.uuid();
      c.services[name] = id;
      add('services', {
        id,
        company_id: c.id,
        service_group_id: groups.get(g),
        vat_id: c.vat.standard,
        name,
        external_id: `SRV-${String(i + 1).padStart(3, '0')}`,
        is_active: true,
        internal_service: internal,
        department_required: unitHour && !internal,
        unit_hour: unitHour,
        unit,
        default_margin: g === 'Third Party' ? 15 : 35,
        vat_deductible_percentage: name === 'Travel Expenses' ? 50 : 100,
        ...audit(mkDay(2024, 1, 7), 610, ceo.id),
      });
    });
    for (const wt of ['Billable Work', 'Meeting', 'Pitch', 'Training', 'Administrative']) {
      const id = rCat.uuid();
      c.workTypes[wt] = id;
      add('work_types', {
        id,
        company_id: c.id,
        name: wt,
        external_id: `WT-${wt.slice(0, 4).toUpperCase()}`,
        is_active: true,
        ...audit(mkDay(2024, 1, 7), 620, ceo.id),
      });
    }
    const supplierCount = 4 + Math.round(scale);
    for (let i = 0; i < supplierCount; i++) {
      const [sname, category] = SUPPLIERS[i % SUPPLIERS.length];
      const id = rCat.uuid();
      c.suppliers.push(id);
      const country = COUNTRIES.find((x) => x.iso === c.countryIso)!;
      add('suppliers', {
        id,
        company_id: c.id,
        department_id: rCat.pick(c.depts).id,
        related_company_id: null,
        related_department_id: null,
        name: i < SUPPLIERS.length ? `${sname} ${country.suffix}` : `${sname} ${Math.floor(i / SUPPLIERS.length) + 1} ${country.suffix}`,
        external_id: `SUP-${String(i + 1).padStart(3, '0')}`,
        category,
        currency_id: c.currencyId,
        vat_id: c.vat.standard,
        payment_condition_id: rCat.pick([c.pay.d30, c.pay.d60]),
        email: `billing@${sname.toLowerCase().replace(/[^a-z]/g, '')}${i}.example.net`,
        remarks: rCat.chance(0.2) ? 'Preferred supplier' : null,
        discount_percentage: rCat.int(0, 10),
        volume_discount_percentage: rCat.int(0, 5),
        other_creditor: false,
        street: `${rCat.int(1, 200)} Industrial Road`,
        street2: null,
        zip_postal: String(rCat.int(1000, 9999)),
        state_province: null,
        city: null,
        city_id: rCat.pick(cityIds.get(c.countryIso)!),
        country_id: countryId.get(c.countryIso),
        tax_payer_number: String(rCat.int(500000000, 599999999)),
        is_active: rCat.chance(0.95),
        ...audit(mkDay(2024, 2, 1), 600 + i, ceo.id),
      });
    }
    for (const [name, template, deliverable] of [
      ['Campaign', 'campaign.docx', false],
      ['Retainer', 'retainer.docx', false],
      ['Internal', null, false],
    ] as const) {
      const id = rCat.uuid();
      c.projectTypes[name] = id;
      add('project_types', {
        id,
        company_id: c.id,
        document_type_id: T.project,
        name,
        template_file_name: template,
        allows_timesheet: true,
        is_deliverable: deliverable,
        is_active: true,
        ...audit(mkDay(2024, 1, 7), 630, ceo.id),
      });
    }
    for (const [name, code, billable, isDefault] of [
      ['Billable', 'BIL', true, true],
      ['Non-billable', 'NB', false, false],
      ['Pitch', 'PIT', false, false],
    ] as const) {
      const id = rCat.uuid();
      c.classifications[name] = id;
      add('project_classifications', {
        id,
        company_id: c.id,
        name,
        code,
        is_active: true,
        billable,
        is_default: isDefault,
        ...audit(mkDay(2024, 1, 7), 640, ceo.id),
      });
    }
    for (const [name, code] of [
      ['New Business', 'NEW'],
      ['Recurring', 'REC'],
      ['Internal', 'INT'],
    ] as const) {
      const id = rCat.uuid();
      c.natures[name] = id;
      add('project_natures', { id, company_id: c.id, name, code, is_active: true, ...audit(mkDay(2024, 1, 7), 650, ceo.id) });
    }
    const jobTypeDefs: ReadonlyArray<[string, string, DeptKind | null, string, string, string]> = [
      // name, code, department kind, service, work type, document class
      ['Design', 'DES', 'Creative', 'Creative Hours', 'Billable Work', 'Deliverable'],
      ['Copywriting', 'CPY', 'Creative', 'Copywriting', 'Billable Work', 'Deliverable'],
      ['Video Production', 'VID', 'Digital', 'Video Production', 'Billable Work', 'Deliverable'],
      ['Web Development', 'WEB', 'Digital', 'Web Development', 'Billable Work', 'Deliverable'],
      ['Account Management', 'ACC', 'Accounts', 'Project Management', 'Billable Work', 'Deliverable'],
      ['Internal', 'INT', null, 'Internal Time', 'Administrative', 'Deliverable'],
      ['Creative Request', 'REQ', null, 'Creative Hours', 'Billable Work', 'Request'],
      ['Change Request', 'CHG', null, 'Creative Hours', 'Billable Work', 'Request'],
      ['Fixed Price', 'FP', null, 'Project Management', 'Billable Work', 'Estimate'],
      ['Time & Materials', 'TM', null, 'Project Management', 'Billable Work', 'Estimate'],
      ['Retainer Contract', 'RET', null, 'Project Management', 'Billable Work', 'Contract'],
      ['Framework Agreement', 'FWA', null, 'Project Management', 'Billable Work', 'Contract'],
    ];
    for (const [name, code, kind, service, workType, cls] of jobTypeDefs) {
      const id = rCat.uuid();
      const dept = kind ? c.depts.find((d) => d.kind === kind)! : null;
      add('job_types', {
        id,
        company_id: c.id,
        department_id: dept?.id ?? null,
        document_type_id: docType(cls),
        business_object_type_id:
          cls === 'Deliverable'
            ? bot.get(code === 'ACC' ? 'Retainer Job' : 'Standard Job')
            : cls === 'Request'
              ? bot.get('Creative Request')
              : cls === 'Estimate'
                ? bot.get('Standard Estimate')
                : bot.get('Standard Contract'),
        workflow_id: wf(cls).id,
        briefing_template_id: cls === 'Deliverable' || cls === 'Request' ? briefing[kind === 'Digital' ? 1 : 0] : null,
        service_id: c.services[service],
        work_type_id: c.workTypes[workType],
        name,
        code,
        duration_days: cls === 'Deliverable' ? rCat.int(5, 30) : null,
        is_active: true,
        is_retainer: code === 'ACC' || code === 'RET',
        plannable: code !== 'INT',
        is_deliverable: cls === 'Deliverable' && code !== 'INT',
        allow_all_job_types: code === 'INT',
        accessible_to_all_departments: dept === null,
        allows_timesheet: cls === 'Deliverable',
        style: { color: `#${hex32(rCat.u32()).slice(0, 6)}`, icon: code.toLowerCase() },
        ...audit(mkDay(2024, 1, 7), 660, ceo.id),
      });
      if (cls === 'Deliverable') c.jobTypes.push({ id, name, kind, serviceId: c.services[service], workTypeId: c.workTypes[workType] });
      else if (cls === 'Request') c.requestTypes.push(id);
      else if (cls === 'Estimate') c.estimateTypes.push(id);
      else c.contractTypes.push(id);
    }
    // Completing a job is restricted to the creative types in the job workflow.
    const complete = wf('Deliverable').transitions.find((t) => t.name === 'Complete');
    if (complete)
      for (const jt of c.jobTypes.filter((j) => j.kind === 'Creative'))
        add('workflow_transition_types', { id: rCat.uuid(), transition_id: complete.id, job_type_id: jt.id });

    // Rate card: one per company, a 2024 and a 2025 column, one row per department x typology group.
    c.rateCardId = rCat.uuid();
    add('rate_cards', {
      id: c.rateCardId,
      company_id: c.id,
      currency_id: c.currencyId,
      name: `Standard Rates ${c.code}`,
      ...audit(mkDay(2024, 1, 7), 670, ceo.id),
    });
    c.rateColumns = { y2024: rCat.uuid(), y2025: rCat.uuid() };
    add('rate_card_columns', {
      id: c.rateColumns.y2024,
      rate_card_id: c.rateCardId,
      name: '2024 Rates',
      is_active: false,
      start_date: ds(mkDay(2024, 1, 1)),
      end_date: ds(mkDay(2024, 12, 31)),
      sort_order: 0,
      ...audit(mkDay(2024, 1, 7), 671, ceo.id),
    });
    add('rate_card_columns', {
      id: c.rateColumns.y2025,
      rate_card_id: c.rateCardId,
      name: '2025 Rates',
      is_active: true,
      start_date: ds(mkDay(2025, 1, 1)),
      end_date: ds(mkDay(2025, 12, 31)),
      sort_order: 1,
      ...audit(mkDay(2024, 12, 1), 671, ceo.id),
    });
    const rateItem = (deptId: string | null, typologyGroupId: string | null, userId: string | null, rate: number): void => {
      const id = rCat.uuid();
      add('rate_card_items', {
        id,
        rate_card_id: c.rateCardId,
        department_id: deptId,
        typology_group_id: typologyGroupId,
        user_id: userId,
        ...audit(mkDay(2024, 1, 7), 672, ceo.id),
      });
      add('rate_card_item_values', {
        id: rCat.uuid(),
        rate_card_item_id: id,
        rate_card_column_id: c.rateColumns.y2024,
        value: round2(rate * 0.95),
        ...audit(mkDay(2024, 1, 7), 673, ceo.id),
      });
      add('rate_card_item_values', {
        id: rCat.uuid(),
        rate_card_item_id: id,
        rate_card_column_id: c.rateColumns.y2025,
        value: rate,
        ...audit(mkDay(2024, 12, 1), 673, ceo.id),
      });
    };
    for (const d of c.depts) {
      const byGroup = new Map<string, number[]>();
      for (const t of d.typologies) byGroup.set(t.groupId, [...(byGroup.get(t.groupId) ?? []), t.sell]);
      for (const [g, sells] of byGroup) {
        const rate = round2(sells.reduce((a, b) => a + b, 0) / sells.length);
        c.rates.set(`${d.id}:${g}`, rate);
        rateItem(d.id, g, null, rate);
      }
      const mgr = deptManager.get(d.id);
      if (mgr && mgr.company === c) rateItem(d.id, mgr.typology.groupId, mgr.id, mgr.typology.sell + 20);
    }
    const lt = (name: string, ext: string, year: number | null, expires: number | null, hourly: boolean): string => {
      const id = rCat.uuid();
      add('leave_types', {
        id,
        company_id: c.id,
        name,
        external_id: ext,
        year,
        expires_on: expires === null ? null : ds(expires),
        is_hourly: hourly,
        is_active: true,
        ...audit(mkDay(2024, 1, 7), 680, ceo.id),
      });
      return id;
    };
    c.leaveTypes = {
      vac2024: lt('Vacation 2024', 'VAC24', 2024, mkDay(2025, 3, 31), false),
      vac2025: lt('Vacation 2025', 'VAC25', 2025, mkDay(2026, 3, 31), false),
      sick: lt('Sick Leave', 'SICK', null, null, false),
      medical: lt('Medical Appointment', 'MED', null, null, true),
    };
    for (const [name, vatKey, unit, deductible] of [
      ['Meals', 'reduced', null, 0],
      ['Travel', 'standard', null, 100],
      ['Mileage', 'exempt', 0.36, 0],
      ['Accommodation', 'intermediate', null, 100],
      ['Office Supplies', 'standard', null, 100],
    ] as const) {
      const id = rCat.uuid();
      c.expenseTypes.push({ id, name, vatId: c.vat[vatKey], unit });
      add('expense_types', {
        id,
        company_id: c.id,
        vat_id: c.vat[vatKey],
        name,
        external_id: `EXP-${name.slice(0, 4).toUpperCase()}`,
        vat_deductible_percentage: deductible,
        value: unit,
        is_active: true,
        ...audit(mkDay(2024, 1, 7), 690, ceo.id),
      });
    }
  }
  // Intercompany suppliers: the main company buys from the other companies of the group.
  for (const c of extraCompanies) {
    const id = rCat.uuid();
    mainCompany.suppliers.push(id);
    add('suppliers', {
      id,
      company_id: mainCompany.id,
      department_id: accountsDept(mainCompany).id,
      related_company_id: c.id,
      related_department_id: c.depts[0].id,
      name: c.name,
      external_id: `IC-${c.code}`,
      category: 'Intercompany',
      currency_id: c.currencyId,
      vat_id: mainCompany.vat.exempt,
      payment_condition_id: mainCompany.pay.d60,
      email: `finance@${c.domain}`,
      remarks: 'Intercompany',
      discount_percentage: 0,
      volume_discount_percentage: 0,
      other_creditor: true,
      street: null,
      street2: null,
      zip_postal: null,
      state_province: null,
      city: COUNTRIES.find((x) => x.iso === c.countryIso)!.cities[0],
      city_id: null,
      country_id: countryId.get(c.countryIso),
      tax_payer_number: null,
      is_active: true,
      ...audit(mkDay(2024, 2, 1), 700, ceo.id),
    });
  }

  // ---- Clients: groups, commercial clients, billing clients, brands, products, client users --------
  const rCli = rngFor('clients');
  const groupNames = ['Retail', 'FMCG', 'Automotive', 'Financial Services', 'Telecom', 'Public Sector'];
  const clientGroups = groupNames.map((name, i) => {
    const id = rCli.uuid();
    add('client_groups', { id, name, external_id: `CG-${String(i + 1).padStart(2, '0')}`, ...audit(mkDay(2024, 1, 9), 600, ceo.id) });
    return id;
  });
  const clients: ClientE[] = [];
  const clientCount = n(8, 4);
  const makeClient = (i: number, internal: boolean, home: Company, name: string, ext: string): ClientE => {
    const companiesOf = [home];
    if (!internal && extraCompanies.length > 0 && rCli.chance(0.3)) {
      const other = rCli.pick(companies.filter((c) => c !== home));
      companiesOf.push(other);
    }
    const acc = accountsDept(home);
    const managerId = rCli.pick(staffOfDept(acc)).id;
    const cl: ClientE = {
      id: rCli.uuid(),
      name,
      home,
      companies: companiesOf,
      brands: [],
      products: [],
      billing: new Map(),
      managerId,
      internal,
      contracts: [],
      users: [],
    };
    const country = COUNTRIES.find((x) => x.iso === home.countryIso)!;
    const cityIdx = rCli.int(0, country.cities.length - 1);
    const stageType: StageType = internal ? 'In Progress' : rCli.chance(0.85) ? 'In Progress' : rCli.chance(0.66) ? 'Draft' : 'Completed';
    const created = mkDay(2024, rCli.int(1, 12), rCli.int(1, 28));
    add('commercial_clients', {
      id: cl.id,
      name,
      external_id: ext,
      code: internal ? `INT${home.code}`.slice(0, 12) : `C${String(i + 1).padStart(4, '0')}`,
      number: String(1000 + i),
      email: `contact@${name.toLowerCase().replace(/[^a-z]/g, '')}.example.org`,
      phone: `+351 22 ${rCli.int(100, 999)} ${rCli.int(1000, 9999)}`,
      head_office: internal ? home.name : `${name} HQ`,
      street: `${rCli.int(1, 300)} ${rCli.pick(['Main Street', 'Avenue of Liberty', 'Harbour Road', 'Market Square'])}`,
      street2: rCli.chance(0.3) ? `Floor ${rCli.int(1, 9)}` : null,
      zip_postal: String(rCli.int(1000, 9999)),
      state_province: null,
      city: country.cities[cityIdx],
      country: country.name,
      city_id: cityIds.get(country.iso)![cityIdx],
      country_id: countryId.get(country.iso),
      tax_payer_number: String(rCli.int(500000000, 599999999)),
      company_id: home.id,
      client_group_id: internal ? null : rCli.pick(clientGroups),
      commercial_payment_condition_id: home.pay.d30,
      manager_id: managerId,
      owner_id: rCli.pick(staffOf(home)).id,
      timesheet_level_id: null,
      classification: internal ? 'Internal' : rCli.pick(['Key Account', 'Standard', 'Occasional']),
      allows_timesheet: true,
      blocked: !internal && rCli.chance(0.03),
      margin: internal ? 0 : rCli.int(20, 45),
      supplier_margin: internal ? 0 : rCli.int(5, 20),
      full_time_employee_time: internal ? null : rCli.int(0, 4) * 0.5,
      workflow_id: wf('CommercialClient').id,
      stage_id: wf('CommercialClient').stage[stageType],
      image_file_id: rCli.chance(0.5) ? imageFile(`client-${ext.toLowerCase()}.png`) : null,
      ...audit(created, 600, ceo.id, Math.min(NOW - 1, created + rCli.int(10, 500)), 700, managerId),
    });
    for (const c of companiesOf) {
      const billingId = rCli.uuid();
      cl.billing.set(c.id, billingId);
      add('billing_clients', {
        id: billingId,
        company_id: c.id,
        name: `${name} ${country.suffix}`,
        external_id: ext,
        code: `B${String(i + 1).padStart(4, '0')}`,
        number: String(2000 + i),
        street: `${rCli.int(1, 300)} Finance Street`,
        street2: null,
        zip_postal: String(rCli.int(1000, 9999)),
        state_province: null,
        city: country.cities[cityIdx],
        country: country.name,
        city_id: cityIds.get(country.iso)![cityIdx],
        country_id: countryId.get(country.iso),
        tax_payer_number: String(rCli.int(500000000, 599999999)),
        payment_condition_id: c.pay.d30,
        currency_id: c.currencyId,
        is_active: true,
        other_debtor: false,
        ...audit(created, 610, ceo.id),
      });
      add('commercial_client_companies', {
        id: rCli.uuid(),
        company_id: c.id,
        commercial_client_id: cl.id,
        billing_client_id: billingId,
        external_id: ext,
        vat_external_id: 'VAT23',
        ...audit(created, 620, ceo.id),
      });
      add('client_companies', { id: rCli.uuid(), commercial_client_id: cl.id, company_id: c.id });
    }
    if (!internal) {
      for (let b = 0; b < 2; b++) {
        const brandId = rCli.uuid();
        cl.brands.push(brandId);
        add('brands', {
          id: brandId,
          commercial_client_id: cl.id,
          name: `${BRAND_WORDS[(i + b * 5) % BRAND_WORDS.length]}${i >= BRAND_WORDS.length ? ` ${i}` : ''}`,
          external_id: `BR-${i + 1}-${b + 1}`,
          is_active: true,
          ...audit(created, 630, managerId),
        });
        for (let p = 0; p < 2; p++) {
          const productId = rCli.uuid();
          cl.products.push({ id: productId, brandId });
          add('products', {
            id: productId,
            commercial_client_id: cl.id,
            brand_id: brandId,
            name: `${BRAND_WORDS[(i + b * 5) % BRAND_WORDS.length]} ${PRODUCT_WORDS[(b * 2 + p + i) % PRODUCT_WORDS.length]}`,
            code: `P${i + 1}${b + 1}${p + 1}`,
            external_id: `PRD-${i + 1}-${b + 1}-${p + 1}`,
            is_active: true,
            ...audit(created, 640, managerId),
          });
        }
      }
      const productId = rCli.uuid();
      cl.products.push({ id: productId, brandId: null });
      add('products', {
        id: productId,
        commercial_client_id: cl.id,
        brand_id: null,
        name: `${name} Corporate`,
        code: `P${i + 1}00`,
        external_id: `PRD-${i + 1}-0`,
        is_active: true,
        ...audit(created, 641, managerId),
      });
    }
    clients.push(cl);
    return cl;
  };
  for (let i = 0; i < clientCount; i++) {
    const home = i < companies.length ? companies[i] : rCli.chance(0.6) || extraCompanies.length === 0 ? mainCompany : rCli.pick(extraCompanies);
    const round = Math.floor(i / (CLIENT_ADJ.length * CLIENT_NOUN.length));
    const name = `${CLIENT_ADJ[i % CLIENT_ADJ.length]} ${CLIENT_NOUN[Math.floor(i / CLIENT_ADJ.length) % CLIENT_NOUN.length]}${round > 0 ? ` ${round + 1}` : ''}`;
    makeClient(i, false, home, name, `CLI-${String(i + 1).padStart(5, '0')}`);
  }
  const internalClient = new Map<string, ClientE>();
  companies.forEach((c, k) => {
    internalClient.set(c.id, makeClient(clientCount + k, true, c, `${c.name} (Internal)`, `INT-${c.code}`));
  });
  const realClients = clients.filter((c) => !c.internal);

  // Client-portal users: one for every fourth client.
  const rCU = rngFor('client-users');
  for (let i = 0; i < realClients.length; i += 4) {
    const cl = realClients[i];
    const first = rCU.pick(FIRST);
    const last = rCU.pick(LAST);
    const userName = uniqueUserName(first, last);
    const id = rCU.uuid();
    cl.users.push(id);
    const email = `${userName}@${cl.name.toLowerCase().replace(/[^a-z]/g, '')}.example.org`;
    add('users', {
      id,
      user_name: userName,
      name: `${first} ${last}`,
      email,
      password_hash: null,
      is_active: true,
      inactivated_on_utc: null,
      external_id: `CU${String(i + 1).padStart(5, '0')}`,
      external_number: null,
      company_id: cl.home.id,
      department_id: accountsDept(cl.home).id,
      typology_id: accountsDept(cl.home).typologies[0].id,
      user_type_id: defaults.userTypeIds.temporary,
      employee_id: null,
      responsible_id: cl.managerId,
      city_id: null,
      image_file_id: null,
      timesheet_required: false,
      hire_date: null,
      start_date: ds(mkDay(2025, 1, 10)),
      expiration_date: null,
      sso_user_name: null,
      sso_only: false,
      ad_user_name: null,
      phone: null,
      tax_payer_number: null,
      change_password_on_first_logon: true,
      required_weekly_hours: 0,
      required_hours: 0,
      leave_day_hours: 0,
      weekly_overtime_threshold_hours: null,
      tolerance: null,
      entry_time_total_minutes: null,
      exit_time_total_minutes: null,
      entry_time_tolerance_total_minutes: null,
      exit_time_tolerance_total_minutes: null,
      offset_total_minutes: null,
      paid_undertime: false,
      paid_overtime: false,
      tags: ['Client'],
      ...audit(mkDay(2025, 1, 10), 600, cl.managerId),
    });
    add('commercial_client_users', { id: rCU.uuid(), commercial_client_id: cl.id, user_id: id });
  }

  // ---- Contracts, projects, jobs ---------------------------------------------------------------------
  const rDoc = rngFor('documents');
  const stageByDates = (start: number, end: number, r: Rng): StageType => {
    if (end < NOW - 20) return r.chance(0.92) ? 'Completed' : 'Canceled';
    if (start > NOW - 45) return r.chance(0.5) ? 'Draft' : 'In Progress';
    return 'In Progress';
  };
  const contracts: Contract[] = [];
  const contractCount = n(15);
  for (let i = 0; i < contractCount; i++) {
    const cl = rDoc.pick(realClients);
    const ct: Contract = { id: rDoc.uuid(), company: cl.home, client: cl };
    contracts.push(ct);
    cl.contracts.push(ct);
    const start = mkDay(2025, 1, 1) + rDoc.int(0, 120);
    const product = rDoc.pick(cl.products);
    const stage: StageType = rDoc.chance(0.85) ? 'In Progress' : rDoc.chance(0.5) ? 'Draft' : 'Canceled';
    add('contracts', {
      id: ct.id,
      company_id: cl.home.id,
      commercial_client_id: cl.id,
      brand_id: product.brandId,
      product_id: product.id,
      type_id: rDoc.pick(cl.home.contractTypes),
      currency_id: cl.home.currencyId,
      workflow_id: wf('Contract').id,
      stage_id: wf('Contract').stage[stage],
      number: `CTR-${String(i + 1).padStart(5, '0')}`,
      name: `${cl.name} ${rDoc.pick(['Retainer', 'Framework', 'Annual Agreement'])} 2025`,
      start_date: ds(start),
      end_date: ds(start + 364),
      ...audit(start - 15, 600, cl.managerId, start + rDoc.int(0, 60), 650),
    });
  }

  const projects: Project[] = [];
  const projectCount = n(50, 4);
  for (let i = 0; i < projectCount; i++) {
    const cl = rDoc.pick(realClients);
    const contract = cl.contracts.length > 0 && rDoc.chance(0.5) ? rDoc.pick(cl.contracts) : null;
    const company = contract ? contract.company : rDoc.pick(cl.companies);
    const start = mkDay(2024, 10, 1) + rDoc.int(0, 360);
    const end = start + rDoc.int(30, 240);
    const stage = stageByDates(start, end, rDoc);
    const classification = rDoc.chance(0.85) ? 'Billable' : rDoc.chance(0.6) ? 'Pitch' : 'Non-billable';
    const product = rDoc.chance(0.9) ? rDoc.pick(cl.products) : null;
    const p: Project = {
      id: rDoc.uuid(),
      number: `PRJ-${String(i + 1).padStart(5, '0')}`,
      name: `${cl.name} - ${rDoc.pick(THINGS)} ${rDoc.pick(['Launch', 'Campaign', 'Refresh', 'Q1', 'Q3', 'Always-on'])}`,
      company,
      client: cl,
      contractId: contract?.id ?? null,
      brandId: product?.brandId ?? (cl.brands.length > 0 && rDoc.chance(0.5) ? rDoc.pick(cl.brands) : null),
      productId: product?.id ?? null,
      start,
      end,
      stage,
      billable: classification === 'Billable',
      managerId: cl.home === company ? cl.managerId : rDoc.pick(staffOfDept(accountsDept(company))).id,
      estimates: [],
      jobs: [],
    };
    projects.push(p);
    add('projects', {
      id: p.id,
      company_id: company.id,
      commercial_client_id: cl.id,
      contract_id: p.contractId,
      brand_id: p.brandId,
      product_id: p.productId,
      project_type_id: company.projectTypes[contract ? 'Retainer' : 'Campaign'],
      classification_id: company.classifications[classification],
      nature_id: company.natures[contract ? 'Recurring' : 'New Business'],
      currency_id: company.currencyId,
      rate_card_id: company.rateCardId,
      rate_card_column_id: company.rateColumns.y2025,
      workflow_id: wf('Project').id,
      stage_id: wf('Project').stage[stage],
      number: p.number,
      name: p.name,
      start_date: ds(start),
      end_date: ds(end),
      investment: rDoc.chance(0.05),
      ...audit(start - rDoc.int(5, 20), 600, p.managerId, Math.min(NOW - 1, end + rDoc.int(0, 10)), 660),
    });
  }
  // One internal project per company carries non-billable time (meetings, training, pitches).
  const internalProjects: Project[] = [];
  for (const c of companies) {
    const cl = internalClient.get(c.id)!;
    const p: Project = {
      id: rDoc.uuid(),
      number: `INT-${c.code}`,
      name: `Internal Time ${c.name}`,
      company: c,
      client: cl,
      contractId: null,
      brandId: null,
      productId: null,
      start: mkDay(2025, 1, 1),
      end: mkDay(2025, 12, 31),
      stage: 'In Progress',
      billable: false,
      managerId: ceo.id,
      estimates: [],
      jobs: [],
    };
    internalProjects.push(p);
    add('projects', {
      id: p.id,
      company_id: c.id,
      commercial_client_id: cl.id,
      contract_id: null,
      brand_id: null,
      product_id: null,
      project_type_id: c.projectTypes.Internal,
      classification_id: c.classifications['Non-billable'],
      nature_id: c.natures.Internal,
      currency_id: c.currencyId,
      rate_card_id: null,
      rate_card_column_id: null,
      workflow_id: wf('Project').id,
      stage_id: wf('Project').stage['In Progress'],
      number: p.number,
      name: p.name,
      start_date: ds(p.start),
      end_date: ds(p.end),
      investment: false,
      ...audit(mkDay(2024, 12, 15), 600, ceo.id),
    });
  }

  const jobs: Job[] = [];
  const assignmentKeys = new Set<string>();
  const assign = (docTypeId: string, docId: string, teamName: string, userId: string, day: number, by: string | null): void => {
    const key = `${docId}:${teamName}:${userId}`;
    if (assignmentKeys.has(key)) return;
    assignmentKeys.add(key);
    add('assignments', { id: rDoc.uuid(), document_type_id: docTypeId, document_id: docId, team_id: team[teamName], user_id: userId, ...audit(day, 600, by) });
  };
  const jobRows: Array<{
    job: Job;
    number: string;
    name: string;
    deptId: string;
    typeId: string;
    created: number;
    modified: number;
    version: number;
    by: string;
  }> = [];
  let jobSeq = 0;
  const addJob = (p: Project, jt: JobType, dept: Dept, start: number, end: number, stage: StageType, name: string, members: User[], internal: boolean): Job => {
    const job: Job = { id: rDoc.uuid(), project: p, start, end, workTypeId: jt.workTypeId, billable: p.billable && !internal, internal, stage };
    jobSeq++;
    p.jobs.push(job);
    jobs.push(job);
    const created = start - rDoc.int(1, 5);
    const modified =
      stage === 'Completed' || stage === 'Canceled' ? Math.min(NOW - 1, end + rDoc.int(0, 3)) : Math.min(NOW - 1, Math.max(created, NOW - rDoc.int(1, 40)));
    const version = stage === 'Draft' ? 1 : stage === 'In Progress' ? 2 : 3;
    jobRows.push({ job, number: `JOB-${String(jobSeq).padStart(6, '0')}`, name, deptId: dept.id, typeId: jt.id, created, modified, version, by: p.managerId });
    add('jobs', {
      id: job.id,
      project_id: p.id,
      department_id: dept.id,
      job_type_id: jt.id,
      workflow_id: wf('Deliverable').id,
      stage_id: wf('Deliverable').stage[stage],
      number: `JOB-${String(jobSeq).padStart(6, '0')}`,
      name,
      business_value: internal ? null : rDoc.int(1, 5),
      start_date: ds(start),
      end_date: ds(end),
      version,
      motive: stage === 'Canceled' ? rDoc.pick(['Client canceled', 'Budget cut', 'Duplicate']) : null,
      ...audit(created, 600 + rDoc.int(0, 300), p.managerId, modified, 600 + rDoc.int(0, 500), rDoc.pick(members).id),
    });
    for (const [k, u] of members.entries()) {
      assign(T.job, job.id, internal ? 'Creative' : k === 0 ? 'Producer' : 'Creative', u.id, created, p.managerId);
      u.pool.push(job);
    }
    if (!internal) assign(T.job, job.id, 'Project Manager', p.managerId, created, p.managerId);
    // Timesheet approvers of the job: its project manager, or the department manager for internal time.
    assign(T.job, job.id, 'Approver', internal ? (deptManager.get(dept.id) ?? ceo).id : p.managerId, created, p.managerId);
    return job;
  };
  const jobCount = n(300, 12);
  for (let j = 0; j < jobCount; j++) {
    const p = j < projects.length ? projects[j] : rDoc.pick(projects);
    const jt = rDoc.pick(p.company.jobTypes.filter((t) => t.kind !== null));
    const dept = p.company.depts.find((d) => d.kind === jt.kind) ?? p.company.depts[0];
    const span = Math.max(1, p.end - p.start);
    const start = p.start + rDoc.int(0, Math.floor(span * 0.6));
    const end = Math.min(p.end, start + rDoc.int(7, 60));
    let stage: StageType = p.stage === 'Canceled' ? 'Canceled' : p.stage === 'Draft' ? 'Draft' : stageByDates(start, end, rDoc);
    if (stage === 'Completed' && rDoc.chance(0.08)) stage = 'In Progress'; // overdue jobs (DE-Jobs Delayed)
    const pool = staffOfDept(dept);
    const members = rDoc.sample(pool, Math.min(pool.length, rDoc.int(2, 3)));
    if (rDoc.chance(0.25)) {
      const other = rDoc.pick(staffOf(p.company));
      if (!members.includes(other)) members.push(other);
    }
    addJob(p, jt, dept, start, end, stage, `${jt.name} - ${rDoc.pick(THINGS)}`, members, false);
  }
  for (const p of internalProjects) {
    const c = p.company;
    const jt = c.jobTypes.find((t) => t.kind === null)!;
    const dept = c.depts[0];
    for (const name of ['Internal Time', 'Training', 'New Business Pitches']) {
      const job = addJob(p, jt, dept, p.start, p.end, 'In Progress', `${name} ${c.code}`, staffOf(c), true);
      job.workTypeId = name === 'Training' ? c.workTypes.Training : name === 'New Business Pitches' ? c.workTypes.Pitch : c.workTypes.Meeting;
      c.internalJobs.push(job);
    }
  }
  for (const p of projects) {
    assign(T.project, p.id, 'Account Manager', p.client.managerId, p.start - 10, p.managerId);
    assign(T.project, p.id, 'Project Manager', p.managerId, p.start - 10, p.managerId);
    for (const cu of p.client.users) assign(T.project, p.id, 'Client Contact', cu, p.start - 10, p.managerId);
  }

  // ---- Requests ----------------------------------------------------------------------------------------
  const requestRows: Array<{ id: string; created: number; by: string; stage: StageType }> = [];
  const requestCount = n(40);
  for (let i = 0; i < requestCount; i++) {
    const cl = rDoc.pick(realClients);
    const dept = accountsDept(cl.home);
    const begin = YEAR_START + rDoc.int(0, 360);
    const stage = stageByDates(begin, begin + 14, rDoc);
    const product = rDoc.pick(cl.products);
    const by = cl.users.length > 0 && rDoc.chance(0.3) ? rDoc.pick(cl.users) : cl.managerId;
    const id = rDoc.uuid();
    requestRows.push({ id, created: begin - 1, by, stage });
    const labels = rDoc.sample(['Urgent', 'Digital', 'Print', 'Social', 'Budget approved'], rDoc.int(0, 2));
    add('requests', {
      id,
      department_id: dept.id,
      commercial_client_id: cl.id,
      brand_id: product.brandId,
      product_id: product.id,
      contract_id: cl.contracts.length > 0 && rDoc.chance(0.3) ? rDoc.pick(cl.contracts).id : null,
      type_id: rDoc.pick(cl.home.requestTypes),
      workflow_id: wf('Request').id,
      stage_id: wf('Request').stage[stage],
      number: `REQ-${String(i + 1).padStart(5, '0')}`,
      name: `${rDoc.pick(['New', 'Update', 'Adapt'])} ${rDoc.pick(THINGS)}`,
      begin_date_utc: ts(begin, 540),
      end_date_utc: ts(begin + rDoc.int(3, 30), 1080),
      tags: labels.map((label) => ({ label })),
      is_activated: stage === 'Completed',
      priority: rDoc.int(0, 3),
      version: stage === 'Draft' ? 1 : rDoc.int(2, 3),
      ...audit(begin - 1, rDoc.int(540, 1000), by, Math.min(NOW - 1, begin + rDoc.int(0, 20)), 700, cl.managerId),
    });
    assign(T.request, id, 'Account Manager', cl.managerId, begin - 1, by);
  }

  // ---- Estimates (items, quote lines, monthly split, billing conditions) and planned time -------------
  const rEst = rngFor('estimates');
  let estimateSeq = 0;
  const estimateRows: Array<{ id: string; stage: StageType; created: number; by: string; approverId: string }> = [];
  const makeEstimate = (
    company: Company,
    cl: ClientE,
    p: Project | null,
    contractId: string | null,
    start: number,
    end: number,
    stage: StageType,
    by: string,
  ): void => {
    estimateSeq++;
    const id = rEst.uuid();
    const dept = accountsDept(company);
    const foreign = rEst.chance(0.1);
    const currency = foreign ? (company.currency === 'USD' ? 'EUR' : 'USD') : company.currency;
    const exchange = round2((TO_EUR[currency] / TO_EUR[company.currency]) * 10000) / 10000;
    const product = p ? (p.productId ? { id: p.productId, brandId: p.brandId } : null) : rEst.pick(cl.products);
    const date = start - rEst.int(10, 30);
    estimateRows.push({ id, stage, created: date, by, approverId: deptManager.get(dept.id)?.id ?? ceo.id });
    add('estimates', {
      id,
      department_id: dept.id,
      commercial_client_id: cl.id,
      brand_id: product?.brandId ?? p?.brandId ?? null,
      product_id: product?.id ?? null,
      contract_id: contractId,
      project_id: p?.id ?? null,
      type_id: rEst.pick(company.estimateTypes),
      currency_id: currencyId.get(currency),
      exchange,
      rate_card_id: company.rateCardId,
      rate_card_column_id: company.rateColumns.y2025,
      workflow_id: wf('Estimate').id,
      stage_id: wf('Estimate').stage[stage],
      number: `EST-${String(estimateSeq).padStart(5, '0')}`,
      name: p ? `Estimate ${p.name}` : `Estimate ${cl.name} retainer`,
      date: ds(date),
      expiration_date: ds(date + 30),
      tags: rEst.chance(0.3) ? [{ label: rEst.pick(['Priority', 'Revised', 'Framework']) }] : null,
      ...audit(date, 600, by, Math.min(NOW - 1, date + rEst.int(1, 25)), 700),
    });
    assign(T.estimate, id, 'Account Manager', by, date, by);
    const est = { id, deptId: dept.id, items: [] as string[] };
    p?.estimates.push(est);
    const months: number[] = [];
    for (let m = monthStart(start); m <= end && months.length < 6; m = addMonths(m, 1)) months.push(m);
    const itemCount = rEst.int(2, 4);
    let billingTotal = 0;
    for (let it = 0; it < itemCount; it++) {
      const itemId = rEst.uuid();
      est.items.push(itemId);
      const serviceName = rEst.pick(['Creative Hours', 'Copywriting', 'Web Development', 'Project Management', 'Video Production']);
      add('estimate_items', {
        id: itemId,
        estimate_id: id,
        sort_order: it,
        name: `${serviceName} - ${rEst.pick(THINGS)}`,
        description: rEst.chance(0.5) ? 'As per brief and agreed scope.' : null,
        service_id: company.services[serviceName],
        vat_id: company.vat.standard,
        is_retainer: contractId !== null && it === 0,
        quantity: 1,
        client_direct_value: rEst.chance(0.1) ? rEst.int(5, 50) * 100 : 0,
        ...audit(date, 610, by),
      });
      const detailCount = rEst.int(1, 3);
      for (let k = 0; k < detailCount; k++) {
        const detailId = rEst.uuid();
        const kind = rEst.next();
        const type = kind < 0.7 ? 0 : kind < 0.9 ? 1 : 2;
        let qtyCost: number;
        let unitCost: number;
        let qtyIncome: number;
        let unitIncome: number;
        let tableRate: number | null = null;
        let commission = 0;
        let deptId: string | null = null;
        let groupIdOf: string | null = null;
        let userId: string | null = null;
        let supplierId: string | null = null;
        let service: string;
        if (type === 0) {
          const d = rEst.pick(company.depts.filter((x) => x.kind !== 'General'));
          const t = rEst.pick(d.typologies);
          const u = rEst.chance(0.5) ? rEst.pick(staffOfDept(d)) : null;
          deptId = d.id;
          groupIdOf = t.groupId;
          userId = u?.id ?? null;
          qtyCost = rEst.int(8, 120);
          qtyIncome = qtyCost;
          unitCost = u ? u.hourly2025H1 : round2(t.sell * 0.4);
          tableRate = company.rates.get(`${d.id}:${t.groupId}`) ?? t.sell;
          unitIncome = rEst.chance(0.8) ? tableRate : round2(tableRate * 0.9);
          service = serviceName;
        } else if (type === 1) {
          supplierId = rEst.pick(company.suppliers);
          qtyCost = rEst.int(1, 5);
          qtyIncome = qtyCost;
          unitCost = rEst.int(5, 50) * 100;
          unitIncome = round2(unitCost * 1.2);
          commission = round2(qtyCost * unitCost * 0.05);
          service = rEst.pick(['Printing', 'Photography', 'Video Production']);
        } else {
          qtyCost = rEst.int(1, 5);
          qtyIncome = qtyCost;
          unitCost = rEst.int(50, 300);
          unitIncome = unitCost;
          service = 'Travel Expenses';
        }
        const discountIncome = rEst.chance(0.1) ? round2(qtyIncome * unitIncome * 0.05) : 0;
        add('estimate_item_details', {
          id: detailId,
          estimate_item_id: itemId,
          detail_type: type,
          description: type === 0 ? 'Team hours' : type === 1 ? 'Third-party production' : 'Travel and logistics',
          supplier_id: supplierId,
          service_id: company.services[service],
          department_id: deptId,
          typology_group_id: groupIdOf,
          user_id: userId,
          vat_id: type === 0 ? null : company.vat.standard,
          quantity_cost: qtyCost,
          unit_price_cost: unitCost,
          discount_cost: 0,
          quantity_income: qtyIncome,
          unit_price_income: unitIncome,
          discount_income: discountIncome,
          agency_commission_value: commission,
          table_rate: tableRate,
          ...audit(date, 620, by),
        });
        const cost = round2(qtyCost * unitCost);
        const income = round2(qtyIncome * unitIncome - discountIncome + commission);
        billingTotal += income;
        // Split over up to 4 consecutive months of the project; the last month takes the rounding rest.
        const k0 = rEst.int(0, Math.max(0, months.length - 1));
        const span = months.slice(k0, k0 + rEst.int(1, 4));
        let hoursLeft = type === 0 ? qtyCost : 0;
        let costLeft = cost;
        let incomeLeft = income;
        span.forEach((m, idx) => {
          const last = idx === span.length - 1;
          const share = 1 / span.length;
          const h = last ? hoursLeft : Math.round((type === 0 ? qtyCost : 0) * share * 4) / 4;
          const cst = last ? round2(costLeft) : round2(cost * share);
          const inc = last ? round2(incomeLeft) : round2(income * share);
          hoursLeft -= h;
          costLeft -= cst;
          incomeLeft -= inc;
          add('estimate_item_detail_months', {
            id: rEst.uuid(),
            estimate_item_detail_id: detailId,
            month: ds(m),
            hours: round2(h),
            cost: cst,
            income: inc,
            ...audit(date, 630, by),
          });
          if (p && type === 0 && deptId) {
            const d = company.depts.find((x) => x.id === deptId)!;
            add('project_planned_times', {
              id: rEst.uuid(),
              project_id: p.id,
              department_id: deptId,
              typology_group_id: groupIdOf,
              user_id: userId ?? rEst.pick(staffOfDept(d)).id,
              estimate_item_detail_id: detailId,
              month: ds(m),
              planned_hours: Math.round(h * (0.8 + rEst.next() * 0.4) * 4) / 4,
              actual_sell_rate: unitIncome,
              contracted_sell_rate: unitIncome,
              rate_card_sell_rate: tableRate,
              comments: rEst.chance(0.1) ? 'Adjusted after kick-off' : null,
              description: 'Team hours',
              ...audit(m, 600, p.managerId),
            });
          }
        });
      }
    }
    const billingId = cl.billing.get(company.id) ?? cl.billing.values().next().value!;
    const fixed = rEst.chance(0.6);
    const parts = fixed ? [50, 50] : [100];
    parts.forEach((pct, k) => {
      add('estimate_billing_conditions', {
        id: rEst.uuid(),
        estimate_id: id,
        billing_client_id: billingId,
        payment_condition_id: company.pay.d30,
        condition_type: fixed ? 0 : 1,
        frequency: fixed ? 0 : 2,
        amount_type: fixed ? 0 : 1,
        percentage: fixed ? pct : null,
        value: fixed ? round2((billingTotal * pct) / 100) : round2(billingTotal / Math.max(1, months.length)),
        your_reference: rEst.chance(0.5) ? `PO-${cl.name.slice(0, 3).toUpperCase()}-${rEst.int(1000, 9999)}` : null,
        date: ds(k === 0 ? start : end),
        day_of_month: fixed ? null : 25,
        day_of_week: null,
        ...audit(date, 640, by),
      });
    });
  };
  for (const p of projects) {
    const stage: StageType = p.stage === 'Draft' ? 'Draft' : p.stage === 'Canceled' ? 'Canceled' : rEst.chance(0.8) ? 'Completed' : 'In Progress';
    makeEstimate(p.company, p.client, p, p.contractId, p.start, p.end, stage, p.managerId);
    if (rEst.chance(0.15)) makeEstimate(p.company, p.client, p, p.contractId, p.start, p.end, rEst.chance(0.5) ? 'Draft' : 'In Progress', p.managerId);
  }
  for (const ct of contracts) {
    if (rEst.chance(0.5))
      makeEstimate(ct.company, ct.client, null, ct.id, YEAR_START + rEst.int(0, 90), YEAR_START + rEst.int(180, 360), 'Completed', ct.client.managerId);
  }

  // ---- Purchase orders and bills ---------------------------------------------------------------------------
  const rFin = rngFor('finance');
  const poSeq = new Map<string, number>();
  const poRows: Array<{ id: string; stage: StageType; created: number; approverId: string }> = [];
  const poCount = n(30);
  for (let i = 0; i < poCount; i++) {
    const p = rFin.pick(projects);
    const c = p.company;
    const seq = (poSeq.get(c.id) ?? 0) + 1;
    poSeq.set(c.id, seq);
    const date = Math.min(NOW - 2, p.start + rFin.int(0, Math.max(1, p.end - p.start)));
    const stage: StageType = date < NOW - 60 ? (rFin.chance(0.9) ? 'Completed' : 'Canceled') : rFin.chance(0.7) ? 'In Progress' : 'Draft';
    const id = rFin.uuid();
    const items: Array<{ qty: number; unit: number; vat: number }> = [];
    const itemCount = rFin.int(1, 3);
    for (let k = 0; k < itemCount; k++) items.push({ qty: rFin.int(1, 10), unit: rFin.int(5, 200) * 10, vat: 23 });
    const total = items.reduce((a, x) => a + x.qty * x.unit, 0);
    const invoiced = stage === 'Completed' && rFin.chance(0.7);
    const exported = stage !== 'Draft' && rFin.chance(0.7);
    poRows.push({ id, stage, created: date, approverId: deptManager.get(accountsDept(c).id)?.id ?? ceo.id });
    add('purchase_orders', {
      id,
      company_id: c.id,
      department_id: rFin.pick(c.depts).id,
      supplier_id: rFin.pick(c.suppliers),
      commercial_client_id: p.client.id,
      contract_id: p.contractId,
      project_id: p.id,
      estimate_id: p.estimates.length > 0 && rFin.chance(0.7) ? p.estimates[0].id : null,
      currency_id: c.currencyId,
      workflow_id: wf('PurchaseOrder').id,
      stage_id: wf('PurchaseOrder').stage[stage],
      number: `PO-${c.code}-${String(seq).padStart(5, '0')}`,
      date: ds(date),
      delivery_date: ds(date + rFin.int(7, 30)),
      status: STAGE_TYPE_NAMES.indexOf(stage),
      financial_status: invoiced ? 2 : stage === 'Completed' ? 1 : 0,
      invoiced,
      invoiced_value: invoiced ? total : 0,
      controlled_value: invoiced ? total : 0,
      external_id: exported ? `ERP-PO-${c.code}-${seq}` : null,
      external_error: !exported && stage !== 'Draft' && rFin.chance(0.2) ? 'Supplier not found in ERP' : null,
      remarks: rFin.chance(0.2) ? 'Deliver to the studio' : null,
      ...audit(date, 600, p.managerId, Math.min(NOW - 1, date + rFin.int(0, 40)), 700),
    });
    items.forEach((x, k) => {
      add('purchase_order_items', {
        id: rFin.uuid(),
        purchase_order_id: id,
        sort_order: k,
        service_id: c.services[rFin.pick(['Printing', 'Photography', 'Video Production'])],
        estimate_item_detail_id: null,
        description: rFin.pick(['Print run', 'Photo shoot', 'Editing', 'Equipment rental']),
        quantity: x.qty,
        unit_price: x.unit,
        vat_id: c.vat.standard,
        ...audit(date, 610, p.managerId),
      });
    });
  }

  const billSeq = new Map<string, number>();
  const billRows: Array<{ id: string; created: number; by: string }> = [];
  const billCount = n(40);
  const billable = projects.filter((p) => p.billable && p.stage !== 'Draft');
  for (let i = 0; i < billCount && billable.length > 0; i++) {
    const p = rFin.pick(billable);
    const c = p.company;
    const seq = (billSeq.get(c.id) ?? 0) + 1;
    billSeq.set(c.id, seq);
    const date = Math.min(NOW - 1, p.start + rFin.int(15, Math.max(16, p.end - p.start + 15)));
    const pay = rFin.chance(0.7) ? { id: c.pay.d30, days: 30 } : { id: c.pay.d60, days: 60 };
    const due = date + pay.days;
    const items: Array<{ qty: number; unit: number }> = [];
    const itemCount = rFin.int(1, 3);
    for (let k = 0; k < itemCount; k++) items.push({ qty: rFin.int(10, 100), unit: rFin.pick([90, 100, 110, 130, 140]) });
    const net = items.reduce((a, x) => a + x.qty * x.unit, 0);
    const gross = round2(net * 1.23);
    const paid = due < NOW - 5 && rFin.chance(0.85);
    const stage: StageType = paid ? 'Completed' : date > NOW - 5 ? 'Draft' : rFin.chance(0.95) ? 'In Progress' : 'Canceled';
    const id = rFin.uuid();
    const number = `FT ${c.code}/${String(seq).padStart(5, '0')}`;
    billRows.push({ id, created: date, by: p.managerId });
    add('bills', {
      id,
      company_id: c.id,
      department_id: accountsDept(c).id,
      commercial_client_id: p.client.id,
      billing_client_id: p.client.billing.get(c.id)!,
      project_id: p.id,
      contract_id: p.contractId,
      estimate_id: p.estimates[0]?.id ?? null,
      currency_id: c.currencyId,
      payment_condition_id: pay.id,
      workflow_id: wf('Bill').id,
      stage_id: wf('Bill').stage[stage],
      number,
      name: `${p.name} - ${ds(date).slice(0, 7)}`,
      date: ds(date),
      due_date: ds(due),
      management_date: ds(date),
      your_reference: rFin.chance(0.5) ? `CLIENT-PO-${rFin.int(10000, 99999)}` : null,
      paid,
      paid_value: paid ? gross : stage === 'In Progress' && rFin.chance(0.2) ? round2(gross / 2) : 0,
      remarks: rFin.chance(0.2) ? 'Payment by bank transfer' : null,
      external_id: stage === 'Draft' ? null : `ERP-INV-${c.code}-${seq}`,
      external_error: null,
      ...audit(date, 600, p.managerId, Math.min(NOW - 1, paid ? due - rFin.int(0, 10) : date + 1), 700),
    });
    items.forEach((x, k) => {
      add('bill_items', {
        id: rFin.uuid(),
        bill_id: id,
        sort_order: k,
        service_id: c.services[rFin.pick(['Creative Hours', 'Copywriting', 'Web Development', 'Project Management'])],
        estimate_item_id: p.estimates[0]?.items[k] ?? null,
        description: `Services ${ds(date).slice(0, 7)}`,
        quantity: x.qty,
        unit_price: x.unit,
        vat_id: c.vat.standard,
        ...audit(date, 610, p.managerId),
      });
    });
  }

  // ---- Expense sheets ----------------------------------------------------------------------------------------
  const rExp = rngFor('expenses');
  const expSeq = new Map<string, number>();
  for (const u of users) {
    for (let quarter = 0; quarter < 4; quarter++) {
      if (!rExp.chance(0.5)) continue;
      const qStart = mkDay(2025, quarter * 3 + 1, 1);
      const qEnd = addMonths(qStart, 3) - 1;
      if (qStart > u.lastDay || qEnd < u.firstDay) continue;
      const c = u.company;
      const seq = (expSeq.get(c.id) ?? 0) + 1;
      expSeq.set(c.id, seq);
      const emission = qEnd + 5;
      const paid = emission < NOW - 40 && rExp.chance(0.9);
      const stage: StageType = paid ? 'Completed' : emission > NOW ? 'Draft' : rExp.chance(0.9) ? 'In Progress' : 'Canceled';
      const id = rExp.uuid();
      const itemCount = rExp.int(1, 4);
      let total = 0;
      const itemRows: Array<Record<string, unknown>> = [];
      for (let k = 0; k < itemCount; k++) {
        const et = rExp.pick(c.expenseTypes);
        const qty = et.unit !== null ? rExp.int(20, 300) : 1;
        const value = et.unit !== null ? round2(qty * et.unit) : rExp.int(10, 400);
        const job = rExp.chance(0.4) ? u.pool.find((j) => !j.internal && j.start <= qEnd && j.end >= qStart) : undefined;
        total += value;
        itemRows.push({
          id: rExp.uuid(),
          expense_sheet_id: id,
          expense_type_id: et.id,
          vat_id: et.vatId,
          project_id: job?.project.id ?? null,
          job_id: job?.id ?? null,
          date: ds(qStart + rExp.int(0, qEnd - qStart)),
          billable: job !== undefined,
          motive: job ? `Client work ${job.project.number}` : rExp.pick(['Team lunch', 'Conference', 'Office supplies', 'Client visit']),
          quantity: qty,
          value_without_vat: value,
          ...audit(emission - 1, 600, u.id),
        });
      }
      add('expense_sheets', {
        id,
        company_id: c.id,
        user_id: u.id,
        currency_id: c.currencyId,
        workflow_id: wf('Expense').id,
        stage_id: wf('Expense').stage[stage],
        number: `EXP-${c.code}-${String(seq).padStart(5, '0')}`,
        external_name: paid ? `ERP-EXP-${c.code}-${seq}` : null,
        external_error: !paid && stage === 'In Progress' && rExp.chance(0.1) ? 'Employee has no ERP account' : null,
        emission_date: ds(emission),
        due_date: ds(emission + 30),
        exchange: 1,
        blocked: rExp.chance(0.05),
        paid,
        paid_value: paid ? round2(total) : 0,
        ...audit(emission - 1, 600, u.id, Math.min(NOW - 1, emission + (paid ? rExp.int(10, 40) : 1)), 700, paid ? ceo.id : u.id),
      });
      for (const row of itemRows) add('expense_items', row);
    }
  }

  // ---- Leaves (generated before timesheets: leave days take time out of the timesheet days) ---------------
  const rLeave = rngFor('leaves');
  const leaveMinutes = new Map<string, Map<number, number>>();
  const leaveApprovals: Array<{ id: string; user: User; status: string; day: number; type: 'vac' | 'other' }> = [];
  const workingDays = (from: number, count: number, u: User, until = u.lastDay): number[] => {
    const out: number[] = [];
    for (let d = from; out.length < count && d <= until; d++) if (!isWeekend(d) && !u.company.holidays.has(d)) out.push(d);
    return out;
  };
  for (const u of users) {
    const taken = new Map<number, number>();
    leaveMinutes.set(u.id, taken);
    const addLeave = (day: number, typeId: string, minutes: number, halfDay: boolean, kind: 'vac' | 'other'): void => {
      if (taken.has(day) || day < u.firstDay || day > u.lastDay) return;
      const status =
        day >= mkDay(2025, 12, 1) ? (rLeave.chance(0.6) ? 'New' : 'Approved') : rLeave.chance(0.92) ? 'Approved' : rLeave.chance(0.6) ? 'Rejected' : 'Canceled';
      const draft = status === 'New' && rLeave.chance(0.05);
      const deleted = rLeave.chance(0.03);
      const created = day - rLeave.int(5, 40);
      const deletedOn = deleted ? ts(created + rLeave.int(1, 4), rLeave.int(540, 1080)) : null;
      const id = rLeave.uuid();
      const modDay = status === 'New' ? created : Math.min(NOW - 1, created + rLeave.int(1, 5));
      add('leaves', {
        id,
        user_id: u.id,
        leave_type_id: typeId,
        day: ds(day),
        is_half_day: halfDay,
        total_minutes: minutes,
        status: draft ? 'Draft' : status,
        requested_approval: !draft,
        remarks: rLeave.chance(0.1) ? 'Family event' : null,
        deleted_on: deletedOn,
        created_on_utc: ts(created, 600),
        created_by_id: u.id,
        modified_on_utc: deletedOn ?? ts(modDay, 660),
        modified_by_id: status === 'New' ? u.id : (u.responsibleId ?? u.id),
      });
      if (deleted) return;
      if (!draft) leaveApprovals.push({ id, user: u, status, day: created, type: kind });
      if (status === 'Approved' || status === 'New') taken.set(day, minutes);
    };
    const blocks = rLeave.int(2, 4);
    for (let b = 0; b < blocks; b++) {
      const start = YEAR_START + rLeave.int(10, 350);
      const len = rLeave.int(2, 7);
      for (const d of workingDays(start, len, u)) {
        const half = len === 2 && rLeave.chance(0.2);
        addLeave(d, d < mkDay(2025, 4, 1) && rLeave.chance(0.5) ? u.company.leaveTypes.vac2024 : u.company.leaveTypes.vac2025, half ? 240 : 480, half, 'vac');
      }
    }
    for (let s = rLeave.int(0, 2); s > 0; s--)
      for (const d of workingDays(YEAR_START + rLeave.int(0, 360), 1, u)) addLeave(d, u.company.leaveTypes.sick, 480, false, 'other');
    for (let s = rLeave.int(0, 2); s > 0; s--)
      for (const d of workingDays(YEAR_START + rLeave.int(0, 360), 1, u)) addLeave(d, u.company.leaveTypes.medical, rLeave.int(1, 3) * 60, false, 'other');
  }

  // ---- User-defined fields and values -----------------------------------------------------------------------
  const rUdf = rngFor('user-fields');
  const field = (dt: string, column: string, label: string, type: string, order: number): string => {
    const id = rUdf.uuid();
    add('user_fields', { id, document_type_id: dt, column_name: column, label, data_type: type, sort_order: order, ...audit(mkDay(2024, 1, 10), 600, ceo.id) });
    return id;
  };
  const fBadge = field(T.user, 'BadgeNumber', 'Badge number', 'Text', 0);
  const fSeniority = field(T.user, 'SeniorityYears', 'Seniority (years)', 'Number', 1);
  const fRemote = field(T.user, 'RemoteWorker', 'Remote worker', 'Boolean', 2);
  const fPoRef = field(T.project, 'ClientPoReference', 'Client PO reference', 'Text', 0);
  const fBudget = field(T.project, 'InternalBudget', 'Internal budget', 'Number', 1);
  const fKickoff = field(T.project, 'KickoffDate', 'Kick-off date', 'Date', 2);
  const fVatReg = field(T.company, 'VatRegistration', 'VAT registration', 'Text', 0);
  const fFounded = field(T.company, 'FoundedOn', 'Founded on', 'Date', 1);
  const fSegment = field(T.client, 'Segment', 'Segment', 'Text', 0);
  const fChannel = field(T.job, 'Channel', 'Channel', 'Text', 0);
  const value = (fieldId: string, documentId: string, v: unknown, day: number): void =>
    add('user_field_values', { id: rUdf.uuid(), user_field_id: fieldId, document_id: documentId, value: JSON.stringify(v), ...audit(day, 600, ceo.id) }); // jsonb scalar: must be JSON text, not a bare string
  users.forEach((u, i) => {
    value(fBadge, u.id, `B-${String(1000 + i)}`, mkDay(2025, 1, 15));
    value(fSeniority, u.id, rUdf.int(0, 15), mkDay(2025, 1, 15));
    if (rUdf.chance(0.7)) value(fRemote, u.id, rUdf.chance(0.3), mkDay(2025, 1, 15));
  });
  for (const p of projects) {
    if (rUdf.chance(0.6)) value(fPoRef, p.id, `PO-${rUdf.int(10000, 99999)}`, p.start);
    value(fBudget, p.id, rUdf.int(5, 200) * 1000, p.start);
    value(fKickoff, p.id, ds(p.start), p.start);
  }
  for (const c of companies) {
    value(fVatReg, c.id, `${c.countryIso}${rUdf.int(100000000, 999999999)}`, mkDay(2024, 1, 5));
    value(fFounded, c.id, ds(mkDay(rUdf.int(1990, 2015), rUdf.int(1, 12), 1)), mkDay(2024, 1, 5));
  }
  for (const cl of realClients) value(fSegment, cl.id, rUdf.pick(['Enterprise', 'Mid-market', 'SMB']), mkDay(2024, 6, 1));
  for (const j of jobs) if (!j.internal && rUdf.chance(0.5)) value(fChannel, j.id, rUdf.pick(['Digital', 'Print', 'TV', 'Social', 'OOH']), j.start);

  // ---- Collaboration: comments, descriptions, history, approvals, reads, favourites --------------------------
  const rCol = rngFor('collaboration');
  const stageOrder: StageType[] = ['Draft', 'In Progress', 'Completed'];
  const history = (dt: string, docId: string, created: number, modified: number, stage: StageType, wfCls: string, by: string): void => {
    const path: StageType[] = stage === 'Canceled' ? ['Draft', 'Canceled'] : stageOrder.slice(0, stageOrder.indexOf(stage) + 1);
    const step = Math.max(1, Math.floor((modified - created) / path.length));
    path.forEach((st, v) => {
      const start = created + v * step;
      const last = v === path.length - 1;
      add('document_history', {
        id: rCol.uuid(),
        document_type_id: dt,
        document_id: docId,
        version: v + 1,
        start_date: ts(start, 600 + v),
        end_date: last ? null : ts(created + (v + 1) * step, 600 + v + 1),
        user_id: by,
        action: v === 0 ? 'Created' : 'StageChanged',
        stage_id: wf(wfCls).stage[st],
        created_on_utc: ts(start, 600 + v),
      });
    });
  };
  const comment = (dt: string, docId: string, day: number, authors: string[]): void => {
    const id = rCol.uuid();
    const by = rCol.pick(authors);
    const replies = rCol.int(0, 2);
    add('comments', {
      id,
      document_type_id: dt,
      document_id: docId,
      text: rCol.pick(COMMENTS),
      is_visible_to_client: rCol.chance(0.1),
      actions: rCol.chance(0.1) ? [{ name: 'Approve', completed: rCol.chance(0.5) }] : null,
      reactions: rCol.chance(0.3) ? [{ userId: rCol.pick(authors), reaction: 'like' }] : null,
      ...audit(day, rCol.int(540, 1080), by),
    });
    for (let r = 0; r < replies; r++) {
      const replier = rCol.pick(authors);
      add('comment_replies', {
        id: rCol.uuid(),
        comment_id: id,
        text: rCol.pick(REPLIES),
        reactions: rCol.chance(0.2) ? [{ userId: by, reaction: 'like' }] : null,
        mentions: rCol.chance(0.3) ? [{ userId: by }] : null,
        ...audit(day + r + 1, rCol.int(540, 1080), replier),
      });
    }
  };
  const describe = (dt: string, docId: string, day: number, by: string, title: string, versions: number): void => {
    for (let v = 1; v <= versions; v++) {
      const text = `${title}: objective, audience and deliverables${v > 1 ? ` (revision ${v})` : ''}.`;
      add('descriptions', {
        id: rCol.uuid(),
        document_type_id: dt,
        document_id: docId,
        version: v,
        text_html: `<p><strong>${title}</strong></p><p>${text}</p>`,
        plain_text: `${title}\n${text}`,
        ...audit(day + v - 1, 600, by, day + v - 1, 620 + v),
      });
    }
  };
  const read = (userId: string, dt: string, docId: string, day: number): void =>
    add('document_reads', { id: rCol.uuid(), user_id: userId, document_type_id: dt, document_id: docId, read_on_utc: ts(day, rCol.int(540, 1080)) });
  const readKeys = new Set<string>();
  const readOnce = (userId: string, dt: string, docId: string, day: number): void => {
    const key = `${userId}:${docId}`;
    if (readKeys.has(key)) return;
    readKeys.add(key);
    read(userId, dt, docId, day);
  };
  const approval = (dt: string, docId: string, approverId: string, role: 'Approver' | 'HR', status: string, day: number): void =>
    add('approvals', {
      id: rCol.uuid(),
      document_type_id: dt,
      document_id: docId,
      approver_id: approverId,
      role,
      status,
      requested_on_utc: ts(day, 600),
      decided_on_utc: status === 'Pending' ? null : ts(Math.min(NOW - 1, day + 2), 660),
      ...audit(day, 600, null, status === 'Pending' ? day : Math.min(NOW - 1, day + 2), 660, approverId),
    });
  for (const row of jobRows) {
    const j = row.job;
    const teamIds = j.internal ? [row.by] : [...new Set([row.by, ...users.filter((u) => u.pool.includes(j)).map((u) => u.id)])];
    history(T.job, j.id, row.created, row.modified, j.stage, 'Deliverable', row.by);
    if (j.internal) continue;
    for (let k = rCol.int(0, 2); k > 0; k--) comment(T.job, j.id, j.start + rCol.int(0, 10), teamIds);
    describe(T.job, j.id, row.created, row.by, row.name, rCol.int(1, 3));
    for (const uid of teamIds) if (rCol.chance(0.6)) readOnce(uid, T.job, j.id, row.modified);
    if (j.stage === 'In Progress' && rCol.chance(0.1)) approval(T.job, j.id, j.project.managerId, 'Approver', 'Pending', row.modified);
  }
  for (const p of projects) {
    history(T.project, p.id, p.start - 10, Math.min(NOW - 1, p.end), p.stage, 'Project', p.managerId);
    comment(T.project, p.id, p.start, [p.managerId, p.client.managerId]);
    describe(T.project, p.id, p.start - 10, p.managerId, p.name, 1);
    readOnce(p.managerId, T.project, p.id, p.start);
    readOnce(p.client.managerId, T.project, p.id, p.start + 1);
  }
  for (const r of requestRows) {
    history(T.request, r.id, r.created, Math.min(NOW - 1, r.created + 15), r.stage, 'Request', r.by);
    describe(T.request, r.id, r.created, r.by, 'Request brief', rCol.int(1, 2));
    if (rCol.chance(0.5)) readOnce(r.by, T.request, r.id, r.created + 1);
  }
  for (const e of estimateRows) {
    history(T.estimate, e.id, e.created, Math.min(NOW - 1, e.created + 20), e.stage, 'Estimate', e.by);
    if (e.stage === 'In Progress') approval(T.estimate, e.id, e.approverId, 'Approver', 'Pending', e.created + 2);
    else if (e.stage === 'Completed') approval(T.estimate, e.id, e.approverId, 'Approver', 'Approved', e.created + 2);
  }
  for (const po of poRows) {
    if (po.stage === 'Draft') approval(T.po, po.id, po.approverId, 'Approver', 'Pending', po.created);
    else if (po.stage !== 'Canceled') approval(T.po, po.id, po.approverId, 'Approver', 'Approved', po.created);
    if (rCol.chance(0.5)) readOnce(po.approverId, T.po, po.id, po.created + 1);
  }
  for (const b of billRows) if (rCol.chance(0.5)) readOnce(b.by, T.bill, b.id, b.created + 1);
  for (const l of leaveApprovals) {
    const status = l.status === 'Approved' ? 'Approved' : l.status === 'Rejected' ? 'Rejected' : l.status === 'New' ? 'Pending' : null;
    if (status === null) continue;
    approval(T.leave, l.id, l.user.responsibleId ?? l.user.id, 'Approver', status, l.day);
    if (l.type === 'vac') approval(T.leave, l.id, officeManager.id, 'HR', status, l.day);
  }
  const favKeys = new Set<string>();
  for (const u of users) {
    const candidates: Array<[string, string]> = [
      ...u.pool.filter((j) => !j.internal).map((j): [string, string] => [T.job, j.id]),
      ...projects.filter((p) => p.managerId === u.id).map((p): [string, string] => [T.project, p.id]),
    ];
    for (const [dt, id] of rCol.sample(candidates, rCol.int(0, 3))) {
      if (favKeys.has(`${u.id}:${id}`)) continue;
      favKeys.add(`${u.id}:${id}`);
      add('favorites', {
        id: rCol.uuid(),
        user_id: u.id,
        document_type_id: dt,
        document_id: id,
        created_on_utc: ts(mkDay(2025, rCol.int(1, 12), rCol.int(1, 28)), 600),
      });
    }
  }
  if (requestRows.length > 0)
    add('favorites', {
      id: rCol.uuid(),
      user_id: ceo.id,
      document_type_id: T.request,
      document_id: requestRows[0].id,
      created_on_utc: ts(mkDay(2025, 3, 3), 600),
    });
  if (billRows.length > 0)
    add('favorites', { id: rCol.uuid(), user_id: ceo.id, document_type_id: T.bill, document_id: billRows[0].id, created_on_utc: ts(mkDay(2025, 3, 3), 601) });

  // Project folders with a stored brief and a link.
  for (const p of projects) {
    const folderId = rFiles.uuid();
    add('folders', {
      id: folderId,
      parent_id: projectsFolder,
      name: p.number,
      document_type_id: T.project,
      document_id: p.id,
      ...audit(p.start - 10, 600, p.managerId),
    });
    add('files', {
      id: rFiles.uuid(),
      folder_id: folderId,
      name: 'Brief.pdf',
      content_type: 'application/pdf',
      size_bytes: rFiles.int(50_000, 3_000_000),
      storage_key: `projects/${p.id}/brief.pdf`,
      link_url: null,
      ...audit(p.start - 9, 600, p.managerId),
    });
    if (rFiles.chance(0.5))
      add('files', {
        id: rFiles.uuid(),
        folder_id: folderId,
        name: 'Moodboard',
        content_type: null,
        size_bytes: null,
        storage_key: null,
        link_url: `https://boards.example.com/${p.number.toLowerCase()}`,
        ...audit(p.start - 8, 600, p.managerId),
      });
  }

  // ---- Settings ----------------------------------------------------------------------------------------------
  add('configuration_keys', {
    id: rCol.uuid(),
    key: 'SFTP-HRFEED',
    // The password is left null: secrets are encrypted by the application, which the generator cannot do.
    value: {
      ftpHostIp: '10.0.0.15',
      ftpUsername: 'hrfeed',
      ftpPassword: null,
      ftpPath: '/Data',
      ftpToPathSuccess: '/Data/Success',
      ftpToPathFailure: '/Data/Failure',
      fileNameContains: 'AD_UserAccounts',
    },
    ...audit(mkDay(2024, 2, 1), 600, ceo.id),
  });
  add('configuration_keys', {
    id: rCol.uuid(),
    key: 'NOTIFICATIONS',
    value: { errorMailbox: `it@${mainCompany.domain}` },
    ...audit(mkDay(2024, 2, 1), 601, ceo.id),
  });
  add('system_preferences', { id: rCol.uuid(), name: 'Approvals', key: 'DefaultApprover', value: ceo.id, ...audit(mkDay(2024, 2, 1), 600, ceo.id) });
  add('system_preferences', {
    id: rCol.uuid(),
    name: 'Finance',
    key: 'DefaultCurrency',
    value: mainCompany.currency,
    ...audit(mkDay(2024, 2, 1), 601, ceo.id),
  });
  add('system_preferences', { id: rCol.uuid(), name: 'Webhooks', key: 'WatchedField', value: 'Channel', ...audit(mkDay(2024, 2, 1), 602, ceo.id) });

  // ---- Timesheets (streamed), with the attendances and workloads that derive from them -----------------------
  const rTs = rngFor('timesheets');
  const tsIds = new SeqIds(rTs);
  const attIds = new SeqIds(rTs);
  const wlIds = new SeqIds(rTs);
  const tenantPrefix = `${tenantId}\t`;
  let timesheetCount = 0;
  // Day-major order (as people enter time): the date and modified-date indexes then grow at their right edge.
  const tsUsers = users.map((u) => ({ u, leaves: leaveMinutes.get(u.id)!, pool: u.pool.filter((j) => !j.internal), internal: u.company.internalJobs }));
  function* timesheetChunks(): Generator<string> {
    let buf = '';
    for (let d = YEAR_START; d <= YEAR_END; d++) {
      if (isWeekend(d)) continue;
      for (const { u, leaves, pool, internal } of tsUsers) {
        if (d < u.firstDay || d > u.lastDay || u.company.holidays.has(d)) continue;
        const leave = leaves.get(d) ?? 0;
        if (leave >= u.requiredMinutes) continue;
        let minutes = u.requiredMinutes - leave;
        const v = rTs.next();
        if (v < 0.2) minutes += rTs.int(1, 6) * 15;
        else if (v < 0.3) minutes -= rTs.int(1, 4) * 15;
        const active = pool.filter((j) => j.start <= d && d <= j.end);
        const entries = Math.min(rTs.int(3, 6), Math.max(1, Math.floor(minutes / 30)));
        const units = Math.floor(minutes / 15);
        const split = new Array<number>(entries).fill(1);
        for (let k = entries; k < units; k++) split[Math.floor(rTs.next() * entries)]++;
        let total = 0;
        const dayStr = ds(d);
        for (let e = 0; e < entries; e++) {
          const job =
            active.length > 0 && rTs.next() < 0.9 ? active[Math.floor(rTs.next() * active.length)] : internal[Math.floor(rTs.next() * internal.length)];
          const mins = split[e] * 15;
          total += mins;
          let status: string;
          const r = rTs.next();
          if (d < mkDay(2025, 12, 1)) status = r < 0.97 ? 'Approved' : r < 0.98 ? 'Rejected' : r < 0.99 ? 'Canceled' : 'New';
          else if (d < mkDay(2025, 12, 20)) status = r < 0.3 ? 'Approved' : 'New';
          else status = r < 0.6 ? 'Draft' : 'New';
          const id = tsIds.next();
          const createdMinute = 1020 + Math.floor(rTs.next() * 120);
          const created = `${dayStr} ${pad2(Math.floor(createdMinute / 60))}:${pad2(createdMinute % 60)}:00+00`;
          const deleted = rTs.next() < 0.005;
          let modified = created;
          let modifiedBy = u.id;
          if (status === 'Approved' || status === 'Rejected') {
            modified = ts(d + 2 + Math.floor(rTs.next() * 5), 600);
            modifiedBy = u.responsibleId ?? u.id;
          }
          let deletedOn = '\\N';
          if (deleted) {
            deletedOn = ts(d + 1 + Math.floor(rTs.next() * 10), 700);
            modified = deletedOn;
            modifiedBy = u.id;
          }
          buf += `${tenantPrefix}${id}\t${u.id}\t${job.id}\t${job.workTypeId}\t${dayStr}\t${mins}\t${job.billable ? 't' : 'f'}\t${status}\t${status === 'Draft' ? 'f' : 't'}\t${deletedOn}\t${created}\t${u.id}\t${modified}\t${modifiedBy}\n`;
          timesheetCount++;
          if (!deleted && rTs.next() < 0.1) {
            add('workloads', {
              id: wlIds.next(),
              document_type_id: T.job,
              document_id: job.id,
              user_id: u.id,
              timesheet_id: id,
              day: dayStr,
              workload_minutes: Math.max(0, mins + (Math.floor(rTs.next() * 5) - 2) * 15),
              ...audit(d - 7, 600, job.project.managerId),
            });
          }
        }
        if (d >= ATTENDANCE_FROM) {
          const attId = attIds.next();
          const entry = 530 + Math.floor(rTs.next() * 30);
          const breakMinutes = total > 300 ? 60 : 0;
          const exit = entry + total + breakMinutes;
          const homeOffice = rTs.next() < 0.2;
          add('attendances', {
            id: attId,
            user_id: u.id,
            day: dayStr,
            worked_minutes: total,
            offset_total_minutes: total - (u.requiredMinutes - leave),
            tardiness_total_minutes: Math.max(0, entry - 540 - 10),
            break_total_minutes: breakMinutes,
            home_office: homeOffice,
            half_day: leave > 0 && leave < u.requiredMinutes,
            ...audit(d, exit, u.id),
          });
          const adjusted = rTs.next() < 0.05;
          const punches: Array<[number, number]> =
            breakMinutes > 0
              ? [
                  [0, entry],
                  [2, 780],
                  [3, 840],
                  [1, exit],
                ]
              : [
                  [0, entry],
                  [1, exit],
                ];
          for (const [type, minute] of punches) {
            const offset = type === 1 ? total - (u.requiredMinutes - leave) : 0;
            add('attendance_details', {
              id: attIds.next(),
              attendance_id: attId,
              time: ts(d, minute + (adjusted && type === 0 ? 20 : 0)),
              entry_type: type,
              adjusted_time: adjusted && type === 0 ? ts(d, minute) : null,
              motive: adjusted && type === 0 ? 'Forgot to clock in' : null,
              is_offset: offset !== 0,
              offset_minutes: offset,
              ...audit(d, minute, u.id),
            });
          }
        }
        if (buf.length > 262_144) {
          yield buf;
          buf = '';
        }
      }
    }
    if (buf) yield buf;
  }
  // Planned (future) workloads for open jobs: time booked for January 2026, not yet consumed.
  const addFutureWorkloads = (): void => {
    for (const u of users) {
      if (!u.active) continue;
      const open = u.pool.filter((j) => !j.internal && (j.stage === 'In Progress' || j.stage === 'Draft'));
      for (const job of rTs.sample(open, 2)) {
        for (const d of workingDays(mkDay(2026, 1, 5), 3, u, mkDay(2026, 1, 31)))
          add('workloads', {
            id: wlIds.next(),
            document_type_id: T.job,
            document_id: job.id,
            user_id: u.id,
            timesheet_id: null,
            day: ds(d),
            workload_minutes: rTs.int(2, 8) * 30,
            ...audit(NOW - 5, 600, job.project.managerId),
          });
      }
    }
  };

  // ---- Load ----------------------------------------------------------------------------------------------------
  const rows: Record<string, number> = {};
  const bypassing = await bypassFkTriggers(db);
  log(
    bypassing
      ? 'foreign-key triggers bypassed during the load; keys are verified set-wise at the end'
      : 'foreign keys checked row by row (role may not set session_replication_role)',
  );
  const loadTable = async (name: TableName): Promise<void> => {
    const t0 = Date.now();
    const bulk = (BULK_TABLES as readonly string[]).includes(name);
    if (name === 'timesheets') {
      await copyInto(db, 'timesheets', TIMESHEET_COLS, timesheetChunks());
      rows.timesheets = timesheetCount;
      // Fresh statistics now: loading workloads and verifying their keys join this table.
      await db.query('analyze timesheets');
      addFutureWorkloads();
      log(`timesheets: ${timesheetCount} rows in ${Date.now() - t0} ms`);
      return;
    }
    const t = tables.get(name)!;
    const chunks = t.drain();
    if (t.cols && t.count > 0) await copyInto(db, name, t.cols, chunks);
    rows[name] = t.count;
    if (name === 'services') {
      // Companies point at their default articles, which only exist now.
      await db.query(
        `update companies c
            set article_id = v.article_id, project_article_id = v.project_article_id,
                timesheet_start = coalesce(c.timesheet_start, date '2024-01-01'),
                image_file_id = coalesce(c.image_file_id, v.image_file_id)
           from unnest($2::uuid[], $3::uuid[], $4::uuid[], $5::uuid[]) as v(id, article_id, project_article_id, image_file_id)
          where c.tenant_id = $1 and c.id = v.id`,
        [
          tenantId,
          companies.map((c) => c.id),
          companies.map((c) => c.services['Creative Hours']),
          companies.map((c) => c.services['Project Management']),
          companies.map((c) => companyImages.get(c.id) ?? null),
        ],
      );
    }
    if (bulk) await db.query(`analyze ${name}`);
    log(`${name}: ${rows[name]} rows in ${Date.now() - t0} ms`);
  };
  for (const name of LOAD_ORDER) await loadTable(name);
  if (bypassing) await db.query('set local session_replication_role = origin');

  let t0 = Date.now();
  const rest = LOAD_ORDER.filter((t) => !(BULK_TABLES as readonly string[]).includes(t));
  await db.query(`analyze ${rest.join(', ')}, document_types, workflow_stage_types, user_types`);
  log(`analyze: ${Date.now() - t0} ms`);
  t0 = Date.now();
  if (bypassing) {
    await verifyForeignKeys(db, tenantId, LOAD_ORDER);
    log(`foreign keys verified in ${Date.now() - t0} ms`);
  }
  log(`total ${Date.now() - started} ms`);
  return { rows };
}
