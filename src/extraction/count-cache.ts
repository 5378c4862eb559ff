// Exact totalCounts without recounting (decision 0022): a page's count is kept per tenant, count SQL and
// parameters, with the snapshot it was counted in and the tables its plan reads. It is answered again
// while no transaction that snapshot did not see has written to those tables for that tenant (the change
// log of migration 0015: one row per writing statement, appended by triggers, bulk COPYs included).
import { createHash } from 'node:crypto';
import { type RawBuilder, sql } from 'kysely';
import type { DatabaseHandle, Trx } from '../platform/db/database.ts';
import { extractionCounts } from '../platform/metrics.ts';

/**
 * How long a count is kept. The maintenance sweep deletes change rows only below a horizon taken at
 * least this long ago, so no kept count can predate a deleted change (sweepChangeLog).
 */
export const COUNT_TTL_MS = 10 * 60_000;
const MAX_ENTRIES = 5_000;
/**
 * Counts are kept per quarter hour as well: a source may compare with the current date, which changes at
 * an hour or a quarter past in every time zone; keyed by the quarter hour, no count outlives its day.
 */
const BUCKET_MS = 15 * 60_000;

interface Entry {
  count: number;
  snapshot: string;
  tables: string[];
  at: number;
}

const entries = new Map<string, Entry>();
/** Count SQL text -> the tracked tables its plan reads, or null when it reads one that is not tracked. */
const tablesOfSql = new Map<string, string[] | null>();
let tracked: Promise<Set<string>> | null = null;

/** Tables whose writes the change log records (the triggers of migration 0015). */
function trackedTables(trx: Trx): Promise<Set<string>> {
  tracked ??= sql<{ name: string }>`select c.relname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid
      join pg_namespace n on n.oid = c.relnamespace where t.tgname = 'atrium_log_change' and n.nspname = 'public'`
    .execute(trx)
    .then((r) => new Set(r.rows.map((x) => x.name)))
    .catch((err) => {
      tracked = null;
      throw err;
    });
  return tracked;
}

/** The relations the plan of `count` reads (joins PostgreSQL dropped are not read); null if one is untracked. */
async function tablesRead(trx: Trx, count: RawBuilder<unknown>, text: string): Promise<string[] | null> {
  const known = tablesOfSql.get(text);
  if (known !== undefined) return known;
  const logged = await trackedTables(trx);
  const { rows } = await sql<{ 'QUERY PLAN': unknown }>`explain (format json, costs off, verbose) ${count}`.execute(trx);
  const found = new Set<string>();
  let untracked = false;
  const walk = (node: unknown): void => {
    if (Array.isArray(node)) for (const n of node) walk(n);
    else if (node && typeof node === 'object') {
      const o = node as Record<string, unknown>;
      if (typeof o['Relation Name'] === 'string') {
        if (o.Schema === 'public' && logged.has(o['Relation Name'])) found.add(o['Relation Name']);
        else untracked = true;
      }
      for (const v of Object.values(o)) walk(v);
    }
  };
  walk(rows[0]?.['QUERY PLAN']);
  const tables = untracked ? null : [...found].sort();
  if (tablesOfSql.size > MAX_ENTRIES) tablesOfSql.clear();
  tablesOfSql.set(text, tables);
  return tables;
}

/**
 * The exact number of rows `count` (a `select count(*) as "n" from …`) answers now: a kept count when no
 * write the count could not see has touched the tables it reads for this tenant, else a fresh count.
 */
export async function exactCount(trx: Trx, tenantId: string, count: RawBuilder<{ n: string }>): Promise<number> {
  const compiled = count.compile(trx);
  const key = createHash('sha256')
    .update(JSON.stringify([tenantId, compiled.sql, compiled.parameters, Math.floor(Date.now() / BUCKET_MS)]))
    .digest('base64url');
  const kept = entries.get(key);
  if (kept && Date.now() - kept.at < COUNT_TTL_MS) {
    const { rows } = await sql<{
      changed: boolean;
    }>`select atrium_changed_since(${tenantId}::uuid, ${kept.tables}::text[], ${kept.snapshot}::pg_snapshot) as changed`.execute(trx);
    if (!rows[0].changed) {
      extractionCounts.inc({ result: 'hit' });
      return kept.count;
    }
  }
  if (kept) entries.delete(key);
  // The snapshot is the count statement's own, so the count is exactly what that snapshot saw.
  const { rows } = await sql<{ n: string; snapshot: string }>`select c.n, pg_current_snapshot()::text as snapshot from (${count}) c`.execute(trx);
  const n = Number(rows[0].n);
  const tables = await tablesRead(trx, count, compiled.sql);
  if (tables === null) {
    extractionCounts.inc({ result: 'uncached' });
    return n;
  }
  extractionCounts.inc({ result: 'miss' });
  if (entries.size >= MAX_ENTRIES) entries.delete(entries.keys().next().value as string);
  entries.set(key, { count: n, snapshot: rows[0].snapshot, tables, at: Date.now() });
  return n;
}

/**
 * Maintenance: deletes change rows below the horizon taken at least COUNT_TTL_MS ago (every snapshot
 * taken since saw them all, and older counts have expired), then takes a new horizon.
 */
export async function sweepChangeLog(db: DatabaseHandle): Promise<number> {
  return db.asOwner(async (trx) => {
    const { rows } = await sql<{ oldest: string; ripe: boolean }>`select oldest_xid::text as oldest,
        taken_on_utc < now() - make_interval(secs => ${COUNT_TTL_MS / 1000}) as ripe from extraction_change_horizon`.execute(trx);
    const horizon = rows[0];
    if (horizon && !horizon.ripe) return 0;
    const deleted = horizon ? Number((await sql`delete from extraction_changes where xid < ${horizon.oldest}::xid8`.execute(trx)).numAffectedRows ?? 0) : 0;
    await sql`insert into extraction_change_horizon (id, oldest_xid, taken_on_utc) values (1, pg_snapshot_xmin(pg_current_snapshot()), now())
      on conflict (id) do update set oldest_xid = excluded.oldest_xid, taken_on_utc = excluded.taken_on_utc`.execute(trx);
    return deleted;
  });
}
