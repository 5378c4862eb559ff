// Answers kept between requests and how long they hold: the count cache's totalCounts (count-cache.ts,
// decision 0022) and kept seek positions (seek-positions.ts, decision 0039), keyed by tenant, statement
// and parameters, and valid for COUNT_TTL_MS, the horizon the maintenance sweep keeps change rows for.
// They are kept per database handle (KeptState, keptOf): two servers in one process share none.
import { createHash } from 'node:crypto';
import type { DatabaseHandle } from '../../platform/db/database.ts';
import type { SeekPosition } from './seek-positions.ts';

/**
 * How long a count is kept. The maintenance sweep deletes change rows only below a horizon taken at
 * least this long ago, so no kept count can predate a deleted change (sweepChangeLog).
 */
export const COUNT_TTL_MS = 10 * 60_000;
/**
 * Counts are kept per quarter hour as well: a source may compare with the current date, which changes at
 * an hour or a quarter past in every time zone; keyed by the quarter hour, no count outlives its day.
 */
export const BUCKET_MS = 15 * 60_000;

/**
 * Answers kept per key, at most `max` (the least recently used dropped first), each valid COUNT_TTL_MS from
 * its `at`: kept counts (count-cache.ts), kept seek positions (seek-positions.ts).
 */
export class KeptAnswers<T extends { at: number }> {
  readonly #max: number;
  readonly #map = new Map<string, T>();

  constructor(max: number) {
    this.#max = max;
  }

  get(key: string): T | undefined {
    const kept = this.#map.get(key);
    if (!kept) return undefined;
    this.#map.delete(key);
    if (Date.now() - kept.at >= COUNT_TTL_MS) return undefined;
    // Re-inserted: the map's order is its recency, the first entry the least recently used.
    this.#map.set(key, kept);
    return kept;
  }

  set(key: string, value: T): void {
    this.#map.delete(key);
    if (this.#map.size >= this.#max) this.#map.delete(this.#map.keys().next().value as string);
    this.#map.set(key, value);
  }

  delete(key: string): void {
    this.#map.delete(key);
  }
}

/** A kept answer's key: tenant, statement SQL and parameters, the quarter hour (see BUCKET_MS), and `more`. */
export function keptKey(tenantId: string, compiled: { sql: string; parameters: readonly unknown[] }, ...more: unknown[]): string {
  return createHash('sha256')
    .update(JSON.stringify([tenantId, compiled.sql, compiled.parameters, Math.floor(Date.now() / BUCKET_MS), ...more]))
    .digest('base64url');
}

/** A kept count: the count, the snapshot it was counted in and the tracked tables its plan reads. */
export interface KeptCount {
  count: number;
  snapshot: string;
  tables: string[];
  at: number;
}

/** Counts kept at once per server; an entry is a few hundred bytes. */
const MAX_COUNTS = 5_000;
// A paging client keeps one position per query and filters at a time (each page replaces its own by the
// next), so a few thousand cover many concurrent readers; an entry is a few hundred bytes.
const MAX_POSITIONS = 4_000;

/**
 * What one server keeps between requests: its kept counts and seek positions, the tables each statement's plan
 * reads (by SQL text) and the tables the change log tracks (read once).
 */
export class KeptState {
  readonly counts = new KeptAnswers<KeptCount>(MAX_COUNTS);
  readonly positions = new KeptAnswers<SeekPosition>(MAX_POSITIONS);
  /** Statement SQL text -> the tracked tables its plan reads, or null when it reads one that is not tracked. */
  readonly tablesOfSql = new Map<string, string[] | null>();
  readonly maxTablesOfSql = MAX_COUNTS;
  tracked: Promise<Set<string>> | null = null;
}

const states = new WeakMap<DatabaseHandle, KeptState>();

/**
 * The answers kept for a server (its database handle); without one (a caller with a transaction alone, as
 * unit tests are), a state of its own that nothing else shares: nothing is answered from a previous call.
 */
export function keptOf(db?: DatabaseHandle): KeptState {
  if (!db) return new KeptState();
  let s = states.get(db);
  if (!s) {
    s = new KeptState();
    states.set(db, s);
  }
  return s;
}
