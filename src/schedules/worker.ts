// Scheduled extraction on pg-boss: one pg-boss schedule per active schedule (key = its id, UTC), one
// queue whose jobs are cron occurrences or run-now requests. Each occurrence becomes one run row
// (unique per fire time), so it runs once however many workers there are.
import { sql } from 'kysely';
import type { AppContext } from '../platform/context.ts';
import { latestRun } from '../platform/cron.ts';
import type { DatabaseHandle } from '../platform/db/database.ts';
import { exportStore } from '../platform/export-store.ts';
import type { Jobs } from '../platform/jobs/jobs.ts';
import { Mailer } from '../platform/mail/mailer.ts';
import { Runner } from './runner.ts';

export const QUEUE = 'scheduled-extraction';

interface JobData {
  tenantId: string;
  scheduleId: string;
  /** Set for run-now: the run row already exists. */
  runId?: string;
}

/** Makes pg-boss fire the schedule while it is active, and never while it is not (after the row's commit). */
export async function syncSchedule(jobs: Jobs, s: { tenantId: string; id: string; cronExpression: string; active: boolean }): Promise<void> {
  if (s.active) {
    const data: JobData = { tenantId: s.tenantId, scheduleId: s.id };
    await jobs.boss.schedule(QUEUE, s.cronExpression, data, { tz: 'UTC', key: s.id, missed: 'once' });
  } else {
    await jobs.boss.unschedule(QUEUE, s.id);
  }
}

export async function enqueueRun(jobs: Jobs, tenantId: string, scheduleId: string, runId: string): Promise<void> {
  const data: JobData = { tenantId, scheduleId, runId };
  await jobs.send(QUEUE, data);
}

/** pg-boss's schedules rewritten from the table: repairs a crash between a save's commit and its sync. */
async function reconcile(jobs: Jobs, db: DatabaseHandle): Promise<void> {
  const rows = await db.asOwner(
    async (trx) =>
      (
        await sql<{
          tenant_id: string;
          id: string;
          cron_expression: string;
        }>`select tenant_id, id, cron_expression from extraction_schedules where active`.execute(trx)
      ).rows,
  );
  const wanted = new Map(rows.map((r) => [r.id, r]));
  const existing = await jobs.boss.getSchedules(QUEUE);
  for (const s of existing) {
    const w = wanted.get(s.key);
    if (!w) await jobs.boss.unschedule(QUEUE, s.key);
    else if (w.cron_expression === s.cron && s.timezone === 'UTC') wanted.delete(s.key);
  }
  for (const w of wanted.values()) await syncSchedule(jobs, { tenantId: w.tenant_id, id: w.id, cronExpression: w.cron_expression, active: true });
}

export function defineSchedules(jobs: Jobs, ctx: AppContext): void {
  const mailer = new Mailer(ctx.config);
  const runner = new Runner({ db: ctx.db, store: exportStore(ctx.config), config: ctx.config, mailer, log: ctx.log.child({ component: 'schedules' }) });

  /** A cron occurrence: claim its fire time with a run row, or learn that another worker has. */
  async function occurrence(data: JobData, createdOn: Date): Promise<string | null> {
    return ctx.db.withTenant(data.tenantId, async (trx) => {
      const schedule = await trx.selectFrom('extraction_schedules').selectAll().where('id', '=', data.scheduleId).executeTakeFirst();
      if (!schedule?.active) return null;
      const fireTime = latestRun(schedule.cron_expression, createdOn);
      // An occurrence before the schedule was saved as it is now is not one of its fire times (pg-boss's
      // first pass after a save can see the minute the save happened in).
      if (!fireTime || fireTime < schedule.modified_on_utc) return null;
      const inserted = await sql<{ id: string }>`
        insert into extraction_schedule_runs (tenant_id, schedule_id, trigger, fire_time_utc)
        values (${data.tenantId}, ${data.scheduleId}, 'schedule', ${fireTime})
        on conflict (tenant_id, schedule_id, fire_time_utc) do nothing
        returning id`.execute(trx);
      return inserted.rows[0]?.id ?? null;
    });
  }

  jobs.define<JobData>({
    name: QUEUE,
    batchSize: 1,
    localConcurrency: 2,
    pollingIntervalSeconds: 1,
    // A run may take up to its own limit; pg-boss must not expire (and retry) it before that.
    options: { expireInSeconds: Math.ceil(ctx.config.scheduleRunTimeoutMs / 1000) + 300, retryLimit: 0 },
    work: async (batch) => {
      for (const job of batch) {
        const runId = job.data.runId ?? (await occurrence(job.data, job.createdOn));
        if (runId) await runner.execute(job.data.tenantId, runId);
      }
    },
    onStart: async () => {
      await reconcile(jobs, ctx.db);
      await runner.sweep();
    },
  });

  jobs.define({
    name: 'scheduled-extraction-maintenance',
    cron: '*/15 * * * *',
    work: async () => {
      await reconcile(jobs, ctx.db);
      await runner.sweep();
    },
  });

  jobs.onStop('after', async () => mailer.close());
}
