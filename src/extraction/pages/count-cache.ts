// Exact totalCounts without recounting (decision 0022): a page's count is kept per tenant, count SQL and
// parameters, with the snapshot it was counted in and the tables its plan reads. It is answered again
// while no transaction that snapshot did not see has written to those tables for that tenant (the change
// log of migration 0015: one row per writing statement, appended by triggers, bulk COPYs included).
// Counts are kept per server (KeptState of kept-answers.ts, on its database handle).
import { type RawBuilder, sql } from 'kysely';
import type { DatabaseHandle, Trx } from '../../platform/db/database.ts';
import { extractionCounts } from '../../platform/metrics.ts';
import { COUNT_TTL_MS, type KeptCount, type KeptState, keptKey } from './kept-answers.ts';

/** Tables whose writes the change log records (the triggers of migration 0015), read once per server. */
function trackedTables(kept: KeptState, trx: Trx): Promise<Set<string>> {
  kept.tracked ??= sql<{ name: string }>`select c.relname as name from pg_trigger t join pg_class c on c.oid = t.tgrelid
      join pg_namespace n on n.oid = c.relnamespace where t.tgname = 'atrium_log_change' and n.nspname = 'public'`
    .execute(trx)
    .then((r) => new Set(r.rows.map((x) => x.name)))
    .catch((err) => {
      kept.tracked = null;
      throw err;
    });
  return kept.tracked;
}

/** The relations the plan of `count` reads (joins PostgreSQL dropped are not read); null if one is untracked. */
export async function tablesRead(kept: KeptState, trx: Trx, count: RawBuilder<unknown>, text: string): Promise<string[] | null> {
  const known = kept.tablesOfSql.get(text);
  if (known !== undefined) return known;
  const logged = await trackedTables(kept, trx);
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
  if (kept.tablesOfSql.size > kept.maxTablesOfSql) kept.tablesOfSql.clear();
  kept.tablesOfSql.set(text, tables);
  return tables;
}

/** A kept snapshot is still current: no transaction it did not see has written to `tables` for the tenant. */
export const unchangedSince = (tenantId: string, tables: string[], snapshot: string): RawBuilder<boolean> =>
  sql<boolean>`not atrium_changed_since(${tenantId}::uuid, ${tables}::text[], ${snapshot}::pg_snapshot)`;

/**
 * A count's delta (decision 0070): the count of the rows among `ids` (a uuid[] expression), which are the rows
 * the query's keyTable gained; `table` is that table. Given when the query declares one (execute.ts).
 */
export interface CountDelta {
  table: string;
  count: (ids: RawBuilder<unknown>) => RawBuilder<{ n: string }>;
}

/**
 * The check of a page's kept count, which a page asks inside its key statement (decisions 0039 and 0062) to save
 * the round trip of a separate check: `column` is true while the kept count holds (null when none is kept).
 * `fresh` (an offset page's key statement, decision 0062) is the count itself when no kept count holds, null
 * when one does: one InitPlan, computed only then, in the key statement's snapshot; since atrium_changed_since is
 * PARALLEL RESTRICTED (migration 0041) the statement keeps its parallel plan. With a `delta` and a kept count whose
 * only changes since are inserts into the delta's table logged with their ids (migration 0042), `fresh` is the
 * kept count plus the count of those rows, printed with a leading '+' (the metric's 'delta'; Number() reads it);
 * otherwise the count. `settle` answers the kept count while it holds, else the count `fresh` answered (kept with
 * the key statement's snapshot), else computes `fresh` in a statement of its own. Given no answer of `column`
 * (the statement did not ask), it checks on its own.
 */
export interface CountProbe {
  column: RawBuilder<boolean | null>;
  fresh: RawBuilder<string | null>;
  settle: (holds?: boolean | null, counted?: { n: string | null; snapshot: string }) => Promise<number>;
}

export function countProbe(state: KeptState, trx: Trx, tenantId: string, count: RawBuilder<{ n: string }>, delta?: CountDelta): CountProbe {
  const compiled = count.compile(trx);
  const key = keptKey(tenantId, compiled);
  const kept = state.counts.get(key);
  const check = (entry: KeptCount) => unchangedSince(tenantId, entry.tables, entry.snapshot);
  const counted = sql<string>`(select c.n::text from (${count}) as c)`;
  // The kept count plus the rows inserted since, or null when a change since is not such an insert.
  const added = (entry: KeptCount, d: CountDelta) =>
    sql<string | null>`(select '+' || (${entry.count}::bigint + d.n)::text
        from (select atrium_inserted_since(${tenantId}::uuid, ${entry.tables}::text[], ${entry.snapshot}::pg_snapshot, ${d.table}) as ids offset 0) as i
        cross join lateral (${d.count(sql`i.ids`)}) as d where i.ids is not null)`;
  const fresh = !kept
    ? counted
    : delta && kept.tables.includes(delta.table)
      ? sql<string | null>`(select case when ${check(kept)} then null else coalesce(${added(kept, delta)}, ${counted}) end)`
      : sql<string | null>`(select case when ${check(kept)} then null else ${counted} end)`;
  return {
    column: kept ? check(kept) : sql<null>`null::boolean`,
    fresh,
    settle: async (holds, answered) => {
      let now = answered;
      if (kept && !holds && now === undefined) {
        // Not answered by a statement: the check and, when the count changed, its delta or the count, in one statement.
        const { rows } = await sql<{ n: string | null; snapshot: string }>`select ${fresh} as n, pg_current_snapshot()::text as snapshot`.execute(trx);
        if (rows[0].n === null) holds = true;
        now = rows[0];
      }
      if (kept && holds) {
        extractionCounts.inc({ result: 'hit' });
        return kept.count;
      }
      if (kept) state.counts.delete(key);
      if (now?.n != null && now.snapshot) return keep(state, trx, key, count, compiled.sql, now.n, now.snapshot);
      return freshCount(state, trx, key, count, compiled.sql);
    },
  };
}

/** Counts in a statement of its own, whose snapshot is the count's, and keeps the count. */
async function freshCount(state: KeptState, trx: Trx, key: string, count: RawBuilder<{ n: string }>, text: string): Promise<number> {
  const { rows } = await sql<{ n: string; snapshot: string }>`select c.n, pg_current_snapshot()::text as snapshot from (${count}) c`.execute(trx);
  return keep(state, trx, key, count, text, rows[0].n, rows[0].snapshot);
}

/** Keeps a count taken in `snapshot` (unless it reads an untracked table) and answers it; '+n' is a count brought up to date by its delta. */
async function keep(state: KeptState, trx: Trx, key: string, count: RawBuilder<unknown>, text: string, answer: string, snapshot: string): Promise<number> {
  const n = Number(answer);
  const tables = await tablesRead(state, trx, count, text);
  if (tables === null) {
    extractionCounts.inc({ result: 'uncached' });
    return n;
  }
  extractionCounts.inc({ result: answer.startsWith('+') ? 'delta' : 'miss' });
  state.counts.set(key, { count: n, snapshot, tables, at: Date.now() });
  return n;
}

/**
 * The exact number of rows `count` (a `select count(*) as "n" from …`) answers now: a kept count when no
 * write the count could not see has touched the tables it reads for this tenant, else a fresh count.
 */
export const exactCount = (state: KeptState, trx: Trx, tenantId: string, count: RawBuilder<{ n: string }>, delta?: CountDelta): Promise<number> =>
  countProbe(state, trx, tenantId, count, delta).settle();

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
