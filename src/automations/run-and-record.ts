// The one way an automation runs and its run is recorded, whatever started it: the execute URL, run now,
// a webhook invocation, the scheduler, EnqueueBackgroundWork and the user feed. The run itself goes through
// runContained (a worker thread when it can, metrics, the failure log line); how its record is written is
// the one thing the callers choose.
import type { AppContext } from '../platform/context.ts';
import type { Trx } from '../platform/db/database.ts';
import { runContained } from './contained.ts';
import type { AutomationToRun, HttpRequestValue, RunOutcome } from './engine.ts';
import { finishRun, insertRun, type RunTrigger, runColumns, startRun } from './runs.ts';

/**
 * How the run's record is written:
 * - 'end': one row once the run ends (the execute URL's hot path, background work, the user feed);
 * - 'start': a Running row before the run starts, completed at its end, so a process that dies during it
 *   leaves a record the worker's sweep marks Failed (run now);
 * - { claimed }: the Running row the caller already wrote (the scheduler claims its occurrence with it);
 * - 'caller': nothing is written here; the caller gets the row's values and writes them in its own
 *   transaction (webhook runs: a batch of runs with their invocations' outcome).
 */
export type Recording = 'end' | 'start' | { claimed: string } | 'caller';

export interface RunAndRecord<T> {
  trigger: RunTrigger;
  recording: Recording;
  eventId?: string | null;
  invocationId?: string | null;
  signal?: AbortSignal;
  /** Written in the record's own transaction, after it (the user feed links its run to the automation run). */
  alongside?: (trx: Trx, runId: string, outcome: RunOutcome) => Promise<T>;
}

export interface Recorded<T> {
  outcome: RunOutcome;
  /** The automation run's id; null with recording 'caller'. */
  runId: string | null;
  /** With recording 'caller': the row's columns to write, beside the outcome's log and result. */
  values: ReturnType<typeof runColumns>;
  alongside: T | undefined;
}

export async function runAndRecord<T = undefined>(
  ctx: AppContext,
  automation: AutomationToRun,
  request: HttpRequestValue,
  opts: RunAndRecord<T>,
): Promise<Recorded<T>> {
  const { tenantId } = automation;
  const record = {
    tenantId,
    automationId: automation.id,
    version: automation.version,
    trigger: opts.trigger,
    eventId: opts.eventId ?? null,
    invocationId: opts.invocationId ?? null,
  };
  const recording = opts.recording;
  let early: string | null = typeof recording === 'object' ? recording.claimed : null;
  if (recording === 'start') early = await ctx.db.withTenant(tenantId, (trx) => startRun(trx, record));
  const outcome = await runContained(ctx, automation, request, { signal: opts.signal, trigger: opts.trigger });
  const values = runColumns({ ...record, outcome });
  if (recording === 'caller') return { outcome, runId: null, values, alongside: undefined };
  return ctx.db.withTenant(tenantId, async (trx) => {
    let runId: string;
    if (early) {
      await finishRun(trx, early, outcome);
      runId = early;
    } else runId = await insertRun(trx, { ...record, outcome });
    const alongside = opts.alongside ? await opts.alongside(trx, runId, outcome) : undefined;
    return { outcome, runId, values, alongside };
  });
}
