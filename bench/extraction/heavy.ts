// Hand-written keys-first statements for the first page (take 100, the default order: the key) and the count of
// the ten heaviest named queries at scale 50 by rows × columns (issue #32; the ranking is printed by
// bench/extraction-heavy.ts and recorded in bench/RESULTS.md). What a DBA writes: the page's keys on the driving
// table with only the joins that decide which rows exist, in the key's order; the count over the same rows; then
// the columns for those keys. The columns are written by hand for DE-TimeSheets (baselines.ts); for the others
// they are the definition's own keys-phase source restricted to the page's keys (the same lookups the engine
// runs for its rows statement), so what is compared is the key statement, the count and the engine's overhead.
// EstimatedPlannedActualMonthly is an aggregate: no key precedes its groups, so its hand-written form computes the
// groups once, ordered and limited, with the count as a window over them. $1 is the tenant, $2 the take.
import { inlineParameters } from '../../src/extraction/exports/copy-statement.ts';
import { COLUMNS, LOOKUPS } from './baselines.ts';

export interface HeavyQuery {
  name: string;
  /** The table a write is made to before each cold run (one the query reads). */
  table: string;
  /** The key columns (as the definition's key), each with the hand statement's expression for it. */
  keys: string[];
  /** FROM … WHERE … of the page's rows, with only the joins that decide which rows there are. */
  rows: string;
  /** The key statement's ORDER BY (the key's order). */
  order: string;
  /** The count, when it is not over `rows` (a DBA's narrower count, the same number). */
  count?: string;
  /** Computed as one ordered statement with a window count (aggregates). */
  aggregate?: boolean;
}

const ESTIMATE_ROWS = `join estimate_items i on i.tenant_id = dt.tenant_id and i.id = dt.estimate_item_id
  join estimates e on e.tenant_id = i.tenant_id and e.id = i.estimate_id
  join departments d on d.tenant_id = e.tenant_id and d.id = e.department_id
  join commercial_clients cc on cc.tenant_id = e.tenant_id and cc.id = e.commercial_client_id
  join currencies cur on cur.tenant_id = e.tenant_id and cur.id = e.currency_id`;

export const HEAVY_QUERIES: HeavyQuery[] = [
  {
    name: 'DE-TimeSheets',
    table: 'timesheets',
    keys: ['t.id'],
    rows: 'from timesheets t where t.tenant_id = $1 and t.deleted_on is null',
    order: 't.id',
  },
  { name: 'EstimatedPlannedActualMonthly', table: 'timesheets', keys: [], rows: '', order: '', aggregate: true },
  {
    name: 'DE-Attendances',
    table: 'attendance_details',
    keys: ['at.user_id', 'at.day', 'ad.time', 'ad.entry_type'],
    rows: `from attendances at join attendance_details ad on ad.tenant_id = at.tenant_id and ad.attendance_id = at.id where at.tenant_id = $1`,
    order: 'at.user_id, at.day, ad.time, ad.entry_type',
  },
  {
    name: 'DE-Workloads',
    table: 'workloads',
    keys: ['w.id'],
    rows: 'from workloads w join jobs j on j.tenant_id = w.tenant_id and j.id = w.document_id where w.tenant_id = $1',
    order: 'w.id',
  },
  {
    name: 'DE-EstimatesQuotes',
    table: 'estimate_item_details',
    keys: ['dt.id'],
    rows: `from estimate_item_details dt ${ESTIMATE_ROWS} where dt.tenant_id = $1`,
    order: 'dt.id',
  },
  { name: 'DE-History', table: 'document_history', keys: ['h.id'], rows: 'from document_history h where h.tenant_id = $1', order: 'h.id' },
  {
    name: 'DE-Assignments',
    table: 'assignments',
    keys: ['a.document_id', 'a.team_id', 'a.user_id'],
    rows: 'from assignments a where a.tenant_id = $1',
    order: 'a.document_id, a.team_id, a.user_id',
  },
  {
    name: 'DE-EstimatesQuotesMonth',
    table: 'estimate_item_details',
    keys: ['dt.id', `(m.month::timestamp at time zone 'UTC')`],
    rows: `from estimate_item_details dt ${ESTIMATE_ROWS}
      join workflow_stages ws on ws.tenant_id = e.tenant_id and ws.id = e.stage_id
      join workflow_stage_types wst on wst.tenant_id = ws.tenant_id and wst.id = ws.stage_type_id
      join typology_groups tg on tg.tenant_id = dt.tenant_id and tg.id = dt.typology_group_id
      left join estimate_item_detail_months m on m.tenant_id = dt.tenant_id and m.estimate_item_detail_id = dt.id
     where dt.tenant_id = $1 and wst.name not in ('Draft', 'Canceled')`,
    order: `dt.id, 2`,
  },
  {
    name: 'DE-Jobs',
    table: 'jobs',
    keys: ['j.id'],
    rows: `from jobs j join projects p on p.tenant_id = j.tenant_id and p.id = j.project_id
      join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
      join departments d on d.tenant_id = j.tenant_id and d.id = j.department_id
      join companies co on co.tenant_id = d.tenant_id and co.id = d.company_id
     where j.tenant_id = $1`,
    order: 'j.id',
  },
  {
    name: 'DE-ProjectsPlannedTime',
    table: 'project_planned_times',
    keys: ['p.id', 't.month', 'd.id', 'tg.id', 'u.id', 'dt.id', 't.planned_hours / co.required_hours'],
    rows: `from project_planned_times t
      join projects p on p.tenant_id = t.tenant_id and p.id = t.project_id
      join workflow_stages s on s.tenant_id = p.tenant_id and s.id = p.stage_id
      join workflow_stage_types st on st.tenant_id = s.tenant_id and st.id = s.stage_type_id
      join commercial_clients cl on cl.tenant_id = p.tenant_id and cl.id = p.commercial_client_id
      join project_classifications pc on pc.tenant_id = p.tenant_id and pc.id = p.classification_id
      join project_natures pn on pn.tenant_id = p.tenant_id and pn.id = p.nature_id
      join typology_groups tg on tg.tenant_id = t.tenant_id and tg.id = t.typology_group_id
      join users u on u.tenant_id = t.tenant_id and u.id = t.user_id
      join estimate_item_details dt on dt.tenant_id = t.tenant_id and dt.id = t.estimate_item_detail_id
      join departments d on d.tenant_id = dt.tenant_id and d.id = dt.department_id
      join divisions dv on dv.tenant_id = d.tenant_id and dv.id = d.division_id
      join companies co on co.tenant_id = d.tenant_id and co.id = d.company_id
     where t.tenant_id = $1 and st.name not in ('Draft', 'Canceled')
       and exists (select 1 from estimates e
                     join workflow_stages es on es.tenant_id = e.tenant_id and es.id = e.stage_id
                     join workflow_stage_types est on est.tenant_id = es.tenant_id and est.id = es.stage_type_id
                    where e.tenant_id = p.tenant_id and e.project_id = p.id and est.name not in ('Draft', 'Canceled'))`,
    order: '1, 2, 3, 4, 5, 6, 7',
  },
];

export interface HeavyBaseline {
  /** The page: its rows in order (an aggregate's also carry "__n", the count). */
  page: string;
  /** The count (n), or null when the page carries it. */
  count: string | null;
  parameters: unknown[];
}

/**
 * The page and count of `name` for `tenantId`. `source`: the definition's keys-phase source compiled for the
 * tenant (its columns for the page's keys; an aggregate's whole statement), `columns` the catalogue's columns and
 * `key` the definition's key columns.
 */
export function heavyBaseline(
  name: string,
  tenantId: string,
  take: number,
  source: { sql: string; parameters: readonly unknown[] },
  columns: string[],
  key: string[],
): HeavyBaseline {
  const h = HEAVY_QUERIES.find((q) => q.name === name);
  if (!h) throw new Error(`no hand-written baseline for ${name}`);
  const id = (c: string) => `"${c.replaceAll('"', '""')}"`;
  const src = inlineParameters(source.sql, source.parameters);
  const select = columns.map((c) => `q.${id(c)}`).join(', ');
  if (h.aggregate) {
    return {
      page: `select ${select}, count(*) over () as "__n" from (${src}) q order by ${key.map((k) => `q.${id(k)}`).join(', ')} limit $1`,
      count: null,
      parameters: [take],
    };
  }
  const keys = `select ${h.keys.map((k, i) => `${k} as k${i}`).join(', ')} ${h.rows} order by ${h.order} limit $2`;
  const count = h.count ?? `select count(*) as n ${h.rows}`;
  if (name === 'DE-TimeSheets') {
    return {
      page: `with k as materialized (${keys}) select ${COLUMNS} from k join timesheets t on t.tenant_id = $1 and t.id = k.k0 ${LOOKUPS} order by k.k0`,
      count,
      parameters: [tenantId, take],
    };
  }
  const match = key.map((k, i) => (i === 0 ? `k.k0 = q.${id(k)}` : `k.k${i} is not distinct from q.${id(k)}`)).join(' and ');
  return {
    page: `with k as materialized (${keys})
      select ${select} from (${src}) q where q.${id(key[0])} = any(array(select k0 from k))${key.length > 1 ? ` and exists (select 1 from k where ${match})` : ''}
      order by ${key.map((k) => `q.${id(k)}`).join(', ')}`,
    count,
    parameters: [tenantId, take],
  };
}
