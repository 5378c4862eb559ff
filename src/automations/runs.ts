// Run records: an automation row as a run takes it, and the run's row written at its start, at its end, or
// both. Apart from service.ts (the surface's module for the others) so that what runs automations
// (run-and-record.ts, runtime.ts) imports no module that re-exports it.
import type { Trx } from '../platform/db/database.ts';
import type { Definition } from './definition.ts';
import type { AutomationToRun, RunOutcome } from './engine.ts';

export type RunTrigger = 'webhook' | 'schedule' | 'manual' | 'http' | 'workflow';

/** The columns a run needs. */
export interface RunnableRow {
  tenant_id: string;
  id: string;
  version: number;
  definition: unknown;
  run_as_app_id: string | null;
  run_as_user_id: string | null;
  api_credentials: string | null;
}

export const toRunnable = (row: RunnableRow): AutomationToRun => ({
  tenantId: row.tenant_id,
  id: row.id,
  version: row.version,
  definition: row.definition as Definition,
  runAsAppId: row.run_as_app_id,
  runAsUserId: row.run_as_user_id,
  apiCredentials: row.api_credentials,
});

export interface RunRecord {
  tenantId: string;
  automationId: string;
  version: number;
  trigger: RunTrigger;
  eventId?: string | null;
  invocationId?: string | null;
  outcome: RunOutcome;
}

/** The columns of a finished run's row but its log and result (a caller writing them its own way adds those). */
export function runColumns(r: RunRecord) {
  return {
    tenant_id: r.tenantId,
    automation_id: r.automationId,
    version: r.version,
    trigger: r.trigger,
    status: r.outcome.status,
    event_id: r.eventId ?? null,
    invocation_id: r.invocationId ?? null,
    started_on_utc: r.outcome.startedOnUtc,
    finished_on_utc: r.outcome.finishedOnUtc,
    error: r.outcome.error,
  };
}

/** The row of a finished run (webhook, manual, HTTP runs are written once they end). */
export function runValues(r: RunRecord) {
  return {
    ...runColumns(r),
    actions: JSON.stringify(r.outcome.actions),
    result: r.outcome.result ? JSON.stringify(r.outcome.result) : null,
  };
}

export async function insertRun(trx: Trx, r: RunRecord): Promise<string> {
  const row = await trx.insertInto('automation_runs').values(runValues(r)).returning('id').executeTakeFirstOrThrow();
  return row.id;
}

/**
 * A run recorded before it starts (status Running): a process that dies during it leaves a record, which
 * the worker's sweep marks Failed once it is past the run time limit (worker.ts).
 */
export async function startRun(trx: Trx, r: Omit<RunRecord, 'outcome'>): Promise<string> {
  const row = await trx
    .insertInto('automation_runs')
    .values({ tenant_id: r.tenantId, automation_id: r.automationId, version: r.version, trigger: r.trigger, status: 'Running' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

/** The end of a run recorded by startRun. */
export async function finishRun(trx: Trx, runId: string, outcome: RunOutcome): Promise<void> {
  await trx
    .updateTable('automation_runs')
    .set({
      status: outcome.status,
      started_on_utc: outcome.startedOnUtc,
      finished_on_utc: outcome.finishedOnUtc,
      error: outcome.error,
      actions: JSON.stringify(outcome.actions),
      result: outcome.result ? JSON.stringify(outcome.result) : null,
    })
    .where('id', '=', runId)
    .execute();
}
