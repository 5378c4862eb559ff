// Kept seek positions (decision 0039): when a full page of a query ends, the order values of its last row
// are kept for the position after it, so a paging client's next page (skip = that position) seeks past
// that row on the order's index instead of skipping every row before it. A position is used only while
// nothing the key statement reads has changed for the tenant since the snapshot it was read in — the
// count cache's change log and check (count-cache.ts) — so the page is exactly the offset page.
import { type RawBuilder, sql } from 'kysely';
import { extractionSeeks } from '../../platform/metrics.ts';
import { keptKey } from './kept-answers.ts';

/** One term of a page's ORDER BY: the value sorted on and its direction (PostgreSQL's default nulls placement). */
export interface OrderTerm {
  value: RawBuilder<unknown>;
  desc: boolean;
}

/** The order values of the row before a position, as text with their SQL type names, and where they were read. */
export interface SeekPosition {
  values: (string | null)[];
  types: string[];
  tables: string[];
  snapshot: string;
  at: number;
}

// Positions are kept per server (KeptState.positions of kept-answers.ts). A kept snapshot older than
// COUNT_TTL_MS could miss changes the sweep deleted, so a position expires as a count does.

/** The position's key: tenant, the key statement without its page (SQL and parameters), the quarter hour, the position. */
export const positionKey = (tenantId: string, compiled: { sql: string; parameters: readonly unknown[] }, position: number): string =>
  keptKey(tenantId, compiled, position);

export const seekCounted = (result: 'hit' | 'stale' | 'miss' | 'relocated' | 'delta'): void => {
  extractionSeeks.inc({ result });
};

/**
 * The order of `terms` backwards: each term in the other direction, where PostgreSQL's default nulls placement
 * (last ascending, first descending) is also the other way round, so the rows come in exactly the reverse order.
 */
export const reversed = (terms: OrderTerm[]): OrderTerm[] => terms.map((t) => ({ value: t.value, desc: !t.desc }));

/**
 * Rows strictly after (with `inclusive`, also the row itself: its order values all equal) the row whose order values are `at`, in the order of `terms` (the page's ORDER BY,
 * which ends with the key, so no two rows tie): lexicographic, each term in its direction, nulls last
 * ascending and first descending as ORDER BY places them, equality under the term's own collation.
 * As one or two conditions, whose rows the page reads in this order: the first bounds the first term on
 * its own (`>=`/`<=`), which an index on it serves; when that term ascends from a value, the rows where it
 * is null (which sort last) are the second (a NOT NULL column makes that one empty at plan time).
 */
export function after(terms: OrderTerm[], at: SeekPosition, inclusive = false): RawBuilder<boolean>[] {
  const literal = (i: number) => sql`${at.values[i]}::${sql.raw(at.types[i])}`;
  const from = (i: number, nullable: boolean): RawBuilder<boolean> => {
    if (i === terms.length) return inclusive ? sql<boolean>`true` : sql<boolean>`false`;
    const { value, desc } = terms[i];
    const rest = from(i + 1, true);
    if (at.values[i] === null) {
      // Nulls come last ascending (only nulls follow a null), first descending (every non-null follows).
      return desc ? sql<boolean>`(${value} is not null or (${value} is null and ${rest}))` : sql<boolean>`(${value} is null and ${rest})`;
    }
    const x = literal(i);
    if (desc) return sql<boolean>`(${value} < ${x} or (${value} = ${x} and ${rest}))`;
    return nullable
      ? sql<boolean>`(${value} > ${x} or ${value} is null or (${value} = ${x} and ${rest}))`
      : sql<boolean>`(${value} > ${x} or (${value} = ${x} and ${rest}))`;
  };
  const [lead] = terms;
  if (at.values[0] === null) return [from(0, true)];
  if (lead.desc) return [sql<boolean>`${lead.value} <= ${literal(0)} and ${from(0, true)}`];
  return [sql<boolean>`${lead.value} >= ${literal(0)} and ${from(0, false)}`, sql<boolean>`${lead.value} is null`];
}
