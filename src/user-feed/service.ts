// The user feed's settings and runs. The settings are the tenant's built-in automation (schedule, on/off,
// the UserFeed action's dry-run default); user_feeds says which automation that is. Runs are the feed's own
// records (per file, per row), each also an automation run.
import { sql } from 'kysely';
import { actionTypeOf, createAutomation, DEFAULT_LIMITS, type Definition, type DefinitionLimits, updateAutomation } from '../automations/service.ts';
import type { Principal } from '../platform/auth/principal.ts';
import { CronError, normalizeCron, validateCron } from '../platform/cron.ts';
import type { Trx } from '../platform/db/database.ts';
import { badRequest, notFound } from '../platform/errors.ts';
import { USER_FEED_ACTION, USER_FEED_ACTIONS } from './action.ts';
import type { FileSummary, RowReport } from './process-file.ts';

// What SCIM uses of the user feed: the same group, typology and deactivation rules for a provisioned user.
export { createGroup, createTypology, deactivate, timesheetRequired } from './rows.ts';

export const DEFAULT_SCHEDULE = '0 4 * * *';

/** The feed's definition is validated knowing its own action type. */
const FEED_LIMITS: DefinitionLimits = { ...DEFAULT_LIMITS, actionTypes: { [USER_FEED_ACTION]: USER_FEED_ACTIONS[USER_FEED_ACTION].fields } };

export interface UserFeedView {
  enabled: boolean;
  schedule: string;
  dryRun: boolean;
  automationId: string | null;
  nextRunUtc: string | null;
}

export interface UserFeedChange {
  enabled?: boolean;
  schedule?: string;
  dryRun?: boolean;
}

function settingsOf(definition: Definition): { enabled: boolean; schedule: string; dryRun: boolean } {
  const feed = definition.actions.find((a) => actionTypeOf(a) === USER_FEED_ACTION);
  return {
    enabled: definition.scheduler?.isActive !== false && Boolean(definition.scheduler?.cronExpression),
    schedule: definition.scheduler?.cronExpression ?? DEFAULT_SCHEDULE,
    dryRun: feed?.dryRun === true,
  };
}

export function feedDefinition(s: { enabled: boolean; schedule: string; dryRun: boolean }) {
  return {
    name: 'User feed',
    active: true,
    logLevelType: 'Info',
    requiresAuthentication: false,
    actions: [
      { name: 'Start', actionType: 'Start', next: 'Feed' },
      { name: 'Feed', actionType: USER_FEED_ACTION, dryRun: s.dryRun, next: 'Done' },
      { name: 'Done', actionType: 'Result', httpResponse: { statusCode: 200, body: "{{['Feed']}}" } },
    ],
    subWorkflows: [],
    scheduler: { cronExpression: s.schedule, isActive: s.enabled },
  };
}

async function feedAutomation(trx: Trx) {
  return trx
    .selectFrom('user_feeds as f')
    .innerJoin('automations as a', (j) => j.onRef('a.tenant_id', '=', 'f.tenant_id').onRef('a.id', '=', 'f.automation_id'))
    .select(['a.id', 'a.definition', 'a.next_fire_utc'])
    .executeTakeFirst();
}

export async function getUserFeed(trx: Trx): Promise<UserFeedView> {
  const a = await feedAutomation(trx);
  if (!a) return { enabled: false, schedule: DEFAULT_SCHEDULE, dryRun: false, automationId: null, nextRunUtc: null };
  return {
    ...settingsOf(a.definition as unknown as Definition),
    automationId: a.id,
    nextRunUtc: a.next_fire_utc ? new Date(a.next_fire_utc).toISOString() : null,
  };
}

/** Saves the settings as a new version of the feed's automation, creating it the first time. */
export async function putUserFeed(trx: Trx, principal: Principal, change: UserFeedChange): Promise<UserFeedView> {
  const current = await getUserFeed(trx);
  const next = {
    enabled: change.enabled ?? current.enabled,
    schedule: change.schedule !== undefined ? normalizeCron(change.schedule) : current.schedule,
    dryRun: change.dryRun ?? current.dryRun,
  };
  try {
    validateCron(next.schedule);
  } catch (err) {
    if (err instanceof CronError) throw badRequest('schedule is not a five-field cron expression.', [{ path: '/body/schedule', message: err.message }]);
    throw err;
  }
  if (current.automationId) await updateAutomation(trx, principal, current.automationId, feedDefinition(next), null, FEED_LIMITS);
  else {
    const created = await createAutomation(trx, principal, feedDefinition(next), null, FEED_LIMITS);
    await trx.insertInto('user_feeds').values({ tenant_id: principal.tenantId, automation_id: created.id }).execute();
  }
  return getUserFeed(trx);
}

export interface RunRowView {
  row: number;
  externalId: string | null;
  outcome: string;
  userId: string | null;
  message: string | null;
}

export interface FeedRunView {
  id: string;
  automationId: string | null;
  automationRunId: string | null;
  trigger: string;
  dryRun: boolean;
  status: string;
  startedOnUtc: string;
  finishedOnUtc: string | null;
  error: string | null;
  files: (Omit<FileSummary, 'details'> & { rowResults?: RunRowView[] })[];
}

type RunRecord = {
  id: string;
  automation_id: string | null;
  automation_run_id: string | null;
  trigger: string;
  dry_run: boolean;
  status: string;
  started_on_utc: Date | string;
  finished_on_utc: Date | string | null;
  error: string | null;
  files: unknown;
};

function runView(r: RunRecord): FeedRunView {
  const files = (Array.isArray(r.files) ? r.files : []) as FileSummary[];
  return {
    id: r.id,
    automationId: r.automation_id,
    automationRunId: r.automation_run_id,
    trigger: r.trigger,
    dryRun: r.dry_run,
    status: r.status,
    startedOnUtc: new Date(r.started_on_utc).toISOString(),
    finishedOnUtc: r.finished_on_utc ? new Date(r.finished_on_utc).toISOString() : null,
    error: r.error,
    files: files.map(({ details: _, ...f }) => f),
  };
}

export async function listFeedRuns(trx: Trx, skip: number, take: number): Promise<FeedRunView[]> {
  const rows = await trx.selectFrom('user_feed_runs').selectAll().orderBy('started_on_utc', 'desc').orderBy('id').offset(skip).limit(take).execute();
  return rows.map(runView);
}

/** One run with each file's rows: a dry run's from the run itself, a real run's from the rows it committed. */
export async function findFeedRun(trx: Trx, id: string): Promise<FeedRunView> {
  const r = await trx.selectFrom('user_feed_runs').selectAll().where('id', '=', id).executeTakeFirst();
  if (!r) throw notFound(`No user feed run ${id}.`);
  const view = runView(r);
  const stored = (Array.isArray(r.files) ? r.files : []) as unknown as FileSummary[];
  for (const [i, f] of view.files.entries()) {
    const details: RowReport[] | undefined = stored[i].details;
    if (details) f.rowResults = details;
    else if (f.fileId && !f.alreadyProcessed) {
      const { rows } = await sql<RunRowView>`
        select row_number as "row", external_id as "externalId", outcome, user_id as "userId", message
        from user_feed_rows where file_id = ${f.fileId} order by row_number`.execute(trx);
      f.rowResults = rows;
    } else f.rowResults = [];
  }
  return view;
}

export async function setAutomationRun(trx: Trx, feedRunId: string, automationRunId: string): Promise<void> {
  await trx.updateTable('user_feed_runs').set({ automation_run_id: automationRunId }).where('id', '=', feedRunId).execute();
}
