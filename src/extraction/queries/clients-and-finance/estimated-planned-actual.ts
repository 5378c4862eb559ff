// EstimatedPlannedActualMonthly: per project, resource (department, typology group, user) and month,
// the contracted (estimates), planned (project planned time) and actual (timesheets) time, cost, income
// and profit, in the project's currency and in its company's currency.
import { type NamedQueryDefinition, sql } from '../../definition.ts';
import { estimateCounts, numberAndName, userName } from '../fragments.ts';

export const estimatedPlannedActual: NamedQueryDefinition[] = [
  {
    name: 'EstimatedPlannedActualMonthly',
    key: ['ProjectId', 'Company', 'Division', 'Department', 'TypologyGroup', 'UserId', 'Month'],
    source: (ctx) => sql`
      with
      -- Contracted: the monthly split of the quote lines of the project's estimates that count (not
      -- Draft/Canceled), turned into the company currency with the estimate's exchange rate. The split
      -- adds up to the line's amounts, and conversion is not rounded before the figures are shown
      -- (fragments.ts, estimate amounts), so a project's rows add up to its DE-Projects Estimated*.
      contracted as (
        select e.project_id, dt.department_id, dt.typology_group_id, dt.user_id, m.month,
          sum(m.hours) as hours, sum(m.cost * e.exchange) as cost_co, sum(m.income * e.exchange) as income_co
        from estimate_item_detail_months m
        join estimate_item_details dt on dt.tenant_id = m.tenant_id and dt.id = m.estimate_item_detail_id
        join estimate_items i on i.tenant_id = dt.tenant_id and i.id = dt.estimate_item_id
        join estimates e on e.tenant_id = i.tenant_id and e.id = i.estimate_id
        left join workflow_stages ws on ws.tenant_id = e.tenant_id and ws.id = e.stage_id
        left join workflow_stage_types wst on wst.tenant_id = ws.tenant_id and wst.id = ws.stage_type_id
        where m.tenant_id = ${ctx.tenantId} and e.project_id is not null and ${estimateCounts('wst')}
        group by 1, 2, 3, 4, 5
      ),
      -- Planned: project planned time; cost at the user's hourly cost of that month, income at the
      -- contracted sell rate (else the actual, else the rate-card rate). PlannedContractedTime is the
      -- part planned against a quote line of an estimate that counts.
      planned as (
        select pt.project_id, pt.department_id, pt.typology_group_id, pt.user_id, pt.month,
          sum(pt.planned_hours) as hours,
          sum(pt.planned_hours) filter (where ce.id is not null) as contracted_hours,
          sum(pt.planned_hours * coalesce(uc.hourly_value, 0)) as cost_co,
          sum(pt.planned_hours * coalesce(pt.contracted_sell_rate, pt.actual_sell_rate, pt.rate_card_sell_rate, 0)) as income_doc
        from project_planned_times pt
        left join lateral (
          select e.id from estimate_item_details dt
          join estimate_items i on i.tenant_id = dt.tenant_id and i.id = dt.estimate_item_id
          join estimates e on e.tenant_id = i.tenant_id and e.id = i.estimate_id
          left join workflow_stages ws on ws.tenant_id = e.tenant_id and ws.id = e.stage_id
          left join workflow_stage_types wst on wst.tenant_id = ws.tenant_id and wst.id = ws.stage_type_id
          where dt.tenant_id = pt.tenant_id and dt.id = pt.estimate_item_detail_id and ${estimateCounts('wst')}
        ) ce on true
        left join lateral (
          select c.hourly_value from user_costs c
          where c.tenant_id = pt.tenant_id and c.user_id = pt.user_id and c.start_date <= pt.month
            and coalesce(c.end_date, 'infinity') >= pt.month
          order by c.start_date desc limit 1
        ) uc on true
        where pt.tenant_id = ${ctx.tenantId}
        group by 1, 2, 3, 4, 5
      ),
      -- Actual: live timesheets (not Rejected/Canceled) of the project's jobs, by the user's typology at
      -- the date (its department and group) and month; cost at the hourly user cost of the day.
      actual_by_typology as (
        select j.project_id, coalesce(h.typology_id, u.typology_id) as typology_id, ts.user_id,
          date_trunc('month', ts.date)::date as month,
          sum(ts.duration_minutes) / 60.0 as hours, sum(ts.duration_minutes / 60.0 * coalesce(uc.hourly_value, 0)) as cost_co
        from timesheets ts
        join jobs j on j.tenant_id = ts.tenant_id and j.id = ts.job_id
        join users u on u.tenant_id = ts.tenant_id and u.id = ts.user_id
        left join user_typology_histories h on h.tenant_id = ts.tenant_id and h.user_id = ts.user_id
          and ts.date between h.start_date and coalesce(h.end_date, 'infinity')
        left join user_costs uc on uc.tenant_id = ts.tenant_id and uc.user_id = ts.user_id
          and ts.date between uc.start_date and coalesce(uc.end_date, 'infinity')
        where ts.tenant_id = ${ctx.tenantId} and ts.deleted_on is null and ts.status not in ('Rejected', 'Canceled')
        group by 1, 2, 3, 4
      ),
      -- Actual income: hours at the project's rate card, in the column valid that month (else the
      -- project's column), on the most specific row: the user's, else department and group, else group.
      -- Set-wise (hash joins on a row key) rather than a lookup per row: it runs once per grain row.
      -- One rate per rate card, column and row key (3 = row_key: user, department+group or group).
      rates as materialized (
        select distinct on (ri.rate_card_id, v.rate_card_column_id, 3)
          ri.rate_card_id, v.rate_card_column_id as column_id,
          case when ri.user_id is not null then 'u:' || ri.user_id
               when ri.department_id is not null then 'dg:' || ri.department_id || ':' || coalesce(ri.typology_group_id::text, '')
               else 'g:' || coalesce(ri.typology_group_id::text, '') end as row_key,
          v.value
        from rate_card_items ri
        join rate_card_item_values v on v.tenant_id = ri.tenant_id and v.rate_card_item_id = ri.id
        where ri.tenant_id = ${ctx.tenantId}
        order by ri.rate_card_id, v.rate_card_column_id, 3, v.id
      ),
      project_month_column as materialized (
        select pm.project_id, pm.month, p.rate_card_id,
          (select col.id from rate_card_columns col
            where col.tenant_id = p.tenant_id and col.rate_card_id = p.rate_card_id
            order by (pm.month between coalesce(col.start_date, '-infinity') and coalesce(col.end_date, 'infinity')) desc,
              col.id = p.rate_card_column_id desc, col.sort_order desc, col.id
            limit 1) as column_id
        from (select distinct project_id, month from actual_by_typology) pm
        join projects p on p.tenant_id = ${ctx.tenantId} and p.id = pm.project_id
      ),
      actual as (
        select a.project_id, ty.department_id, ty.typology_group_id, a.user_id, a.month, a.hours, a.cost_co,
          a.hours * coalesce(ru.value, rdg.value, rg.value, 0) as income_doc
        from actual_by_typology a
        join project_month_column pc on pc.project_id = a.project_id and pc.month = a.month
        left join typologies ty on ty.tenant_id = ${ctx.tenantId} and ty.id = a.typology_id
        left join rates ru on ru.rate_card_id = pc.rate_card_id and ru.column_id = pc.column_id and ru.row_key = 'u:' || a.user_id
        left join rates rdg on rdg.rate_card_id = pc.rate_card_id and rdg.column_id = pc.column_id
          and rdg.row_key = 'dg:' || ty.department_id || ':' || coalesce(ty.typology_group_id::text, '')
        left join rates rg on rg.rate_card_id = pc.rate_card_id and rg.column_id = pc.column_id
          and rg.row_key = 'g:' || coalesce(ty.typology_group_id::text, '')
      ),
      grain as (
        select project_id, department_id, typology_group_id, user_id, month,
          sum(c_hours) as c_hours, sum(pc_hours) as pc_hours, sum(p_hours) as p_hours, sum(a_hours) as a_hours,
          sum(c_cost_co) as c_cost_co, sum(p_cost_co) as p_cost_co, sum(a_cost_co) as a_cost_co,
          sum(c_income_co) as c_income_co, sum(p_income_doc) as p_income_doc, sum(a_income_doc) as a_income_doc
        from (
          select project_id, department_id, typology_group_id, user_id, month, hours as c_hours, 0 as pc_hours, 0 as p_hours,
            0 as a_hours, cost_co as c_cost_co, 0 as p_cost_co, 0 as a_cost_co, income_co as c_income_co, 0 as p_income_doc, 0 as a_income_doc
          from contracted
          union all
          select project_id, department_id, typology_group_id, user_id, month, 0, coalesce(contracted_hours, 0), hours,
            0, 0, cost_co, 0, 0, income_doc, 0
          from planned
          union all
          select project_id, department_id, typology_group_id, user_id, month, 0, 0, 0,
            hours, 0, 0, cost_co, 0, 0, income_doc
          from actual
        ) x
        group by 1, 2, 3, 4, 5
      ),
      -- The project's rate to its company's currency: 1 in the company currency, else the rate of its
      -- latest estimate in the project currency (the model keeps rates on documents only).
      project_rate as (
        select p.id as project_id, co.id as company_id,
          case when p.currency_id is null or p.currency_id = co.currency_id then 1::numeric
               else coalesce((select e.exchange from estimates e
                               where e.tenant_id = p.tenant_id and e.project_id = p.id and e.currency_id = p.currency_id
                               order by e.date desc nulls last, e.id limit 1), 1) end as exchange
        from projects p
        join companies co on co.tenant_id = p.tenant_id and co.id = p.company_id
        where p.tenant_id = ${ctx.tenantId}
      )
      select
        co.id as "CompanyId", co.name as "Company", co.image_file_id is not null as "CompanyHasImage",
        dv.name as "Division", d.name as "Department", tg.name as "TypologyGroup",
        cc.id as "ClientId", cc.name as "Client", cc.image_file_id is not null as "ClientHasImage", pr.name as "Product",
        p.id as "ProjectId", ${numberAndName('p')} as "Project",
        u.id as "UserId", ${userName('u')} as "User", coalesce(u.image_file_id is not null, false) as "UserHasImage",
        ut.name as "UserType",
        date_trunc('month', p.start_date)::date as "FromMonth", date_trunc('month', p.end_date)::date as "ToMonth", g.month as "Month",
        round(g.c_hours, 4) as "ContractedTime", round(g.pc_hours, 4) as "PlannedContractedTime",
        round(g.p_hours, 4) as "PlannedTime", round(g.a_hours, 4) as "ActualTime",
        round(g.c_cost_co / r.exchange, 4) as "ContractedCost", round(g.p_cost_co / r.exchange, 4) as "PlannedCost",
        round(g.a_cost_co / r.exchange, 4) as "ActualCost",
        round(g.c_income_co / r.exchange, 4) as "ContractedIncome", round(g.p_income_doc, 4) as "PlannedIncome",
        round(g.a_income_doc, 4) as "ActualIncome",
        round(g.c_income_co / r.exchange, 4) - round(g.c_cost_co / r.exchange, 4) as "ContractedProfit",
        round(g.p_income_doc, 4) - round(g.p_cost_co / r.exchange, 4) as "PlannedProfit",
        round(g.a_income_doc, 4) - round(g.a_cost_co / r.exchange, 4) as "ActualProfit",
        round(g.c_cost_co, 4) as "CompanyContractedCost", round(g.p_cost_co, 4) as "CompanyPlannedCost",
        round(g.a_cost_co, 4) as "CompanyActualCost",
        round(g.c_income_co, 4) as "CompanyContractedIncome", round(g.p_income_doc * r.exchange, 4) as "CompanyPlannedIncome",
        round(g.a_income_doc * r.exchange, 4) as "CompanyActualIncome",
        round(g.c_income_co, 4) - round(g.c_cost_co, 4) as "CompanyContractedProfit",
        round(g.p_income_doc * r.exchange, 4) - round(g.p_cost_co, 4) as "CompanyPlannedProfit",
        round(g.a_income_doc * r.exchange, 4) - round(g.a_cost_co, 4) as "CompanyActualProfit",
        r.exchange as "Exchange", coalesce(pcur.symbol, ccur.symbol) as "CurrencySymbol",
        ccur.name as "CurrencyCompany", ccur.symbol as "CurrencyCompanySymbol"
      from grain g
      join projects p on p.tenant_id = ${ctx.tenantId} and p.id = g.project_id
      join project_rate r on r.project_id = p.id
      join companies co on co.tenant_id = p.tenant_id and co.id = r.company_id
      join commercial_clients cc on cc.tenant_id = p.tenant_id and cc.id = p.commercial_client_id
      left join products pr on pr.tenant_id = p.tenant_id and pr.id = p.product_id
      left join departments d on d.tenant_id = p.tenant_id and d.id = g.department_id
      left join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
      left join typology_groups tg on tg.tenant_id = p.tenant_id and tg.id = g.typology_group_id
      left join users u on u.tenant_id = p.tenant_id and u.id = g.user_id
      left join user_types ut on ut.tenant_id = u.tenant_id and ut.id = u.user_type_id
      left join currencies pcur on pcur.tenant_id = p.tenant_id and pcur.id = p.currency_id
      left join currencies ccur on ccur.tenant_id = co.tenant_id and ccur.id = co.currency_id`,
  },
];
