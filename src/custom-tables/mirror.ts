// The import's writes of a custom table (src/import): the source's schema and roles, then its rows
// compared with the target's (a row already equal is not written, so a re-run changes nothing), and the
// rows the source no longer has removed. As the rest of the import, it appends no events.
import { sql } from 'kysely';
import type { Principal } from '../platform/auth/principal.ts';
import type { Trx } from '../platform/db/database.ts';
import { ensureTable, loadTable, setDefinition, type TableDef, type TableSpec, tableRef } from './catalogue.ts';
import type { DbValue } from './column-types.ts';
import { castOf, type PreparedRow, Problems, prepareRow, type RowObject } from './rows.ts';

/** A custom table as the source's Custom Tables API lists it. */
export interface MirroredTable extends TableSpec {
  TableName: string;
  ReadRoles?: string[];
  SaveRoles?: string[];
}

const importer = (tenantId: string): Principal => ({
  tenantId,
  appId: null,
  userId: null,
  userName: null,
  roles: new Set(['Administrator']),
  via: 'app-headers',
});

/** Creates the table (or adds the columns it lacks) and sets its roles; `changed` counts the schema and roles written. */
export async function mirrorSchema(trx: Trx, tenantId: string, source: MirroredTable): Promise<{ table: TableDef; changed: number }> {
  const p = importer(tenantId);
  const spec: TableSpec = { KeyColumnName: source.KeyColumnName, KeyDataTypeId: source.KeyDataTypeId, KeyLength: source.KeyLength, Columns: source.Columns };
  const r = await ensureTable(trx, p, source.TableName, spec);
  let changed = r.created ? 1 : r.addedColumns.length;
  const same = (a: string[], b: string[]) => JSON.stringify([...a].sort()) === JSON.stringify([...b].sort());
  if (!same(r.table.readRoles, source.ReadRoles ?? []) || !same(r.table.saveRoles, source.SaveRoles ?? [])) {
    await setDefinition(trx, p, r.table.id, { ReadRoles: source.ReadRoles ?? [], SaveRoles: source.SaveRoles ?? [] });
    changed++;
  }
  return { table: (await loadTable(trx, { id: r.table.id })) ?? r.table, changed };
}

/**
 * Upserts a page of the source's rows (the rows API's objects), writing only those that differ; answers
 * the rows written and the keys seen (database-ready, for `deleteUnseenRows`).
 */
export async function mirrorRows(trx: Trx, t: TableDef, rows: RowObject[]): Promise<{ written: number; keys: DbValue[] }> {
  const problems = new Problems();
  const prepared: PreparedRow[] = [];
  rows.forEach((r, i) => {
    const cells = (r.Columns ?? []).map((c, j) => ({
      name: c.ColumnName,
      value: c.Value,
      namePath: `/${i}/Columns/${j}`,
      valuePath: `/${i}/Columns/${j}/Value`,
    }));
    const p = prepareRow(t, String(i), { value: r.KeyValue, path: `/${i}/KeyValue` }, cells, problems);
    if (p) prepared.push(p);
  });
  problems.fail(`Custom table ${t.name} of the source`);
  if (prepared.length === 0) return { written: 0, keys: [] };
  const cols = t.columns;
  const all = [t.key, ...cols];
  const payload = JSON.stringify(
    prepared.map((r) => {
      const o: Record<string, DbValue> = { [t.key.physical]: r.key };
      for (const c of cols) o[c.physical] = r.values.has(c.physical) ? r.values.get(c.physical)! : null;
      return o;
    }),
  );
  const names = sql.join(all.map((c) => sql.id(c.physical)));
  const defs = sql.join(all.map((c) => sql`${sql.id(c.physical)} ${castOf(c)}`));
  const onConflict = cols.length
    ? sql`do update set ${sql.join(cols.map((c) => sql`${sql.id(c.physical)} = excluded.${sql.id(c.physical)}`))}
          where (${sql.join(cols.map((c) => sql`t.${sql.id(c.physical)}`))}) is distinct from (${sql.join(cols.map((c) => sql`excluded.${sql.id(c.physical)}`))})`
    : sql`do nothing`;
  const res = await sql`
    insert into ${tableRef(t)} as t (${names})
    select ${names} from jsonb_to_recordset(${payload}::jsonb) as r(${defs})
    on conflict (${sql.id(t.key.physical)}) ${onConflict}`.execute(trx);
  return { written: Number(res.numAffectedRows ?? 0), keys: prepared.map((r) => r.key) };
}

/** Deletes the target's rows whose key the source did not show. */
export async function deleteUnseenRows(trx: Trx, t: TableDef, keys: DbValue[]): Promise<number> {
  const res = await sql`
    delete from ${tableRef(t)}
     where not (${sql.id(t.key.physical)} = any(array(select k::${castOf(t.key)} from jsonb_array_elements_text(${JSON.stringify(keys)}::jsonb) k)))`.execute(
    trx,
  );
  return Number(res.numAffectedRows ?? 0);
}
