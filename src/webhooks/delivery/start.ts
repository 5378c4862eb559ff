// Starts the webhook worker in processes that work jobs (ATRIUM_ROLE worker or all), alongside pg-boss.
// The worker is a loop of its own rather than a pg-boss queue: a commit that writes events wakes it through
// LISTEN/NOTIFY, and it polls the outbox every 50 ms as the safety net, which pg-boss's polling floor would not allow.
import type { AppContext } from '../../platform/context.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { webhookBacklog } from './backlog.ts';
import { WebhookWorker } from './worker.ts';

/** A dispatcher pass takes milliseconds; one silent this long is stuck (or cannot reach the database). */
const DISPATCHER_MAX_SILENCE_MS = 30_000;

export function defineWebhooks(jobs: Jobs, ctx: AppContext): void {
  // Every process can read the backlog (metrics); readiness judges its age only where the worker runs.
  jobs.status.addBacklog(() => webhookBacklog(ctx.db.kysely));
  if (ctx.config.role === 'api') return;
  jobs.status.expectHeartbeat('webhookDispatcher', DISPATCHER_MAX_SILENCE_MS);
  const worker = new WebhookWorker({
    connectionString: ctx.db.connectionString,
    box: ctx.box,
    config: ctx.config,
    log: ctx.log.child({ component: 'webhooks' }),
    onDispatchTick: () => jobs.status.beat('webhookDispatcher'),
    notifications: ctx.db.notifications,
  });
  worker.start();
  // The worker stops (finishing and recording attempts in flight) before pg-boss and the database pool do.
  jobs.onStop('before', async () => {
    jobs.status.forget('webhookDispatcher');
    await worker.stop();
  });
}
