// Named queries compute what the platform computes (issue 30, decision 0046). The platform's published
// statements read values Atrium's model did not keep:
// - a timesheet's snapshot taken when the time was booked: the company it was booked in, the department
//   and typology of the person then, and their hourly cost then (DE-TimeSheets, EstimatedPlannedActualMonthly);
// - a workflow stage's own Delayed flag (DE-Jobs / DE-Projects IsDelayed and Delayed);
// - a project nature's template, timesheet and deliverable settings (DE-ProjectsTypes reads natures).
// Existing rows are filled with what the model said until now: the user's company, department and typology
// and the cost in force on the entry's day; a stage is Delayed when its stage type is not Completed or Canceled.
import { type Kysely, sql } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    alter table timesheets
      add column booked_company_id uuid,
      add column booked_department_id uuid,
      add column booked_typology_id uuid,
      add column booked_hourly_cost numeric(19,4),
      add foreign key (tenant_id, booked_company_id) references companies (tenant_id, id),
      add foreign key (tenant_id, booked_department_id) references departments (tenant_id, id),
      add foreign key (tenant_id, booked_typology_id) references typologies (tenant_id, id)`.execute(db);
  await sql`
    update timesheets t
       set booked_company_id = coalesce(u.company_id, d.company_id),
           booked_department_id = coalesce(u.department_id, j.department_id),
           booked_typology_id = coalesce((select h.typology_id from user_typology_histories h
                                           where h.tenant_id = t.tenant_id and h.user_id = t.user_id and h.start_date <= t.date
                                             and coalesce(h.end_date, 'infinity'::date) >= t.date
                                           order by h.start_date desc, h.id desc limit 1), u.typology_id),
           booked_hourly_cost = (select c.hourly_value from user_costs c
                                  where c.tenant_id = t.tenant_id and c.user_id = t.user_id and c.start_date <= t.date
                                    and coalesce(c.end_date, 'infinity'::date) >= t.date
                                  order by c.start_date desc, c.id desc limit 1)
      from users u, jobs j
      left join departments d on d.tenant_id = j.tenant_id and d.id = j.department_id
     where u.tenant_id = t.tenant_id and u.id = t.user_id and j.tenant_id = t.tenant_id and j.id = t.job_id`.execute(db);
  await sql`alter table workflow_stages add column delayed boolean not null default false`.execute(db);
  await sql`
    update workflow_stages s set delayed = true
      from workflow_stage_types st
     where st.tenant_id = s.tenant_id and st.id = s.stage_type_id and st.name not in ('Completed', 'Canceled')`.execute(db);
  await sql`
    alter table project_natures
      add column template_file_name text,
      add column allows_timesheet boolean not null default true,
      add column is_deliverable boolean not null default false`.execute(db);
}

export async function down(db: Kysely<unknown>): Promise<void> {
  await sql`alter table project_natures drop column template_file_name, drop column allows_timesheet, drop column is_deliverable`.execute(db);
  await sql`alter table workflow_stages drop column delayed`.execute(db);
  await sql`alter table timesheets drop column booked_company_id, drop column booked_department_id, drop column booked_typology_id, drop column booked_hourly_cost`.execute(
    db,
  );
}
