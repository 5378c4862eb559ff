// Lookups kept in process memory while the tables they read are unchanged (decision 0060). A kept answer is
// handed out only after a freshness check sent after the request arrived found no change to those tables for
// its tenant (the change log of decision 0022) since the snapshot the answer was read in; so a request that
// follows a committed write, whoever wrote, never gets the answer from before it. Requests that wait on the
// same answer share one check: while one check is in flight, every request that arrives joins the next one,
// which is sent as soon as the first answers (decision 0069). A busy lookup costs PostgreSQL one small
// statement per round trip instead of one per request, and the server no statement of its own per request.
import { CompiledQuery } from 'kysely';
import type { DatabaseHandle, Trx } from './database.ts';

/** Answers kept per process (the oldest goes first). */
export const MAX_KEPT = 1000;
/** Well below the 10 minutes after which the maintenance job may delete the change rows a check relies on. */
const KEEP_MS = 5 * 60_000;

interface Check {
  unchanged: Promise<boolean>;
  answer: (unchanged: boolean) => void;
}

const CHANGED_SINCE = 'select not atrium_changed_since($1::uuid, $2::text[], $3::pg_snapshot) as unchanged';

interface Kept {
  value: unknown;
  snapshot: string;
  tenantId: string;
  tables: readonly string[];
  until: number;
  /** The check arriving requests join: not sent yet; it leaves when none is in flight. */
  next: Check | null;
  /** A check of this answer is in flight. */
  checking: boolean;
}

/** What a load read: the value and the snapshot of the statement that read it (pg_current_snapshot()). */
export interface Loaded<T> {
  value: T;
  snapshot: string;
}

export class KeptReads {
  readonly #db: DatabaseHandle;
  readonly #kept = new Map<string, Kept>();
  /** Fresh answers, refused answers (a change was found), loads, checks sent: what the tests and benchmarks read. */
  readonly counts = { kept: 0, changed: 0, loaded: 0, checks: 0 };

  constructor(db: DatabaseHandle) {
    this.#db = db;
  }

  get size(): number {
    return this.#kept.size;
  }

  /**
   * The value `load` reads for the tenant (one statement on a read lane that also answers its snapshot), or
   * the one kept under `key` while `tables` are unchanged for the tenant. `key` must name everything the
   * statement depends on besides the tenant.
   */
  async read<T>(tenantId: string, tables: readonly string[], key: string, load: (trx: Trx) => Promise<Loaded<T>>): Promise<T> {
    const k = `${tenantId}\n${key}`;
    const kept = this.#kept.get(k);
    if (kept && kept.until > Date.now()) {
      if (await this.#unchanged(kept)) {
        this.counts.kept++;
        return kept.value as T;
      }
      this.counts.changed++;
      if (this.#kept.get(k) === kept) this.#kept.delete(k);
    }
    const loaded = await this.#db.readAsTenant(tenantId, load);
    this.counts.loaded++;
    if (!this.#kept.has(k) && this.#kept.size >= MAX_KEPT) this.#kept.delete(this.#kept.keys().next().value as string);
    this.#kept.set(k, { value: loaded.value, snapshot: loaded.snapshot, tenantId, tables, until: Date.now() + KEEP_MS, next: null, checking: false });
    return loaded.value;
  }

  /**
   * Joins the check not yet sent, or starts one. A check is sent at the end of the turn it was started in, or,
   * when one is in flight then, as soon as that one answers: every request that joins it arrived before it was
   * sent, and no request joins a check already sent (it could have been answered before the request's write).
   */
  #unchanged(kept: Kept): Promise<boolean> {
    if (kept.next) return kept.next.unchanged;
    let answer!: (unchanged: boolean) => void;
    const unchanged = new Promise<boolean>((resolve) => (answer = resolve));
    kept.next = { unchanged, answer };
    if (!kept.checking) {
      kept.checking = true;
      setImmediate(() => this.#send(kept));
    }
    return unchanged;
  }

  #send(kept: Kept): void {
    const check = kept.next;
    kept.next = null;
    if (!check) {
      kept.checking = false;
      return;
    }
    this.counts.checks++;
    this.#db
      .readAsTenant(kept.tenantId, (trx) =>
        trx.executeQuery<{ unchanged: boolean }>(CompiledQuery.raw(CHANGED_SINCE, [kept.tenantId, kept.tables, kept.snapshot])),
      )
      .then(
        (r) => r.rows[0]?.unchanged === true,
        // A check that fails answers "changed": the request reads the table itself, and meets the error there if it lasts.
        () => false,
      )
      .then((unchanged) => {
        check.answer(unchanged);
        if (unchanged) {
          // The requests that arrived meanwhile: their check leaves now (or checking ends when none came).
          this.#send(kept);
          return;
        }
        // A change since the snapshot stays one: those requests read the table too, without a check of their own.
        kept.next?.answer(false);
        kept.next = null;
        kept.checking = false;
      });
  }
}

const perHandle = new WeakMap<DatabaseHandle, KeptReads>();

/** The kept reads of this database handle (one per process and database). */
export function keptReads(db: DatabaseHandle): KeptReads {
  let kept = perHandle.get(db);
  if (!kept) {
    kept = new KeptReads(db);
    perHandle.set(db, kept);
  }
  return kept;
}
