// EstimatedPlannedActualMonthly, as the platform's statement computes it: contracted (quote lines), planned
// (project planned time) and actual (timesheets) figures per resource (the department's company, division
// and department, typology group, user), project, client, product, month and quote line. Times are in days
// (hours / the company's daily RequiredHours); amounts are in each source's currency, Company* amounts are
// those times its exchange rate. What looks wrong on the platform is kept (docs/named-queries.md).
import { type NamedQueryDefinition, sql } from '../../definition.ts';
import { userName } from '../fragments.ts';

export const estimatedPlannedActual: NamedQueryDefinition[] = [
  {
    name: 'EstimatedPlannedActualMonthly',
    // The platform groups by quote line and by department and typology group ids without answering them:
    // they are hidden columns here, so paging has a key that tells every row apart.
    hiddenColumns: [
      { name: 'DepartmentId', type: 'guid' },
      { name: 'TypologyGroupId', type: 'guid' },
      { name: 'EstimateItemDetailId', type: 'guid' },
    ],
    aggregate: true,
    key: ['ProjectId', 'CompanyId', 'DepartmentId', 'TypologyGroupId', 'UserId', 'ClientId', 'Product', 'Month', 'EstimateItemDetailId'],
    source: (ctx) => sql`
      with
      -- Contracted: the monthly split of the quote lines of the project's estimates that are neither Draft
      -- nor Canceled and whose type is not "Budget"; cost and income = the line's unit price × the month's hours.
      contracted as (
        select e.commercial_client_id as client_id, e.project_id, dt.department_id, dt.typology_group_id, dt.user_id,
               e.product_id, dt.id as line_id, e.currency_id, m.month, max(e.exchange) as exchange,
               sum(m.hours) as c_time, sum(dt.unit_price_cost * m.hours) as c_cost, sum(dt.unit_price_income * m.hours) as c_income
          from estimate_item_detail_months m
          join estimate_item_details dt on dt.tenant_id = m.tenant_id and dt.id = m.estimate_item_detail_id
          join estimate_items i on i.tenant_id = dt.tenant_id and i.id = dt.estimate_item_id
          join estimates e on e.tenant_id = i.tenant_id and e.id = i.estimate_id
          join job_types typ on typ.tenant_id = e.tenant_id and typ.id = e.type_id
          join workflow_stages ws on ws.tenant_id = e.tenant_id and ws.id = e.stage_id
          join workflow_stage_types wst on wst.tenant_id = ws.tenant_id and wst.id = ws.stage_type_id
         where m.tenant_id = ${ctx.tenantId} and typ.name <> 'Budget' and wst.name not in ('Draft', 'Canceled') and e.project_id is not null
         group by 1, 2, 3, 4, 5, 6, 7, 8, 9
      ),
      -- Planned: entries with a typology group, a user and a quote line (whose department, division and
      -- company exist), of projects with an estimate that is neither Draft nor Canceled. Days = hours / the
      -- quote line's company's RequiredHours; PlannedContractedTime = the quote line's hours that month in
      -- days; cost and income both = days × the entry's actual sell rate.
      planned as (
        select p.commercial_client_id as client_id, p.id as project_id, dt.department_id, t.typology_group_id, t.user_id,
               p.product_id, dt.id as line_id, e.currency_id, t.month, max(e.exchange) as exchange,
               sum(m.hours / co.required_hours) as pc_time, sum(t.planned_hours / co.required_hours) as p_time,
               sum(t.planned_hours / co.required_hours * t.actual_sell_rate) as p_amount
          from project_planned_times t
          join projects p on p.tenant_id = t.tenant_id and p.id = t.project_id
          join estimate_item_details dt on dt.tenant_id = t.tenant_id and dt.id = t.estimate_item_detail_id
          join estimate_items i on i.tenant_id = dt.tenant_id and i.id = dt.estimate_item_id
          join estimates e on e.tenant_id = i.tenant_id and e.id = i.estimate_id
          join departments d on d.tenant_id = dt.tenant_id and d.id = dt.department_id
          join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
          join companies co on co.tenant_id = dv.tenant_id and co.id = dv.company_id
          left join estimate_item_detail_months m on m.tenant_id = t.tenant_id and m.estimate_item_detail_id = dt.id and m.month = t.month
         where t.tenant_id = ${ctx.tenantId} and t.user_id is not null and t.typology_group_id is not null
           and exists (select 1 from estimates le
                         join workflow_stages ls on ls.tenant_id = le.tenant_id and ls.id = le.stage_id
                         join workflow_stage_types lst on lst.tenant_id = ls.tenant_id and lst.id = ls.stage_type_id
                        where le.tenant_id = p.tenant_id and le.project_id = p.id and lst.name not in ('Draft', 'Canceled'))
         group by 1, 2, 3, 4, 5, 6, 7, 8, 9
      ),
      -- Actual: every live timesheet, on the department and typology stored when it was booked, in days of
      -- the company it was booked in; cost = days × the hourly cost stored at booking (sic), in that company's
      -- currency at exchange 1; actual income is 0 on the platform.
      actual as (
        select p.commercial_client_id as client_id, p.id as project_id, t.booked_department_id as department_id,
               ty.typology_group_id, t.user_id, p.product_id, null::uuid as line_id, bc.currency_id,
               date_trunc('month', t.date)::date as month, 1::numeric as exchange,
               sum(t.duration_minutes / 60.0 / bc.required_hours) as a_time,
               sum(t.duration_minutes / 60.0 / bc.required_hours * t.booked_hourly_cost) as a_cost
          from timesheets t
          join jobs j on j.tenant_id = t.tenant_id and j.id = t.job_id
          join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
          join typologies ty on ty.tenant_id = t.tenant_id and ty.id = t.booked_typology_id
          join companies bc on bc.tenant_id = t.tenant_id and bc.id = t.booked_company_id
         where t.tenant_id = ${ctx.tenantId} and t.deleted_on is null
         group by 1, 2, 3, 4, 5, 6, 7, 8, 9
      ),
      f as (
        select client_id, project_id, department_id, typology_group_id, user_id, product_id, line_id, currency_id, month, exchange,
               c_time, 0 as pc_time, 0 as p_time, 0 as a_time, c_cost, 0 as p_cost, 0 as a_cost, c_income, 0 as p_income
          from contracted
        union all
        select client_id, project_id, department_id, typology_group_id, user_id, product_id, line_id, currency_id, month, exchange,
               0, pc_time, p_time, 0, 0, p_amount, 0, 0, p_amount
          from planned
        union all
        select client_id, project_id, department_id, typology_group_id, user_id, product_id, line_id, currency_id, month, exchange,
               0, 0, 0, a_time, 0, 0, a_cost, 0, 0
          from actual
      )
      select
        co.id as "CompanyId", co.name as "Company", co.image_file_id is not null as "CompanyHasImage",
        dv.name as "Division", d.name as "Department", tg.name as "TypologyGroup",
        cc.id as "ClientId", cc.name as "Client", cc.image_file_id is not null as "ClientHasImage", pr.name as "Product",
        p.id as "ProjectId", p.name as "Project",
        u.id as "UserId", ${userName('u')} as "User", u.image_file_id is not null as "UserHasImage", ut.name as "UserType",
        date_trunc('month', p.start_date)::date as "FromMonth", date_trunc('month', p.end_date)::date as "ToMonth",
        date_trunc('month', f.month)::date as "Month",
        sum(f.c_time) as "ContractedTime", sum(f.pc_time) as "PlannedContractedTime", sum(f.p_time) as "PlannedTime",
        sum(f.a_time) as "ActualTime",
        sum(f.c_cost) as "ContractedCost", sum(f.p_cost) as "PlannedCost", sum(f.a_cost) as "ActualCost",
        sum(f.c_income) as "ContractedIncome", sum(f.p_income) as "PlannedIncome", 0::numeric as "ActualIncome",
        sum(f.c_income - f.c_cost) as "ContractedProfit", sum(f.p_income - f.p_cost) as "PlannedProfit",
        sum(-f.a_cost) as "ActualProfit",
        sum(f.c_cost * f.exchange) as "CompanyContractedCost", sum(f.p_cost * f.exchange) as "CompanyPlannedCost",
        sum(f.a_cost * f.exchange) as "CompanyActualCost",
        sum(f.c_income * f.exchange) as "CompanyContractedIncome", sum(f.p_income * f.exchange) as "CompanyPlannedIncome",
        0::numeric as "CompanyActualIncome",
        sum((f.c_income - f.c_cost) * f.exchange) as "CompanyContractedProfit",
        sum((f.p_income - f.p_cost) * f.exchange) as "CompanyPlannedProfit",
        sum(-f.a_cost * f.exchange) as "CompanyActualProfit",
        max(f.exchange) as "Exchange", max(cur.symbol) as "CurrencySymbol",
        prc.name as "CurrencyCompany", ccr.symbol as "CurrencyCompanySymbol",
        d.id as "DepartmentId", tg.id as "TypologyGroupId", f.line_id as "EstimateItemDetailId"
      from f
      -- Each lookup is a LATERAL subquery with LIMIT 1 (decision 0082): one index probe per figure, in the order
      -- written. As plain joins, each small table filtered on the tenant divided the planner's row estimate (its
      -- join selectivity is taken over every tenant's rows), the estimate of ~120,000 figures fell to a few rows,
      -- and a nested loop over them compared every figure with every project: minutes at scale 50. A grouped
      -- key's uuids come first in GROUP BY: the sort rarely compares names.
      join lateral (select d.id, d.name, d.division_id from departments d where d.tenant_id = ${ctx.tenantId} and d.id = f.department_id limit 1) d on true
      join lateral (select dv.name, dv.company_id from divisions dv where dv.tenant_id = ${ctx.tenantId} and dv.id = d.division_id limit 1) dv on true
      join lateral (select co.id, co.name, co.image_file_id from companies co where co.tenant_id = ${ctx.tenantId} and co.id = dv.company_id limit 1) co on true
      join lateral (select tg.id, tg.name from typology_groups tg where tg.tenant_id = ${ctx.tenantId} and tg.id = f.typology_group_id limit 1) tg on true
      join lateral (select cur.symbol from currencies cur where cur.tenant_id = ${ctx.tenantId} and cur.id = f.currency_id limit 1) cur on true
      join lateral (select p.id, p.name, p.start_date, p.end_date, p.company_id from projects p where p.tenant_id = ${ctx.tenantId} and p.id = f.project_id limit 1) p on true
      join lateral (select prc.name, prc.currency_id from companies prc where prc.tenant_id = ${ctx.tenantId} and prc.id = p.company_id limit 1) prc on true
      join lateral (select ccr.symbol from currencies ccr where ccr.tenant_id = ${ctx.tenantId} and ccr.id = prc.currency_id limit 1) ccr on true
      left join lateral (select cc.id, cc.name, cc.image_file_id from commercial_clients cc where cc.tenant_id = ${ctx.tenantId} and cc.id = f.client_id limit 1) cc on true
      left join lateral (select pr.name from products pr where pr.tenant_id = ${ctx.tenantId} and pr.id = f.product_id limit 1) pr on true
      left join lateral (select u.id, u.name, u.user_name, u.image_file_id, u.user_type_id from users u where u.tenant_id = ${ctx.tenantId} and u.id = f.user_id limit 1) u on true
      left join lateral (select ut.name from user_types ut where ut.tenant_id = ${ctx.tenantId} and ut.id = u.user_type_id limit 1) ut on true
      group by p.id, co.id, d.id, tg.id, u.id, cc.id, pr.name, date_trunc('month', f.month), f.line_id,
               co.name, co.image_file_id, dv.name, d.name, tg.name, cc.name, cc.image_file_id, p.name, p.start_date, p.end_date,
               u.name, u.user_name, u.image_file_id, ut.name, prc.name, ccr.symbol`,
  },
];
