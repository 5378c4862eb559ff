// Bulk writes of the import inside the tenant seam: one multi-row statement per table and batch that
// inserts rows by their source id, or updates the columns that differ (so an unchanged row is not
// written, and a re-run counts 0), and the deletion of rows a complete read did not show.
import { sql } from 'kysely';
import type { Trx } from '../platform/db/database.ts';
import type { ImportTable, TableWrite, Values, WrittenTable } from './mappings.ts';

/** Rows written (inserted or changed) by one batch of one table. */
export async function writeRows(trx: Trx, tenantId: string, write: TableWrite, rows: Values[]): Promise<number> {
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
  const result = await sql`
    insert into ${table} as t (${sql.join(columns.map((c) => sql.id(c)))})
    select ${sql.join(columns.map((c) => sql.ref(`x.${c}`)))} from ${source}
    on conflict (tenant_id, id) ${conflict}`.execute(trx);
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
