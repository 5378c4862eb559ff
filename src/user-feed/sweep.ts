// Feed runs whose process died (a crash, a kill, a restart) would stay Running forever: the process running
// a feed writes the run's heartbeat while it runs, and a run whose heartbeat is older than STALE_MS is
// marked Failed with the reason, by every worker process at start-up and once a minute after.
import { sql } from 'kysely';
import type { AppContext } from '../platform/context.ts';
import type { DatabaseHandle } from '../platform/db/database.ts';
import type { Jobs } from '../platform/jobs/jobs.ts';

/** How often a running feed writes its heartbeat. */
export const HEARTBEAT_MS = 15_000;

/** A Running run with no heartbeat for this long has lost its process (four beats missed). */
export const STALE_MS = 4 * HEARTBEAT_MS;

/** Beats the run's heartbeat until `stop()`; a failed beat is retried at the next one. */
export function heartbeat(db: DatabaseHandle, tenantId: string, runId: string): { stop: () => void } {
  const timer = setInterval(() => {
    db.withTenant(tenantId, (trx) =>
      trx.updateTable('user_feed_runs').set({ heartbeat_utc: new Date() }).where('id', '=', runId).where('status', '=', 'Running').execute(),
    ).catch(() => {});
  }, HEARTBEAT_MS);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}

/** Marks orphaned runs Failed; the number swept. */
export async function sweepFeedRuns(db: DatabaseHandle): Promise<number> {
  const cutoff = new Date(Date.now() - STALE_MS);
  return db.asOwner(async (trx) => {
    const { rows } = await sql<{ id: string }>`
      update user_feed_runs
         set status = 'Failed', finished_on_utc = now(),
             error = 'the run stopped without finishing: the process running it ended (crash or restart) at about ' || to_char(heartbeat_utc at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') || '; files still in the Data folder are taken by the next run'
       where status = 'Running' and heartbeat_utc < ${cutoff}
       returning id`.execute(trx);
    return rows.length;
  });
}

export function defineUserFeedJobs(jobs: Jobs, ctx: AppContext): void {
  const log = ctx.log.child({ component: 'user-feed' });
  const sweep = async () => {
    const n = await sweepFeedRuns(ctx.db);
    if (n > 0) log.warn({ runs: n }, 'user feed runs left Running by a stopped process marked Failed');
  };
  jobs.define({ name: 'user-feed-sweep', cron: '* * * * *', work: sweep, onStart: sweep });
}
