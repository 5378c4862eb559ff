// Bulk writes of the import inside the tenant seam: one multi-row statement per table and batch that
// inserts rows by their source id, or updates the columns that differ (so an unchanged row is not
// written, and a re-run counts 0), and the deletion of rows a complete read did not show.
import { sql } from 'kysely';
import { APP_ROLE, type DatabaseHandle, type Trx } from '../platform/db/database.ts';
import type { ImportTable, TableWrite, Values, WrittenTable } from './mappings.ts';

/** A foreign key `(tenant_id, column)` → `parent (tenant_id, parentColumn)`, checked per batch in bulk mode. */
interface TenantForeignKey {
  name: string;
  column: string;
  parent: string;
  parentColumn: string;
  /** The column's SQL type (the ids are bound as an array of it). */
  type: string;
}

/** How a table is written in bulk mode: its foreign keys, and its columns with a default (bulkTableOf). */
interface BulkTable {
  foreignKeys: TenantForeignKey[];
  withDefault: Set<string>;
}

/**
 * Bulk mode (decision 0074): a batch's insert runs with session_replication_role = replica (as role
 * atrium_importer, migration 0044), which skips PostgreSQL's per-row foreign-key triggers, and the rows the
 * batch refers to are then checked and locked FOR KEY SHARE with one statement per foreign key, as the
 * triggers would have done one row at a time. Only for tables whose foreign keys all have the tenant's shape
 * and whose own triggers all fire ALWAYS (so replica mode skips nothing but the checks).
 */
export class BulkWrites {
  readonly #tables = new Map<string, Promise<BulkTable | null>>();

  /** Bulk mode where the database lets the import's role set session_replication_role; null otherwise. */
  static async open(trx: Trx): Promise<BulkWrites | null> {
    const row = await sql<{ can: boolean }>`
      select pg_has_role(session_user, 'atrium_importer', 'MEMBER')
             and has_parameter_privilege('atrium_importer', 'session_replication_role', 'SET') as can`
      .execute(trx)
      .then(
        (r) => r.rows[0],
        () => null,
      );
    return row?.can ? new BulkWrites() : null;
  }

  /** The table's checks, or null when it is written with the per-row triggers. */
  table(trx: Trx, table: string): Promise<BulkTable | null> {
    let found = this.#tables.get(table);
    if (!found) {
      found = bulkTableOf(trx, table);
      this.#tables.set(table, found);
    }
    return found;
  }
}

async function bulkTableOf(trx: Trx, table: string): Promise<BulkTable | null> {
  const triggers = await sql<{ n: number }>`
    select count(*)::int as n from pg_trigger where tgrelid = ${table}::regclass and not tgisinternal and tgenabled <> 'A'`.execute(trx);
  if (triggers.rows[0].n > 0) return null;
  const keys = await sql<{ name: string; parent: string; columns: string[]; parent_columns: string[]; type: string; match: string }>`
    select c.conname as name, p.relname as parent, c.confmatchtype as match,
           array(select a.attname::text from unnest(c.conkey) with ordinality k(n, o)
                   join pg_attribute a on a.attrelid = c.conrelid and a.attnum = k.n order by k.o) as columns,
           array(select a.attname::text from unnest(c.confkey) with ordinality k(n, o)
                   join pg_attribute a on a.attrelid = c.confrelid and a.attnum = k.n order by k.o) as parent_columns,
           (select format_type(a.atttypid, a.atttypmod) from pg_attribute a
             where a.attrelid = c.conrelid and a.attnum = c.conkey[array_upper(c.conkey, 1)]) as type
      from pg_constraint c join pg_class p on p.oid = c.confrelid
     where c.conrelid = ${table}::regclass and c.contype = 'f'
     order by c.conname`.execute(trx);
  const foreignKeys: TenantForeignKey[] = [];
  for (const k of keys.rows) {
    if (k.parent === 'tenants' && k.columns.join() === 'tenant_id' && k.parent_columns.join() === 'id') continue; // the tenant, locked apart
    const tenantShaped = k.columns.length === 2 && k.columns[0] === 'tenant_id' && k.parent_columns[0] === 'tenant_id' && k.match === 's';
    if (!tenantShaped) return null;
    foreignKeys.push({ name: k.name, column: k.columns[1], parent: k.parent, parentColumn: k.parent_columns[1], type: k.type });
  }
  const defaults = await sql<{ name: string }>`
    select attname::text as name from pg_attribute where attrelid = ${table}::regclass and atthasdef and attnum > 0 and not attisdropped`.execute(trx);
  return { foreignKeys, withDefault: new Set(defaults.rows.map((r) => r.name)) };
}

/**
 * Checks and locks (FOR KEY SHARE) the rows a batch refers to, one statement for all its foreign keys and the
 * tenant; throws the foreign-key violation PostgreSQL would have raised, naming a missing id.
 */
async function checkReferences(trx: Trx, tenantId: string, table: string, checks: BulkTable, rows: Values[]): Promise<void> {
  const wanted = checks.foreignKeys.map((fk) => {
    const ids = new Set<string>();
    for (const r of rows) {
      const v = r[fk.column];
      if (v !== null && v !== undefined) ids.add(fk.type === 'uuid' ? String(v).toLowerCase() : String(v));
    }
    return [...ids];
  });
  const found = await sql<Record<string, number>>`
    select (select count(*) from (select 1 from tenants where id = ${tenantId} for key share) l)::int as tenant
      ${sql.join(
        checks.foreignKeys.map(
          (fk, i) => sql`, (select count(*) from (select 1 from ${sql.table(fk.parent)} p
                              where p.tenant_id = ${tenantId} and p.${sql.id(fk.parentColumn)} = any(${wanted[i]}::${sql.raw(fk.type)}[])
                                for key share of p) l)::int as ${sql.id(`k${i}`)}`,
        ),
        sql``,
      )}`.execute(trx);
  const counts = found.rows[0];
  if (counts.tenant !== 1) throw new Error(`insert on table "${table}" violates its foreign key to tenants: no tenant ${tenantId}`);
  for (const [i, fk] of checks.foreignKeys.entries()) {
    if (counts[`k${i}`] === wanted[i].length) continue;
    const missing = await sql<{ id: string }>`
      select w.id::text as id from unnest(${wanted[i]}::${sql.raw(fk.type)}[]) w(id)
       where not exists (select 1 from ${sql.table(fk.parent)} p where p.tenant_id = ${tenantId} and p.${sql.id(fk.parentColumn)} = w.id)
       limit 1`.execute(trx);
    throw new Error(
      `insert or update on table "${table}" violates foreign key constraint "${fk.name}": ${fk.parent}.${fk.parentColumn} ${missing.rows[0]?.id ?? '?'} is not present`,
    );
  }
}

/** Rows written (inserted or changed) by one batch of one table. */
export async function writeRows(trx: Trx, tenantId: string, write: TableWrite, rows: Values[], bulk?: BulkWrites | null): Promise<number> {
  if (rows.length === 0) return 0;
  if (write.mode === 'delete') {
    const ids = rows.map((r) => String(r.id));
    const result = await sql`delete from ${sql.table(write.table)} where tenant_id = ${tenantId} and id = any(${ids}::uuid[])`.execute(trx);
    return Number(result.numAffectedRows ?? 0);
  }
  // The last value of a row seen twice in a batch wins (a lookup row repeated on every row of a query).
  const byId = new Map<string, Values>();
  for (const r of rows) byId.set(String(r.id), { ...r, tenant_id: tenantId });
  const unique = [...byId.values()];
  const columns = [...new Set(unique.flatMap((r) => Object.keys(r)))];
  const insertOnly = new Set(write.insertOnly ?? []);
  const compared = columns.filter((c) => c !== 'id' && c !== 'tenant_id' && !insertOnly.has(c));
  const table = sql.table(write.table);
  const json = JSON.stringify(unique);
  const source = sql`json_populate_recordset(null::${table}, ${json}::json) x`;
  const mode = write.mode ?? 'upsert';
  if (mode === 'updateOnly') {
    const result = await sql`
      update ${table} as t set ${sql.join(compared.map((c) => sql`${sql.id(c)} = x.${sql.id(c)}`))}
        from ${source}
       where t.tenant_id = ${tenantId} and t.id = x.id
         and (${sql.join(compared.map((c) => sql.ref(`t.${c}`)))}) is distinct from (${sql.join(compared.map((c) => sql.ref(`x.${c}`)))})`.execute(trx);
    return Number(result.numAffectedRows ?? 0);
  }
  const conflict =
    mode === 'insertMissing' || compared.length === 0
      ? sql`do nothing`
      : sql`do update set ${sql.join(compared.map((c) => sql`${sql.id(c)} = excluded.${sql.id(c)}`))}
            where (${sql.join(compared.map((c) => sql.ref(`t.${c}`)))}) is distinct from (${sql.join(compared.map((c) => sql`excluded.${sql.id(c)}`))})`;
  const insert = sql`
    insert into ${table} as t (${sql.join(columns.map((c) => sql.id(c)))})
    select ${sql.join(columns.map((c) => sql.ref(`x.${c}`)))} from ${source}
    on conflict (tenant_id, id) ${conflict}`;
  const checks = bulk ? await bulk.table(trx, write.table) : null;
  // A foreign-key column the batch leaves out takes its default on insert, which the batch's values cannot check.
  if (!checks || checks.foreignKeys.some((fk) => !columns.includes(fk.column) && checks.withDefault.has(fk.column))) {
    return Number((await insert.execute(trx)).numAffectedRows ?? 0);
  }
  await sql`select set_config('role', 'atrium_importer', true), set_config('session_replication_role', 'replica', true)`.execute(trx);
  const result = await insert.execute(trx);
  await sql`select set_config('session_replication_role', 'origin', true), set_config('role', ${APP_ROLE}, true)`.execute(trx);
  await checkReferences(trx, tenantId, write.table, checks, unique);
  return Number(result.numAffectedRows ?? 0);
}

const SCOPES = {
  all: sql`true`,
  live: sql`deleted_on is null`,
  tombstones: sql`deleted_on is not null`,
  // The months DE-EstimatesQuotesMonth shows: of lines with a typology group, of estimates neither Draft nor
  // Canceled. Other lines' months come from DE-ProjectsPlannedTime (src/import/mappings/planning.ts).
  shownEstimateMonths: sql`estimate_item_detail_id in (
    select dt.id from estimate_item_details dt
      join estimate_items i on i.tenant_id = dt.tenant_id and i.id = dt.estimate_item_id
      join estimates e on e.tenant_id = i.tenant_id and e.id = i.estimate_id
      join workflow_stages ws on ws.tenant_id = e.tenant_id and ws.id = e.stage_id
      join workflow_stage_types wst on wst.tenant_id = ws.tenant_id and wst.id = ws.stage_type_id
     where dt.tenant_id = estimate_item_detail_months.tenant_id and dt.typology_group_id is not null
       and wst.name not in ('Draft', 'Canceled'))`,
};

/** Deletes the rows of `table` (within `scope`) whose id is not in `seen`: what the source no longer has. */
export async function deleteUnseen(trx: Trx, tenantId: string, table: WrittenTable, scope: keyof typeof SCOPES, seen: Set<string>): Promise<number> {
  const result = await sql`
    delete from ${sql.table(table)}
     where tenant_id = ${tenantId} and ${SCOPES[scope]} and not (id = any(${[...seen]}::uuid[]))`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/** Every row of the tenant in `table` (a fresh target's defaults, replaced by the source's). */
export async function deleteAll(trx: Trx, tenantId: string, table: ImportTable): Promise<number> {
  const result = await sql`delete from ${sql.table(table)} where tenant_id = ${tenantId}`.execute(trx);
  return Number(result.numAffectedRows ?? 0);
}

/**
 * A second transaction of the tenant beside a query's own (decision 0073): it writes the batches handed to
 * it one at a time, in order, and commits when closed with success (rolls back otherwise). The target's
 * PostgreSQL then works on two connections at once for the biggest tables, where one backend was the
 * import's bottleneck. A crash after it commits and before the query's checkpoint leaves rows that a re-run
 * writes again unchanged (upserts by id), so the run still resumes to the same state.
 */
export class SideLane {
  #trx: Promise<Trx>;
  #tail: Promise<unknown> = Promise.resolve();
  #failed = false;
  #close!: (ok: boolean) => void;
  readonly #done: Promise<void>;

  constructor(db: DatabaseHandle, tenantId: string) {
    let opened!: (trx: Trx) => void;
    let refused!: (err: unknown) => void;
    this.#trx = new Promise<Trx>((resolve, reject) => {
      opened = resolve;
      refused = reject;
    });
    this.#trx.catch(() => {});
    const closed = new Promise<boolean>((resolve) => (this.#close = resolve));
    this.#done = db.withTenant(tenantId, async (trx) => {
      opened(trx);
      const ok = await closed;
      await this.#tail;
      if (!ok || this.#failed) throw new Error('import side lane rolled back');
    });
    this.#done.catch((err) => refused(err));
  }

  /** Queues `fn` after the lane's previous write; its promise settles when this write is done. */
  write(fn: (trx: Trx) => Promise<number>): Promise<number> {
    const result = this.#tail.then(async () => fn(await this.#trx));
    this.#tail = result.catch(() => {
      this.#failed = true;
    });
    return result;
  }

  /** Commits (ok) or rolls back the lane's transaction, after its queued writes. */
  async close(ok: boolean): Promise<void> {
    this.#close(ok);
    if (ok) await this.#done;
    else await this.#done.catch(() => {});
  }
}
