// The user feed's action type, UserFeed: the spec's scheduled automation (read SFTP-HRFEED, list the Data
// directory, each file's rows, move, notify on errors) as one built-in action of the automations engine.
// Passed to every context's automations (USER_FEED_ACTIONS, added by server.ts's createContext in every
// process role), so the engine validates and runs it like its own types.
import path from 'node:path/posix';
import { ActionError, type Handler, type HttpRequestValue, type SurfaceAction, withSftpServer } from '../automations/service.ts';
import { getConfigurationKey, type JsonObject } from '../integration/service.ts';
import { isUuid } from '../platform/db/database.ts';
import { HttpProblem } from '../platform/errors.ts';
import { exportStore } from '../platform/export-store.ts';
import { observeUserFeedRun } from '../platform/metrics.ts';
import { type FeedDeps, type FileSummary, processFile, tooLarge, unreadable } from './process-file.ts';
import { compareFileNames, type FeedFileName, parseFileName } from './records.ts';
import { heartbeat } from './sweep.ts';

export const USER_FEED_ACTION = 'UserFeed';
export const SFTP_HRFEED_KEY = 'SFTP-HRFEED';
export const DEFAULT_FILE_NAME_CONTAINS = 'AD_UserAccounts_';

const str = (v: unknown): string => (typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '');

const userFeed: Handler = async (call) => {
  const run = call.run;
  const { db, box, mailer } = run.services;
  const tenantId = run.tenantId;
  const request = call.scope('#HttpRequest').value as HttpRequestValue | undefined;
  const body = (request?.Body && typeof request.Body === 'object' ? request.Body : {}) as Record<string, unknown>;
  const dryRun = typeof body.dryRun === 'boolean' ? body.dryRun : call.bool('dryRun');
  const trigger = body.FireTimeUtc ? 'schedule' : str(body.trigger) || 'manual';

  let key: JsonObject;
  try {
    key = (await db.withTenant(tenantId, (trx) => getConfigurationKey(trx, box, SFTP_HRFEED_KEY, true))).value;
  } catch (err) {
    if (err instanceof HttpProblem && err.status === 404) throw new ActionError(`the configuration key ${SFTP_HRFEED_KEY} is missing`);
    throw err;
  }
  for (const name of ['ftpPassword', 'ftpPrivateKey', 'ftpPrivateKeyFile'])
    if (typeof key[name] === 'string' && key[name] !== '') run.secrets.add(key[name] as string);
  const ftpPath = str(key.ftpPath);
  const missing = ['ftpHostIp', 'ftpUsername', 'ftpPath', 'ftpToPathSuccess', 'ftpToPathFailure'].filter((k) => str(key[k]) === '');
  // No credential: said before any connection is opened (an SSH login without one only fails at the server).
  if (!['ftpPassword', 'ftpPrivateKey', 'ftpPrivateKeyFile'].some((k) => typeof key[k] === 'string' && key[k] !== ''))
    missing.push('ftpPassword (or ftpPrivateKey)');
  if (missing.length) throw new ActionError(`${SFTP_HRFEED_KEY} lacks ${missing.join(', ')}`);
  const server = {
    ftpHostIp: str(key.ftpHostIp),
    ftpUsername: str(key.ftpUsername),
    ftpPassword: key.ftpPassword,
    ftpPrivateKey: key.ftpPrivateKey ?? key.ftpPrivateKeyFile,
  };
  const contains = str(key.fileNameContains) || DEFAULT_FILE_NAME_CONTAINS;

  const runRow = await db.withTenant(tenantId, (trx) =>
    trx
      .insertInto('user_feed_runs')
      .values({
        tenant_id: tenantId,
        // The run-now route names the feed run beforehand, so it can answer with it whatever the run's end.
        ...(isUuid(str(body.userFeedRunId)) ? { id: str(body.userFeedRunId) } : {}),
        automation_id: run.automation.id,
        trigger,
        dry_run: dryRun,
      })
      .returning('id')
      .executeTakeFirstOrThrow(),
  );
  const deps: FeedDeps = {
    db,
    mailer,
    tenantId,
    actor: { tenantId, userId: run.automation.runAsUserId },
    runId: runRow.id,
    dryRun,
    settings: { ftpPath, ftpToPathSuccess: str(key.ftpToPathSuccess), ftpToPathFailure: str(key.ftpToPathFailure) },
    sftp: (fn) => withSftpServer(call, server, fn),
    store: exportStore(run.services.config),
    limits: { maxFileBytes: run.services.config.userFeedMaxFileBytes, maxRows: run.services.config.userFeedMaxRows },
  };
  const files: FileSummary[] = [];
  let error: string | null = null;
  const beat = heartbeat(db, tenantId, runRow.id);
  try {
    const listed = await deps.sftp((s) => s.list(ftpPath));
    const named = listed
      .filter((f) => f.type === '-' && f.name.includes(contains))
      .map((f) => ({ name: f.name, path: path.join(ftpPath, f.name), size: f.size, parsed: parseFileName(f.name) }));
    // Misnamed files first (they only move), then the data files in the exchange's order.
    named.sort((a, b) => {
      const ea = 'error' in a.parsed;
      const eb = 'error' in b.parsed;
      if (ea || eb) return ea === eb ? (a.name < b.name ? -1 : 1) : ea ? -1 : 1;
      return compareFileNames((a.parsed as { name: FeedFileName }).name, (b.parsed as { name: FeedFileName }).name);
    });
    for (const f of named) {
      run.checkTime();
      const name = f.parsed;
      // Too large by the listing: refused unread, so its bytes never reach this process.
      if ('name' in name && f.size > deps.limits.maxFileBytes) files.push(await unreadable(deps, f, tooLarge(f.size, deps.limits), name.name));
      else files.push(await processFile(deps, f, 'error' in name ? name : name.name));
    }
  } catch (err) {
    error = (err as Error).message;
  } finally {
    beat.stop();
  }
  const failedFiles = files.filter((f) => f.status === 'Failed').length;
  if (!error && failedFiles > 0) {
    const reasons = files.filter((f) => f.status === 'Failed').map((f) => `${f.name}: ${f.message ?? 'failed'}`);
    error = `${failedFiles} of ${files.length} files failed (${reasons.slice(0, 5).join('; ')}${reasons.length > 5 ? '; …' : ''})`;
  }
  await db.withTenant(tenantId, (trx) =>
    trx
      .updateTable('user_feed_runs')
      .set({ status: error ? 'Failed' : 'Succeeded', finished_on_utc: new Date(), error, files: JSON.stringify(files) })
      .where('id', '=', runRow.id)
      .execute(),
  );
  observeUserFeedRun(Boolean(error), dryRun, files);
  const output = { userFeedRunId: runRow.id, dryRun, files: files.map(({ details: _, ...f }) => f) };
  if (error) throw new ActionError(`${error} (user feed run ${runRow.id})`);
  return { output };
};

/** The user feed's built-in action type, added to every context's automations (server.ts, createContext). */
export const USER_FEED_ACTIONS: Readonly<Record<string, SurfaceAction>> = { [USER_FEED_ACTION]: { handler: userFeed, fields: [] } };
