// Executes one run of a schedule: acts as the schedule's app or user, streams the named query through
// the Data Extraction engine into a temporary file, publishes it by rename, records the outcome with
// an Executed event, applies retention, and e-mails the tenant's mailbox when the run failed.
import path from 'node:path';
import { sql } from 'kysely';
import { Value } from 'typebox/value';
import type { Config } from '../config.ts';
import { dynamicExport, ExecuteBodySchema } from '../extraction/service.ts';
import type { Principal } from '../platform/auth/principal.ts';
import { appRoles, userRoles } from '../platform/auth/service.ts';
import type { DatabaseHandle, Trx } from '../platform/db/database.ts';
import { HttpProblem, RunFailure } from '../platform/errors.ts';
import { appendEvent } from '../platform/events/outbox.ts';
import type { ExportStore } from '../platform/export-store.ts';
import { tenantBaseUrl } from '../platform/http/tenant-address.ts';
import type { Logger } from '../platform/log.ts';
import { type Mailer, notificationMailbox } from '../platform/mail/mailer.ts';
import { scheduleRunDuration, scheduleRuns } from '../platform/metrics.ts';
import { writeExportFile } from './formats.ts';
import { DOCUMENT_TYPE, eventDetail, type RunRow, type RunView, runView, type ScheduleRow, scheduleView } from './service.ts';

export interface RunnerDeps {
  db: DatabaseHandle;
  /** Where run files go: the local exports directory or object storage. */
  store: ExportStore;
  config: Pick<Config, 'exportRetention' | 'scheduleRunTimeoutMs' | 'publicUrl' | 'tenantHostPattern'>;
  mailer: Mailer;
  /** The schedules' child logger: a run's outcome is one structured line (info, or warn when it failed). */
  log: Logger;
}

/** `{Query}_{yyyyMMddHHmmss}.{ext}`, the run's start in UTC; characters unsafe in a file name become _. */
export function downloadName(query: string, startedOn: Date, format: string): string {
  const stamp = startedOn
    .toISOString()
    .replace(/\.\d+Z$/, '')
    .replace(/[-T:]/g, '');
  return `${query.replace(/[^\w.-]/g, '_')}_${stamp}.${format}`;
}

/** The principal a run acts as: the schedule's user (roles now) or else its app, while it is not revoked. */
async function runPrincipal(trx: Trx, schedule: ScheduleRow): Promise<Principal> {
  const base = { tenantId: schedule.tenant_id, appId: schedule.run_as_app_id, via: 'app-headers' as const };
  if (schedule.run_as_user_id) {
    const user = await trx.selectFrom('users').select(['id', 'user_name', 'is_active']).where('id', '=', schedule.run_as_user_id).executeTakeFirst();
    if (!user)
      throw new RunFailure(`The user the schedule runs as (${schedule.run_as_user_id}) no longer exists; save the schedule again to run it as yourself.`);
    if (!user.is_active) throw new RunFailure(`The user the schedule runs as (${user.user_name}) is inactive; save the schedule again to run it as yourself.`);
    return { ...base, userId: user.id, userName: user.user_name, roles: new Set(await userRoles(trx, user.id)) };
  }
  if (schedule.run_as_app_id) {
    const app = await trx.selectFrom('apps').select('id').where('id', '=', schedule.run_as_app_id).where('revoked_on_utc', 'is', null).executeTakeFirst();
    if (!app) throw new RunFailure('The app that saved the schedule has been revoked; save the schedule again with a current app.');
    return { ...base, userId: null, userName: null, roles: new Set(await appRoles(trx, app.id)) };
  }
  throw new RunFailure('The schedule names no app or user to run as; save it again.');
}

export class Runner {
  readonly #deps: RunnerDeps;

  constructor(deps: RunnerDeps) {
    this.#deps = deps;
  }

  /** Runs a run row that is Running and unfinished; a run already finished is left alone. */
  async execute(tenantId: string, runId: string): Promise<RunView | null> {
    const { db, config } = this.#deps;
    const loaded = await db.withTenant(tenantId, async (trx) => {
      const run = await trx.selectFrom('extraction_schedule_runs').selectAll().where('id', '=', runId).executeTakeFirst();
      if (run?.status !== 'Running') return null;
      const schedule = await trx.selectFrom('extraction_schedules').selectAll().where('id', '=', run.schedule_id).executeTakeFirstOrThrow();
      let principal: Principal | RunFailure;
      try {
        principal = await runPrincipal(trx, schedule);
      } catch (err) {
        if (!(err instanceof RunFailure)) throw err;
        principal = err;
      }
      return { run, schedule, principal };
    });
    if (!loaded) return null;
    const { run, schedule, principal } = loaded;
    const relative = path.join(tenantId, schedule.id, `${run.id}.${schedule.format}`);
    const started = Date.now();
    try {
      if (principal instanceof RunFailure) throw principal;
      const deadline = started + config.scheduleRunTimeoutMs;
      // The stored query was validated when the schedule was saved; checked again, so a row changed by hand fails the run with a reason.
      const body = { queryBuilder: schedule.query_builder, parameters: schedule.parameters };
      if (!Value.Check(ExecuteBodySchema, body)) throw new RunFailure("The schedule's stored queryBuilder or parameters are not a valid dynamic-execute body.");
      // Read from a replica when one is usable: a run reads a snapshot that may lag by the replica's lag.
      const exp = await db.onReplica((on) =>
        dynamicExport(on, principal, schedule.query, body, schedule.format === 'xlsx' ? 'ndjson' : schedule.format, deadline, {
          bom: schedule.csv_bom,
          excelSafe: schedule.excel_safe,
        }),
      );
      const written = await writeExportFile(
        this.#deps.store,
        relative,
        schedule.format,
        exp.name,
        exp.columns,
        exp.stream,
        exp.rowCount,
        AbortSignal.timeout(config.scheduleRunTimeoutMs),
      );
      const fileName = downloadName(schedule.query, run.started_on_utc, schedule.format);
      const view = await this.#finish(schedule, run, {
        status: 'Succeeded',
        rows: written.rows,
        bytes: written.bytes,
        fileName,
        filePath: relative,
        error: null,
      });
      this.#observe('succeeded', started);
      this.#deps.log.info(
        { tenant: tenantId, schedule: schedule.id, run: run.id, rows: written.rows, bytes: written.bytes, durationMs: Date.now() - started },
        'scheduled run succeeded',
      );
      return view;
    } catch (err) {
      const message = failureMessage(err, config.scheduleRunTimeoutMs);
      const view = await this.#finish(schedule, run, { status: 'Failed', rows: null, bytes: null, fileName: null, filePath: null, error: message });
      this.#observe('failed', started);
      this.#deps.log.warn({ tenant: tenantId, schedule: schedule.id, run: run.id, reason: message, durationMs: Date.now() - started }, 'scheduled run failed');
      await this.#notify(schedule, view).catch((e) =>
        this.#deps.log.warn(
          { tenant: tenantId, schedule: schedule.id, run: run.id, reason: (e as Error).message },
          'failure e-mail of a scheduled run not sent',
        ),
      );
      return view;
    }
  }

  /**
   * Runs still Running after twice their time limit: their worker was killed, or no worker took
   * them. They are marked Failed (with their Executed event), so that no run stays Running forever.
   */
  async sweep(): Promise<number> {
    const { db, config } = this.#deps;
    const cutoff = new Date(Date.now() - 2 * config.scheduleRunTimeoutMs);
    const stale = await db.asOwner(
      async (trx) =>
        (
          await sql<{
            tenant_id: string;
            id: string;
          }>`select tenant_id, id from extraction_schedule_runs where status = 'Running' and started_on_utc < ${cutoff}`.execute(trx)
        ).rows,
    );
    for (const r of stale) {
      const found = await db.withTenant(r.tenant_id, async (trx) => {
        const run = await trx.selectFrom('extraction_schedule_runs').selectAll().where('id', '=', r.id).where('status', '=', 'Running').executeTakeFirst();
        if (!run) return null;
        const schedule = await trx.selectFrom('extraction_schedules').selectAll().where('id', '=', run.schedule_id).executeTakeFirstOrThrow();
        return { run, schedule };
      });
      if (!found) continue;
      const error = 'The run did not finish within twice its time limit: the worker running it stopped, or no worker took it.';
      const view = await this.#finish(found.schedule, found.run, { status: 'Failed', rows: null, bytes: null, fileName: null, filePath: null, error });
      scheduleRuns.inc({ outcome: 'failed' });
      this.#deps.log.warn({ tenant: r.tenant_id, schedule: found.schedule.id, run: r.id, reason: error }, 'scheduled run failed');
      await this.#notify(found.schedule, view).catch(() => {});
    }
    return stale.length;
  }

  #observe(outcome: 'succeeded' | 'failed', started: number): void {
    scheduleRuns.inc({ outcome });
    scheduleRunDuration.observe({ outcome }, (Date.now() - started) / 1000);
  }

  /** Records the outcome and its Executed event in one transaction. */
  async #finish(
    schedule: ScheduleRow,
    run: RunRow,
    outcome: {
      status: 'Succeeded' | 'Failed';
      rows: number | null;
      bytes: number | null;
      fileName: string | null;
      filePath: string | null;
      error: string | null;
    },
  ): Promise<RunView> {
    const { view, expired } = await this.#deps.db.withTenant(schedule.tenant_id, async (trx) => {
      const row = await trx
        .updateTable('extraction_schedule_runs')
        .set({
          status: outcome.status,
          finished_on_utc: sql`now()`,
          rows: outcome.rows,
          bytes: outcome.bytes,
          file_name: outcome.fileName,
          file_path: outcome.filePath,
          error: outcome.error,
        })
        .where('id', '=', run.id)
        .where('status', '=', 'Running')
        .returningAll()
        .executeTakeFirst();
      // The schedule (and with it the run) was deleted while the run ran, or the sweep settled it: nothing to record.
      if (!row) return { view: runView({ ...run, status: outcome.status, error: outcome.error }), expired: [] };
      const view = runView(row);
      const s = scheduleView(schedule);
      await appendEvent(trx, {
        tenantId: schedule.tenant_id,
        actionType: 'Executed',
        documentType: DOCUMENT_TYPE,
        documentId: schedule.id,
        detail: {
          Schedule: { Id: s.id, ...eventDetail(s) },
          Run: {
            Id: view.id,
            Trigger: view.trigger,
            FireTimeUtc: view.fireTimeUtc,
            StartedOnUtc: view.startedOnUtc,
            FinishedOnUtc: view.finishedOnUtc,
            Status: view.status,
            Rows: view.rows,
            Bytes: view.bytes,
            Error: view.error,
            FileName: view.fileName,
          },
        },
      });
      return { view, expired: outcome.filePath ? await this.#expire(trx, schedule) : [] };
    });
    // The files leave the store after the commit that stopped listing them.
    await this.#deps.store.delete(expired).catch((err) => this.#deps.log.warn({ err, files: expired.length }, 'expired run files not deleted'));
    return view;
  }

  /** Retention: the newest N files of the schedule stay; the runs of older ones stay listed, marked deleted. */
  async #expire(trx: Trx, schedule: ScheduleRow): Promise<string[]> {
    const rows = await sql<{ id: string; file_path: string }>`
        update extraction_schedule_runs r set file_path = null, file_deleted_on_utc = now()
        from (
          select id, file_path from extraction_schedule_runs
          where schedule_id = ${schedule.id} and file_path is not null
          order by started_on_utc desc, id desc offset ${this.#deps.config.exportRetention}
        ) old
        where r.id = old.id and r.tenant_id = ${schedule.tenant_id}
        returning old.id, old.file_path`.execute(trx);
    return rows.rows.map((r) => r.file_path);
  }

  async #notify(schedule: ScheduleRow, run: RunView): Promise<void> {
    const { db, mailer, config } = this.#deps;
    if (!mailer.configured) return;
    const { to, slug } = await db.withTenant(schedule.tenant_id, async (trx) => ({
      to: await notificationMailbox(trx),
      slug: (await trx.selectFrom('tenants').select('slug').executeTakeFirstOrThrow()).slug,
    }));
    if (to.length === 0) return;
    await mailer.send({
      to,
      subject: `Scheduled export "${schedule.name}" failed`,
      text: [
        `The scheduled export "${schedule.name}" (${schedule.query}, ${schedule.format}) failed.`,
        '',
        `Run:      ${run.id} (${run.trigger}${run.fireTimeUtc ? `, due ${run.fireTimeUtc}` : ''})`,
        `Started:  ${run.startedOnUtc}`,
        `Finished: ${run.finishedOnUtc ?? ''}`,
        `Error:    ${run.error ?? ''}`,
        '',
        `Runs: ${tenantBaseUrl(config, slug)}/api/v3/analytics/schedules/${schedule.id}/runs`,
      ].join('\n'),
    });
  }
}

function failureMessage(err: unknown, timeoutMs: number): string {
  if (err instanceof RunFailure) return err.message;
  if (err instanceof HttpProblem) {
    if (err.status === 504) return `The run exceeded its time limit of ${Math.round(timeoutMs / 1000)} s.`;
    const details = err.errors?.map((e) => `${e.path}: ${e.message}`).join('; ');
    return details ? `${err.message} (${details})` : err.message;
  }
  if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'))
    return `The run exceeded its time limit of ${Math.round(timeoutMs / 1000)} s.`;
  const code = (err as { code?: string }).code;
  if (code === '57014') return `The run exceeded its time limit of ${Math.round(timeoutMs / 1000)} s.`;
  return err instanceof Error ? err.message : String(err);
}
