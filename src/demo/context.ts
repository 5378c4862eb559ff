// Demo data: the context every area works over: the tenant and scale, one random stream per area, the row
// sink with the audit columns, and what the tenant bootstrap already created (looked up once).
import type pg from 'pg';
import type { TenantDefaults } from '../domain/bootstrap.ts';
import { ts } from './dates.ts';
import { hashString, Rng } from './random.ts';
import { type Db, LOAD_ORDER, Table, type TableName } from './sink.ts';
import type { StageType } from './vocabulary.ts';

export interface DemoOptions {
  scale: number;
  seed?: number;
  log?: (line: string) => void;
  /** Called as each chunk of a table goes to COPY: the rows sent so far and the share of the table they are. */
  progress?: (p: LoadProgress) => void;
  /** Aborting stops the generation between areas and the load between COPY chunks (the caller rolls back). */
  signal?: AbortSignal;
}

export interface LoadProgress {
  table: string;
  rows: number;
  fraction: number;
}

export type DemoContext = Awaited<ReturnType<typeof createDemoContext>>;

export async function createDemoContext(db: Db, tenantId: string, defaults: TenantDefaults, opts: DemoOptions) {
  const scale = opts.scale > 0 ? opts.scale : 1;
  const seed = (opts.seed ?? 1) >>> 0;
  const log = opts.log ?? (() => {});
  const progress = opts.progress;
  const signal = opts.signal;
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

  // What the bootstrap created.
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
  return {
    db,
    tenantId,
    defaults,
    scale,
    log,
    progress,
    signal,
    rngFor,
    n,
    tables,
    add,
    audit,
    T,
    docType,
    stageTypeId,
    mainRow,
    existingCurrencies,
    existingCountries,
    existingWorkflows,
    existingStages,
    existingTransitions,
  };
}
