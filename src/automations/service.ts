// Automations and their runs in the tenant's transaction: definitions saved in the platform's format
// (each save a new version, kept), the scheduler's next fire time, and run records with their action log.
import { type Kysely, sql } from 'kysely';
import type { Principal } from '../platform/auth/principal.ts';
import type { Trx } from '../platform/db/database.ts';
import type { Database } from '../platform/db/schema.ts';
import { badRequest, notFound } from '../platform/errors.ts';
import { type Definition, type DefinitionLimits, validateDefinition } from './definition.ts';
import type { ActionLogEntry } from './engine.ts';
import type { RunTrigger } from './runs.ts';
import { nextFireTime } from './scheduler.ts';

// What the user feed (a built-in automation with its own action) uses of the engine.
export { withSftpServer } from './actions/sftp.ts';
export { actionTypeOf, DEFAULT_LIMITS, type Definition, type DefinitionLimits } from './definition.ts';
export { ActionError, type Handler, type HttpRequestValue } from './engine.ts';
export { runAndRecord } from './run-and-record.ts';
export { finishRun, insertRun, type RunnableRow, type RunRecord, type RunTrigger, runValues, startRun, toRunnable } from './runs.ts';
export type { SurfaceAction } from './runtime.ts';

export interface AutomationView {
  id: string;
  tenantId: string;
  name: string;
  active: boolean;
  version: number;
  logLevelType: string;
  requiresAuthentication: boolean;
  actions: Record<string, unknown>[];
  subWorkflows: Record<string, unknown>[];
  scheduler: Record<string, unknown> | null;
  nextRunUtc: string | null;
  createdOnUtc: string;
  createdById: string | null;
  modifiedOnUtc: string;
  modifiedById: string | null;
}

export interface RunView {
  id: string;
  automationId: string;
  version: number;
  trigger: RunTrigger;
  status: 'Running' | 'Succeeded' | 'Failed';
  eventId: string | null;
  invocationId: string | null;
  fireTimeUtc: string | null;
  startedOnUtc: string;
  finishedOnUtc: string | null;
  error: string | null;
  result: unknown;
  actions?: ActionLogEntry[];
}

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

type Row = {
  tenant_id: string;
  id: string;
  name: string;
  active: boolean;
  version: number;
  definition: unknown;
  next_fire_utc: Date | null;
  run_as_app_id: string | null;
  run_as_user_id: string | null;
  api_credentials: string | null;
  created_on_utc: Date;
  created_by_id: string | null;
  modified_on_utc: Date;
  modified_by_id: string | null;
};

export function automationView(row: Row): AutomationView {
  const d = row.definition as Definition;
  return {
    id: row.id,
    tenantId: row.tenant_id,
    name: row.name,
    active: row.active,
    version: row.version,
    logLevelType: d.logLevelType,
    requiresAuthentication: d.requiresAuthentication,
    actions: d.actions,
    subWorkflows: d.subWorkflows as unknown as Record<string, unknown>[],
    scheduler: d.scheduler as Record<string, unknown> | null,
    nextRunUtc: iso(row.next_fire_utc),
    createdOnUtc: iso(row.created_on_utc) as string,
    createdById: row.created_by_id,
    modifiedOnUtc: iso(row.modified_on_utc) as string,
    modifiedById: row.modified_by_id,
  };
}

function parse(body: unknown, limits?: DefinitionLimits): Definition {
  const { definition, errors } = validateDefinition(body, limits);
  if (!definition) throw badRequest('The automation definition is not valid.', errors);
  return definition;
}

export async function listAutomations(trx: Trx): Promise<AutomationView[]> {
  const rows = await trx.selectFrom('automations').selectAll().orderBy('name').orderBy('id').execute();
  return rows.map(automationView);
}

export async function findAutomation(trx: Trx, id: string): Promise<Row> {
  const row = await trx.selectFrom('automations').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound(`No automation ${id}.`);
  return row;
}

export async function createAutomation(
  trx: Trx,
  principal: Principal,
  body: unknown,
  apiCredentials: string | null,
  limits?: DefinitionLimits,
): Promise<AutomationView> {
  const d = parse(body, limits);
  const now = new Date();
  const row = await trx
    .insertInto('automations')
    .values({
      tenant_id: principal.tenantId,
      name: d.name,
      active: d.active,
      version: 1,
      definition: JSON.stringify(d),
      next_fire_utc: d.active ? nextFireTime(d.scheduler, now, now) : null,
      run_as_app_id: principal.appId,
      run_as_user_id: principal.userId,
      api_credentials: apiCredentials,
      created_by_id: principal.userId,
      modified_by_id: principal.userId,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('automation_versions')
    .values({ tenant_id: row.tenant_id, automation_id: row.id, version: 1, definition: JSON.stringify(d) })
    .execute();
  return automationView(row);
}

export async function updateAutomation(
  trx: Trx,
  principal: Principal,
  id: string,
  body: unknown,
  apiCredentials: string | null,
  limits?: DefinitionLimits,
): Promise<AutomationView> {
  const d = parse(body, limits);
  const current = await trx.selectFrom('automations').select(['version', 'created_on_utc']).where('id', '=', id).forUpdate().executeTakeFirst();
  if (!current) throw notFound(`No automation ${id}.`);
  const now = new Date();
  const version = current.version + 1;
  const row = await trx
    .updateTable('automations')
    .set({
      name: d.name,
      active: d.active,
      version,
      definition: JSON.stringify(d),
      next_fire_utc: d.active ? nextFireTime(d.scheduler, now, current.created_on_utc) : null,
      run_as_app_id: principal.appId,
      run_as_user_id: principal.userId,
      api_credentials: apiCredentials,
      modified_on_utc: now,
      modified_by_id: principal.userId,
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
  await trx
    .insertInto('automation_versions')
    .values({ tenant_id: row.tenant_id, automation_id: id, version, definition: JSON.stringify(d) })
    .execute();
  return automationView(row);
}

export async function deleteAutomation(trx: Trx, id: string): Promise<void> {
  const r = await trx.deleteFrom('automations').where('id', '=', id).executeTakeFirst();
  if (Number(r.numDeletedRows) === 0) throw notFound(`No automation ${id}.`);
}

type RunRow = {
  id: string;
  automation_id: string;
  version: number;
  trigger: string;
  status: string;
  event_id: string | null;
  invocation_id: string | null;
  fire_time_utc: Date | null;
  started_on_utc: Date;
  finished_on_utc: Date | null;
  error: string | null;
  result: unknown;
  actions?: unknown;
};

export function runView(r: RunRow): RunView {
  const view: RunView = {
    id: r.id,
    automationId: r.automation_id,
    version: r.version,
    trigger: r.trigger as RunTrigger,
    status: r.status as RunView['status'],
    eventId: r.event_id,
    invocationId: r.invocation_id,
    fireTimeUtc: iso(r.fire_time_utc),
    startedOnUtc: iso(r.started_on_utc) as string,
    finishedOnUtc: iso(r.finished_on_utc),
    error: r.error,
    result: r.result ?? null,
  };
  if (r.actions !== undefined) view.actions = r.actions as ActionLogEntry[];
  return view;
}

const RUN_COLUMNS = [
  'id',
  'automation_id',
  'version',
  'trigger',
  'status',
  'event_id',
  'invocation_id',
  'fire_time_utc',
  'started_on_utc',
  'finished_on_utc',
  'error',
  'result',
] as const;

export async function listRuns(trx: Trx, automationId: string, skip: number, take: number): Promise<RunView[]> {
  await findAutomation(trx, automationId);
  const rows = await trx
    .selectFrom('automation_runs')
    .select(RUN_COLUMNS)
    .where('automation_id', '=', automationId)
    .orderBy('started_on_utc', 'desc')
    .orderBy('id')
    .offset(skip)
    .limit(take)
    .execute();
  return rows.map(runView);
}

export async function findRun(trx: Trx, automationId: string, runId: string): Promise<RunView & { actions: ActionLogEntry[] }> {
  const row = await trx
    .selectFrom('automation_runs')
    .select([...RUN_COLUMNS, 'actions'])
    .where('automation_id', '=', automationId)
    .where('id', '=', runId)
    .executeTakeFirst();
  if (!row) throw notFound(`No run ${runId} of automation ${automationId}.`);
  return { ...runView(row), actions: row.actions as unknown as ActionLogEntry[] };
}

/** Deletes finished runs past the retention (ATRIUM_EVENT_RETENTION, as webhook history), a batch at a time. */
export async function sweepRuns(db: Kysely<Database>, retentionMs: number): Promise<number> {
  const cutoff = new Date(Date.now() - retentionMs);
  let total = 0;
  for (;;) {
    const r = await sql`
      delete from automation_runs where (tenant_id, id) in (
        select tenant_id, id from automation_runs where finished_on_utc < ${cutoff} limit 5000)`.execute(db);
    const n = Number(r.numAffectedRows ?? 0);
    total += n;
    if (n < 5000) return total;
  }
}
