// Reading ahead of the writes (decision 0067): each planned query's NDJSON answer is downloaded into an
// unlinked temporary file as fast as the source sends it — its count and metadata first — a few queries
// ahead of the one being written, never more than the client's requests in flight. The writer follows a
// download as it grows, so the target's writes no longer hold the source's stream open (a stream kept
// past the source's time limit is cut and read again) and neither side idles on the other.
import { type FileHandle, open, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ImportError, type SourceClient, type SourceRow } from './client.ts';

/** A row line longer than this is a malformed page, not a row (bounds the buffer). */
const MAX_LINE_CHARS = 4 * 1024 * 1024;
/** Bytes read from a spool at a time. */
const READ_CHUNK = 256 * 1024;

/** The download a writer followed was cut and is being read again from the start: follow the new one. */
export class Superseded extends Error {}

/** NDJSON text into row objects, line by line; a line that is not a JSON object is a malformed page. */
export class NdjsonRows {
  #buffer = '';
  #decoder = new TextDecoder();
  #rows = 0;
  readonly #namedQuery: string;
  constructor(namedQuery: string) {
    this.#namedQuery = namedQuery;
  }

  /** The complete rows in `chunk` (a partial last line waits for the next chunk); `end` flushes the rest. */
  push(chunk: Uint8Array | null, into: SourceRow[]): void {
    const text = chunk === null ? this.#buffer + this.#decoder.decode() : this.#buffer + this.#decoder.decode(chunk, { stream: true });
    let start = 0;
    let nl = text.indexOf('\n');
    while (nl >= 0) {
      this.#parse(text.slice(start, nl), into);
      start = nl + 1;
      nl = text.indexOf('\n', start);
    }
    if (chunk === null) {
      this.#parse(text.slice(start), into);
      this.#buffer = '';
      return;
    }
    this.#buffer = text.slice(start);
    if (this.#buffer.length > MAX_LINE_CHARS) throw new ImportError(`source ${this.#namedQuery}: a row longer than ${MAX_LINE_CHARS} characters`);
  }

  #parse(line: string, into: SourceRow[]): void {
    if (!line) return;
    this.#rows++;
    let row: unknown;
    try {
      row = JSON.parse(line);
    } catch {
      throw new ImportError(`source ${this.#namedQuery}: malformed row ${this.#rows} (not JSON)`);
    }
    if (row === null || typeof row !== 'object' || Array.isArray(row))
      throw new ImportError(`source ${this.#namedQuery}: malformed row ${this.#rows} (not an object)`);
    into.push(row as SourceRow);
  }
}

/** One attempt's bytes of a stream, in a file unlinked once opened (nothing is left behind, even after SIGKILL). */
class Spool {
  size = 0;
  done = false;
  error: unknown = null;
  superseded = false;
  readonly #fh: FileHandle;
  #waiters: (() => void)[] = [];
  #closed = false;

  private constructor(fh: FileHandle) {
    this.#fh = fh;
  }

  static async create(dir: string): Promise<Spool> {
    const file = path.join(dir, `atrium-import-${process.pid}-${process.hrtime.bigint()}-${Math.random().toString(36).slice(2)}.ndjson`);
    const fh = await open(file, 'w+', 0o600);
    await rm(file, { force: true });
    return new Spool(fh);
  }

  async append(chunk: Uint8Array): Promise<void> {
    let at = 0;
    while (at < chunk.byteLength) {
      const { bytesWritten } = await this.#fh.write(chunk, at, chunk.byteLength - at, this.size);
      at += bytesWritten;
      this.size += bytesWritten;
    }
    this.#wake();
  }

  end(): void {
    this.done = true;
    this.#wake();
  }

  fail(err: unknown): void {
    this.error ??= err;
    this.#wake();
  }

  supersede(): void {
    this.superseded = true;
    this.#wake();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.supersede();
    await this.#fh.close().catch(() => {});
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** The rows in batches of `batchSize`, following the download as it grows, until it ends. */
  async *batches(namedQuery: string, batchSize: number): AsyncGenerator<SourceRow[]> {
    const parser = new NdjsonRows(namedQuery);
    const buf = Buffer.allocUnsafe(READ_CHUNK);
    let pos = 0;
    let batch: SourceRow[] = [];
    for (;;) {
      if (this.superseded) throw new Superseded();
      if (this.error) throw this.error;
      if (pos < this.size) {
        const { bytesRead } = await this.#fh.read(buf, 0, Math.min(READ_CHUNK, this.size - pos), pos);
        pos += bytesRead;
        parser.push(buf.subarray(0, bytesRead), batch);
        if (batch.length >= batchSize) {
          yield batch;
          batch = [];
        }
        continue;
      }
      if (this.done) {
        parser.push(null, batch);
        if (batch.length) yield batch;
        return;
      }
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }
}

/** What one planned query's download gives its writer. */
export interface Download {
  /** The source's row count (its …Count query), for the progress line's ETA; null when unknown. */
  expected: Promise<number | null>;
  /** The current attempt's spool once the source answered, or 'paged' when it answers no stream (read in pages then). */
  spool(): Promise<Spool | 'paged'>;
}

export interface PlannedRead {
  namedQuery: string;
  key: string[];
  parameters: Record<string, unknown>;
  /** The query's …Count, where the source has one. */
  countQuery: string | null;
  /** Read before the rows (the source's metadata the rows need). */
  prepare?: () => Promise<void>;
}

class QueryDownload implements Download {
  expected: Promise<number | null>;
  #current: Spool | null = null;
  #paged = false;
  #error: unknown = null;
  #waiters: (() => void)[] = [];
  readonly #spools: Spool[] = [];

  constructor(client: SourceClient, read: PlannedRead, dir: string, stopped: () => boolean) {
    this.expected = read.countQuery ? client.count(read.countQuery, read.parameters).catch(() => null) : Promise.resolve(null);
    // Not awaited: the writer observes its end (or failure) through the spool.
    this.#run(client, read, dir, stopped).catch((err) => {
      this.#error = err;
      this.#current?.fail(err);
      this.#wake();
    });
  }

  async #run(client: SourceClient, read: PlannedRead, dir: string, stopped: () => boolean): Promise<void> {
    await read.prepare?.();
    await this.expected;
    if (stopped()) throw new ImportError('import stopped');
    let answered = false;
    const streamed = await client
      .stream(read.namedQuery, read.key, read.parameters, async (body) => {
        answered = true;
        // A new attempt (the last one was cut): the writer starts over on this one.
        const spool = await Spool.create(dir);
        this.#spools.push(spool);
        this.#current?.supersede();
        this.#current = spool;
        this.#wake();
        for await (const chunk of body) {
          if (stopped()) throw new ImportError('import stopped');
          await spool.append(chunk as Uint8Array);
        }
        spool.end();
      })
      .catch((err) => {
        // Streams the source kept cutting: its pages instead (a source that stopped answering fails there).
        if (!answered || stopped() || !(err instanceof ImportError)) throw err;
        return false;
      });
    if (!streamed) {
      this.#current?.supersede();
      this.#paged = true;
      this.#wake();
    }
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  async spool(): Promise<Spool | 'paged'> {
    for (;;) {
      if (this.#error) throw this.#error;
      if (this.#paged) return 'paged';
      if (this.#current && !this.#current.superseded) return this.#current;
      await new Promise<void>((r) => this.#waiters.push(r));
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.#spools.map((s) => s.close()));
  }
}

/**
 * The downloads of a run's planned reads: up to `ahead` reads past the one being written are started (their
 * requests queue on the client's limiter in plan order, so the next one needed is served first).
 */
export class Prefetch {
  readonly #client: SourceClient;
  readonly #reads: (PlannedRead | null)[];
  readonly #ahead: number;
  readonly #downloads = new Map<number, QueryDownload>();
  #next = 0;
  /** Spool files are unlinked once opened: nothing of them is left, even after SIGKILL. */
  readonly #dir = os.tmpdir();
  #stopped = false;

  /** `reads` in plan order; null for a read that is already done (a checkpoint) and is not downloaded. */
  constructor(client: SourceClient, reads: (PlannedRead | null)[], ahead = 6) {
    this.#client = client;
    this.#reads = reads;
    this.#ahead = Math.max(1, ahead);
  }

  /** The download of read `index` (started now if it was not yet), and those up to `ahead` past it. */
  async take(index: number): Promise<Download> {
    const dir = this.#dir;
    while (this.#next < this.#reads.length && this.#next <= index + this.#ahead) {
      const read = this.#reads[this.#next];
      if (read) this.#downloads.set(this.#next, new QueryDownload(this.#client, read, dir, () => this.#stopped));
      this.#next++;
    }
    const download = this.#downloads.get(index);
    if (!download) throw new Error(`read ${index} is not planned`);
    return download;
  }

  /** Read `index` is written: its spool files go. */
  async done(index: number): Promise<void> {
    await this.#downloads.get(index)?.close();
    this.#downloads.delete(index);
  }

  /** Stops the downloads under way and removes what they left. */
  async close(): Promise<void> {
    this.#stopped = true;
    await Promise.all([...this.#downloads.values()].map((d) => d.close()));
    this.#downloads.clear();
  }
}
