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

/**
 * One planned-time entry: the query shows its times in days of the quote line's department's company
 * (hours / RequiredHours), so the stored hours are those days times that company's RequiredHours, to the
 * column's 4 decimals. The entry's own id is not shown: it is derived from the query's key (project, month,
 * department, typology group, user, quote line, planned time). Its department is the quote line's (the only
 * one shown), and its rate-card snapshot the line's table rate (the query shows that one).
 */
function plannedTime(r: SourceRow, s: RunState): Values | null {
  const month = day(r.Month);
  const required = hoursOfDepartment.get(s)?.get(String(r.DepartmentId));
  if (!id(r.ProjectId) || !month || !required) return null;
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
    planned_hours: Math.round(Number(r.ProjectPlannedTime ?? 0) * required * 10000) / 10000,
    actual_sell_rate: r.ActualSellRate,
    contracted_sell_rate: r.ContractedSellRate,
    rate_card_sell_rate: r.RateCardSellRate,
    comments: r.Comments,
    description: r.Description,
  };
}

export const PLANNING_IMPORTS: QueryImport[] = [
  additionalInformation('DE-ProjectsAdditionalInformation', 'Project', 'ProjectId', ['ProjectId', 'Project', 'ProjectNumber']),
  {
    // Entries of projects neither Draft nor Canceled that have an estimate neither Draft nor Canceled, with a
    // typology group, a user and a quote line: the only ones any query shows (EstimatedPlannedActualMonthly
    // shows the same entries, summed), so the others are removed.
    namedQuery: 'DE-ProjectsPlannedTime',
    key: ['ProjectId', 'Month', 'DepartmentId', 'ProjectPlannedUserTypologyGroupId', 'ProjectPlannedUserId', 'EstimateItemDetailId', 'ProjectPlannedTime'],
    before: loadRequiredHours,
    writes: [{ table: 'project_planned_times', complete: { scope: 'all' }, values: plannedTime }],
  },
];
