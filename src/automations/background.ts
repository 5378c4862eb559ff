// EnqueueBackgroundWork's runs: each a pg-boss job, so a run asked for survives a restart of the process
// that asked. The queue's policy key_strict_fifo runs the jobs of one key one after another, in order: the
// key is the tenant and the action's sessionId, or the job's own id when it has none (no ordering then).
import type { AppContext } from '../platform/context.ts';
import type { Jobs } from '../platform/jobs/jobs.ts';
import { BACKGROUND_QUEUE, type BackgroundJob } from './background-queue.ts';
import type { HttpRequestValue } from './engine.ts';
import { runAndRecord } from './run-and-record.ts';
import { servicesFor } from './runtime.ts';

async function runBackground(ctx: AppContext, job: BackgroundJob): Promise<void> {
  const automation = await servicesFor(ctx).loadAutomation(job.tenantId, job.automationId);
  if (!automation) return;
  const request: HttpRequestValue = {
    Scheme: 'internal',
    Host: 'atrium',
    Path: `/api/integration-workflows/${job.automationId}/execute`,
    Method: 'POST',
    Query: {},
    Headers: { 'content-type': 'application/json', 'x-calling-automation': job.callerId },
    Body: job.body,
  };
  await runAndRecord(ctx, { ...automation, runAsAppId: automation.runAsAppId ?? job.runAsAppId }, request, { trigger: 'workflow', recording: 'end' });
}

export function defineBackgroundWork(jobs: Jobs, ctx: AppContext): void {
  jobs.define<BackgroundJob>({
    name: BACKGROUND_QUEUE,
    batchSize: 1,
    localConcurrency: 2,
    policy: 'key_strict_fifo',
    options: { retryLimit: 0, expireInSeconds: Math.ceil(ctx.config.automationRunTimeoutMs / 1000) + 60 },
    work: async (batch) => {
      for (const j of batch) await runBackground(ctx, j.data);
    },
  });
}
