// `atrium import`: reads a tenant from a source's Data Extraction API and writes it into a target tenant,
// query by query in dependency order, each query's writes and its checkpoint in one transaction (a run
// interrupted anywhere continues from the first query without a checkpoint). Decision 0053.
import { sql } from 'kysely';
import type { SecretBox } from '../platform/auth/hashing.ts';
import type { DatabaseHandle, Trx } from '../platform/db/database.ts';
import { importCustomTables, importWebhookSubscriptions, type NewWebhookSecret } from './carried-along.ts';
import { ImportError, SourceClient, type SourceOptions, type SourceRow, type WaitStats } from './client.ts';
import { IMPORT_TABLES, newRunState, PLACEHOLDER_TABLES, QUERY_IMPORTS, type QueryImport, type RunState, type Values } from './mappings.ts';
import { type NotCarriedOver, notCarriedOverOf } from './not-carried-over.ts';
import { type Download, type PlannedRead, Prefetch, Superseded } from './prefetch.ts';
import { BulkWrites, deleteAll, deleteUnseen, SideLane, writeRows } from './write.ts';

export interface ImportOptions {
  source: SourceOptions;
  /** The target tenant's id. */
  tenantId: string;
  /** ISO time: an incremental pass (ModifiedFrom) for a cut-over. */
  since?: string;
  /** Only these named queries. */
  only?: string[];
  /** Import into a tenant that already holds data (nothing of it is replaced or deleted). */
  merge?: boolean;
  onProgress?: (p: QueryProgress) => void;
  /** A run recorded beforehand (queued by the operator API): this one is worked, continued from its checkpoints. */
  runId?: string;
  /** Seals the new secrets of imported webhook subscriptions; without it they are left out (and said so). */
  webhooks?: { box: SecretBox; allowPrivateNetworks: boolean };
}

export interface QueryProgress {
  namedQuery: string;
  rowsRead: number;
  /** Rows the source said the query has, when known (for the ETA); null when unknown. */
  expected: number | null;
  elapsedMs: number;
  done: boolean;
}

export interface QueryReport {
  namedQuery: string;
  rowsRead: number;
  rowsWritten: number;
  rowsDeleted: number;
  /** Read with ModifiedFrom (--since) rather than in full. */
  incremental: boolean;
  /** Done by an earlier, interrupted run of the same import (its checkpoint). */
  resumed: boolean;
}

export interface ImportReport {
  runId: string;
  source: string;
  tenantId: string;
  since: string | null;
  queries: QueryReport[];
  rowsRead: number;
  /** Rows inserted, changed or deleted: 0 when the target already held the source's rows. */
  changedRows: number;
  waiting: WaitStats;
  /** Webhook subscriptions created by this run (inactive), each with its new secret. */
  webhookSecrets: NewWebhookSecret[];
  /** What this run left out, and why (custom tables or subscriptions the source app may not read…). */
  leftOut: string[];
  notCarriedOver: NotCarriedOver[];
  elapsedMs: number;
}

/** The steps after the named queries, each checkpointed as a query is (they run without --only). */
const CUSTOM_TABLES = 'Custom tables';
const WEBHOOK_SUBSCRIPTIONS = 'Webhook subscriptions';

/** The queries a run reads, in order (--only keeps the order, and refuses a name the import does not know). */
export function plannedQueries(only: string[] | undefined): QueryImport[] {
  if (!only || only.length === 0) return QUERY_IMPORTS;
  const known = new Set(QUERY_IMPORTS.map((q) => q.namedQuery));
  const unknown = only.filter((q) => !known.has(q));
  if (unknown.length) throw new ImportError(`--only: the import does not read ${unknown.join(', ')} (it reads ${[...known].join(', ')})`);
  return QUERY_IMPORTS.filter((q) => only.includes(q.namedQuery));
}

const canonical = (o: unknown): string => JSON.stringify(Object.entries((o ?? {}) as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)));

/** Documents, timesheets, or users beyond the bootstrap Administrator: what makes a target not empty. */
async function holdings(trx: Trx, tenantId: string): Promise<string[]> {
  const row = await sql<{ users: number; timesheets: number; jobs: number; projects: number; estimates: number }>`
    select (select count(*)::int from users where tenant_id = ${tenantId}) as users,
           (select count(*)::int from timesheets where tenant_id = ${tenantId}) as timesheets,
           (select count(*)::int from jobs where tenant_id = ${tenantId}) as jobs,
           (select count(*)::int from projects where tenant_id = ${tenantId}) as projects,
           (select count(*)::int from estimates where tenant_id = ${tenantId}) as estimates`.execute(trx);
  const r = row.rows[0];
  const held: string[] = [];
  if (r.users > 1) held.push(`${r.users} users`);
  for (const k of ['timesheets', 'jobs', 'projects', 'estimates'] as const) if (r[k] > 0) held.push(`${r[k]} ${k}`);
  return held;
}

/**
 * A target's first import: refused when the tenant holds data (unless merge); else its defaults (first
 * company, user types, its Administrator…) give way to the source's rows, children first.
 */
async function replaceDefaults(trx: Trx, tenantId: string, merge: boolean): Promise<void> {
  if (merge) return;
  const held = await holdings(trx, tenantId);
  if (held.length) throw new ImportError(`target tenant ${tenantId} is not empty (${held.join(', ')}); pass --merge to import into it anyway`);
  for (const table of [...IMPORT_TABLES].reverse()) await deleteAll(trx, tenantId, table);
  await sql`delete from user_roles ur where ur.tenant_id = ${tenantId}
              and not exists (select 1 from users u where u.tenant_id = ur.tenant_id and u.id = ur.user_id)`.execute(trx);
}

/**
 * Finds the run to continue (an unfinished run of the same source and options) or starts one. A target
 * never imported into is checked (not empty: refused without merge) and its bootstrap defaults are
 * removed in the same transaction that records the run, so they are replaced by the source's rows.
 */
async function openRun(db: DatabaseHandle, opts: ImportOptions, source: string): Promise<{ runId: string; done: Map<string, QueryReport> }> {
  const options = { since: opts.since ?? null, only: opts.only ?? null, merge: opts.merge ?? false };
  return db.withTenant(opts.tenantId, async (trx) => {
    const previous = await trx
      .selectFrom('import_runs')
      .select(['id', 'status', 'options', 'source'])
      .where('tenant_id', '=', opts.tenantId)
      .orderBy('started_on_utc', 'desc')
      .execute();
    // jsonb keeps its own key order: options compare with their keys sorted.
    const sameOptions = (o: unknown) => canonical(o) === canonical(options);
    const resumable = opts.runId
      ? previous.find((r) => r.id === opts.runId)
      : previous.find((r) => r.source === source && r.status !== 'Completed' && sameOptions(r.options));
    if (opts.runId && !resumable) throw new ImportError(`no import run ${opts.runId} in tenant ${opts.tenantId}`);
    if (resumable) {
      await trx
        .updateTable('import_runs')
        .set({ status: 'Running', error: null })
        .where('tenant_id', '=', opts.tenantId)
        .where('id', '=', resumable.id)
        .execute();
      const checkpoints = await trx
        .selectFrom('import_checkpoints')
        .select(['named_query', 'rows_read', 'rows_written', 'rows_deleted'])
        .where('tenant_id', '=', opts.tenantId)
        .where('run_id', '=', resumable.id)
        .execute();
      const done = new Map<string, QueryReport>();
      for (const c of checkpoints) {
        done.set(c.named_query, {
          namedQuery: c.named_query.split('#')[0],
          rowsRead: c.rows_read,
          rowsWritten: c.rows_written,
          rowsDeleted: c.rows_deleted,
          incremental: opts.since !== undefined,
          resumed: true,
        });
      }
      // A queued run (operator API) is the tenant's first import when no other run came before it.
      if (opts.runId && done.size === 0 && previous.length === 1) await replaceDefaults(trx, opts.tenantId, options.merge);
      return { runId: resumable.id, done };
    }
    if (previous.length === 0) await replaceDefaults(trx, opts.tenantId, options.merge);
    const run = await trx
      .insertInto('import_runs')
      .values({ tenant_id: opts.tenantId, source, options: JSON.stringify(options) })
      .returning('id')
      .executeTakeFirstOrThrow();
    return { runId: run.id, done: new Map() };
  });
}

/** A stage of the target's whose type is Draft (the bootstrap's workflows have one), or null. */
async function draftStage(db: DatabaseHandle, tenantId: string): Promise<string | null> {
  const row = await db.withTenant(tenantId, (trx) =>
    trx
      .selectFrom('workflow_stages as s')
      .innerJoin('workflow_stage_types as t', (j) => j.onRef('t.tenant_id', '=', 's.tenant_id').onRef('t.id', '=', 's.stage_type_id'))
      .select('s.id')
      .where('s.tenant_id', '=', tenantId)
      .where('t.name', '=', 'Draft')
      .orderBy('s.id')
      .executeTakeFirst(),
  );
  return row?.id ?? null;
}

/** The target's document types by class name, full name and name (its own ids until re-keyed to the source's). */
async function documentTypes(db: DatabaseHandle, tenantId: string): Promise<RunState['documentTypes']> {
  const rows = await db.withTenant(tenantId, (trx) =>
    trx.selectFrom('document_types').select(['id', 'name', 'class_name', 'full_name']).where('tenant_id', '=', tenantId).execute(),
  );
  return {
    byClass: new Map(rows.map((r) => [r.class_name, r.id])),
    byFullName: new Map(rows.map((r) => [r.full_name, r.id])),
    byName: new Map(rows.map((r) => [r.name, { id: r.id, className: r.class_name, fullName: r.full_name }])),
  };
}

/** A workflow of the target and its teams by name: what a run continued after a crash finds already imported. */
async function workflowsAndTeams(db: DatabaseHandle, tenantId: string): Promise<{ workflowId: string | null; teams: Map<string, string> }> {
  return db.withTenant(tenantId, async (trx) => {
    const workflow = await trx.selectFrom('workflows').select('id').where('tenant_id', '=', tenantId).orderBy('id').executeTakeFirst();
    const teams = await trx.selectFrom('teams').select(['id', 'name']).where('tenant_id', '=', tenantId).execute();
    return { workflowId: workflow?.id ?? null, teams: new Map(teams.map((t) => [t.name, t.id])) };
  });
}

/** One id of each placeholder table as the target holds it now (RunState.anyId). */
async function anyIds(db: DatabaseHandle, tenantId: string): Promise<RunState['anyId']> {
  const row = await db.withTenant(tenantId, (trx) =>
    sql<RunState['anyId']>`select ${sql.join(
      PLACEHOLDER_TABLES.map((t) => sql`(select id from ${sql.table(t)} where tenant_id = ${tenantId} order by id limit 1) as ${sql.id(t)}`),
    )}`.execute(trx),
  );
  return row.rows[0];
}

export async function runImport(db: DatabaseHandle, opts: ImportOptions): Promise<ImportReport> {
  const started = Date.now();
  if (opts.since !== undefined && Number.isNaN(Date.parse(opts.since))) throw new ImportError(`--since ${JSON.stringify(opts.since)} is not an ISO time`);
  const plan = plannedQueries(opts.only);
  const client = new SourceClient(opts.source);
  // The source's catalogue first: an unreachable source or wrong credentials fail before anything is written.
  const available = new Set(await client.namedQueries());
  const missing = [...new Set(plan.map((q) => q.namedQuery))].filter((q) => !available.has(q));
  if (missing.length) throw new ImportError(`source has no named query ${missing.join(', ')} (404)`);

  const { runId, done } = await openRun(db, opts, client.source);
  const { workflowId, teams } = await workflowsAndTeams(db, opts.tenantId);
  const state = newRunState(await draftStage(db, opts.tenantId), await documentTypes(db, opts.tenantId), workflowId, teams);
  const bulk = await db.withTenant(opts.tenantId, (trx) => BulkWrites.open(trx));
  const reports: QueryReport[] = [];
  const carried = { secrets: [] as NewWebhookSecret[], leftOut: [] as string[] };
  // A query read twice (a second pass) checkpoints under its position.
  const checkpointOf = (q: QueryImport, index: number) => `${q.namedQuery}#${index}`;
  const prefetch = new Prefetch(
    client,
    plan.map((q, index) => (done.has(checkpointOf(q, index)) ? null : plannedRead(q, opts, available, client, state))),
  );
  try {
    for (const [index, q] of plan.entries()) {
      const checkpoint = checkpointOf(q, index);
      const prior = done.get(checkpoint);
      if (prior) {
        reports.push(prior);
        continue;
      }
      state.anyId = await anyIds(db, opts.tenantId);
      reports.push(await importQuery(db, client, opts, runId, checkpoint, q, state, await prefetch.take(index), bulk));
      await prefetch.done(index);
    }
    if (!opts.only?.length) {
      for (const [i, step] of [CUSTOM_TABLES, WEBHOOK_SUBSCRIPTIONS].entries()) {
        const checkpoint = `${step}#${plan.length + i}`;
        const prior = done.get(checkpoint);
        if (prior) reports.push(prior);
        else reports.push(await carryAlong(db, client, opts, runId, checkpoint, step, carried));
      }
    }
  } catch (err) {
    await db
      .withTenant(opts.tenantId, (trx) =>
        trx
          .updateTable('import_runs')
          .set({ status: 'Failed', error: (err as Error).message.slice(0, 1000), finished_on_utc: new Date(), credentials_sealed: null })
          .where('tenant_id', '=', opts.tenantId)
          .where('id', '=', runId)
          .execute(),
      )
      .catch(() => {});
    throw err;
  } finally {
    await prefetch.close();
  }
  const report: ImportReport = {
    runId,
    source: client.source,
    tenantId: opts.tenantId,
    since: opts.since ?? null,
    queries: reports,
    rowsRead: reports.reduce((n, r) => n + r.rowsRead, 0),
    changedRows: reports.reduce((n, r) => n + r.rowsWritten + r.rowsDeleted, 0),
    waiting: { ...client.waits },
    webhookSecrets: carried.secrets,
    leftOut: [...state.leftOut, ...carried.leftOut],
    notCarriedOver: await notCarriedOverOf(db, opts.tenantId),
    elapsedMs: Date.now() - started,
  };
  await db.withTenant(opts.tenantId, (trx) =>
    trx
      .updateTable('import_runs')
      // The new secrets are answered once, to the caller; the stored report masks them.
      .set({
        status: 'Completed',
        report: JSON.stringify({ ...report, webhookSecrets: report.webhookSecrets.map((w) => ({ ...w, secret: '********' })) }),
        finished_on_utc: new Date(),
        credentials_sealed: null,
      })
      .where('tenant_id', '=', opts.tenantId)
      .where('id', '=', runId)
      .execute(),
  );
  return report;
}

/** What the prefetch reads of a planned query: from --since where it takes ModifiedFrom, with its count where the source has one. */
function plannedRead(q: QueryImport, opts: ImportOptions, available: Set<string>, client: SourceClient, state: RunState): PlannedRead {
  const incremental = opts.since !== undefined && q.modifiedFrom === true;
  const countQuery = `${q.namedQuery}Count`;
  return {
    namedQuery: q.namedQuery,
    key: q.key,
    parameters: incremental ? { ModifiedFrom: opts.since } : {},
    countQuery: available.has(countQuery) ? countQuery : null,
    prepare: q.prepare ? () => q.prepare!(client, state) : undefined,
  };
}

/** Rows handed to the target per statement. */
const BATCH_ROWS = 2000;

/**
 * One named query: its rows (followed as the prefetch downloads them, or read in pages) written in
 * batches, one batch written while the next is parsed; the unseen deleted, checkpointed — one transaction.
 */
async function importQuery(
  db: DatabaseHandle,
  client: SourceClient,
  opts: ImportOptions,
  runId: string,
  checkpoint: string,
  q: QueryImport,
  state: ReturnType<typeof newRunState>,
  download: Download,
  bulk: BulkWrites | null,
): Promise<QueryReport> {
  const incremental = opts.since !== undefined && q.modifiedFrom === true;
  const parameters = incremental ? { ModifiedFrom: opts.since } : {};
  const started = Date.now();
  const report = await db.withTenant(opts.tenantId, async (trx): Promise<QueryReport> => {
    let seen = q.writes.map(() => new Set<string>());
    let rowsRead = 0;
    let rowsWritten = 0;
    let rowsDeleted = 0;
    await q.before?.(trx, opts.tenantId, state);
    const expected = await download.expected;
    // A batch handed to the side lane writes its sideLane tables there, the rest in the query's transaction.
    const onBatch = async (rows: SourceRow[], lane?: SideLane) => {
      for (const [i, write] of q.writes.entries()) {
        const values: Values[] = [];
        for (const row of rows) {
          const v = write.values(row, state);
          if (v === null) continue;
          for (const one of Array.isArray(v) ? v : [v]) {
            if (typeof one.id !== 'string' || !one.id) continue;
            values.push(one);
            seen[i].add(one.id);
          }
        }
        // Awaited before it is added: two batches (the query's and the side lane's) may be counting at once.
        const written = await (lane && write.sideLane
          ? lane.write((side) => writeRows(side, opts.tenantId, write, values, bulk))
          : writeRows(trx, opts.tenantId, write, values, bulk));
        rowsWritten += written;
      }
      rowsRead += rows.length;
      opts.onProgress?.({ namedQuery: q.namedQuery, rowsRead, expected, elapsedMs: Date.now() - started, done: false });
    };
    // Tables marked sideLane have every other batch written by a second transaction (decision 0073).
    const laned = q.writes.some((w) => w.sideLane);
    let lane: SideLane | undefined;
    try {
      for (;;) {
        const spool = await download.spool();
        if (spool === 'paged') {
          await client.readPages(q.namedQuery, q.key, parameters, (rows) => onBatch(rows));
          break;
        }
        // At most one batch per transaction is written at a time (in order) while the next is parsed.
        let writing: Promise<void> = Promise.resolve();
        let sideWriting: Promise<void> = Promise.resolve();
        let batch = 0;
        try {
          for await (const rows of spool.batches(q.namedQuery, BATCH_ROWS)) {
            if (laned && batch++ % 2 === 1) {
              await sideWriting;
              lane ??= new SideLane(db, opts.tenantId);
              sideWriting = onBatch(rows, lane);
              sideWriting.catch(() => {});
            } else {
              await writing;
              writing = onBatch(rows);
              writing.catch(() => {});
            }
          }
          await writing;
          await sideWriting;
          break;
        } catch (err) {
          await writing.catch(() => {});
          await sideWriting.catch(() => {});
          if (!(err instanceof Superseded)) throw err;
          // The source's stream was cut and is read again from the start: what it shows is counted anew
          // (the rows written already are upserts, written again unchanged).
          seen = q.writes.map(() => new Set<string>());
          rowsRead = 0;
        }
      }
      // Committed before the query's own transaction deletes what it did not see and checkpoints.
      await lane?.close(true);
    } catch (err) {
      await lane?.close(false);
      throw err;
    }
    if (!incremental && !opts.merge) {
      for (const [i, write] of q.writes.entries()) {
        if (write.complete) rowsDeleted += await deleteUnseen(trx, opts.tenantId, write.table, write.complete.scope, seen[i]);
      }
    }
    await trx
      .insertInto('import_checkpoints')
      .values({ tenant_id: opts.tenantId, run_id: runId, named_query: checkpoint, rows_read: rowsRead, rows_written: rowsWritten, rows_deleted: rowsDeleted })
      .execute();
    await trx
      .updateTable('import_runs')
      .set({ progress: JSON.stringify({ lastQuery: q.namedQuery, rowsRead }) })
      .where('tenant_id', '=', opts.tenantId)
      .where('id', '=', runId)
      .execute();
    return { namedQuery: q.namedQuery, rowsRead, rowsWritten, rowsDeleted, incremental, resumed: false };
  });
  // Done once committed with its checkpoint.
  opts.onProgress?.({ namedQuery: q.namedQuery, rowsRead: report.rowsRead, expected: report.rowsRead, elapsedMs: Date.now() - started, done: true });
  return report;
}

/** Custom tables or webhook subscriptions: read, written and checkpointed in one transaction, as a query is. */
async function carryAlong(
  db: DatabaseHandle,
  client: SourceClient,
  opts: ImportOptions,
  runId: string,
  checkpoint: string,
  step: string,
  carried: { secrets: NewWebhookSecret[]; leftOut: string[] },
): Promise<QueryReport> {
  const started = Date.now();
  const report = await db.withTenant(opts.tenantId, async (trx): Promise<QueryReport> => {
    let counts: { rowsRead: number; rowsWritten: number; rowsDeleted: number } = { rowsRead: 0, rowsWritten: 0, rowsDeleted: 0 };
    if (step === CUSTOM_TABLES) {
      // Custom tables are always read in full (no ModifiedFrom): rows the source lost go, --since or not.
      const r = await importCustomTables(trx, client, opts.tenantId, !opts.merge);
      if ('skipped' in r) carried.leftOut.push(`${step}: ${r.skipped}`);
      else counts = r;
    } else if (!opts.webhooks) {
      carried.leftOut.push(`${step}: no secret key to seal their new secrets with`);
    } else {
      const r = await importWebhookSubscriptions(trx, client, opts.tenantId, opts.webhooks);
      if ('skipped' in r) carried.leftOut.push(`${step}: ${r.skipped}`);
      else {
        counts = r;
        carried.secrets.push(...r.secrets);
        carried.leftOut.push(...r.leftOut.map((l) => `${step}: ${l}`));
      }
    }
    await trx
      .insertInto('import_checkpoints')
      .values({
        tenant_id: opts.tenantId,
        run_id: runId,
        named_query: checkpoint,
        rows_read: counts.rowsRead,
        rows_written: counts.rowsWritten,
        rows_deleted: counts.rowsDeleted,
      })
      .execute();
    return { namedQuery: step, ...counts, incremental: false, resumed: false };
  });
  opts.onProgress?.({ namedQuery: step, rowsRead: report.rowsRead, expected: report.rowsRead, elapsedMs: Date.now() - started, done: true });
  return report;
}
