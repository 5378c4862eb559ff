// Read replicas (DATABASE_READ_URL, decision 0028): reads that may lag (Data Extraction pages, exports,
// OData, scheduled runs) go to a streaming replica when one is up and within ATRIUM_READ_MAX_LAG;
// otherwise, and when a replica fails under a read, they run on the primary. A probe measures each
// replica's lag every second; a change of state is one log line, and the lag is a metric.
import pg from 'pg';
import type { Logger } from '../log.ts';
import { readReplicaLag, readReplicaUp } from '../metrics.ts';
import { DatabaseHandle } from './database.ts';

const PROBE_MS = 1000;
const PROBE_TIMEOUT_MS = 2000;

export interface ReplicaOptions {
  maxLagMs: number;
  statementTimeoutMs: number;
  log: Logger;
  poolSize?: number;
}

interface Replica {
  index: number;
  /** The URL without its password, for log lines. */
  name: string;
  db: DatabaseHandle;
  probe: pg.Pool;
  usable: boolean;
  lagSeconds: number | null;
  reason: string;
}

/** Errors that say the server (not the statement) failed: the read is run again on the primary. */
export function isReplicaFailure(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  const code = typeof e?.code === 'string' ? e.code : '';
  if (/^08/.test(code) || ['57P01', '57P02', '57P03', '40001', '53300'].includes(code)) return true;
  if (/^E[A-Z]+$/.test(code) && code !== 'ERR_STREAM_PREMATURE_CLOSE') return true;
  return typeof e?.message === 'string' && /Connection terminated|connection timeout|Client has encountered a connection error/i.test(e.message);
}

export class ReadReplicas {
  readonly #primary: DatabaseHandle;
  readonly #replicas: Replica[];
  readonly #opts: ReplicaOptions;
  #next = 0;
  #timer: NodeJS.Timeout | null = null;
  #probing: Promise<void> | null = null;

  constructor(primary: DatabaseHandle, urls: string[], opts: ReplicaOptions) {
    this.#primary = primary;
    this.#opts = opts;
    this.#replicas = urls.map((url, index) => {
      const probe = new pg.Pool({
        connectionString: url,
        max: 1,
        application_name: 'atrium-read-probe',
        connectionTimeoutMillis: PROBE_TIMEOUT_MS,
        query_timeout: PROBE_TIMEOUT_MS,
      });
      probe.on('error', () => {});
      return {
        index,
        name: redact(url),
        db: new DatabaseHandle(url, {
          poolSize: opts.poolSize ?? 10,
          readLanes: 1,
          statementTimeoutMs: opts.statementTimeoutMs,
          applicationName: 'atrium-read',
        }),
        probe,
        usable: false,
        lagSeconds: null,
        reason: 'not probed yet',
      };
    });
  }

  /** Probes every replica once (so the first reads already know), then every second. */
  async start(): Promise<void> {
    // The primary unreachable for the moment: the replicas stay unused until a probe succeeds.
    await this.probe().catch(() => {});
    this.#timer = setInterval(() => {
      this.probe().catch(() => {});
    }, PROBE_MS);
    this.#timer.unref();
  }

  /** One probe of every replica (tests call it to see a change at once). */
  probe(): Promise<void> {
    this.#probing ??= (async () => {
      try {
        const { rows } = await this.#primary.pool.query<{ lsn: string }>('select pg_current_wal_lsn()::text as lsn');
        await Promise.all(this.#replicas.map((r) => this.#probeOne(r, rows[0].lsn)));
      } finally {
        this.#probing = null;
      }
    })();
    return this.#probing;
  }

  /**
   * Runs fn on a replica that is up and within the lag limit (in turn), or on the primary when there is
   * none. A replica that fails under the read is set aside until its next good probe and the read runs
   * again on the primary: fn must be a read, safe to run twice, that has handed nothing out yet.
   */
  async read<T>(fn: (db: DatabaseHandle) => Promise<T>): Promise<T> {
    const usable = this.#replicas.filter((r) => r.usable);
    if (usable.length === 0) return fn(this.#primary);
    const replica = usable[this.#next++ % usable.length];
    try {
      return await fn(replica.db);
    } catch (err) {
      if (!isReplicaFailure(err)) throw err;
      this.#set(replica, false, replica.lagSeconds, 'a read failed', `: ${(err as Error).message}`);
      return fn(this.#primary);
    }
  }

  async close(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    await this.#probing?.catch(() => {});
    await Promise.all(this.#replicas.map(async (r) => Promise.all([r.db.close(), r.probe.end().catch(() => {})])));
  }

  async #probeOne(r: Replica, primaryLsn: string): Promise<void> {
    try {
      // Caught up with the primary's position read just before: no lag, however long ago the last
      // write was replayed (an idle primary writes nothing to replay). Behind it: the age of the last replay.
      const { rows } = await r.probe.query<{ standby: boolean; caught_up: boolean | null; age: number | null }>(
        `select pg_is_in_recovery() as standby,
           pg_wal_lsn_diff(pg_last_wal_replay_lsn(), $1::pg_lsn) >= 0 as caught_up,
           extract(epoch from clock_timestamp() - pg_last_xact_replay_timestamp())::float8 as age`,
        [primaryLsn],
      );
      const { standby, caught_up, age } = rows[0];
      const lag = !standby || caught_up ? 0 : age === null ? null : Math.max(0, age);
      readReplicaLag.set({ replica: String(r.index) }, lag ?? -1);
      if (lag === null) this.#set(r, false, null, 'it has replayed nothing from the primary yet');
      else if (lag * 1000 > this.#opts.maxLagMs)
        this.#set(r, false, lag, 'it lags more than ATRIUM_READ_MAX_LAG', ` (${lag.toFixed(1)} s > ${this.#opts.maxLagMs / 1000} s)`);
      else this.#set(r, true, lag, 'in use');
    } catch (err) {
      readReplicaLag.set({ replica: String(r.index) }, -1);
      this.#set(r, false, null, 'it is unreachable', `: ${(err as Error).message}`);
    }
  }

  #set(r: Replica, usable: boolean, lagSeconds: number | null, kind: string, detail = ''): void {
    r.lagSeconds = lagSeconds;
    readReplicaUp.set({ replica: String(r.index) }, usable ? 1 : 0);
    const changed = r.usable !== usable || (!usable && r.reason !== kind);
    r.usable = usable;
    r.reason = kind;
    if (!changed) return;
    if (usable) this.#opts.log.info({ replica: r.name, lagSeconds }, 'read replica in use');
    else this.#opts.log.warn({ replica: r.name, lagSeconds }, `read replica skipped: ${kind}${detail}; its reads go to the primary`);
  }
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'replica';
  }
}
