// The chart view of a named query (loaded on demand): its filtered rows grouped by one or two fields and
// aggregated by the server (the aggregate request), drawn by hand as SVG bars or lines, or as a table.

import { useEffect, useState } from 'preact/hooks';
import { enc, getJson } from '../api.ts';
import type { Answer } from '../api-types.ts';
import { ErrorBox, Field, useAction } from '../ui.tsx';
import type { FieldMetadata } from './query-builder.ts';

export interface ChartSettings {
  group: string;
  interval: '' | 'day' | 'week' | 'month';
  /** The second grouping: one series per value. */
  series: string;
  fn: 'count' | 'sum' | 'avg' | 'min' | 'max';
  field: string;
  kind: 'bars' | 'lines' | 'table';
}

export type AggregateAnswer = Answer<'/api/v3/analytics/named-query/{NamedQuery}/aggregate', 'post'>;

/** Bars show the largest groups; lines and the table up to this many. */
const BAR_GROUPS = 40;
const LINE_GROUPS = 5_000;
const MAX_SERIES = 8;

const isDate = (f?: FieldMetadata) => f?.dataType === 'date' || f?.dataType === 'datetime';
const isNumeric = (f?: FieldMetadata) => f?.dataType === 'integer' || f?.dataType === 'decimal';
const label = (v: unknown) => (v === null || v === undefined ? '(none)' : String(v));
const fmt = (n: number | null) => (n === null ? '—' : n.toLocaleString('en', { maximumFractionDigits: 2 }));

/** Defaults for a query: a text field by the first numeric one (or a count), as bars. */
export function defaultChart(fields: FieldMetadata[]): ChartSettings {
  const group = fields.find((f) => f.dataType === 'string') ?? fields.find((f) => f.dataType !== 'object');
  const numeric = fields.find(isNumeric);
  return { group: group?.name ?? '', interval: '', series: '', fn: numeric ? 'sum' : 'count', field: numeric?.name ?? '', kind: 'bars' };
}

export function aggregateBody(s: ChartSettings, fields: FieldMetadata[], filters: unknown[] | undefined) {
  const f = fields.find((x) => x.name === s.group);
  const groupBy = [
    ...(s.group ? [{ field: s.group, ...(isDate(f) && s.interval ? { interval: s.interval } : {}) }] : []),
    ...(s.series && s.series !== s.group ? [{ field: s.series }] : []),
  ];
  const single = groupBy.length <= 1;
  return {
    ...(filters ? { queryBuilder: { filters } } : {}),
    groupBy,
    aggregate: { function: s.fn, ...(s.field && (s.fn !== 'count' || s.field) ? { field: s.field } : {}) },
    ...(s.kind === 'bars' && single ? { order: 'valueDesc', take: BAR_GROUPS } : { take: LINE_GROUPS }),
  };
}

export function ChartView(props: {
  query: string;
  fields: FieldMetadata[];
  filters: unknown[] | undefined;
  settings: ChartSettings;
  onSettings: (s: ChartSettings) => void;
  /** Draw at once (a saved chart reopened). */
  autoDraw?: boolean;
}) {
  const { fields, settings: s, onSettings } = props;
  const [answer, setAnswer] = useState<AggregateAnswer | null>(null);
  const draw = useAction();
  const set = (patch: Partial<ChartSettings>) => onSettings({ ...s, ...patch });
  const groupable = fields.filter((f) => f.dataType !== 'object');
  const numeric = fields.filter(isNumeric);
  const run = () =>
    draw.run(async () => {
      setAnswer(null);
      setAnswer(
        await getJson<AggregateAnswer>(`/api/v3/analytics/named-query/${enc(props.query)}/aggregate`, {
          method: 'POST',
          json: aggregateBody(s, fields, props.filters),
        }),
      );
    });
  useEffect(() => {
    if (props.autoDraw) void run();
  }, [props.autoDraw]);
  const groupField = fields.find((f) => f.name === s.group);
  return (
    <section aria-label="Chart">
      <div class="toolbar chart-settings">
        <Field label="Group by">
          <select value={s.group} onChange={(e) => set({ group: e.currentTarget.value, interval: '' })}>
            {groupable.map((f) => (
              <option key={f.name} value={f.name}>
                {f.name}
              </option>
            ))}
          </select>
        </Field>
        {isDate(groupField) ? (
          <Field label="By">
            <select value={s.interval} onChange={(e) => set({ interval: e.currentTarget.value as ChartSettings['interval'] })}>
              <option value="">{groupField?.dataType === 'date' ? 'date' : 'day'}</option>
              <option value="day">day</option>
              <option value="week">week</option>
              <option value="month">month</option>
            </select>
          </Field>
        ) : null}
        <Field label="Then by (series)">
          <select value={s.series} onChange={(e) => set({ series: e.currentTarget.value })}>
            <option value="">—</option>
            {groupable
              .filter((f) => f.name !== s.group)
              .map((f) => (
                <option key={f.name} value={f.name}>
                  {f.name}
                </option>
              ))}
          </select>
        </Field>
        <Field label="Aggregate">
          <select value={s.fn} onChange={(e) => set({ fn: e.currentTarget.value as ChartSettings['fn'] })}>
            {['count', 'sum', 'avg', 'min', 'max'].map((f) => (
              <option key={f} value={f}>
                {f}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Of field">
          <select value={s.field} onChange={(e) => set({ field: e.currentTarget.value })}>
            {s.fn === 'count' ? <option value="">rows</option> : null}
            {numeric.map((f) => (
              <option key={f.name} value={f.name}>
                {f.name}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Show as">
          <select value={s.kind} onChange={(e) => set({ kind: e.currentTarget.value as ChartSettings['kind'] })}>
            <option value="bars">bars</option>
            <option value="lines">lines</option>
            <option value="table">table</option>
          </select>
        </Field>
        <div class="actions">
          <button type="button" onClick={run} disabled={draw.busy}>
            {draw.busy ? 'Drawing…' : 'Draw chart'}
          </button>
        </div>
      </div>
      <ErrorBox error={draw.error} />
      {answer ? <Drawn answer={answer} kind={s.kind} /> : null}
    </section>
  );
}

function Drawn({ answer, kind }: { answer: AggregateAnswer; kind: ChartSettings['kind'] }) {
  const what = `${answer.aggregate.function} of ${answer.aggregate.field ?? 'rows'}`;
  const by = answer.groupBy.map((g) => `${g.field}${g.interval ? ` by ${g.interval}` : ''}`).join(', then ');
  const caption = (
    <p role="status" data-testid="chart-total" data-value={answer.total.value ?? ''} data-count={answer.total.count}>
      {what} by {by || 'nothing'}: total {fmt(answer.total.value)} over {answer.total.count.toLocaleString('en')} rows in{' '}
      {answer.groupCount.toLocaleString('en')} groups{answer.data.length < answer.groupCount ? ` (${answer.data.length} shown)` : ''}
    </p>
  );
  if (!answer.data.length) return <p class="muted">No rows match the filters: nothing to draw.</p>;
  if (kind === 'table') return <AggregateTable answer={answer} caption={caption} />;
  if (kind === 'lines') return <Lines answer={answer} caption={caption} what={what} />;
  return <Bars answer={answer} caption={caption} what={what} />;
}

/** Series of a two-key answer: the second keys with the largest totals, the rest as "other". */
function seriesOf(answer: AggregateAnswer): string[] {
  if (answer.groupBy.length < 2) return [''];
  const totals = new Map<string, number>();
  for (const d of answer.data) totals.set(label(d.keys[1]), (totals.get(label(d.keys[1])) ?? 0) + Math.abs(d.value ?? 0));
  const ranked = [...totals.entries()].sort((a, b) => b[1] - a[1]).map(([k]) => k);
  return ranked.length > MAX_SERIES ? [...ranked.slice(0, MAX_SERIES - 1), 'other'] : ranked;
}
const seriesKey = (series: string[], v: unknown) => (series.length === 1 && series[0] === '' ? '' : series.includes(label(v)) ? label(v) : 'other');

function Bars({ answer, caption, what }: { answer: AggregateAnswer; caption: preact.JSX.Element; what: string }) {
  const series = seriesOf(answer);
  const groups = new Map<string, { key: unknown; parts: Map<string, number> }>();
  for (const d of answer.data) {
    const k = label(d.keys[0]);
    const g = groups.get(k) ?? { key: d.keys[0], parts: new Map() };
    const sk = seriesKey(series, d.keys[1]);
    g.parts.set(sk, (g.parts.get(sk) ?? 0) + (d.value ?? 0));
    groups.set(k, g);
  }
  const total = (g: { parts: Map<string, number> }) => [...g.parts.values()].reduce((a, b) => a + b, 0);
  // The largest groups (a one-field answer came ordered by value already).
  const rows = [...groups.entries()].sort((a, b) => total(b[1]) - total(a[1])).slice(0, BAR_GROUPS);
  const sums = rows.map(([, g]) => total(g));
  const max = Math.max(1e-9, ...sums.map(Math.abs));
  const rowH = 22;
  const labelW = 200;
  const width = 720;
  const barW = width - labelW - 90;
  return (
    <figure class="chart aggregate">
      <svg viewBox={`0 0 ${width} ${rows.length * rowH + 4}`} role="img" aria-label={`${what} as bars, ${rows.length} groups`}>
        {rows.map(([k, g], i) => {
          let x = labelW;
          return (
            <g key={k} data-testid="chart-bar" data-key={k} data-value={sums[i]}>
              <text x={labelW - 6} y={i * rowH + 15} class="axis label" text-anchor="end">
                {k.length > 30 ? `${k.slice(0, 29)}…` : k}
              </text>
              {series.map((sk, j) => {
                const v = g.parts.get(sk) ?? 0;
                const w = (Math.abs(v) / max) * barW;
                const rect = (
                  <rect key={sk} class={`series s${j}`} x={x} y={i * rowH + 3} width={w} height={rowH - 6}>
                    <title>
                      {k}
                      {sk ? ` · ${sk}` : ''}: {fmt(v)}
                    </title>
                  </rect>
                );
                x += w;
                return rect;
              })}
              <text x={x + 4} y={i * rowH + 15} class="axis">
                {fmt(sums[i])}
              </text>
            </g>
          );
        })}
      </svg>
      <Legend series={series} />
      <figcaption>{caption}</figcaption>
    </figure>
  );
}

function Lines({ answer, caption, what }: { answer: AggregateAnswer; caption: preact.JSX.Element; what: string }) {
  const series = seriesOf(answer);
  const xs = [...new Set(answer.data.map((d) => label(d.keys[0])))];
  const index = new Map(xs.map((x, i) => [x, i]));
  const values = series.map(() => new Array<number>(xs.length).fill(0));
  for (const d of answer.data) values[series.indexOf(seriesKey(series, d.keys[1]))][index.get(label(d.keys[0])) as number] += d.value ?? 0;
  const all = values.flat();
  const max = Math.max(1e-9, ...all);
  const min = Math.min(0, ...all);
  const width = 720;
  const height = 240;
  const left = 56;
  const x = (i: number) => left + (xs.length > 1 ? (i / (xs.length - 1)) * (width - left - 10) : (width - left) / 2);
  const y = (v: number) => 10 + (1 - (v - min) / (max - min || 1)) * (height - 40);
  const ticks = xs.length <= 6 ? xs.map((_, i) => i) : [0, 1, 2, 3, 4, 5].map((t) => Math.round((t / 5) * (xs.length - 1)));
  return (
    <figure class="chart aggregate">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-label={`${what} as lines over ${xs.length} points`}>
        <line x1={left} x2={width - 10} y1={y(0)} y2={y(0)} class="gridline" />
        <text x={left - 6} y={y(max) + 4} class="axis" text-anchor="end">
          {fmt(max)}
        </text>
        <text x={left - 6} y={y(min) + 4} class="axis" text-anchor="end">
          {fmt(min)}
        </text>
        {values.map((vs, j) => (
          <g key={series[j]} data-testid="chart-line" data-series={series[j]}>
            <polyline class={`line s${j}`} fill="none" points={vs.map((v, i) => `${x(i)},${y(v)}`).join(' ')} />
            {vs.map((v, i) => (
              <circle key={xs[i]} class={`point s${j}`} cx={x(i)} cy={y(v)} r={2.5} data-key={xs[i]} data-value={v}>
                <title>
                  {xs[i]}
                  {series[j] ? ` · ${series[j]}` : ''}: {fmt(v)}
                </title>
              </circle>
            ))}
          </g>
        ))}
        {ticks.map((i) => (
          <text key={i} x={x(i)} y={height - 8} class="axis" text-anchor="middle">
            {xs[i]}
          </text>
        ))}
      </svg>
      <Legend series={series} />
      <figcaption>{caption}</figcaption>
    </figure>
  );
}

function Legend({ series }: { series: string[] }) {
  if (series.length === 1 && series[0] === '') return null;
  return (
    <p>
      {series.map((s, j) => (
        <span key={s} class={`legend series-legend s${j}`}>
          {s}
        </span>
      ))}
    </p>
  );
}

function AggregateTable({ answer, caption }: { answer: AggregateAnswer; caption: preact.JSX.Element }) {
  return (
    <div class="aggregate-table">
      <table>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {answer.groupBy.map((g) => (
              <th scope="col" key={g.field}>
                {g.field}
                {g.interval ? ` (${g.interval})` : ''}
              </th>
            ))}
            <th scope="col">
              {answer.aggregate.function} of {answer.aggregate.field ?? 'rows'}
            </th>
            <th scope="col">Rows</th>
          </tr>
        </thead>
        <tbody>
          {answer.data.map((d) => (
            <tr key={d.keys.map(label).join('\u0000')} data-testid="aggregate-row" data-value={d.value ?? ''}>
              {d.keys.map((k, i) => (
                <td key={answer.groupBy[i].field}>{label(k)}</td>
              ))}
              <td class="num">{fmt(d.value)}</td>
              <td class="num">{d.count.toLocaleString('en')}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
