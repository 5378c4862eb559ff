// Lookups kept in process memory while the tables they read are unchanged (decision 0060). A kept answer is
// handed out only after a freshness check sent after the request arrived found no change to those tables for
// its tenant (the change log of decision 0022) since the snapshot the answer was read in; so a request that
// follows a committed write, whoever wrote, never gets the answer from before it. The requests of one
// event-loop turn that wait on the same answer share one check: a busy lookup costs PostgreSQL one small
// statement per turn instead of one per request, and the server no statement of its own per request.
import { sql } from 'kysely';
import type { DatabaseHandle, Trx } from './database.ts';

/** Answers kept per process (the oldest goes first). */
export const MAX_KEPT = 1000;
/** Well below the 10 minutes after which the maintenance job may delete the change rows a check relies on. */
const KEEP_MS = 5 * 60_000;

interface Check {
  sent: boolean;
  unchanged: Promise<boolean>;
}

interface Kept {
  value: unknown;
  snapshot: string;
  tenantId: string;
  tables: readonly string[];
  until: number;
  /** The check requests of this turn join; replaced once it is sent. */
  check: Check | null;
}

/** What a load read: the value and the snapshot of the statement that read it (pg_current_snapshot()). */
export interface Loaded<T> {
  value: T;
  snapshot: string;
}

export class KeptReads {
  readonly #db: DatabaseHandle;
  readonly #kept = new Map<string, Kept>();
  /** Fresh answers, refused answers (a change was found), loads: what the tests and metrics read. */
  readonly counts = { kept: 0, changed: 0, loaded: 0 };

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
    this.#kept.set(k, { value: loaded.value, snapshot: loaded.snapshot, tenantId, tables, until: Date.now() + KEEP_MS, check: null });
    return loaded.value;
  }

  /** Joins the check not yet sent, or starts one, sent at the end of this turn (after the turn's requests joined). */
  #unchanged(kept: Kept): Promise<boolean> {
    if (kept.check && !kept.check.sent) return kept.check.unchanged;
    const check: Check = { sent: false, unchanged: Promise.resolve(false) };
    check.unchanged = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      check.sent = true;
      return this.#db
        .readAsTenant(kept.tenantId, (trx) =>
          sql<{
            unchanged: boolean;
          }>`select not atrium_changed_since(${kept.tenantId}::uuid, ${kept.tables}::text[], ${kept.snapshot}::pg_snapshot) as unchanged`.execute(trx),
        )
        .then(
          (r) => r.rows[0]?.unchanged === true,
          // A check that fails answers "changed": the request reads the table itself, and meets the error there if it lasts.
          () => false,
        );
    });
    kept.check = check;
    return check.unchanged;
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
