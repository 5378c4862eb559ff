// Read-ahead for paging clients (decision 0041). A client that asks for the page after the one before it
// (a loader reading everything in pages) gets its next pages computed in the background, several at once
// (one key statement and one COPY for K pages: hash builds, planning and lookups paid once), while it
// receives and parses the current one. This module keeps those pages and the batches in flight; execute.ts
// computes a batch and answers a page from here only after checking, in the request's own transaction,
// that nothing the page reads changed since the batch's snapshot.
import type { DatabaseHandle } from '../../platform/db/database.ts';
import { compressAnswer, type Encoding } from '../../platform/http/answer-encoding.ts';
import { extractionReadAhead } from '../../platform/metrics.ts';
import { keptKey } from './kept-answers.ts';

/** Rows a batch reads at most; pages larger than this are never read ahead. */
export const READ_AHEAD_ROWS = 12_000;
/** Pages a batch reads at most. */
const MAX_PAGES = 8;
/** Batches in flight at once in this process. */
const MAX_BATCHES = 2;
/** Bytes of pages kept at once in this process. */
const MAX_BYTES = 32 * 2 ** 20;
/** How long a page read ahead is kept unanswered. */
const TTL_MS = 60_000;
/**
 * After a pager's pages went stale (a write to what they read), its batches read one page ahead for this long:
 * a client that pages while its tables are written (a BI refresh during the working day) would otherwise have
 * every batch thrown away after its first page, and wait for it before its page is computed anyway.
 */
const STALE_BACKOFF_MS = 10_000;

/**
 * A page read ahead: `body` holds the page's head and its rows' JSON objects joined by commas up to `end`, with
 * room for the page's end after it (answerOf); the batch's snapshot and the tables it read.
 */
export interface AheadPage {
  body: Buffer;
  end: number;
  rows: number;
  snapshot: string;
  tables: string[];
  /**
   * The page's last key as text and its SQL type, when the batch read the query in its key's order (one key column,
   * a keyTable) and the page is full; 'end' for its short last page. Rows inserted into the keyTable since the
   * snapshot after this key leave the page as it was (decision 0083).
   */
  lastKey?: { value: string; type: string } | 'end';
  /**
   * In the key's order, the key of the row before the page's first (where its position seeks from), and where each
   * of its rows ends in `body` (before the comma after it): a page that timesheets inserted before it moved by d
   * rows is answered as the d rows before it and its own first take - d (decision 0083).
   */
  startAfter?: { value: string; type: string };
  rowEnds?: Uint32Array;
  /**
   * The page's answer compressed while it waits, for a client that accepts `encoding`, with the totalCount it was
   * written with (decision 0079); null when compressing failed.
   */
  encoded?: { encoding: Encoding; totalCount: number; bytes: Promise<Buffer | null> };
}

interface Kept extends AheadPage {
  pager: string;
  at: number;
}

interface Batch {
  start: number;
  end: number;
  done: Promise<void>;
}

/** The pages kept and the batches in flight of one server: its database handle's (two servers in one process share none). */
interface State {
  pages: Map<string, Kept>;
  batches: Map<string, Batch>;
  bytes: number;
  /** When each pager's pages last went stale (entries older than STALE_BACKOFF_MS are swept). */
  stale: Map<string, number>;
}

const states = new WeakMap<DatabaseHandle, State>();

function stateOf(db: DatabaseHandle): State {
  let s = states.get(db);
  if (!s) {
    s = { pages: new Map(), batches: new Map(), bytes: 0, stale: new Map() };
    states.set(db, s);
  }
  return s;
}

const pageKey = (pager: string, position: number) => `${pager}:${position}`;

/** A paging client's key: tenant, the key statement without its page (SQL and parameters), take and fields. */
export const pagerOf = (tenantId: string, compiled: { sql: string; parameters: readonly unknown[] }, take: number, fields: string[]): string =>
  keptKey(tenantId, compiled, 'read-ahead', take, fields);

/** Pages of `take` rows a batch reads: as many as fit in READ_AHEAD_ROWS, at most MAX_PAGES; 0 when none fits. */
export const pagesPerBatch = (take: number): number => (take > 0 ? Math.min(MAX_PAGES, Math.floor(READ_AHEAD_ROWS / take)) : 0);

function drop(s: State, key: string, result?: 'stale' | 'unused'): void {
  const kept = s.pages.get(key);
  if (!kept) return;
  s.pages.delete(key);
  s.bytes -= kept.body.length;
  if (result) extractionReadAhead.inc({ result });
}

function sweep(s: State): void {
  const now = Date.now();
  for (const [key, kept] of s.pages) if (now - kept.at >= TTL_MS) drop(s, key, 'unused');
  for (const [pager, at] of s.stale) if (now - at >= STALE_BACKOFF_MS) s.stale.delete(pager);
}

/**
 * The page read ahead for `position`, taken (a page is answered once), waiting for its batch when it is
 * still being read; undefined when none is kept.
 */
export async function takePage(db: DatabaseHandle, pager: string, position: number): Promise<AheadPage | undefined> {
  const s = stateOf(db);
  const batch = s.batches.get(pager);
  if (batch && position >= batch.start && position < batch.end) await batch.done;
  const key = pageKey(pager, position);
  const kept = s.pages.get(key);
  if (!kept) return undefined;
  drop(s, key);
  if (Date.now() - kept.at >= TTL_MS) {
    extractionReadAhead.inc({ result: 'unused' });
    return undefined;
  }
  return kept;
}

/** Drops every page read ahead for `pager` (one of them changed: they share its snapshot). */
export function dropPager(db: DatabaseHandle, pager: string): void {
  const s = stateOf(db);
  for (const [key, kept] of s.pages) if (kept.pager === pager) drop(s, key, 'stale');
  s.stale.set(pager, Date.now());
}

/**
 * Starts reading ahead from `next` (the position after the page just answered) unless `count` pages from
 * there are kept or being read, a batch is in flight for this pager or too many in all, or the batch (about
 * `pageBytes` a page) would not fit in the bytes kept. `read` computes the pages of `count` × `take` rows
 * from a position, each with its position; its failure only means no pages.
 */
export function readAhead(
  db: DatabaseHandle,
  pager: string,
  next: number,
  take: number,
  count: number,
  pageBytes: number,
  read: (start: number, count: number) => Promise<{ position: number; page: AheadPage }[]>,
  /** The encoding the paging client accepts and the totalCount its pages answer while it holds. */
  compress?: { encoding: Encoding; totalCount: number },
): void {
  const s = stateOf(db);
  sweep(s);
  // Recently stale: one page ahead, computed while the client takes the page it has (a write may still spoil it).
  if (s.stale.has(pager)) count = Math.min(count, 1);
  if (count === 0 || s.batches.has(pager) || s.batches.size >= MAX_BATCHES) return;
  let start = next;
  while (start < next + count * take && s.pages.has(pageKey(pager, start))) start += take;
  if (start >= next + count * take) return;
  if (s.bytes + count * pageBytes > MAX_BYTES) return;
  const done = read(start, count).then(
    (found) => {
      // One page compressed at a time (libuv's thread pool also serves scrypt, files and DNS).
      let previous: Promise<unknown> = Promise.resolve();
      for (const { position, page } of found) {
        const key = pageKey(pager, position);
        drop(s, key);
        if (compress) {
          // A short page ends the result: its totalCount is its own end.
          const totalCount = page.rows < take ? position + page.rows : compress.totalCount;
          // From the page's bytes and its end apart: answerOf writes the end into the page's own buffer when the
          // page is answered, which may be while this runs.
          const parts = [page.body.subarray(0, page.end), pageEnd(totalCount)];
          const bytes = previous.then(() => compressAnswer(parts, compress.encoding)).catch(() => null);
          previous = bytes;
          page.encoded = { encoding: compress.encoding, totalCount, bytes };
        }
        s.pages.set(key, { ...page, pager, at: Date.now() });
        s.bytes += page.body.length;
        extractionReadAhead.inc({ result: 'read' });
      }
    },
    () => {},
  );
  const batch: Batch = {
    start,
    end: start + count * take,
    done: done.finally(() => {
      if (s.batches.get(pager) === batch) s.batches.delete(pager);
    }),
  };
  s.batches.set(pager, batch);
}

/** Batches in flight (shutdown and tests wait for them). */
export const readAheadSettled = (db: DatabaseHandle): Promise<unknown> => Promise.all([...stateOf(db).batches.values()].map((b) => b.done));

/** What a page's JSON starts with; a page read ahead is kept after it, with room for the end after its rows. */
export const PAGE_HEAD = Buffer.from('{"data":[');
export const TAIL_ROOM = 48; // `],"totalCount":` and a count of up to 16 digits and `}`

/** What a page's JSON ends with after its rows. */
export const pageEnd = (totalCount: number): Buffer => Buffer.from(`],"totalCount":${totalCount}}`, 'latin1');

/** The page's answer, written in place: its head, rows and `],"totalCount":n}` (decision 0041: no copy of the page). */
export function answerOf(page: Pick<AheadPage, 'body' | 'end'>, totalCount: number): Buffer {
  const end = page.end + pageEnd(totalCount).copy(page.body, page.end);
  return page.body.subarray(0, end);
}

/**
 * Splits JSON lines (`{…}\n` per row, in the views pushed, which it changes and copies at once) into pages of
 * `take` rows, each the page's head and its objects joined by commas, in a Buffer of its own with room for the
 * page's end: the converter's output is copied once, into the page that is answered.
 */
export class PageSplitter {
  readonly pages: { body: Buffer; end: number; rowEnds: Uint32Array }[] = [];
  readonly #take: number;
  #page: Buffer | null = null;
  #at = 0;
  #rows = 0;
  /** Where each row of the page being filled ends in it (before its comma). */
  #rowEnds: Uint32Array;
  /** The last page's size: the next is allocated at about it. */
  #size = 0;

  constructor(take: number) {
    this.#take = take;
    this.#rowEnds = new Uint32Array(take);
  }

  push(view: Buffer): void {
    let start = 0;
    for (let i = view.indexOf(10); i !== -1; i = view.indexOf(10, i + 1)) {
      // The row ends here: at the page's write position plus what of this view is still to be appended before it.
      this.#rowEnds[this.#rows] = (this.#page ? this.#at : PAGE_HEAD.length) + (i - start);
      if (++this.#rows === this.#take) {
        this.#append(view, start, i);
        this.#close();
        start = i + 1;
      } else view[i] = 44; // ,
    }
    if (start < view.length) this.#append(view, start, view.length);
  }

  /** The pages, a short last one included (its last row's comma dropped). */
  end(): { body: Buffer; end: number; rowEnds: Uint32Array }[] {
    if (this.#rows > 0) {
      this.#at--;
      this.#close();
    }
    return this.pages;
  }

  #append(from: Buffer, start: number, end: number): void {
    const n = end - start;
    if (!this.#page) {
      this.#page = Buffer.allocUnsafe(PAGE_HEAD.length + Math.max(Math.ceil(this.#size * 1.05), n, 1024) + TAIL_ROOM);
      this.#at = PAGE_HEAD.copy(this.#page, 0);
    }
    if (this.#at + n + TAIL_ROOM > this.#page.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.#page.length * 2, this.#at + n + TAIL_ROOM));
      this.#page.copy(grown, 0, 0, this.#at);
      this.#page = grown;
    }
    this.#at += from.copy(this.#page, this.#at, start, end);
  }

  #close(): void {
    const page = this.#page ?? Buffer.from(PAGE_HEAD);
    this.pages.push({ body: page, end: this.#at, rowEnds: this.#rowEnds.slice(0, this.#rows) });
    this.#size = this.#at;
    this.#page = null;
    this.#rows = 0;
  }
}
