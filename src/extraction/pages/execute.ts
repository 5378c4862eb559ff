// Runs a plan (decision 0021, docs/extraction-page-plans.md). A JSON page is keys-first: the page's keys
// are chosen on the narrowest plan (only the filter and order columns are computed; PostgreSQL drops every
// other lookup), then the output columns are computed for those rows only, printed as JSON by PostgreSQL.
// Exports read `select <fields> from (<source>) q where … order by …`; counts run on the narrowest plan
// and are kept while nothing they read changes (count-cache.ts).

import { type RawBuilder, sql } from 'kysely';
import type pg from 'pg';
import { type DatabaseHandle, executeLast, kyselyOnClient, type Trx } from '../../platform/db/database.ts';
import type { Encoding } from '../../platform/http/answer-encoding.ts';
import { extractionReadAhead, extractionReadAheadBatches } from '../../platform/metrics.ts';
import type { CatalogueColumn, ColumnType } from '../definition.ts';
import { CopyOut } from '../exports/copy-out.ts';
import { columnTypes, copyStatement, copyTransaction, OID } from '../exports/copy-statement.ts';
import { JSONB_OID, JsonLines, jsonObjects, jsonTextSelect } from '../exports/json-lines.ts';
import type { Plan } from '../query/query-builder.ts';
import { isCustomTableName, type ResolvedQuery } from '../query/resolve.ts';
import { type CountDelta, type CountProbe, countProbe, exactCount, tablesRead, unchangedSince } from './count-cache.ts';
import { type KeptState, keptOf } from './kept-answers.ts';
import { type AheadPage, answerOf, dropPager, PAGE_HEAD, PageSplitter, pagerOf, pagesPerBatch, readAhead, TAIL_ROOM, takePage } from './read-ahead.ts';
import { after, type OrderTerm, positionKey, reversed, type SeekPosition, seekCounted } from './seek-positions.ts';

export interface Page {
  data: Record<string, unknown>[];
  totalCount: number;
}

const from = (source: RawBuilder<unknown>, plan: Plan) =>
  sql`from (${source}) as q${plan.where.length ? sql` where ${sql.join(plan.where, sql` and `)}` : sql``}`;
const page = (plan: Plan) => sql`${plan.take !== null ? sql` limit ${plan.take}` : sql``}${plan.skip > 0 ? sql` offset ${plan.skip}` : sql``}`;

/** The rows of the plan (count queries: the one Count row). `forExport` orders only when asked or paged. */
export function rowsQuery(q: ResolvedQuery, plan: Plan, forExport = false): RawBuilder<Record<string, unknown>> {
  if (q.isCount) return sql`select count(*) as "Count" ${from(keysPhaseSource(q, plan), plan)}`;
  const select = sql.join(plan.fields.map((c) => sql.id('q', c.name)));
  const paged = plan.take !== null || plan.skip > 0;
  const order = !forExport || paged || plan.orderBy.length ? orderBy(q, plan) : sql``;
  return sql`select ${select} ${from(q.source, plan)}${order}${page(plan)}`;
}

/** A type name as pg_typeof prints it, safe to write into a cast. */
const TYPE_NAME = /^[a-z][a-z0-9 ]*$/;

/** The page's keys as text (k0, k1, …), the order values of each row as text with their types (o0, t0, …). */
export type KeyRow = Record<string, string | null>;

/** What the key statement answered: the page's keys, its snapshot and, when it asked, whether the page's kept count still holds. */
export interface ChosenKeys {
  keys: KeyRow[];
  snapshot: string;
  countHolds?: boolean | null;
  /** The count, when the key statement computed it (no kept count held; decision 0062). */
  counted?: { n: string | null; snapshot: string };
  /** Sought past the kept position of the page before it (a paging client's next page). */
  sought?: boolean;
}

/** A plan's key statement before its page: its order terms, source, statement builder and compiled base (the position's key). */
export interface KeyPlan {
  terms: OrderTerm[];
  source: RawBuilder<unknown>;
  base: RawBuilder<unknown>;
  compiled: { sql: string; parameters: readonly unknown[] };
  /** The key statement with a further condition and paging, in the order of `order` (default the plan's terms). */
  statement: (condition: RawBuilder<boolean> | null, paging: RawBuilder<unknown>, order?: OrderTerm[]) => RawBuilder<unknown>;
}

export function keyPlan(trx: Trx, q: ResolvedQuery, plan: Plan): KeyPlan {
  const terms = orderTerms(q, plan);
  const source = keysPhaseSource(q, plan);
  const statement = (condition: RawBuilder<boolean> | null, paging: RawBuilder<unknown>, order = terms) => {
    const where = condition ? [...plan.where, condition] : plan.where;
    const values = terms.map((t, i) => sql`${t.value} as ${sql.id(`o${i}`)}`);
    return sql`select ${sql.join([...q.key.map((k) => sql.id('q', k)), ...values])} from (${source}) as q${where.length ? sql` where ${sql.join(where, sql` and `)}` : sql``}${orderClause(order)}${paging}`;
  };
  const base = statement(null, sql``);
  return { terms, source, base, compiled: base.compile(trx), statement };
}

/** The key columns of `p` as text (k0, k1, …) and the first one's type (on every row, or where `typed` holds), as the rows statement reads them. */
const keyTexts = (q: ResolvedQuery, typed: RawBuilder<unknown> = sql`true`) => [
  ...q.key.map((k, i) => sql`${sql.id('p', k)}::text as ${sql.id(`k${i}`)}`),
  sql`case when ${typed} then pg_typeof(${sql.id('p', q.key[0])})::text end as "type"`,
];

/**
 * The rows after a kept position, at most `limit`, with the checks of that position and of the page's kept
 * count (one round trip): the keys as text, the order values and their types of every `every`-th row (the
 * last row of each full page: where a position is kept), whether the position still holds and the statement's
 * snapshot (on the first row only). atrium_changed_since is parallel-unsafe, which keeps this statement
 * serial: a short index range needs no workers. With `sparse`, only the first row, every `every`-th row and the
 * last row are answered, each with its place `n` and the rows' number `total` (as text): a batch read ahead over
 * a key range needs its ends and the page ends, not 12,000 keys made into JS objects.
 */
export async function keysAfter(
  trx: Trx,
  q: ResolvedQuery,
  kp: KeyPlan,
  sought: SeekPosition,
  limit: number | null,
  probe?: CountProbe,
  every = limit ?? 0,
  sparse = false,
  /** Whether the position holds although its tables changed (insertedAfter): then it counts as unchanged. */
  holdsAfterInserts?: RawBuilder<boolean | null>,
): Promise<ChosenKeys & { unchanged: boolean }> {
  const { terms } = kp;
  const paging = limit !== null ? sql` limit ${limit}` : sql``;
  const seek = (conditions: RawBuilder<boolean>[]) => seekStatement(q, kp, conditions, paging);
  const end = sql`p.n % ${every} = 0`;
  const first = sql`coalesce(p.n, 1) = 1`;
  const texts = [
    ...keyTexts(q, first),
    ...terms.map(
      (_, i) =>
        sql`case when ${end} then ${sql.id('p', `o${i}`)}::text end as ${sql.id(`o${i}`)}, case when ${end} then pg_typeof(${sql.id('p', `o${i}`)})::text end as ${sql.id(`t${i}`)}`,
    ),
  ];
  const { rows } = await sql<KeyRow & { present: boolean | null; unchanged: boolean; count_holds: boolean | null; snapshot: string }>`
      select ${sql.join(texts)}${sparse ? sql`, p.n::text as n, p.total::text as total` : sql``}, p.present, case when ${first} then s.unchanged end as unchanged,
             case when ${first} then s.count_holds end as count_holds, case when ${first} then s.snapshot end as snapshot
        from (select pg_current_snapshot()::text as snapshot, ${probe?.column ?? sql`null::boolean`} as count_holds,
                     ${
                       holdsAfterInserts
                         ? sql`case when ${unchangedSince(q.tenantId, sought.tables, sought.snapshot)} then true else coalesce(${holdsAfterInserts}, false) end`
                         : unchangedSince(q.tenantId, sought.tables, sought.snapshot)
                     } as unchanged offset 0) as s
        left join lateral (${
          sparse
            ? sql`select * from (select p.*, true as present, row_number() over () as n, count(*) over () as total from (${seek(after(terms, sought))}) as p) as p
                   where p.n = 1 or p.n % ${every} = 0 or p.n = p.total order by p.n`
            : sql`select p.*, true as present, row_number() over () as n from (${seek(after(terms, sought))}) as p`
        }) as p on true`.execute(trx);
  return { keys: rows[0].present ? rows : [], countHolds: rows[0].count_holds, snapshot: rows[0].snapshot, unchanged: rows[0].unchanged, sought: true };
}

/**
 * The rows of `conditions` (after(), in the order `order`: each condition's rows in order, the later ones after the
 * earlier), with `paging`: the page after (or, in the reversed order, before) a kept position.
 */
function seekStatement(q: ResolvedQuery, kp: KeyPlan, conditions: RawBuilder<boolean>[], paging: RawBuilder<unknown>, order = kp.terms): RawBuilder<unknown> {
  if (conditions.length === 1) return kp.statement(conditions[0], paging, order);
  const parts = conditions.map((c, i) => sql`select s.*, ${i} as part from (${kp.statement(c, paging, order)}) as s`);
  const terms = order.map((t, i) => sql`u.${sql.id(`o${i}`)} ${t.desc ? sql`desc` : sql`asc`}`);
  return sql`select ${sql.join([...q.key.map((k) => sql.id('u', k)), ...order.map((_, i) => sql.id('u', `o${i}`))])}
      from (${sql.join(parts, sql` union all `)}) as u order by u.part, ${sql.join(terms)}${paging}`;
}

/**
 * The offset page at `skip` found from a kept position that is stale (a table the key statement reads changed
 * since it was read; decision 0071), without skipping `skip` rows: in one statement (one snapshot), the position's
 * rank now (the rows at or before it, counted on the key statement's source and filters: with the page's count
 * when `withCount`, in the same scan), the `take` rows after it and the `take` rows at or before it, backwards.
 * With d = rank − skip rows inserted before it (0 ≤ d ≤ take), the page is the last d rows at or before the position
 * and the first take − d after it; null otherwise (rows before it deleted, or more than a page inserted), and
 * the caller skips. Every row carries its order values and types (a position is kept after the page's last row,
 * from either list).
 *
 * When the query declares its keyTable and every change since the position was read is an insert into it logged
 * with its ids (decision 0077), the rank is brought up to date instead of counted: `skip` plus the inserted rows at
 * or before the position (through the same source and filters), and the count, when asked, is the probe's (the kept
 * count plus its own delta): no scan of the rows before the position. Otherwise the rank is counted.
 */
export async function keysAround(
  trx: Trx,
  q: ResolvedQuery,
  plan: Plan,
  kp: KeyPlan,
  at: SeekPosition,
  skip: number,
  take: number,
  withCount: boolean,
  probe?: CountProbe,
): Promise<{ keys: KeyRow[]; snapshot: string; countHolds: boolean | null; counted?: { n: string | null; snapshot: string } } | null> {
  const { terms } = kp;
  const back = reversed(terms);
  const upTo = after(back, at, true);
  const within = anyOf(upTo);
  const where = (more: RawBuilder<unknown>[]) => (more.length ? sql` where ${sql.join(more, sql` and `)}` : sql``);
  const counted = sql`select count(*) filter (where ${within}) as r, count(*)::text as n from (${kp.source}) as q${where(plan.where)}`;
  const ranked = sql`select count(*) as r, null::text as n from (${kp.source}) as q${where([...plan.where, within])}`;
  // No row when a change since the position is not a logged insert into the key table: the statement then answers
  // nothing and the rank is counted.
  const added = tracksInserts(q, at.tables)
    ? sql`select (${skip}::bigint + d.n)::text as r, ${withCount && probe ? probe.fresh : sql`null::text`} as n
          from ${insertedIds(q, at.tables, at.snapshot)}
          cross join lateral (select count(*) as n from (${insertedRows(q, plan, kp, [within])}) as x) as d
         where i.ids is not null`
    : null;
  const paging = sql` limit ${take}`;
  const texts = [
    ...keyTexts(q),
    ...terms.map((_, i) => sql`${sql.id('p', `o${i}`)}::text as ${sql.id(`o${i}`)}, pg_typeof(${sql.id('p', `o${i}`)})::text as ${sql.id(`t${i}`)}`),
  ];
  const side = (statement: RawBuilder<unknown>, dir: number) =>
    sql`select ${sql.join(texts)}, ${sql.lit(dir)}::int as dir, row_number() over () as i from (${statement}) as p`;
  const around = (rank: RawBuilder<unknown>) =>
    sql<KeyRow & { dir: number | null; r: string; n: string | null; snapshot: string; count_holds: boolean | null }>`
      select p.*, s.r, s.n, s.snapshot, s.count_holds
        from (select pg_current_snapshot()::text as snapshot, ${probe?.column ?? sql`null::boolean`} as count_holds, c.r, c.n
                from (${rank}) as c offset 0) as s
        left join lateral (${side(seekStatement(q, kp, after(terms, at), paging), 1)}
                           union all ${side(seekStatement(q, kp, upTo, paging, back), -1)}) as p on true
       order by p.dir desc, p.i`.execute(trx);
  let rows = added ? (await around(added)).rows : [];
  const byDelta = rows.length > 0;
  if (!byDelta) rows = (await around(withCount ? counted : ranked)).rows;
  const { r, n, snapshot, count_holds: countHolds } = rows[0];
  const d = Number(r) - skip;
  const forward = rows.filter((x) => x.dir === 1);
  const backward = rows.filter((x) => x.dir === -1);
  const answered = n !== null ? { n, snapshot } : undefined;
  if (d < 0 || d > take || backward.length < d) return null;
  const keys = [...backward.slice(0, d).reverse(), ...forward.slice(0, take - d)];
  if (byDelta) seekCounted('delta');
  return { keys, snapshot, countHolds, counted: answered };
}

/**
 * A kept position that timesheets inserted since moved, found again (decision 0083): when every change to its tables
 * since its snapshot is an insert into the query's keyTable logged with its ids, and d of those rows (through the key
 * statement's source and the page's filters) come at or before it, the row that now has its offset is the d-th row
 * before it (d = 0: itself). Answered in one statement, with that statement's snapshot, as a position of its own;
 * null when a change since is not such an insert, more than `most` such rows precede it, or fewer rows precede it.
 */
async function relocated(trx: Trx, q: ResolvedQuery, plan: Plan, kp: KeyPlan, at: SeekPosition, most: number): Promise<SeekPosition | null> {
  if (!tracksInserts(q, at.tables)) return null;
  const { terms } = kp;
  const back = reversed(terms);
  const upTo = after(back, at, true);
  const { rows } = await sql<Record<string, string | null>>`
    select s.snapshot, ${sql.join(terms.map((_, i) => sql`p.${sql.id(`o${i}`)}::text as ${sql.id(`o${i}`)}, pg_typeof(p.${sql.id(`o${i}`)})::text as ${sql.id(`t${i}`)}`))}
      from (select pg_current_snapshot()::text as snapshot, d.n
              from ${insertedIds(q, at.tables, at.snapshot)}
              cross join lateral (select count(*) as n from (${insertedRows(q, plan, kp, [anyOf(upTo)])}) as x) as d
             where i.ids is not null and d.n <= ${most} offset 0) as s
      cross join lateral (select p.* from (select p.*, row_number() over () as r from (${seekStatement(q, kp, upTo, sql` limit s.n + 1`, back)}) as p) as p
                           where p.r = s.n + 1) as p`.execute(trx);
  const [row] = rows;
  if (!row?.snapshot) return null;
  const types = terms.map((_, i) => row[`t${i}`] ?? '');
  if (!types.every((t) => TYPE_NAME.test(t))) return null;
  return { values: terms.map((_, i) => row[`o${i}`]), types, tables: at.tables, snapshot: row.snapshot, at: Date.now() };
}

/** Keeps the position after the last of `keys` (a full page's) at `position`, read in `snapshot`. */
export async function keepPosition(kept: KeptState, trx: Trx, q: ResolvedQuery, kp: KeyPlan, position: number, last: KeyRow, snapshot: string): Promise<void> {
  const types = kp.terms.map((_, i) => last[`t${i}`] ?? '');
  const tables = types.every((t) => TYPE_NAME.test(t)) ? await tablesRead(kept, trx, kp.base, kp.compiled.sql) : null;
  if (!tables) return;
  const values = kp.terms.map((_, i) => last[`o${i}`]);
  kept.positions.set(positionKey(q.tenantId, kp.compiled, position), { values, types, tables, snapshot, at: Date.now() });
}

/**
 * The key statement: the page's keys on the keys phase's source, where only the key, filter and order
 * columns are computed (deep pages skip over keys, not rows), answered as text. A page with a skip seeks
 * past the kept position of the page before it when nothing it reads has changed since (seek-positions.ts);
 * a full page keeps the position after it, with the statement's snapshot. A sought page's statement also
 * checks the position it sought from and the page's kept count (one round trip for keys and checks). As
 * text only outside the limit: the skipped keys of a deep page are read, never converted.
 */
async function chooseKeys(state: KeptState, trx: Trx, q: ResolvedQuery, plan: Plan, probe?: CountProbe, kp = keyPlan(trx, q, plan)): Promise<ChosenKeys> {
  const { terms, source } = kp;
  const at = plan.skip > 0 ? positionKey(q.tenantId, kp.compiled, plan.skip) : null;
  const kept = at ? state.positions.get(at) : undefined;
  const limit = plan.take !== null ? sql` limit ${plan.take}` : sql``;
  // The offset page: nothing parallel-unsafe in it, so PostgreSQL may read it with workers. It selects the keys
  // alone (the rows it skips are not projected), and the order values of its last row only, looked up by key.
  const offsetPage = async (): Promise<ChosenKeys> => {
    const page = sql`select ${sql.join(q.key.map((k) => sql.id('q', k)))} from (${source}) as q${plan.where.length ? sql` where ${sql.join(plan.where, sql` and `)}` : sql``}${orderClause(terms)}${limit}${plan.skip > 0 ? sql` offset ${plan.skip}` : sql``}`;
    const match = q.key.map((k, i) => (i === 0 ? sql`${sql.id('q', k)} = ${sql.id('p', k)}` : sql`${sql.id('q', k)} is not distinct from ${sql.id('p', k)}`));
    const values = terms.map((t) => sql`(${t.value})::text, pg_typeof(${t.value})::text`);
    // In the key's order the order values are the key's, which the page selects: no lookup (a third copy of the
    // source to plan: 200 of the 600 ms DE-EstimatesQuotesMonth's key statement took to plan at load 25).
    const last = inKeyOrder(q, plan)
      ? sql`array[${sql.join(q.key.map((k) => sql`(${sql.id('p', k)})::text, pg_typeof(${sql.id('p', k)})::text`))}]`
      : sql`(select array[${sql.join(values)}] from (${source}) as q where ${sql.join(match, sql` and `)})`;
    // With a probe: whether the kept count holds and, when it does not, the count (InitPlans: once, in this
    // statement's snapshot; parallel plans kept, atrium_changed_since being PARALLEL RESTRICTED).
    const counting = probe ? sql`, (select ${probe.column}) as count_holds, ${probe.fresh} as fresh_count` : sql``;
    const { rows } = await sql<KeyRow & { snapshot: string; last: (string | null)[] | null; count_holds?: boolean | null; fresh_count?: string | null }>`
      select ${sql.join(keyTexts(q))},
        case when row_number() over () = ${plan.take ?? 0} then ${last} end as "last", (select pg_current_snapshot()::text) as snapshot${counting}
      from (${page}) as p`.execute(trx);
    const end = rows[rows.length - 1]?.last;
    if (end) for (let i = 0; i < terms.length; i++) Object.assign(rows[rows.length - 1], { [`o${i}`]: end[2 * i], [`t${i}`]: end[2 * i + 1] });
    const snapshot = rows[0]?.snapshot ?? '';
    if (!probe || rows.length === 0) return { keys: rows, snapshot };
    return { keys: rows, snapshot, countHolds: rows[0].count_holds, counted: { n: rows[0].fresh_count ?? null, snapshot } };
  };
  let chosen: ChosenKeys;
  if (kept) {
    const sought = await keysAfter(trx, q, kp, kept, plan.take, probe);
    if (sought.unchanged) {
      seekCounted('hit');
      chosen = sought;
    } else {
      // A table the page reads changed since the position was read: the page found around the position from its
      // rank now (decision 0071), counted with it unless the kept count held; else the offset page.
      seekCounted('stale');
      state.positions.delete(at as string);
      const around = plan.take
        ? await keysAround(trx, q, plan, kp, kept, plan.skip, plan.take, probe !== undefined && sought.countHolds !== true, probe)
        : null;
      if (around) {
        seekCounted('relocated');
        // Sought: a paging client's next pages are read ahead again at once.
        chosen = { ...around, countHolds: around.countHolds, sought: true };
      } else {
        const offset = await offsetPage();
        chosen = { ...offset, countHolds: offset.countHolds ?? sought.countHolds };
      }
    }
  } else {
    if (at) seekCounted('miss');
    chosen = await offsetPage();
  }
  const { keys } = chosen;
  if (plan.take !== null && plan.take > 0 && keys.length === plan.take)
    await keepPosition(state, trx, q, kp, plan.skip + plan.take, keys[keys.length - 1], chosen.snapshot);
  return chosen;
}

/**
 * The rows statement for the chosen keys: the output columns for those rows alone, found by
 * `key = any($keys)` on the first key column: a condition on the driving table's own column, so it reaches
 * that table's scan even when the source has more relations than the planner merges into one join search,
 * and a bound array of distinct values whose length the planner knows, so it chooses per-row lookups for a small
 * page and hash joins for a large one. Further key columns (a key part may be null) are matched as text, by equality in a
 * column where no key of the page is null. Ordered as the keys were.
 */
function pageRowsStatement(q: ResolvedQuery, plan: Plan, keys: KeyRow[], type = keys[0]?.type ?? ''): RawBuilder<Record<string, unknown>> | null {
  if (keys.length === 0) return null;
  const column = (i: number) => keys.map((r) => r[`k${i}`]);
  // Each first-key value once: with a key of several columns a value repeats (DE-Assignments: ~4 rows a document),
  // and the planner counts the array's elements to estimate the rows it finds (decision 0086).
  const first = [...new Set(column(0))];
  const typed = TYPE_NAME.test(type) && !first.includes(null);
  const conditions = [typed ? sql`${sql.id('q', q.key[0])} = any(${first}::${sql.raw(type)}[])` : sql`true`];
  if (q.key.length > 1 || !typed) {
    const names = q.key.map((_, i) => sql.id(`k${i}`));
    // Equality where no key of the page is null in that column (a hashable condition: one hash semi join of the
    // page's rows with its keys), `is not distinct from` only where one is (a nested loop over the keys per row).
    const match = q.key.map((k, i) =>
      column(i).includes(null) ? sql`k.${names[i]} is not distinct from ${sql.id('q', k)}::text` : sql`k.${names[i]} = ${sql.id('q', k)}::text`,
    );
    conditions.push(sql`exists (select 1 from unnest(${sql.join(q.key.map((_, i) => sql`${column(i)}::text[]`))}) as k(${sql.join(names)})
      where ${sql.join(match, sql` and `)})`);
  }
  const select = sql.join(plan.fields.map((c) => sql.id('q', c.name)));
  return sql<Record<string, unknown>>`select ${select} from (${q.keysSource}) as q where ${sql.join(conditions, sql` and `)}${orderBy(q, plan)}`;
}

export async function keysFirstRows(trx: Trx, q: ResolvedQuery, plan: Plan, kept = keptOf()): Promise<Record<string, unknown>[]> {
  const statement = pageRowsStatement(q, plan, (await chooseKeys(kept, trx, q, plan)).keys);
  return statement ? (await statement.execute(trx)).rows : [];
}

/** The first of the definition's narrow sources that holds every column the plan reads, else the keys source. */
function keysPhaseSource(q: ResolvedQuery, plan: Plan): RawBuilder<unknown> {
  const covers = (n: ResolvedQuery['narrow'][number]) => q.key.every((k) => n.columns.has(k)) && [...plan.reads].every((c) => n.columns.has(c));
  return q.narrow.find(covers)?.source ?? q.keysSource;
}

/**
 * Whether the plan reads in the key's own order: no orderBy (the default), or one ascending term on a one-column
 * key that is not a string (compared as stored, not ignoring case), as a paging client that orders by the key asks
 * (the platform's public loader does). The order values are then the key's.
 */
function inKeyOrder(q: ResolvedQuery, plan: Plan): boolean {
  if (plan.orderBy.length === 0) return true;
  if (q.key.length !== 1 || plan.orderBy.length !== 1) return false;
  const [o] = plan.orderBy;
  return o.column.name === q.key[0] && !o.desc && o.column.type !== 'string';
}

/**
 * The ORDER BY terms: the asked fields, then the key, so pages never overlap or skip rows with equal values.
 * Strings sort ignoring case (collation atrium_ci, migration 0010), as the platform's case-insensitive collation does.
 */
function orderTerms(q: ResolvedQuery, plan: Plan): OrderTerm[] {
  const terms = plan.orderBy.map((o) => ({ value: sortValue(o.column), desc: o.desc }));
  // A key ordered ignoring case can still tie (A-1 and a-1), so it is then also ordered exactly.
  const exact = new Set(plan.orderBy.filter((o) => o.column.type !== 'string').map((o) => o.column.name));
  for (const k of q.key) if (!exact.has(k)) terms.push({ value: sql`${sql.id('q', k)}`, desc: false });
  return terms;
}

const orderClause = (terms: OrderTerm[]): RawBuilder<unknown> =>
  terms.length ? sql` order by ${sql.join(terms.map((t) => sql`${t.value} ${t.desc ? sql`desc` : sql`asc`}`))}` : sql``;

const orderBy = (q: ResolvedQuery, plan: Plan): RawBuilder<unknown> => orderClause(orderTerms(q, plan));

export function countQuery(q: ResolvedQuery, plan: Plan, source = keysPhaseSource(q, plan)): RawBuilder<{ n: string }> {
  return sql<{ n: string }>`select count(*) as "n" ${from(source, plan)}`;
}

/**
 * The delta of countQuery when the query declares its keyTable (decision 0070): the count over the same source and
 * filters of the rows whose key is among the ids that table gained.
 */
export function countDelta(q: ResolvedQuery, plan: Plan, source = keysPhaseSource(q, plan)): CountDelta | undefined {
  if (!logsInserts(q)) return undefined;
  return {
    table: q.keyTable,
    count: (ids) =>
      sql<{
        n: string;
      }>`select count(*) as "n" from (${source}) as q where ${sql.join([...plan.where, sql`${sql.id('q', q.key[0])} = any(${ids})`], sql` and `)}`,
  };
}

/**
 * How a page is read: 'keys-first' (keysFirstQuery) unless the query has no key; 'single-statement' is the
 * plan pages had before keys-first, kept as the reference its answers are compared with (extraction-keys-first.test.ts).
 */
export type PageStrategy = 'keys-first' | 'single-statement';

// The SQL types the catalogue's definitions give each data type (definition.ts): what jsonObjects needs to
// print a value as the JSON pages do. Custom tables differ (a Float is float8): their pages are shaped here.
const DEFINITION_TYPES: Partial<Record<ColumnType, number>> = { decimal: OID.numeric, datetime: OID.timestamptz, object: JSONB_OID };

/**
 * A page as the JSON text the API answers ({"data": […], "totalCount": n}). A keys-first page of a catalogue
 * query has PostgreSQL print each row as its JSON object (jsonObjects, as NDJSON exports do), so the server
 * holds one string per row instead of an object per row and a JS string per field: a 10,000-row page costs
 * its text, not ten times it, and the server's memory stays flat under large pages.
 */
export async function executePageJson(trx: Trx, q: ResolvedQuery, plan: Plan, db?: DatabaseHandle): Promise<Buffer> {
  return (await executePageAnswer(trx, q, plan, db)).body;
}

/** A page's answer: its JSON bytes and, when it was compressed ahead with the encoding asked for, those bytes. */
export interface PageAnswer {
  body: Buffer;
  encoded?: { encoding: Encoding; bytes: Buffer };
}

/**
 * executePageJson's page, for a client that accepts `encoding`: a page read ahead for a paging client that accepts
 * it is compressed while it waits (decision 0079), and answered with those bytes when its totalCount is the one
 * it was compressed with.
 */
export async function executePageAnswer(
  trx: Trx,
  q: ResolvedQuery,
  plan: Plan,
  db?: DatabaseHandle,
  encoding?: Encoding,
  opts: { last?: boolean } = {},
): Promise<PageAnswer> {
  const keysFirst = !q.isCount && q.key.length > 0 && plan.take !== null && !isCustomTableName(q.name);
  if (!keysFirst) return { body: Buffer.from(JSON.stringify(await executePage(trx, q, plan))) };
  const kept = keptOf(db);
  if (plan.take === 0) return { body: pageBytes([], await exactCount(kept, trx, q.tenantId, countQuery(q, plan), countDelta(q, plan))) };
  if (q.aggregate) return { body: await aggregatePage(kept, trx, q, plan) };
  const take = plan.take as number;
  const probe = countProbe(kept, trx, q.tenantId, countQuery(q, plan), countDelta(q, plan));
  const kp = keyPlan(trx, q, plan);
  const perBatch = db ? pagesPerBatch(take) : 0;
  const pager =
    perBatch > 0
      ? pagerOf(
          q.tenantId,
          kp.compiled,
          take,
          plan.fields.map((c) => c.name),
        )
      : null;
  /** A full page at skip S: the pages from S + take on are read ahead (decision 0041). */
  const followOn = (bytes: number, totalCount: number) => {
    if (!pager || !db) return;
    const compress = encoding ? { encoding, totalCount } : undefined;
    readAhead(db, pager, plan.skip + take, take, perBatch, bytes, (start, n) => readPagesAhead(db, q, plan, kp, start, n * take), compress);
  };
  if (pager && db && plan.skip > 0) {
    const page = await takePage(db, pager, plan.skip);
    if (page) {
      // The inserts since are looked at only when the page's tables changed.
      const { rows } = await sql<{ unchanged: boolean; count_holds: boolean | null; later: boolean | null }>`
        select u.unchanged, ${probe.column} as count_holds, case when u.unchanged then null else ${insertedLater(q, plan, kp, page)} end as later
          from (select ${unchangedSince(q.tenantId, page.tables, page.snapshot)} as unchanged offset 0) as u`.execute(trx);
      if (rows[0].unchanged || rows[0].later) {
        extractionReadAhead.inc({ result: rows[0].unchanged ? 'hit' : 'hit_after_inserts' });
        const complete = page.rows < take;
        const totalCount = complete ? plan.skip + page.rows : await probe.settle(rows[0].count_holds);
        if (!complete) followOn(page.end, totalCount);
        const body = answerOf(page, totalCount);
        const ahead = page.encoded;
        const bytes = ahead && ahead.encoding === encoding && ahead.totalCount === totalCount ? await ahead.bytes : null;
        if (!bytes || !encoding) return { body };
        extractionReadAhead.inc({ result: 'encoded' });
        return { body, encoded: { encoding, bytes } };
      }
      const moved = await shiftedPage(trx, q, plan, kp, page);
      if (moved) {
        extractionReadAhead.inc({ result: 'hit_shifted' });
        const totalCount = await probe.settle(rows[0].count_holds);
        followOn(moved.end, totalCount);
        return { body: answerOf(moved, totalCount) };
      }
      // A table the page reads changed since it was read ahead: so did every page of that client's batches.
      dropPager(db, pager);
    }
  }
  const chosen = await chooseKeys(kept, trx, q, plan, probe, kp);
  const statement = pageRowsStatement(q, plan, chosen.keys);
  // The caller's transaction ends with the rows statement when it says so: COMMIT leaves with it (decision 0085).
  const read = async () => {
    if (!statement) return [];
    const lines = jsonObjects(statement, plan.fields, pageTypes(plan));
    return (await (opts.last ? executeLast(trx, lines) : lines.execute(trx))).rows;
  };
  const rows = statement && joinsMany(trx, q) ? await withSmallJoinSearch(trx, read, opts.last === true) : await read();
  const complete = rows.length < take && (rows.length > 0 || plan.skip === 0);
  const totalCount = complete ? plan.skip + rows.length : await probe.settle(chosen.countHolds, chosen.counted);
  const body = pageBytes(rows, totalCount);
  if (chosen.sought && rows.length === take) followOn(body.length, totalCount);
  return { body };
}

/**
 * Whether rows up to a point of a query's order are as they were in `snapshot` although `tables` changed since
 * (decision 0083): true when every change since is an insert into the query's keyTable logged with its ids
 * (atrium_inserted_since) and none of those rows, through the key statement's source and the page's filters, meets
 * `upTo` (the rows at or before the point; none at all when it is empty). The rows up to the point are then the
 * same rows in the same order: a position there keeps its offset, a page ending there is the page at its position
 * now, and a count gains the inserted rows through its delta. Null when the query has no keyTable.
 */
function insertedAfter(q: ResolvedQuery, plan: Plan, kp: KeyPlan, tables: string[], snapshot: string, upTo: RawBuilder<boolean>[]): RawBuilder<boolean | null> {
  if (!logsInserts(q)) return sql`null::boolean`;
  const within = upTo.length === 0 ? [] : [anyOf(upTo)];
  return sql<boolean | null>`(select i.ids is not null and not exists (${insertedRows(q, plan, kp, within)}) from ${insertedIds(q, tables, snapshot)})`;
}

/** insertedAfter for a page read ahead, up to its last key (in the key's order; the whole query for a short last page). */
function insertedLater(q: ResolvedQuery, plan: Plan, kp: KeyPlan, page: AheadPage): RawBuilder<boolean | null> {
  const last = page.lastKey;
  if (!last) return sql`null::boolean`;
  const upTo = last === 'end' ? [] : [sql<boolean>`${sql.id('q', q.key[0])} <= ${last.value}::${sql.raw(last.type)}`];
  return insertedAfter(q, plan, kp, page.tables, page.snapshot, upTo);
}

/** The query's one key column is the id of a keyTable, whose inserts the change log keeps the ids of (decision 0070). */
const logsInserts = (q: ResolvedQuery): q is ResolvedQuery & { keyTable: string } => q.keyTable !== undefined && q.key.length === 1;

/** logsInserts, and `tables` include the keyTable. */
const tracksInserts = (q: ResolvedQuery, tables: string[]): boolean => logsInserts(q) && tables.includes(q.keyTable);

/** `i.ids`: the ids inserted into the query's keyTable since `snapshot`, null when any other change was made to `tables`. */
const insertedIds = (q: ResolvedQuery, tables: string[], snapshot: string): RawBuilder<unknown> =>
  sql`(select atrium_inserted_since(${q.tenantId}::uuid, ${tables}::text[], ${snapshot}::pg_snapshot, ${q.keyTable}) as ids offset 0) as i`;

/** The rows among `i.ids` that the page's filters keep, through the key statement's source, meeting `bounds` too. */
const insertedRows = (q: ResolvedQuery, plan: Plan, kp: KeyPlan, bounds: RawBuilder<boolean>[]): RawBuilder<unknown> =>
  sql`select 1 from (${kp.source}) as q where ${sql.join([...plan.where, sql`${sql.id('q', q.key[0])} = any(i.ids)`, ...bounds], sql` and `)}`;

/** One condition for after()'s one or two (rows meeting either). */
const anyOf = (conditions: RawBuilder<boolean>[]): RawBuilder<boolean> =>
  conditions.length === 1 ? conditions[0] : sql<boolean>`(${sql.join(conditions, sql` or `)})`;

/**
 * A full page read ahead in the key's order that timesheets inserted since moved by d rows (decision 0083): when every
 * change since its snapshot is such an insert, d of them (through the page's filters) come at or before the key before
 * its first row and none between that key and its last, the page at its position now is the d rows before its first
 * (read now) followed by its own first take - d rows. Its JSON up to its rows' end (the caller writes the end), or
 * null (a change since is not such an insert, an insert falls within it, or d is a page or more). The d rows are read
 * in a statement of their own, then a third checks that nothing changed since the first: all three see the same rows.
 */
async function shiftedPage(trx: Trx, q: ResolvedQuery, plan: Plan, kp: KeyPlan, page: AheadPage): Promise<{ body: Buffer; end: number } | null> {
  const take = plan.take as number;
  const { startAfter, lastKey, rowEnds } = page;
  if (!startAfter || !lastKey || lastKey === 'end' || !rowEnds || rowEnds.length !== take || !logsInserts(q)) return null;
  const key = sql.id('q', q.key[0]);
  const from = sql`${startAfter.value}::${sql.raw(startAfter.type)}`;
  const inserted = (bound: RawBuilder<boolean>) => insertedRows(q, plan, kp, [bound]);
  const { rows } = await sql<{ snapshot: string; d: string; inside: boolean; k0: string | null; type: string | null }>`
    select s.snapshot, s.d::text as d, s.inside, ${sql.id('p', q.key[0])}::text as k0, pg_typeof(${sql.id('p', q.key[0])})::text as type
      from (select pg_current_snapshot()::text as snapshot,
                   (select count(*) from (${inserted(sql`${key} <= ${from}`)}) as x) as d,
                   exists (${inserted(sql`${key} > ${from} and ${key} <= ${lastKey.value}::${sql.raw(lastKey.type)}`)}) as inside
              from ${insertedIds(q, page.tables, page.snapshot)}
             where i.ids is not null offset 0) as s
      left join lateral (${kp.statement(sql`${key} <= ${from}`, sql` limit s.d`, reversed(kp.terms))}) as p on not s.inside and s.d < ${take}`.execute(trx);
  const [first] = rows;
  const d = Number(first?.d ?? 0);
  if (!first || first.inside || d === 0 || d >= take) return null;
  const keys: KeyRow[] = rows
    .filter((r) => r.k0 !== null)
    .reverse()
    .map((r) => ({ k0: r.k0, type: r.type }));
  if (keys.length !== d) return null;
  const statement = pageRowsStatement(q, plan, keys, first.type ?? '');
  if (!statement) return null;
  const before = (await jsonObjects(statement, plan.fields, pageTypes(plan)).execute(trx)).rows;
  const { rows: check } = await sql<{ unchanged: boolean }>`select ${unchangedSince(q.tenantId, page.tables, first.snapshot)} as unchanged`.execute(trx);
  if (before.length !== d || !check[0].unchanged) return null;
  // The answer in one buffer, its end written in place after (answerOf): the rows before the page's, then its own.
  const head = Buffer.from(`{"data":[${before.map((r) => r.line).join(',')},`);
  const kept = page.body.subarray(PAGE_HEAD.length, rowEnds[take - d - 1]);
  const body = Buffer.allocUnsafe(head.length + kept.length + TAIL_ROOM);
  return { body, end: head.copy(body, 0) + kept.copy(body, head.length) };
}

/** Joins in a source from which PostgreSQL's search for a join order costs more than two round trips (decision 0080). */
const MANY_JOINS = 8;
const manyJoins = new Map<string, boolean>();

/** Whether the query's source joins MANY_JOINS relations or more (counted once per query name). */
function joinsMany(trx: Trx, q: ResolvedQuery): boolean {
  let many = manyJoins.get(q.name);
  if (many === undefined) {
    many = (q.keysSource.compile(trx).sql.match(/\bjoin\b/giu)?.length ?? 0) >= MANY_JOINS;
    manyJoins.set(q.name, many);
  }
  return many;
}

/**
 * Runs `read` (a rows statement: the page's rows found by their keys) with PostgreSQL's search for a join order
 * kept to groups of four relations (decision 0080): with the keys given, a source written from its key's table is
 * best read in about the order written (an index lookup of the page's rows, then each lookup), and the full search
 * mostly costs planning: 11.7 ms of DE-EstimatesQuotes' rows statement (23 joins), ~7.5 ms with groups of four. The
 * limits are written with the read (no round trip of their own) and put back after it, unless the read `ends` the
 * transaction (executeLast), which takes them with it.
 */
async function withSmallJoinSearch<T>(trx: Trx, read: () => Promise<T>, ends = false): Promise<T> {
  // Written with the read, not awaited first (the connection pipelines; should it fail, the read fails with it).
  const limited = sql`set local join_collapse_limit = 4; set local from_collapse_limit = 4`.execute(trx);
  limited.catch(() => {});
  const result = await read();
  await limited;
  // A read that ended the transaction took its settings with it.
  if (!ends) await sql`set local join_collapse_limit to default; set local from_collapse_limit to default`.execute(trx);
  return result;
}

/**
 * A page of an aggregate query (NamedQueryDefinition.aggregate): its groups computed once, ordered and paged,
 * each row's JSON printed by PostgreSQL with the count of all groups as a window beside it (a window is computed
 * before the LIMIT). A page past the end has no row to carry the count: it is then counted on its own.
 */
async function aggregatePage(kept: KeptState, trx: Trx, q: ResolvedQuery, plan: Plan): Promise<Buffer> {
  const select = sql.join(plan.fields.map((c) => sql.id('q', c.name)));
  const paged = sql`select ${select}, count(*) over () as ${sql.id(WINDOW_COUNT)} ${from(q.source, plan)}${orderBy(q, plan)}${page(plan)}`;
  // The count is printed as the last member of each row's object (a bigint: a JSON number), then cut off it.
  const columns = [...plan.fields, { name: WINDOW_COUNT, type: 'integer' as const }];
  const { rows } = await jsonObjects(paged, columns, [...pageTypes(plan), 0]).execute(trx);
  const member = `${JSON.stringify(WINDOW_COUNT)}:`;
  let totalCount = 0;
  const lines = rows.map((r) => {
    const at = r.line.lastIndexOf(member);
    totalCount = Number(r.line.slice(at + member.length, -1));
    return { line: plan.fields.length ? `${r.line.slice(0, at - 1)}}` : '{}' };
  });
  if (lines.length === 0 && plan.skip > 0) totalCount = await exactCount(kept, trx, q.tenantId, countQuery(q, plan));
  return pageBytes(lines, totalCount);
}

/** The window count's column name in an aggregate page (no catalogue column starts with two underscores). */
const WINDOW_COUNT = '__total_count';

/** The SQL types jsonObjects and jsonTextSelect print a keys-first page's columns as. */
const pageTypes = (plan: Plan) => plan.fields.map((c) => DEFINITION_TYPES[c.type] ?? 0);

/**
 * The pages of `rows` rows after the kept position at `start` (set by the page before it), each a page of
 * plan.take rows as the page would answer it: on a connection of its own bound to the tenant, one key
 * statement seeks past the position, one COPY in text format computes the rows (printed as the JSON pages print
 * them, converted by JsonLines straight into each page's Buffer). In the default order (the key), the rows are
 * those of the export's source between the batch's first and last key, filtered as the page is: hash joins
 * over a key range, which cost PostgreSQL a quarter less than looking up 12,000 keys (decision 0041); in any
 * other order, the page's rows statement for the batch's keys. A position after each full page is kept, so a
 * page not read ahead still seeks. The COPY's snapshot is no older than the keys': a write between the two
 * makes the check of every page of the batch fail (it looks for writes since the keys' snapshot). None when
 * the position is gone or changed, or what the pages read is not tracked by the change log.
 */
async function readPagesAhead(
  db: DatabaseHandle,
  q: ResolvedQuery,
  plan: Plan,
  kp: KeyPlan,
  start: number,
  rows: number,
): Promise<{ position: number; page: AheadPage }[]> {
  const kept = keptOf(db);
  const kept0 = kept.positions.get(positionKey(q.tenantId, kp.compiled, start));
  if (!kept0) return [];
  const take = plan.take as number;
  const client = await db.pool.connect();
  let failed = true;
  try {
    // The batch's sort in memory: 12,000 DE-TimeSheets rows sorted in 6.4 MB, spilled to disk at the default 4 MB.
    await client.query(`${copyTransaction(q.tenantId, Date.now() + READ_AHEAD_TIMEOUT_MS)}; set local work_mem = '${READ_AHEAD_WORK_MEM}'`);
    const trx = kyselyOnClient(client);
    // In the key's order (one key column), a batch of several pages is a key range: its ends and page ends are
    // enough. A batch of one page (read after a write, decision 0076) is looked up by its keys: the range reads the
    // export's source, whose hash builds and grouped lookups cost more than 2,000 rows' own lookups (a loader paging
    // while a timesheet was written every second took 140 s with one-page ranges, 112 s without).
    const range = inKeyOrder(q, plan) && q.key.length === 1 && rows > take;
    // A position that timesheets inserted after it left where it was still holds; one that inserts before it moved
    // is found again, d rows back (decision 0083).
    const holdsAt = (p: SeekPosition) => insertedAfter(q, plan, kp, p.tables, p.snapshot, after(reversed(kp.terms), p, true));
    const keptHolds = holdsAt(kept0);
    let found = await keysAfter(trx, q, kp, kept0, rows, undefined, take, range, keptHolds);
    const moved = found.unchanged ? null : await relocated(trx, q, plan, kp, kept0, rows);
    const position = moved ?? kept0;
    const holds = moved ? holdsAt(moved) : keptHolds;
    if (moved) found = await keysAfter(trx, q, kp, position, rows, undefined, take, range, holds);
    // The first key's type is on the first row only. In ascending key order nulls come last: a last key that is not
    // null means none is.
    const type = found.keys[0]?.type ?? '';
    const byKey = range && TYPE_NAME.test(type) && found.keys.length > 0 && found.keys[found.keys.length - 1].k0 !== null;
    if (range && !byKey && found.keys.length > 0 && found.unchanged) found = await keysAfter(trx, q, kp, position, rows, undefined, take, false, holds);
    const { keys } = found;
    /** The batch's row count, and its row at place n (1-based) when answered. */
    const total = byKey ? Number(keys[0].total) : keys.length;
    const at = (n: number): KeyRow | undefined => (byKey ? keys.find((k) => Number(k.n) === n) : keys[n - 1]);
    const key = sql.id('q', q.key[0]);
    const statement = !found.unchanged
      ? null
      : byKey && keys.length > 0
        ? sql`select ${sql.join(plan.fields.map((c) => sql.id('q', c.name)))} ${from(q.source, plan)}${plan.where.length ? sql` and` : sql` where`}
              ${key} >= ${keys[0].k0}::${sql.raw(type)} and ${key} <= ${keys[keys.length - 1].k0}::${sql.raw(type)}${orderBy(q, plan)}`
        : pageRowsStatement(q, plan, keys);
    if (statement) extractionReadAheadBatches.inc({ result: byKey ? 'range' : 'keys' });
    const rowTables = statement ? await tablesRead(kept, trx, statement, statement.compile(trx).sql) : null;
    if (!statement || !rowTables) {
      await client.query('commit');
      failed = false;
      return [];
    }
    for (let end = take; end <= total; end += take) {
      const last = at(end);
      if (last) await keepPosition(kept, trx, q, kp, start + end, last, found.snapshot);
    }
    // The columns' own SQL types (a boolean or integer prints unquoted), described on one key: planned with all of
    // them, the description alone cost 15–30 ms.
    const types = await columnTypes(client, trx, pageRowsStatement(q, plan, keys.slice(0, 1)) as RawBuilder<unknown>);
    const { select, kinds } = jsonTextSelect(statement, plan.fields, types);
    const copy = client.query(new CopyOut(copyStatement(trx, select)) as unknown as pg.Submittable) as unknown as CopyOut;
    const lines = new JsonLines(
      plan.fields.map((c) => c.name),
      kinds,
    );
    const splitter = new PageSplitter(take);
    const push = (view: Buffer) => splitter.push(view);
    for await (const chunk of copy) lines.convert(chunk as Buffer, push);
    lines.finish();
    await client.query('commit');
    failed = false;
    const tables = [...new Set([...position.tables, ...rowTables])].sort();
    // In the key's order a page's last key tells the inserts that leave it as it is from those that move it, and the
    // key before its first row (the batch's position for the first page) how far they moved it (decision 0083).
    const keyed = inKeyOrder(q, plan) && logsInserts(q);
    const keyAt = (row: { o0?: string | null; t0?: string | null } | undefined) =>
      keyed && row?.o0 != null && row.t0 && TYPE_NAME.test(row.t0) ? { value: row.o0, type: row.t0 } : undefined;
    const lastKeyOf = (rows: number, i: number): AheadPage['lastKey'] => (keyed && rows < take ? 'end' : keyAt(at((i + 1) * take)));
    const startAfterOf = (i: number): AheadPage['startAfter'] => keyAt(i === 0 ? { o0: position.values[0], t0: position.types[0] } : at(i * take));
    return splitter.end().map(({ body, end, rowEnds }, i) => {
      const rows = Math.min(take, total - i * take);
      const page = { body, end, rows, snapshot: found.snapshot, tables, lastKey: lastKeyOf(rows, i), startAfter: startAfterOf(i), rowEnds };
      return { position: start + i * take, page };
    });
  } finally {
    client.release(failed);
  }
}

/** A batch read ahead is cancelled by PostgreSQL after this long (it takes well under a second). */
const READ_AHEAD_TIMEOUT_MS = 30_000;
/** PostgreSQL's memory for each sort and hash of a batch (its rows are at most READ_AHEAD_ROWS). */
const READ_AHEAD_WORK_MEM = '16MB';

/**
 * The page's JSON written once into one Buffer sized to it. Joining the lines and wrapping them in the
 * envelope would make two more copies of the page in V8's heap (the joined string, then the flattened
 * envelope) before the socket converts it to bytes a third time: for a 10,000-row page, 40 MB of old
 * space that V8 keeps committed long after (decision 0035).
 */
function pageBytes(rows: { line: string }[], totalCount: number): Buffer {
  const head = '{"data":[';
  const tail = `],"totalCount":${totalCount}}`;
  let size = head.length + tail.length + Math.max(rows.length - 1, 0);
  for (const r of rows) size += Buffer.byteLength(r.line);
  const out = Buffer.allocUnsafe(size);
  let at = out.write(head, 0, 'latin1');
  for (let i = 0; i < rows.length; i++) {
    if (i > 0) out[at++] = 44; // ,
    at += out.write(rows[i].line, at);
  }
  out.write(tail, at, 'latin1');
  return out;
}

export async function executePage(trx: Trx, q: ResolvedQuery, plan: Plan, strategy: PageStrategy = 'keys-first', db?: DatabaseHandle): Promise<Page> {
  const keysFirst = strategy === 'keys-first' && !q.isCount && q.key.length > 0 && plan.take !== null;
  const kept = keptOf(db);
  const rows = plan.take === 0 && !q.isCount ? [] : keysFirst ? await keysFirstRows(trx, q, plan, kept) : (await rowsQuery(q, plan).execute(trx)).rows;
  const columns = q.isCount ? q.columns : plan.fields;
  // Shaped in place: the rows already hold exactly these columns in this order, and a page of 10,000
  // rows should not allocate its objects twice (the server's peak memory follows its largest pages).
  const data = rows.map((r) => shapeRowInPlace(r, columns));
  if (q.isCount) return { data, totalCount: data.length };
  // A non-empty page shorter than take ends the result: no second scan needed.
  const complete = plan.take !== null && rows.length < plan.take && (rows.length > 0 || plan.skip === 0);
  if (complete) return { data, totalCount: plan.skip + rows.length };
  const totalCount = keysFirst
    ? await exactCount(kept, trx, q.tenantId, countQuery(q, plan), countDelta(q, plan))
    : Number((await countQuery(q, plan, q.source).execute(trx)).rows[0].n);
  return { data, totalCount };
}

function shapeRowInPlace(row: Record<string, unknown>, columns: CatalogueColumn[]): Record<string, unknown> {
  for (const c of columns) row[c.name] = shapeValue(row[c.name], c);
  return row;
}

/** Values as the API answers them: decimals and bigints as JSON numbers, datetimes ISO 8601 UTC. */
export function shapeRow(row: Record<string, unknown>, columns: CatalogueColumn[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const c of columns) out[c.name] = shapeValue(row[c.name], c);
  return out;
}

function shapeValue(v: unknown, c: CatalogueColumn): unknown {
  if (v === null || v === undefined) return null;
  switch (c.type) {
    case 'decimal':
    case 'integer': {
      const n = typeof v === 'number' ? v : Number(v);
      return Number.isFinite(n) ? n : null;
    }
    case 'datetime':
      return v instanceof Date ? (Number.isNaN(v.getTime()) ? null : v.toISOString()) : v;
    case 'date':
      return v instanceof Date ? v.toISOString().slice(0, 10) : v;
    default:
      return v;
  }
}

const sortValue = (c: CatalogueColumn): RawBuilder<unknown> =>
  c.type === 'string' ? sql`${sql.id('q', c.name)} collate atrium_ci` : sql`${sql.id('q', c.name)}`;
