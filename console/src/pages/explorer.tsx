// Query explorer: a named query (or CT- table), its fields from the metadata endpoint, filters, a search
// over its text fields, sorting (by the headers too) and field choice built visually into the query builder
// JSON, the rows paged through dynamic-execute in a virtualised table (names before ids, widths and chosen
// columns remembered per query), a chart of the aggregate request (loaded on demand), saved queries,
// exports, the equivalent curl and the OData URL.
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { download, enc, getJson, session } from '../api.ts';
import type { Answer, Schema } from '../api-types.ts';
import { CopyButton, ErrorBox, Field, useAction, useLoad } from '../ui.tsx';
import type { ChartSettings, ChartView as ChartViewType } from './chart.tsx';
import {
  buildQueryBuilder,
  curlFor,
  type FieldMetadata,
  type FilterRow,
  NO_VALUE,
  odataFilterFor,
  odataUrlFor,
  type QueryBuilderJson,
  readableColumns,
  type SortRow,
  searchable,
  withSearch,
} from './query-builder.ts';
import { SavedQueriesPanel, type SavedQuery } from './saved-queries.tsx';
import { PAGE_SIZE, VirtualTable } from './virtual-table.tsx';

/** What the explorer remembers of a query in this browser: the chosen columns, their widths, ids shown. */
interface Remembered {
  selected: string[];
  widths: Record<string, number>;
  showIds: boolean;
}
const REMEMBER_KEY = (query: string) => `atrium.explorer.${query}`;
function remembered(query: string): Remembered {
  try {
    const r = JSON.parse(localStorage.getItem(REMEMBER_KEY(query)) ?? 'null') as Partial<Remembered> | null;
    return {
      selected: Array.isArray(r?.selected) ? r.selected.filter((x) => typeof x === 'string') : [],
      widths: r?.widths ?? {},
      showIds: r?.showIds === true,
    };
  } catch {
    return { selected: [], widths: {}, showIds: false };
  }
}
function remember(query: string, r: Remembered): void {
  try {
    localStorage.setItem(REMEMBER_KEY(query), JSON.stringify(r));
  } catch {
    // storage full or refused: the choice lasts this visit only
  }
}

/** The explorer's state a saved query keeps in its view, to reopen as it was. */
interface SavedState {
  filters: FilterRow[];
  joiner: 'and' | 'or';
  sort: SortRow[];
  selected: string[];
  search: string;
  showIds: boolean;
  widths: Record<string, number>;
  chart?: ChartSettings;
}

type NamedQuerySummary = Schema<'NamedQuerySummary'>;
type Metadata = Schema<'NamedQueryMetadata'>;
interface Result {
  query: string;
  body: { queryBuilder: QueryBuilderJson };
  columns: string[];
  total: number;
  firstPage: Record<string, unknown>[];
  ms: number;
  /** Counts the runs of this page, so a reader (a test, the bench) can tell a new result from the last one. */
  run: number;
}

const execute = (query: string, qb: QueryBuilderJson, skip: number) =>
  getJson<Answer<'/api/v3/analytics/named-query/{NamedQuery}/dynamic-execute', 'post'>>(`/api/v3/analytics/named-query/${enc(query)}/dynamic-execute`, {
    method: 'POST',
    json: { queryBuilder: { ...qb, skip, take: PAGE_SIZE } },
  });

export function ExplorerPage({ savedId }: { savedId?: string } = {}) {
  const list = useLoad(() => getJson<NamedQuerySummary[]>('/api/v3/analytics/named-queries'), []);
  const [query, setQuery] = useState('');
  const [search, setSearch] = useState('');
  const [showIds, setShowIds] = useState(false);
  const [widths, setWidths] = useState<Record<string, number>>({});
  const [view, setView] = useState<'table' | 'chart'>('table');
  const [chart, setChart] = useState<ChartSettings | null>(null);
  const [ChartView, setChartView] = useState<typeof ChartViewType | null>(null);
  /** A saved query being opened: run (or drawn) once its metadata is in. */
  const [opening, setOpening] = useState<SavedQuery | null>(null);
  const [autoDraw, setAutoDraw] = useState(false);
  const meta = useLoad(() => (query ? getJson<Metadata>(`/api/v3/analytics/named-query/${enc(query)}/metadata`) : Promise.resolve(undefined)), [query]);
  const [filters, setFilters] = useState<FilterRow[]>([]);
  const [joiner, setJoiner] = useState<'and' | 'or'>('and');
  const [sort, setSort] = useState<SortRow[]>([]);
  const [selected, setSelected] = useState<string[]>([]);
  const [result, setResult] = useState<Result | null>(null);
  const run = useAction();
  const runs = useRef(0);
  const exporting = useAction();

  const fields = meta.data?.fields ?? [];
  const filterFields = meta.data?.filterFields ?? fields;
  const qbFor = (over: { sort?: SortRow[] } = {}): QueryBuilderJson => {
    const built = buildQueryBuilder({ filters, joiner, sort: over.sort ?? sort, fields: filterFields, selected });
    const searched = withSearch(built.filters, search, filterFields);
    return searched ? { ...built, filters: searched } : built;
  };
  const qb = useMemo(qbFor, [filters, joiner, sort, filterFields, selected, search]);
  const s = session();
  const odataUrl = odataUrlFor(location.origin, s?.tenant ?? '', query, sort, odataFilterFor(filters, joiner, filterFields));
  const body = { queryBuilder: qb };

  const pick = (name: string) => {
    const r = remembered(name);
    setQuery(name);
    setFilters([]);
    setJoiner('and');
    setSort([]);
    setSelected(r.selected);
    setWidths(r.widths);
    setShowIds(r.showIds);
    setSearch('');
    setChart(null);
    setResult(null);
  };
  // The column choice, widths and ids are remembered per query in this browser.
  useEffect(() => {
    if (query) remember(query, { selected, widths, showIds });
  }, [query, selected, widths, showIds]);

  // A saved query's link: its named query, filters, order, columns and view, then its rows or chart.
  const saved = useLoad(() => (savedId ? getJson<SavedQuery>(`/api/v3/saved-queries/${enc(savedId)}`) : Promise.resolve(undefined)), [savedId]);
  useEffect(() => {
    const q = saved.data;
    if (!q) return;
    const state = (q.view.state ?? {}) as Partial<SavedState>;
    setQuery(q.query);
    setFilters(state.filters ?? []);
    setJoiner(state.joiner ?? 'and');
    setSort(state.sort ?? []);
    setSelected(state.selected ?? []);
    setSearch(state.search ?? '');
    setShowIds(state.showIds ?? false);
    setWidths(state.widths ?? {});
    setChart(state.chart ?? null);
    setView(q.view.type === 'chart' ? 'chart' : 'table');
    setResult(null);
    setAutoDraw(false);
    setOpening(q);
  }, [saved.data]);
  useEffect(() => {
    if (!opening || !meta.data || meta.data.name.toLowerCase() !== opening.query.toLowerCase()) return;
    setOpening(null);
    if (opening.view.type === 'chart') setAutoDraw(true);
    else void runQuery();
  }, [opening, meta.data]);
  // The chart's code is fetched the first time the chart view is shown.
  useEffect(() => {
    if (view !== 'chart' || ChartView) return;
    void import('./chart.tsx').then((m) => {
      setChartView(() => m.ChartView);
      setChart((c) => c ?? m.defaultChart(fields));
    });
  }, [view, ChartView]);
  useEffect(() => {
    if (view === 'chart' && ChartView && !chart && fields.length) void import('./chart.tsx').then((m) => setChart(m.defaultChart(fields)));
  }, [view, ChartView, chart, fields]);
  const current = () =>
    query
      ? {
          query,
          queryBuilder: qb as Record<string, unknown>,
          view: {
            type: view,
            columns: result?.columns ?? selected,
            state: { filters, joiner, sort, selected, search, showIds, widths, ...(chart ? { chart } : {}) } satisfies SavedState,
          },
        }
      : null;
  const sortBy = (field: string) => {
    const now = sort.length === 1 && sort[0].field === field ? sort[0].direction : null;
    const next: SortRow[] = [{ field, direction: now === 'asc' ? 'desc' : 'asc' }];
    setSort(next);
    void runQuery(qbFor({ sort: next }));
  };
  const fetchPage = useCallback(
    async (page: number) => (result ? (await execute(result.query, result.body.queryBuilder, page * PAGE_SIZE)).data : []),
    [result],
  );

  const runQuery = (body: QueryBuilderJson = qb) =>
    run.run(async () => {
      const started = performance.now();
      setResult(null);
      const page = await execute(query, body, 0);
      const columns = body.fields ?? (page.data[0] ? Object.keys(page.data[0]) : fields.map((f) => f.name));
      setResult({
        query,
        body: { queryBuilder: body },
        columns,
        total: page.totalCount,
        firstPage: page.data,
        ms: Math.round(performance.now() - started),
        run: ++runs.current,
      });
    });
  const exportAs = (accept: string, ext: string) =>
    exporting.run(() =>
      download(`/api/v3/analytics/named-query/${enc(query)}/dynamic-execute`, { method: 'POST', json: body, headers: { accept } }, `${query}.${ext}`),
    );

  return (
    <section>
      <h1>Query explorer</h1>
      <ErrorBox error={list.error} />
      <div class="toolbar">
        <Field label="Named query">
          <select value={query} onChange={(e) => pick(e.currentTarget.value)}>
            <option value="">Choose a query…</option>
            {(list.data ?? []).map((q) => (
              <option key={q.name} value={q.name}>
                {q.name}
              </option>
            ))}
          </select>
        </Field>
      </div>
      <ErrorBox error={saved.error} />
      <SavedQueriesPanel key={savedId} current={current} openId={savedId} />
      {meta.data ? (
        <>
          <p class="muted">{meta.data.purpose}</p>
          <details>
            <summary>
              Fields ({fields.length}) — key {meta.data.key.join(', ') || '—'}
            </summary>
            <ul class="fields">
              {fields.map((f) => (
                <li key={f.name}>
                  <label>
                    <input
                      type="checkbox"
                      checked={selected.includes(f.name)}
                      onChange={(e) => setSelected(e.currentTarget.checked ? [...selected, f.name] : selected.filter((x) => x !== f.name))}
                    />{' '}
                    {f.name} <span class="type">{f.dataType}</span>
                  </label>
                </li>
              ))}
            </ul>
            <p class="muted">
              Ticked fields are the only ones answered, in the order ticked; none ticked answers them all (names first, ids on hover). Remembered for this query
              in this browser.
            </p>
            <label class="check">
              <input type="checkbox" checked={showIds} onChange={(e) => setShowIds(e.currentTarget.checked)} /> Show id columns
            </label>
          </details>
          {searchable(filterFields).length ? (
            <Field label="Search text fields" hint={`Rows where any of ${searchable(filterFields).length} text fields contains this`}>
              <input
                type="search"
                value={search}
                maxLength={200}
                onInput={(e) => setSearch(e.currentTarget.value)}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') void runQuery();
                }}
              />
            </Field>
          ) : null}
          <FilterEditor fields={filterFields} rows={filters} onChange={setFilters} joiner={joiner} onJoiner={setJoiner} />
          <SortEditor fields={fields} rows={sort} onChange={setSort} />
          <div class="actions">
            <button type="button" onClick={() => runQuery()} disabled={run.busy}>
              {run.busy ? 'Running…' : 'Run query'}
            </button>
            <button type="button" class="secondary" disabled={exporting.busy} onClick={() => exportAs('text/csv', 'csv')}>
              Export CSV
            </button>
            <button type="button" class="secondary" disabled={exporting.busy} onClick={() => exportAs('application/x-ndjson', 'ndjson')}>
              Export NDJSON
            </button>
            <button
              type="button"
              class="secondary"
              disabled={exporting.busy}
              onClick={() => exportAs('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'xlsx')}
            >
              Export xlsx
            </button>
          </div>
          <ErrorBox error={run.error ?? exporting.error} />
          <details>
            <summary>Query builder JSON, curl and OData URL</summary>
            <h2>Query builder</h2>
            <pre data-testid="query-builder-json">{JSON.stringify(body, null, 2)}</pre>
            <CopyButton text={JSON.stringify(body)} label="Copy JSON" />
            <h2>curl</h2>
            <pre>{curlFor(location.origin, s?.tenant ?? '', query, body)}</pre>
            <CopyButton text={curlFor(location.origin, s?.tenant ?? '', query, body)} label="Copy curl" />
            <h2>OData feed (Excel, Power BI)</h2>
            <p class="muted">Data → Get Data → From OData feed; Basic authentication with an app's id as user name and its secret as password.</p>
            <pre>{odataUrl}</pre>
            <CopyButton text={odataUrl} label="Copy OData URL" />
          </details>
        </>
      ) : (
        <ErrorBox error={meta.error} />
      )}
      {meta.data ? (
        <fieldset class="view-switch">
          <legend class="sr-only">View</legend>
          <button type="button" class={view === 'table' ? '' : 'secondary'} aria-pressed={view === 'table'} onClick={() => setView('table')}>
            Table
          </button>
          <button type="button" class={view === 'chart' ? '' : 'secondary'} aria-pressed={view === 'chart'} onClick={() => setView('chart')}>
            Chart
          </button>
        </fieldset>
      ) : null}
      {view === 'chart' && meta.data ? (
        meta.data.filterFields ? (
          <p class="muted">{meta.data.name} answers one count: chart the query whose rows it counts.</p>
        ) : ChartView && chart ? (
          <ChartView query={query} fields={filterFields} filters={qb.filters} settings={chart} onSettings={setChart} autoDraw={autoDraw} />
        ) : (
          <p class="muted">Loading the chart…</p>
        )
      ) : null}
      {view === 'table' && result ? (
        <div data-run={result.run}>
          <p role="status" data-testid="result-status">
            {result.total.toLocaleString('en')} rows · first {Math.min(PAGE_SIZE, result.total)} in {result.ms} ms · scroll to page through them all
          </p>
          <VirtualTable
            key={result.run}
            label={`Rows of ${result.query}`}
            {...readableColumns(result.columns, fields, showIds)}
            total={result.total}
            firstPage={result.firstPage}
            fetchPage={fetchPage}
            sort={sort.length === 1 ? sort[0] : null}
            onSort={meta.data?.filterFields ? undefined : sortBy}
            widths={widths}
            onResize={(c, w) => setWidths({ ...widths, [c]: w })}
          />
        </div>
      ) : null}
    </section>
  );
}

function FilterEditor(props: {
  fields: FieldMetadata[];
  rows: FilterRow[];
  onChange: (r: FilterRow[]) => void;
  joiner: 'and' | 'or';
  onJoiner: (j: 'and' | 'or') => void;
}) {
  const { fields, rows, onChange } = props;
  const set = (i: number, patch: Partial<FilterRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset>
      <legend>Filters</legend>
      {rows.length > 1 ? (
        <Field label="Join conditions with">
          <select value={props.joiner} onChange={(e) => props.onJoiner(e.currentTarget.value as 'and' | 'or')}>
            <option value="and">and (all must hold)</option>
            <option value="or">or (any may hold)</option>
          </select>
        </Field>
      ) : null}
      {rows.map((r, i) => {
        const field = fields.find((f) => f.name === r.field);
        const n = i + 1;
        return (
          <div class="row" key={i}>
            <Field label={`Field ${n}`}>
              <select
                value={r.field}
                onChange={(e) => {
                  const f = fields.find((x) => x.name === e.currentTarget.value);
                  set(i, { field: e.currentTarget.value, op: f?.defaultOperation ?? '=' });
                }}
              >
                {fields.map((f) => (
                  <option key={f.name} value={f.name}>
                    {f.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={`Operation ${n}`}>
              <select value={r.op} onChange={(e) => set(i, { op: e.currentTarget.value })}>
                {(field?.operations ?? []).map((o) => (
                  <option key={o} value={o}>
                    {o}
                  </option>
                ))}
              </select>
            </Field>
            {NO_VALUE.has(r.op) ? null : (
              <ValueInput
                label={r.op === 'between' ? `From ${n}` : `Value ${n}`}
                type={field?.dataType ?? 'string'}
                value={r.value}
                onInput={(v) => set(i, { value: v })}
              />
            )}
            {r.op === 'between' ? (
              <ValueInput label={`To ${n}`} type={field?.dataType ?? 'string'} value={r.value2} onInput={(v) => set(i, { value2: v })} />
            ) : null}
            <button type="button" class="secondary" aria-label={`Remove filter ${n}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
              Remove
            </button>
          </div>
        );
      })}
      <button
        type="button"
        class="secondary"
        disabled={!fields.length}
        onClick={() => onChange([...rows, { field: fields[0].name, op: fields[0].defaultOperation, value: '', value2: '' }])}
      >
        Add filter
      </button>
    </fieldset>
  );
}

function ValueInput(props: { label: string; type: string; value: string; onInput: (v: string) => void }) {
  if (props.type === 'boolean')
    return (
      <Field label={props.label}>
        <select value={props.value} onChange={(e) => props.onInput(e.currentTarget.value)}>
          <option value="true">true</option>
          <option value="false">false</option>
        </select>
      </Field>
    );
  const inputType = props.type === 'date' ? 'date' : props.type === 'integer' || props.type === 'decimal' ? 'number' : 'text';
  return (
    <Field label={props.label}>
      <input type={inputType} step={props.type === 'decimal' ? 'any' : undefined} value={props.value} onInput={(e) => props.onInput(e.currentTarget.value)} />
    </Field>
  );
}

function SortEditor(props: { fields: FieldMetadata[]; rows: SortRow[]; onChange: (r: SortRow[]) => void }) {
  const { fields, rows, onChange } = props;
  const set = (i: number, patch: Partial<SortRow>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <fieldset>
      <legend>Sorting</legend>
      {rows.map((r, i) => (
        <div class="row" key={i}>
          <Field label={`Sort field ${i + 1}`}>
            <select value={r.field} onChange={(e) => set(i, { field: e.currentTarget.value })}>
              {fields.map((f) => (
                <option key={f.name} value={f.name}>
                  {f.name}
                </option>
              ))}
            </select>
          </Field>
          <Field label={`Direction ${i + 1}`}>
            <select value={r.direction} onChange={(e) => set(i, { direction: e.currentTarget.value as 'asc' | 'desc' })}>
              <option value="asc">ascending</option>
              <option value="desc">descending</option>
            </select>
          </Field>
          <button type="button" class="secondary" aria-label={`Remove sort ${i + 1}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" class="secondary" disabled={!fields.length} onClick={() => onChange([...rows, { field: fields[0].name, direction: 'asc' }])}>
        Add sort
      </button>
    </fieldset>
  );
}
