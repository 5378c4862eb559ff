// Starts the webhook worker in processes that work jobs (ATRIUM_ROLE worker or all), alongside pg-boss.
// The worker is a loop of its own rather than a pg-boss queue: it polls the outbox every 50 ms, which
// pg-boss's polling floor would not allow, and the commit-to-receiver latency depends on it.
import type { AppContext } from '../../platform/context.ts';
import type { Jobs } from '../../platform/jobs/jobs.ts';
import { WebhookWorker } from './worker.ts';

export function defineWebhooks(jobs: Jobs, ctx: AppContext): void {
  if (ctx.config.role === 'api') return;
  const worker = new WebhookWorker({
    connectionString: ctx.db.connectionString,
    box: ctx.box,
    config: ctx.config,
    log: ctx.log.child({ component: 'webhooks' }),
  });
  worker.start();
  // The worker stops (finishing and recording attempts in flight) before pg-boss and the database pool do.
  jobs.onStop('before', () => worker.stop());
}
