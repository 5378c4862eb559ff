// Queues EnqueueBackgroundWork's runs (background.ts runs them): apart from the runner, so the run services
// (runtime.ts) can queue work without importing what runs it.
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../platform/context.ts';
import type { BackgroundWork } from './run-services.ts';

export const BACKGROUND_QUEUE = 'automation-background';

export interface BackgroundJob extends BackgroundWork {
  tenantId: string;
}

/** Sends the job; answers its id. */
export async function enqueueBackgroundWork(ctx: AppContext, tenantId: string, work: BackgroundWork): Promise<string> {
  if (!ctx.jobs) throw new Error('background work needs the job queue (not available in this process)');
  const key = work.sessionId === null ? `job:${randomUUID()}` : `session:${tenantId}:${work.sessionId}`;
  const job: BackgroundJob = { tenantId, ...work };
  const id = await ctx.jobs.send(BACKGROUND_QUEUE, job, { singletonKey: key, startAfter: new Date(work.startAfter), retryLimit: 0 });
  if (!id) throw new Error('the background run was not queued');
  return id;
}
