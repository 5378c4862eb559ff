// One user-feed data file from download to its folder: the name rules, the claim (an advisory lock on the
// tenant and the content's hash, so two workers never process the same content), each row in its own
// transaction with its outcome, the freelancers' second pass, then the results file, the move, and the
// error e-mail. A file already processed (the same content, whatever its name) is only moved again.
import { createHash } from 'node:crypto';
import path from 'node:path/posix';
import { sql } from 'kysely';
import type SftpClient from 'ssh2-sftp-client';
import type { Actor } from '../domain/writes.ts';
import type { DatabaseHandle, Trx } from '../platform/db/database.ts';
import type { ExportStore } from '../platform/export-store.ts';
import { type Mailer, notificationMailbox } from '../platform/mail/mailer.ts';
import { type FeedFileName, type ReadLimits, type ReadRow, readRows, UnreadableFile } from './records.ts';
import { activate, applyRow, type LookupCache, missingMasterData, type Outcome, RowError, type RowOutcome } from './rows.ts';
import { waves } from './waves.ts';

export interface FeedSettings {
  ftpPath: string;
  ftpToPathSuccess: string;
  ftpToPathFailure: string;
}

export interface FeedDeps {
  db: DatabaseHandle;
  mailer: Mailer;
  tenantId: string;
  actor: Actor;
  runId: string;
  dryRun: boolean;
  settings: FeedSettings;
  /** Every SFTP call goes through this (one connection per run). */
  sftp: <T>(fn: (sftp: SftpClient) => Promise<T>) => Promise<T>;
  /** Where a copy of each results file is kept (local directory or object storage), for any API process to serve. */
  store: ExportStore;
  limits: FeedLimits;
}

/** The bounds of one file (docs/operations.md, "Limits: user feed"). */
export interface FeedLimits extends ReadLimits {
  /** Bytes a file may hold (ATRIUM_USER_FEED_MAX_FILE_BYTES): larger files fail unread. */
  maxFileBytes: number;
}

/** A file larger than the limit: the reason its run and results file give. */
export const tooLarge = (size: number, limits: FeedLimits) =>
  `the file is ${size.toLocaleString('en-US')} bytes; the limit is ${limits.maxFileBytes.toLocaleString('en-US')} (ATRIUM_USER_FEED_MAX_FILE_BYTES)`;

/**
 * The file's bytes, read as a stream and stopped at the size limit (a file may grow after the listing);
 * null when it is gone. A file that cannot be read is an UnreadableFile, failing that file alone.
 */
async function download(deps: FeedDeps, file: { path: string }): Promise<Buffer | null> {
  return deps.sftp(async (s) => {
    if (!(await s.exists(file.path))) return null;
    const chunks: Buffer[] = [];
    let size = 0;
    const stream = s.createReadStream(file.path);
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > deps.limits.maxFileBytes) throw new UnreadableFile(tooLarge(size, deps.limits));
        chunks.push(chunk);
      }
    } catch (err) {
      if (err instanceof UnreadableFile) throw err;
      throw new UnreadableFile(`the file cannot be read: ${(err as Error).message}`);
    } finally {
      // Closing the handle is a request of its own, answered later: wait for it, and let it fail quietly. Left
      // pending, it fails when the run's connection ends ("No response from server") as an 'error' event with
      // no listener: an uncaught exception of the whole process.
      stream.on('error', () => {});
      if (!stream.closed)
        await new Promise<void>((resolve) => {
          stream.once('close', () => resolve());
          stream.once('error', () => resolve());
          stream.destroy();
        });
    }
    return Buffer.concat(chunks, size);
  });
}

/** The export-store key of a run's copy of a results file. */
export const resultCopyKey = (tenantId: string, runId: string, resultName: string) => `user-feed/${tenantId}/${runId}/${resultName}`;

export interface RowReport {
  row: number;
  externalId: string | null;
  outcome: Outcome;
  userId: string | null;
  message: string | null;
}

export interface FileSummary {
  name: string;
  status: 'Succeeded' | 'Failed' | 'Skipped';
  message: string | null;
  /** Set when this content was processed before (under this or another name): nothing changed. */
  alreadyProcessed: boolean;
  fileId: string | null;
  rows: number;
  created: number;
  updated: number;
  deactivated: number;
  unchanged: number;
  skipped: number;
  failed: number;
  movedTo: string | null;
  resultFile: string | null;
  notified: boolean;
  /** A dry run's rows (a real run's are in user_feed_rows). */
  details?: RowReport[];
}

const COUNTED: Record<Outcome, keyof FileSummary> = {
  Created: 'created',
  Updated: 'updated',
  Deactivated: 'deactivated',
  Unchanged: 'unchanged',
  Skipped: 'skipped',
  Failed: 'failed',
};

function summary(name: string, fields: Partial<FileSummary>): FileSummary {
  return {
    name,
    status: 'Succeeded',
    message: null,
    alreadyProcessed: false,
    fileId: null,
    rows: 0,
    created: 0,
    updated: 0,
    deactivated: 0,
    unchanged: 0,
    skipped: 0,
    failed: 0,
    movedTo: null,
    resultFile: null,
    notified: false,
    ...fields,
  };
}

function count(s: FileSummary, outcomes: { outcome: Outcome }[]): FileSummary {
  for (const o of outcomes) (s[COUNTED[o.outcome]] as number)++;
  s.rows = outcomes.length;
  return s;
}

class DryRunRollback extends Error {}

/** A row failed after it wrote: the batch is redone with a savepoint per row. */
class NeedsSavepoints extends Error {}

const failed = (message: string): RowOutcome => ({ outcome: 'Failed', userId: null, message, pendingActivation: false });

/**
 * Applies a row inside the caller's transaction. With `savepoints` its failure rolls back only its own
 * changes. Without, a RowError (always thrown before the row writes) fails the row alone, and any later
 * failure throws NeedsSavepoints: the caller rolls the batch back and redoes it with savepoints. Most rows
 * never fail after writing, so most batches save the two round trips of a savepoint per row.
 */
async function applyOne(trx: Trx, actor: Actor, row: ReadRow, cache: LookupCache, savepoints: boolean): Promise<RowOutcome> {
  if (row.error) return failed(row.error);
  if (!savepoints) {
    try {
      return await applyRow(trx, actor, row.record, cache);
    } catch (err) {
      if (err instanceof RowError) return failed(err.message);
      throw new NeedsSavepoints((err as Error).message, { cause: err });
    }
  }
  await sql`savepoint feed_row`.execute(trx);
  try {
    const out = await applyRow(trx, actor, row.record, cache);
    await sql`release savepoint feed_row`.execute(trx);
    return out;
  } catch (err) {
    await sql`rollback to savepoint feed_row`.execute(trx);
    if (err instanceof RowError || (err as { status?: number }).status !== undefined) return failed((err as Error).message);
    throw err;
  }
}

export async function processFile(deps: FeedDeps, file: { name: string; path: string }, name: FeedFileName | { error: string }): Promise<FileSummary> {
  if ('error' in name) {
    // Another run may have moved the file since the listing: then it is that run's.
    if (!(await deps.sftp((s) => s.exists(file.path)))) return gone(file.name);
    return deps.dryRun ? summary(file.name, { status: 'Failed', message: name.error }) : finishUnclaimed(deps, file, name.error);
  }
  let bytes: Buffer | null;
  try {
    bytes = await download(deps, file);
  } catch (err) {
    if (!(err instanceof UnreadableFile)) throw err;
    return unreadable(deps, file, err.message, name);
  }
  if (!bytes) return gone(file.name);
  let rows: ReadRow[];
  try {
    rows = await readRows(bytes, deps.limits);
  } catch (err) {
    if (!(err instanceof UnreadableFile)) throw err;
    if (deps.dryRun) return summary(file.name, { status: 'Failed', message: err.message });
    return withFileClaim(deps, file, bytes, name, async (fileId) => {
      await setFileStatus(deps, fileId, 'Failed', err.message);
      return fileId;
    });
  }
  if (deps.dryRun) return dryRun(deps, file.name, rows);
  return withFileClaim(deps, file, bytes, name, async (fileId) => {
    await applyRows(deps, fileId, rows);
    const failed = await deps.db.withTenant(deps.tenantId, (trx) =>
      trx
        .selectFrom('user_feed_rows')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('file_id', '=', fileId)
        .where('outcome', '=', 'Failed')
        .executeTakeFirstOrThrow(),
    );
    const n = Number(failed.n);
    await setFileStatus(deps, fileId, n > 0 ? 'Failed' : 'Succeeded', n > 0 ? `${n} of ${rows.length} rows failed` : null);
    return fileId;
  });
}

const gone = (name: string) => summary(name, { status: 'Skipped', message: 'the file was gone: another run took it' });

/** A file that cannot be read (too large, or the server refuses it): failed whole, moved with its reason, the run goes on. */
export async function unreadable(deps: FeedDeps, file: { name: string; path: string }, reason: string, name: FeedFileName): Promise<FileSummary> {
  if (deps.dryRun) return summary(file.name, { status: 'Failed', message: reason });
  return finishUnclaimed(deps, file, reason, `SR_${name.body}_${name.suffix}.json`);
}

/** A dry run: every row applied in one transaction that is rolled back, in the real run's order, so rows see what they would see. */
async function dryRun(deps: FeedDeps, name: string, rows: ReadRow[]): Promise<FileSummary> {
  const reports: RowReport[] = [];
  try {
    await deps.db.withTenant(deps.tenantId, async (trx) => {
      const pending: RowReport[] = [];
      const cache: LookupCache = new Map();
      // The real run's order: a row after the row of its manager, wherever that is in the file.
      const plan = waves(rows);
      for (const row of [...plan.concurrent.flat(), ...plan.sequential]) {
        const o = await applyOne(trx, deps.actor, row, cache, true);
        const report = { row: row.number, externalId: row.record.externalId ?? null, outcome: o.outcome, userId: o.userId, message: o.message };
        reports.push(report);
        if (o.pendingActivation) pending.push(report);
      }
      for (const p of pending) await activate(trx, deps.actor, p.userId as string);
      throw new DryRunRollback();
    });
  } catch (err) {
    if (!(err instanceof DryRunRollback)) throw err;
  }
  reports.sort((a, b) => a.row - b.row);
  const s = count(summary(name, { details: reports }), reports);
  if (s.failed > 0) Object.assign(s, { status: 'Failed', message: `${s.failed} of ${s.rows} rows would fail` });
  return s;
}

/** Rows per transaction: each row's changes and outcome commit together; a crash redoes at most the batches in flight. */
const BATCH = 100;

/** Connections a file's independent batches run on at once (the tenant pool holds 20). */
const LANES = 4;

/** Deadlock and serialization failures: the batch rolled back whole and is run again. */
const RETRYABLE = new Set(['40P01', '40001']);

/** One batch in one transaction, its rows' outcomes committed with their changes. */
async function applyBatch(deps: FeedDeps, fileId: string, batch: ReadRow[], cache: LookupCache): Promise<void> {
  for (let attempt = 0, savepoints = false; ; attempt++) {
    try {
      await deps.db.withTenant(deps.tenantId, async (trx) => {
        const values = [];
        for (const row of batch) {
          const o = await applyOne(trx, deps.actor, row, cache, savepoints);
          values.push({
            tenant_id: deps.tenantId,
            file_id: fileId,
            row_number: row.number,
            external_id: row.record.externalId ?? null,
            outcome: o.outcome,
            user_id: o.userId,
            message: o.message,
            pending_activation: o.pendingActivation,
          });
        }
        await trx.insertInto('user_feed_rows').values(values).execute();
      });
      return;
    } catch (err) {
      // Ids read inside the rolled-back transaction may name rows that no longer exist.
      cache.clear();
      if (err instanceof NeedsSavepoints && !savepoints) savepoints = true;
      else if (!(RETRYABLE.has((err as { code?: string }).code ?? '') && attempt < 5)) throw err;
    }
  }
}

async function sequentially(deps: FeedDeps, fileId: string, rows: ReadRow[], cache: LookupCache): Promise<void> {
  for (let i = 0; i < rows.length; i += BATCH) await applyBatch(deps, fileId, rows.slice(i, i + BATCH), cache);
}

/**
 * Rows that do not depend on each other, in batches on LANES connections. The typology groups and
 * typologies they would create are created first, each by the first row needing it, one row after another
 * (two transactions must not both create one); a row that fails takes its creations with it, so the scan repeats.
 */
async function concurrently(deps: FeedDeps, fileId: string, rows: ReadRow[], cache: LookupCache): Promise<void> {
  let rest = rows;
  for (;;) {
    const memo = new Map<string, string | null>();
    const seen = new Set<string>();
    const creators = new Set<ReadRow>();
    await deps.db.withTenant(deps.tenantId, async (trx) => {
      for (const row of rest) {
        if (row.error) continue;
        for (const key of await missingMasterData(trx, row.record, memo))
          if (!seen.has(key)) {
            seen.add(key);
            creators.add(row);
          }
      }
    });
    if (creators.size === 0) break;
    await sequentially(
      deps,
      fileId,
      rest.filter((r) => creators.has(r)),
      cache,
    );
    rest = rest.filter((r) => !creators.has(r));
  }
  const batches: ReadRow[][] = [];
  for (let i = 0; i < rest.length; i += BATCH) batches.push(rest.slice(i, i + BATCH));
  let next = 0;
  let failure: unknown = null;
  const lane = async () => {
    // Each lane its own cache: one lane's rollback must not leave ids another lane read.
    const own: LookupCache = new Map(cache);
    while (failure === null && next < batches.length) {
      const batch = batches[next++];
      try {
        await applyBatch(deps, fileId, batch, own);
      } catch (err) {
        failure ??= err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(LANES, batches.length) }, lane));
  if (failure !== null) throw failure;
}

/**
 * The rows not yet done: wave by wave (a row naming a manager from the file after that manager's row), each
 * wave's batches on several connections, then the rows that keep the file's order, then the second pass.
 */
async function applyRows(deps: FeedDeps, fileId: string, rows: ReadRow[]): Promise<void> {
  const done = new Set(
    (await deps.db.withTenant(deps.tenantId, (trx) => trx.selectFrom('user_feed_rows').select('row_number').where('file_id', '=', fileId).execute())).map(
      (r) => r.row_number,
    ),
  );
  const todo = rows.filter((r) => !done.has(r.number));
  const cache: LookupCache = new Map();
  const plan = waves(todo);
  for (const wave of plan.concurrent) await concurrently(deps, fileId, wave, cache);
  await sequentially(deps, fileId, plan.sequential, cache);
  const pending = await deps.db.withTenant(deps.tenantId, (trx) =>
    trx
      .selectFrom('user_feed_rows')
      .select(['row_number', 'user_id'])
      .where('file_id', '=', fileId)
      .where('pending_activation', '=', true)
      .orderBy('row_number')
      .execute(),
  );
  for (const p of pending) {
    await deps.db.withTenant(deps.tenantId, async (trx) => {
      let failure: string | null = null;
      await sql`savepoint feed_row`.execute(trx);
      try {
        await activate(trx, deps.actor, p.user_id as string);
      } catch (err) {
        await sql`rollback to savepoint feed_row`.execute(trx);
        failure = `created inactive, not activated: ${(err as Error).message}`;
      }
      await trx
        .updateTable('user_feed_rows')
        .set(failure ? { pending_activation: false, outcome: 'Failed', message: failure } : { pending_activation: false })
        .where('file_id', '=', fileId)
        .where('row_number', '=', p.row_number)
        .execute();
    });
  }
}

async function setFileStatus(deps: FeedDeps, fileId: string, status: 'Succeeded' | 'Failed', message: string | null): Promise<void> {
  await deps.db.withTenant(deps.tenantId, (trx) =>
    trx.updateTable('user_feed_files').set({ status, message, finished_on_utc: new Date(), run_id: deps.runId }).where('id', '=', fileId).execute(),
  );
}

/**
 * Claims the content (advisory lock on tenant + SHA-256, held while this worker works on it), runs `work`
 * unless the content is already finished, then writes the results file, moves the file and mails on errors.
 */
async function withFileClaim(
  deps: FeedDeps,
  file: { name: string; path: string },
  bytes: Buffer,
  name: FeedFileName,
  work: (fileId: string) => Promise<string>,
): Promise<FileSummary> {
  const sha = createHash('sha256').update(bytes).digest('hex');
  const lockKey = `${deps.tenantId}:${sha}`;
  return deps.db.kysely.connection().execute(async (conn) => {
    const { rows: lock } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(hashtext('atrium-user-feed'), hashtext(${lockKey})) as ok`.execute(conn);
    if (!lock[0].ok) return summary(file.name, { status: 'Skipped', message: 'another worker is processing this content' });
    try {
      const claim = await deps.db.withTenant(deps.tenantId, async (trx) => {
        await trx
          .insertInto('user_feed_files')
          .values({ tenant_id: deps.tenantId, content_sha256: sha, file_name: file.name, run_id: deps.runId })
          .onConflict((oc) => oc.columns(['tenant_id', 'content_sha256']).doNothing())
          .execute();
        return trx.selectFrom('user_feed_files').select(['id', 'status', 'file_name']).where('content_sha256', '=', sha).executeTakeFirstOrThrow();
      });
      const already = claim.status !== 'Processing';
      if (!already) await work(claim.id);
      return await finishClaimed(deps, file, name, claim.id, already ? `already processed as ${claim.file_name}; nothing changed` : null);
    } finally {
      await sql`select pg_advisory_unlock(hashtext('atrium-user-feed'), hashtext(${lockKey}))`.execute(conn);
    }
  });
}

interface ResultDoc {
  data_results: { status: 'SUCCEEDED' | 'FAILED'; message: string; errors: { uid: string; error: string }[] };
}

async function finishClaimed(
  deps: FeedDeps,
  file: { name: string; path: string },
  name: FeedFileName,
  fileId: string,
  already: string | null,
): Promise<FileSummary> {
  const { record, rows } = await deps.db.withTenant(deps.tenantId, async (trx) => ({
    record: await trx.selectFrom('user_feed_files').selectAll().where('id', '=', fileId).executeTakeFirstOrThrow(),
    rows: await trx
      .selectFrom('user_feed_rows')
      .select(['row_number', 'external_id', 'outcome', 'message'])
      .where('file_id', '=', fileId)
      .orderBy('row_number')
      .execute(),
  }));
  const failed = record.status === 'Failed';
  const s = already
    ? summary(file.name, { alreadyProcessed: true, message: already, rows: rows.length })
    : count(summary(file.name, { message: record.message }), rows as { outcome: Outcome }[]);
  s.fileId = fileId;
  s.status = failed ? 'Failed' : 'Succeeded';
  const errors = rows.filter((r) => r.outcome === 'Failed').map((r) => ({ uid: r.external_id ?? `row ${r.row_number}`, error: r.message ?? 'failed' }));
  const noManager = rows.filter((r) => r.message?.startsWith('created without a manager')).length;
  const message = [record.message ?? `${rows.length} rows processed`, noManager > 0 ? `${noManager} users created without a manager` : null]
    .filter(Boolean)
    .join('; ');
  const doc: ResultDoc = { data_results: { status: failed ? 'FAILED' : 'SUCCEEDED', message, errors } };
  Object.assign(s, await placeFile(deps, file, `SR_${name.body}_${name.suffix}.json`, failed, doc));
  if (failed && !record.notified) {
    s.notified = await notify(deps, file.name, message, errors);
    if (s.notified)
      await deps.db.withTenant(deps.tenantId, (trx) => trx.updateTable('user_feed_files').set({ notified: true }).where('id', '=', fileId).execute());
  } else s.notified = record.notified;
  return s;
}

/** A file whose name breaks the rules, or that cannot be read: failed whole, never claimed (its rows are not read). */
async function finishUnclaimed(
  deps: FeedDeps,
  file: { name: string; path: string },
  reason: string,
  resultName = `SR_${file.name.replace(/\.csv$/i, '')}.json`,
): Promise<FileSummary> {
  const doc: ResultDoc = { data_results: { status: 'FAILED', message: reason, errors: [] } };
  const s = summary(file.name, {
    status: 'Failed',
    message: reason,
    ...(await placeFile(deps, file, resultName, true, doc)),
  });
  s.notified = await notify(deps, file.name, reason, []);
  return s;
}

/** The results file first, then the file itself, both into the success or failure folder. */
async function placeFile(deps: FeedDeps, file: { path: string; name: string }, resultName: string, failed: boolean, doc: ResultDoc) {
  const folder = failed ? deps.settings.ftpToPathFailure : deps.settings.ftpToPathSuccess;
  const resultFile = path.join(folder, resultName);
  const movedTo = path.join(folder, file.name);
  const bytes = Buffer.from(`${JSON.stringify(doc, null, 2)}\n`);
  await deps.sftp(async (s) => {
    if (!(await s.exists(folder))) await s.mkdir(folder, true);
    await s.put(bytes, resultFile);
    // Gone: another run holding the same content moved it already.
    if (!(await s.exists(file.path))) return;
    if (await s.exists(movedTo)) await s.delete(movedTo);
    await s.rename(file.path, movedTo);
  });
  await deps.store.put(
    resultCopyKey(deps.tenantId, deps.runId, resultName),
    (async function* () {
      yield bytes;
    })(),
    AbortSignal.timeout(60_000),
  );
  return { resultFile, movedTo };
}

/** The error e-mail to the Notifications mailbox; false when there is no mailbox or no SMTP server. */
async function notify(deps: FeedDeps, fileName: string, message: string, errors: { uid: string; error: string }[]): Promise<boolean> {
  const to = await deps.db.withTenant(deps.tenantId, (trx) => notificationMailbox(trx));
  const shown = errors.slice(0, 500);
  const lines = [
    `The user feed could not fully process ${fileName}: ${message}.`,
    '',
    ...(shown.length ? ['Failed rows (externalId: reason):', ...shown.map((e) => `- ${e.uid}: ${e.error}`)] : []),
    ...(errors.length > shown.length ? [`… and ${errors.length - shown.length} more (see the results file)`] : []),
  ];
  try {
    return await deps.mailer.send({ to, subject: `User feed: ${fileName} failed`, text: `${lines.join('\n')}\n`, fromName: 'Atrium user feed' });
  } catch {
    // Not sent: the file stays marked not notified, and the summary says so.
    return false;
  }
}
