// Deleting a tenant (`atrium tenants delete`): every row of every table that has a tenant_id, the tenant's
// custom tables in schema customtables, its queued jobs, and the tenants row, in one transaction: either all
// of it goes or nothing does. The tables are found in the catalog, not listed here, so a table a later
// migration adds is covered without a change; they are emptied children first (by their foreign keys).
import { sql } from 'kysely';
import type { AppContext } from '../platform/context.ts';
import { isUuid, type Trx } from '../platform/db/database.ts';
import { notFound } from '../platform/errors.ts';

export interface TenantDeletion {
  tenantId: string;
  name: string;
  slug: string;
  /** Rows deleted per table (tables with none left out), the tenants row included. */
  rows: Record<string, number>;
  customTables: string[];
  jobs: number;
}

/** Public tables with a tenant_id column (partitions aside: deleting from the parent covers them). */
export async function tenantTables(trx: Trx): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    select c.relname as name from pg_class c
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
    join pg_attribute a on a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
    where c.relkind in ('r', 'p') and not c.relispartition
    order by c.relname`.execute(trx);
  return rows.map((r) => r.name);
}

/** The tables in an order where each comes before every table it references (children first). */
async function childrenFirst(trx: Trx, tables: string[]): Promise<string[]> {
  const { rows } = await sql<{ child: string; parent: string }>`
    select cc.relname as child, pc.relname as parent from pg_constraint k
    join pg_class cc on cc.oid = k.conrelid join pg_namespace cn on cn.oid = cc.relnamespace and cn.nspname = 'public'
    join pg_class pc on pc.oid = k.confrelid join pg_namespace pn on pn.oid = pc.relnamespace and pn.nspname = 'public'
    where k.contype = 'f' and k.conrelid <> k.confrelid`.execute(trx);
  const referencedBy = new Map<string, Set<string>>(tables.map((t) => [t, new Set()]));
  for (const r of rows) if (referencedBy.has(r.child) && referencedBy.has(r.parent)) referencedBy.get(r.parent)?.add(r.child);
  const order: string[] = [];
  const done = new Set<string>();
  const visiting = new Set<string>();
  const visit = (t: string) => {
    if (done.has(t) || visiting.has(t)) return; // a cycle: its tables go in the order met
    visiting.add(t);
    for (const child of referencedBy.get(t) ?? []) visit(child);
    visiting.delete(t);
    done.add(t);
    order.push(t);
  };
  for (const t of tables) visit(t);
  return order;
}

export async function deleteTenant(ctx: AppContext, tenantId: string): Promise<TenantDeletion> {
  if (!isUuid(tenantId)) throw notFound(`No tenant ${tenantId}.`);
  return ctx.db.asOwner(async (trx) => {
    // Bound to the tenant, so row-level security (forced on every table) lets a non-superuser owner see its rows.
    await sql`select set_config('atrium.tenant_id', ${tenantId}, true)`.execute(trx);
    const tenant = await trx.selectFrom('tenants').select(['id', 'name', 'slug']).where('id', '=', tenantId).forUpdate().executeTakeFirst();
    if (!tenant) throw notFound(`No tenant ${tenantId}.`);
    const physical = await trx.selectFrom('custom_tables').select('physical_name').where('tenant_id', '=', tenantId).execute();
    for (const t of physical) await sql`drop table if exists ${sql.id('customtables', t.physical_name)}`.execute(trx);
    const rows: Record<string, number> = {};
    for (const table of await childrenFirst(trx, await tenantTables(trx))) {
      const result = await sql`delete from ${sql.table(table)} where tenant_id = ${tenantId}::uuid`.execute(trx);
      const n = Number(result.numAffectedRows ?? 0);
      if (n > 0) rows[table] = n;
    }
    const gone = await sql`delete from tenants where id = ${tenantId}::uuid`.execute(trx);
    rows.tenants = Number(gone.numAffectedRows ?? 0);
    // Jobs queued for the tenant (scheduled runs, exports): their work would find no tenant.
    const { rows: boss } = await sql<{ job: string | null }>`select to_regclass('pgboss.job')::text as job`.execute(trx);
    let jobs = 0;
    if (boss[0]?.job) {
      const deleted = await sql`delete from pgboss.job where data->>'tenantId' = ${tenantId}`.execute(trx);
      jobs = Number(deleted.numAffectedRows ?? 0);
    }
    return { tenantId, name: tenant.name, slug: tenant.slug, rows, customTables: physical.map((t) => t.physical_name), jobs };
  });
}
