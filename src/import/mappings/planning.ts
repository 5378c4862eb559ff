// The import's mappings of a project's planning: its additional information (user-defined fields) and its
// planned time, the inverse of DE-ProjectsAdditionalInformation and DE-ProjectsPlannedTime
// (src/extraction/queries/jobs-and-projects/projects.ts). EstimatedPlannedActualMonthly reads nothing of its
// own: it is answered from the estimates, this planned time and the timesheets' booked values. Decision 0066.
import { sql } from 'kysely';
import type { Trx } from '../../platform/db/database.ts';
import type { SourceRow } from '../client.ts';
import type { QueryImport, RunState, Values } from '../mappings.ts';
import { day, derivedId, id } from './helpers.ts';
import { additionalInformation } from './people-extras.ts';

/** Per run: the daily required hours of each department's company in the target (DE-Companies wrote them). */
const hoursOfDepartment = new WeakMap<RunState, Map<string, number>>();

async function loadRequiredHours(trx: Trx, tenantId: string, state: RunState): Promise<void> {
  const rows = await sql<{ id: string; required_hours: string | null }>`
    select d.id, co.required_hours
      from departments d join companies co on co.tenant_id = d.tenant_id and co.id = d.company_id
     where d.tenant_id = ${tenantId}`.execute(trx);
  hoursOfDepartment.set(state, new Map(rows.rows.map((r) => [r.id, Number(r.required_hours)])));
}

/** Days of the row's department's company back to hours (the stored numeric's 4 decimals); null when unknown. */
function hoursOf(r: SourceRow, s: RunState, days: unknown): number | null {
  const required = hoursOfDepartment.get(s)?.get(String(r.DepartmentId));
  if (!required || days === null || days === undefined) return null;
  return Math.round(Number(days) * required * 10000) / 10000;
}

/**
 * One planned-time entry: the query shows its times in days of the quote line's department's company
 * (hours / RequiredHours), so the stored hours are those days times that company's RequiredHours, to the
 * column's 4 decimals. The entry's own id is not shown: it is derived from the query's key (project, month,
 * department, typology group, user, quote line, planned time). Its department is the quote line's (the only
 * one shown), and its rate-card snapshot the line's table rate (the query shows that one).
 */
function plannedTime(r: SourceRow, s: RunState): Values | null {
  const month = day(r.Month);
  const hours = hoursOf(r, s, r.ProjectPlannedTime ?? 0);
  if (!id(r.ProjectId) || !month || hours === null) return null;
  return {
    id: derivedId(
      'project_planned_times',
      r.ProjectId,
      month,
      r.DepartmentId,
      r.ProjectPlannedUserTypologyGroupId,
      r.ProjectPlannedUserId,
      r.EstimateItemDetailId,
      r.ProjectPlannedTime,
    ),
    project_id: r.ProjectId,
    department_id: r.DepartmentId,
    typology_group_id: r.ProjectPlannedUserTypologyGroupId,
    user_id: r.ProjectPlannedUserId,
    estimate_item_detail_id: r.EstimateItemDetailId,
    month,
    planned_hours: hours,
    actual_sell_rate: r.ActualSellRate,
    contracted_sell_rate: r.ContractedSellRate,
    rate_card_sell_rate: r.RateCardSellRate,
    comments: r.Comments,
    description: r.Description,
  };
}

/**
 * The quote line's hours in the entry's month (ProjectPlannedContractedTime, in days): DE-EstimatesQuotesMonth
 * shows the months of lines of estimates neither Draft nor Canceled only, and an entry may plan a line of a
 * Draft one. Written under the id DE-EstimatesQuotesMonth gives the same month (it writes cost and income when
 * it shows the line); for a line it shows, the hours are the same and nothing is written.
 */
function lineMonth(r: SourceRow, s: RunState): Values | null {
  const month = day(r.Month);
  const hours = hoursOf(r, s, r.ProjectPlannedContractedTime);
  if (!id(r.EstimateItemDetailId) || !month || hours === null) return null;
  return { id: derivedId('estimate_item_detail_months', r.EstimateItemDetailId, month), estimate_item_detail_id: r.EstimateItemDetailId, month, hours };
}

export const PLANNING_IMPORTS: QueryImport[] = [
  additionalInformation('DE-ProjectsAdditionalInformation', 'Project', 'ProjectId', ['ProjectId', 'Project', 'ProjectNumber']),
  {
    // Entries of projects neither Draft nor Canceled that have an estimate neither Draft nor Canceled, with a
    // typology group, a user and a quote line; the table holds these only. (EstimatedPlannedActualMonthly also
    // sums those of Draft and Canceled projects, naming no line: not given back, docs/import.md.)
    namedQuery: 'DE-ProjectsPlannedTime',
    key: ['ProjectId', 'Month', 'DepartmentId', 'ProjectPlannedUserTypologyGroupId', 'ProjectPlannedUserId', 'EstimateItemDetailId', 'ProjectPlannedTime'],
    before: loadRequiredHours,
    writes: [
      { table: 'estimate_item_detail_months', values: lineMonth },
      { table: 'project_planned_times', complete: { scope: 'all' }, values: plannedTime },
    ],
  },
];
