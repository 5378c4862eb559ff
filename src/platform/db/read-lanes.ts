// Read lanes: a few PostgreSQL connections in pg's pipeline mode that carry readAsTenant's
// one-statement lookups for every tenant, each statement prepared once per lane.
//
// Why: a lookup on a checked-out connection costs a checkout, a round trip during which the
// connection serves no one else, and (unprepared) a parse, RLS rewrite and plan per statement. On a
// lane, concurrent lookups are written back to back and PostgreSQL answers them in order, so one
// backend wakes up once for many of them and plans each statement text once.
//
// A lane also carries counter draws (`draw`, decision 0068): one INSERT … ON CONFLICT DO UPDATE … RETURNING
// that advances a per-tenant counter and commits on its own, as nextval does, so the counter's row lock lasts
// one statement instead of the caller's whole transaction.
//
// Tenant safety rests on order: a lane is bound to one tenant at a time at session level
// (atrium.tenant_id, read by the RLS policies when a statement executes, never when it is planned),
// and PostgreSQL runs a lane's statements strictly in the order they were written. A statement is
// written behind the binding of its tenant (a rebinding statement goes first when the lane last
// served another tenant), and its rows are handed out only after that binding is known to have
// succeeded; a lane whose binding fails is closed.
import { createHash } from 'node:crypto';
import pg from 'pg';
import { coalesceWrites } from './coalesced-writes.ts';

/** Prepared statements per lane (they live as long as the connection); past it, statements run unnamed. */
export const MAX_PREPARED_PER_LANE = 100;
/** readAsTenant runs queries only: no session or transaction control can travel on a shared lane. */
const READ_STATEMENT = /^\s*(select|with)\b/i;
/** draw runs a counter's statement only: an INSERT (alone or as a CTE) or an UPDATE. */
const DRAW_STATEMENT = /^\s*(insert|update|with\s+\w+\s+as\s+\(\s*insert)\b/i;
/** How many queued statements a rebinding is worth when choosing a lane. */
const REBIND_COST = 2;
const BIND_SQL = "select set_config('atrium.tenant_id', $1, false)";

interface Lane {
  client: pg.Client;
  /** The tenant of the last binding written on this lane: statements written after it run for it. */
  tenantId: string | undefined;
  /** Settles when that binding has run; rows are answered only if it succeeded. */
  bound: Promise<unknown>;
  /** Statements written and not yet answered. */
  inFlight: number;
  prepared: Set<string>;
  closed: boolean;
}

export interface ReadLaneOptions {
  connectionString: string;
  lanes: number;
  /** The request role (not the owner), so RLS applies. */
  role: string;
  statementTimeoutMs: number;
}

/** Statement text -> its prepared-statement name ("r" + hash of the text), shared by all lanes; bounded. */
const statementNames = new Map<string, string>();
function statementName(text: string): string {
  let name = statementNames.get(text);
  if (name === undefined) {
    name = `r${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
    if (statementNames.size >= 10_000) statementNames.clear();
    statementNames.set(text, name);
  }
  return name;
}

/** A prepared `select *` whose table gained or lost a column (another process migrated): re-prepare. */
const isStalePlan = (err: unknown): boolean =>
  (err as { code?: string }).code === '0A000' && /cached plan must not change result type/i.test((err as Error).message);

export class TenantReadLanes {
  readonly #opts: ReadLaneOptions;
  readonly #lanes: Lane[] = [];
  #opening: Promise<void> | null = null;
  #closed = false;

  constructor(opts: ReadLaneOptions) {
    if (!/^[a-z_][a-z0-9_]*$/.test(opts.role) || !Number.isInteger(opts.statementTimeoutMs)) throw new Error('invalid read lane options');
    this.#opts = { ...opts, lanes: Math.max(1, opts.lanes) };
  }

  /** Runs one read statement for the tenant (a validated uuid) on a lane bound to it. */
  async read(tenantId: string, text: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    if (!READ_STATEMENT.test(text)) throw new Error('readAsTenant runs SELECT and WITH statements only; use withTenant');
    return this.#runAgainIfStale(tenantId, text, values);
  }

  /**
   * Runs one counter draw for the tenant: a statement that upserts a counter row and answers the value it
   * took (or gives an untouched value back), committed on its own (each statement on a lane is its own
   * transaction) whatever becomes of the caller's. Lanes commit with synchronous_commit off: whatever uses a
   * drawn value commits later and its WAL flush covers the draw's, so a crash can lose only a draw that nothing
   * committed used. (Reads write no WAL to wait for.)
   */
  async draw(tenantId: string, text: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    if (!DRAW_STATEMENT.test(text)) throw new Error('a draw runs one INSERT … ON CONFLICT statement');
    return this.#runAgainIfStale(tenantId, text, values);
  }

  async #runAgainIfStale(tenantId: string, text: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    try {
      return await this.#run(tenantId, text, values);
    } catch (err) {
      // The lane that held the stale plan is closed by now; the statement failed whole, so it is safe to run again.
      if (isStalePlan(err)) return this.#run(tenantId, text, values);
      throw err;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#opening?.catch(() => {});
    const lanes = this.#lanes.splice(0);
    await Promise.all(
      lanes.map((lane) => {
        lane.closed = true;
        return lane.client.end().catch(() => {});
      }),
    );
  }

  async #run(tenantId: string, text: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    let lane = this.#pick(tenantId);
    if (!lane) {
      await this.#open();
      lane = this.#pick(tenantId);
      if (!lane) throw new Error('no database connection for reads');
    }
    // From here to the statement's write nothing awaits, so nothing can slip in between the binding
    // and the statement on this lane.
    if (lane.tenantId !== tenantId) {
      const rebound = lane;
      rebound.tenantId = tenantId;
      rebound.bound = this.#send(rebound, BIND_SQL, [tenantId]);
      rebound.bound.catch(() => this.#drop(rebound));
    }
    const bound = lane.bound;
    lane.inFlight++;
    try {
      const [, result] = await Promise.all([bound, this.#send(lane, text, values)]);
      return result;
    } catch (err) {
      if (isStalePlan(err)) this.#drop(lane);
      throw err;
    } finally {
      lane.inFlight--;
    }
  }

  /** The open lane that costs least: fewest statements queued, a rebinding counted as REBIND_COST. */
  #pick(tenantId: string): Lane | undefined {
    if (this.#closed) throw new Error('the database handle is closed');
    if (this.#lanes.length < this.#opts.lanes && this.#lanes.length > 0) this.#open().catch(() => {});
    let best: Lane | undefined;
    let bestCost = Number.POSITIVE_INFINITY;
    for (const lane of this.#lanes) {
      const cost = lane.inFlight + (lane.tenantId === tenantId ? 0 : REBIND_COST);
      if (cost < bestCost) {
        best = lane;
        bestCost = cost;
      }
    }
    return best;
  }

  /**
   * Writes one statement on the lane. The statements of one event-loop turn (the lookups of all the
   * requests that arrived together) leave in one write (coalesceWrites).
   * A pg Query built from the text is handed over as is (a config object would be copied per query).
   */
  #send(lane: Lane, text: string, values: readonly unknown[]): Promise<pg.QueryResult> {
    const name = statementName(text);
    const prepare = lane.prepared.has(name) || lane.prepared.size < MAX_PREPARED_PER_LANE;
    if (prepare) lane.prepared.add(name);
    return new Promise((resolve, reject) => {
      const query = new pg.Query(text, values as unknown[], (err, result) => (err ? reject(err) : resolve(result as unknown as pg.QueryResult))) as pg.Query & {
        name?: string;
        queryMode?: 'extended';
      };
      if (prepare) query.name = name;
      else query.queryMode = 'extended';
      lane.client.query(query);
    });
  }

  /** Opens the missing lanes (all of them on first use). */
  #open(): Promise<void> {
    this.#opening ??= (async () => {
      const missing = this.#opts.lanes - this.#lanes.length;
      const opened = await Promise.allSettled(Array.from({ length: missing }, () => this.#connect()));
      for (const o of opened) {
        if (o.status === 'fulfilled') {
          if (this.#closed) await o.value.client.end().catch(() => {});
          else this.#lanes.push(o.value);
        }
      }
      const failed = opened.find((o) => o.status === 'rejected');
      if (this.#lanes.length === 0 && failed) throw failed.reason;
    })().finally(() => {
      this.#opening = null;
    });
    return this.#opening;
  }

  async #connect(): Promise<Lane> {
    const client = new pg.Client({ connectionString: this.#opts.connectionString, pipeline: true, application_name: 'atrium' });
    const lane: Lane = { client, tenantId: undefined, bound: Promise.resolve(), inFlight: 0, prepared: new Set(), closed: false };
    // A lane that loses its server (PostgreSQL restart) is closed; its queued reads fail, new ones open a new lane.
    client.on('error', () => this.#drop(lane));
    client.on('end', () => this.#drop(lane));
    try {
      await client.connect();
      coalesceWrites(client, 'turn');
      await client.query(
        `select set_config('role', '${this.#opts.role}', false), set_config('statement_timeout', '${this.#opts.statementTimeoutMs}', false), set_config('synchronous_commit', 'off', false)`,
      );
    } catch (err) {
      lane.closed = true;
      await client.end().catch(() => {});
      throw err;
    }
    return lane;
  }

  #drop(lane: Lane): void {
    if (lane.closed) return;
    lane.closed = true;
    const at = this.#lanes.indexOf(lane);
    if (at >= 0) this.#lanes.splice(at, 1);
    lane.client.end().catch(() => {});
  }
}
