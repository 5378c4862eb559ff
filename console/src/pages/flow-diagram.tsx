// An automation drawn as SVG: each workflow (the main one, then every sub-workflow) as boxes and
// labelled arrows (flow-layout.ts); with a run, each box shows how its action went, the arrows the
// run took are drawn heavier, and the action that failed the run is marked. A box opens its details.

import { useId, useState } from 'preact/hooks';
import type { Answer } from '../api-types.ts';
import { type Action, BOX_H, BOX_W, type FlowLayout, field, layoutWorkflow } from './flow-layout.ts';

export type ActionLog = FlowRun['actions'][number];

export type FlowRun = Pick<Answer<'/api/v3/automations/{id}/runs/{runId}'>, 'status' | 'actions'>;

interface Shown {
  workflow: string;
  name: string;
}

type ActionState = { status: 'succeeded' | 'failed' | 'not run'; runs: ActionLog[]; failing: boolean };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The workflows of a definition: the main one ('') and each sub-workflow by name. */
export function workflowsOf(definition: unknown): { name: string; actions: Action[] }[] {
  if (!isObject(definition)) return [];
  const main = field(definition, 'actions');
  const subs = field(definition, 'subWorkflows') ?? field(definition, 'subWorkflow');
  const out = [{ name: '', actions: Array.isArray(main) ? main.filter(isObject) : [] }];
  if (Array.isArray(subs))
    for (const s of subs) {
      if (!isObject(s)) continue;
      const actions = field(s, 'actions');
      out.push({ name: String(field(s, 'name') ?? ''), actions: Array.isArray(actions) ? actions.filter(isObject) : [] });
    }
  return out;
}

/** How each action of a workflow went in a run: its log entries, and whether it is the one that failed the run. */
function statesOf(run: FlowRun | null, workflow: string): Map<string, ActionState> {
  const states = new Map<string, ActionState>();
  if (!run) return states;
  // A run stops at the action that fails it, so that action is the log's last entry (when it has an error:
  // a run can also fail between actions, a time limit). A truncated log no longer ends with it: then the
  // last entry with an error.
  const logged = run.actions.filter((a) => a.type !== 'LogTruncated');
  const last = logged[logged.length - 1];
  const failing = run.status !== 'Failed' ? undefined : logged.length < run.actions.length ? logged.findLast((a) => a.error) : last?.error ? last : undefined;
  for (const entry of run.actions) {
    if ((entry.workflow ?? '') !== workflow) continue;
    const s = states.get(entry.name) ?? { status: 'succeeded', runs: [], failing: false };
    s.runs.push(entry);
    if (entry.error) s.status = 'failed';
    if (entry === failing) s.failing = true;
    states.set(entry.name, s);
  }
  return states;
}

const ms = (n: number) => (n < 1000 ? `${n} ms` : `${(n / 1000).toFixed(1)} s`);

export function FlowDiagram(props: { definition: unknown; run?: FlowRun | null; label: string }) {
  const [shown, setShown] = useState<Shown | null>(null);
  const workflows = workflowsOf(props.definition);
  const run = props.run ?? null;
  if (!workflows[0]?.actions.length) return <p class="muted">No actions to draw yet.</p>;
  const selected = shown && workflows.find((w) => w.name === shown.workflow);
  const selectedAction = selected?.actions.find((a) => field(a, 'name') === shown?.name);
  const selectedState = shown ? statesOf(run, shown.workflow).get(shown.name) : undefined;
  return (
    <div class="flow" data-testid="flow">
      {run ? (
        <p class="flow-legend">
          <span class="legend-box succeeded">ran</span> <span class="legend-box failed">failed</span> <span class="legend-box notrun">not run</span>{' '}
          <span class="muted">Heavier arrows: the way the run went. Select an action for its input and output.</span>
        </p>
      ) : (
        <p class="muted flow-legend">Select an action to see its definition.</p>
      )}
      {workflows.map((w) => (
        <WorkflowDiagram
          key={w.name}
          name={w.name}
          title={w.name ? `Sub-workflow ${w.name}` : props.label}
          layout={layoutWorkflow(w.actions)}
          states={statesOf(run, w.name)}
          taken={takenEdges(run, w.name)}
          selected={shown?.workflow === w.name ? shown.name : null}
          onSelect={(name) => setShown(shown?.workflow === w.name && shown.name === name ? null : { workflow: w.name, name })}
        />
      ))}
      {shown && selectedAction ? (
        <section class="flow-details" aria-label={`Action ${shown.name}`} data-testid="flow-details">
          <h3>
            {shown.workflow ? `${shown.workflow} / ` : ''}
            {shown.name}
            {selectedState ? (
              <>
                {' '}
                · <span class={`status ${selectedState.status === 'failed' ? 'failed' : 'succeeded'}`}>{selectedState.status}</span>
              </>
            ) : run ? (
              ' · not run'
            ) : null}
          </h3>
          {selectedState ? (
            <>
              <p>
                {selectedState.runs.length === 1 ? 'Ran once' : `Ran ${selectedState.runs.length} times`},{' '}
                {ms(selectedState.runs.reduce((n, r) => n + (r.durationMs ?? 0), 0))}
                {selectedState.runs.length > 1 ? ' in all; the last time:' : '.'}
              </p>
              <ActionRun entry={selectedState.runs[selectedState.runs.length - 1]} />
            </>
          ) : (
            <pre>{JSON.stringify(selectedAction, null, 2)}</pre>
          )}
        </section>
      ) : null}
    </div>
  );
}

function ActionRun({ entry }: { entry: ActionLog }) {
  return (
    <dl class="facts">
      <dt>Duration</dt>
      <dd data-testid="flow-duration">{entry.durationMs === undefined ? '—' : ms(entry.durationMs)}</dd>
      {entry.error ? (
        <>
          <dt>Error</dt>
          <dd class="status failed" data-testid="flow-error">
            {entry.error}
          </dd>
        </>
      ) : null}
      <dt>Input</dt>
      <dd>
        <pre data-testid="flow-input">{entry.input === undefined ? '(not logged at this log level)' : JSON.stringify(entry.input, null, 2)}</pre>
      </dd>
      <dt>Output</dt>
      <dd>
        <pre data-testid="flow-output">{entry.output === undefined ? '(none)' : JSON.stringify(entry.output, null, 2)}</pre>
      </dd>
      {entry.next ? (
        <>
          <dt>Went on to</dt>
          <dd>{entry.next}</dd>
        </>
      ) : null}
    </dl>
  );
}

/** `from>to` of each arrow a run took in a workflow (the log records where each action went next). */
function takenEdges(run: FlowRun | null, workflow: string): Set<string> {
  const taken = new Set<string>();
  for (const a of run?.actions ?? []) if ((a.workflow ?? '') === workflow && a.next) taken.add(`${a.name}>${a.next}`);
  return taken;
}

function WorkflowDiagram(props: {
  name: string;
  title: string;
  layout: FlowLayout;
  states: Map<string, ActionState>;
  taken: Set<string>;
  selected: string | null;
  onSelect: (name: string) => void;
}) {
  const id = useId();
  const { layout } = props;
  const running = props.states.size > 0;
  return (
    <figure class="flow-figure" data-workflow={props.name}>
      <figcaption>{props.title}</figcaption>
      {layout.dangling.length ? <p class="error">{layout.dangling.map((d) => `${d.from} → ${d.to} (${d.kind}): no such action`).join('; ')}</p> : null}
      <section
        class="flow-scroll"
        aria-label={`${props.title}, scrolling`}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus for keyboard users to scroll it
        tabIndex={0}
      >
        {/* biome-ignore lint/a11y/useSemanticElements: the drawing is one SVG; the group role names it for assistive technology. */}
        <svg
          role="group"
          aria-label={`${props.title}: ${layout.nodes.length} actions, ${layout.edges.length} arrows`}
          width={layout.width}
          height={layout.height}
          viewBox={`0 0 ${layout.width} ${layout.height}`}
        >
          <defs>
            {(['next', 'nextOnError', 'nextActions'] as const).map((k) => (
              <marker
                key={k}
                id={`${id}-${k}`}
                viewBox="0 0 10 10"
                refX="9"
                refY="5"
                markerUnits="userSpaceOnUse"
                markerWidth="10"
                markerHeight="10"
                orient="auto-start-reverse"
              >
                <path d="M0,0 L10,5 L0,10 z" class={`arrowhead ${k}`} />
              </marker>
            ))}
          </defs>
          {layout.edges.map((e) => (
            <path
              key={`${e.from}>${e.to}>${e.kind}>${e.label}`}
              d={e.d}
              class={`edge ${e.kind}${props.taken.has(`${e.from}>${e.to}`) ? ' taken' : ''}`}
              marker-end={`url(#${id}-${e.kind})`}
              data-edge={`${e.from}>${e.to}`}
              data-kind={e.kind}
              data-label={e.label}
            />
          ))}
          {layout.edges.map((e) => {
            const w = e.label.length * 6.4 + 8;
            return (
              <g key={`label-${e.from}>${e.to}>${e.kind}>${e.label}`} class={`edge-label ${e.kind}`}>
                <rect x={e.lx - w / 2} y={e.ly - 9} width={w} height={17} rx={3} />
                <text x={e.lx} y={e.ly + 4} text-anchor="middle">
                  {e.label}
                </text>
              </g>
            );
          })}
          {layout.nodes.map((n) => {
            const state = props.states.get(n.name);
            const status = state ? state.status : running ? 'not run' : null;
            const total = state?.runs.reduce((s, r) => s + (r.durationMs ?? 0), 0);
            const cls = ['node', status ? status.replace(' ', '') : '', state?.failing ? 'failing' : '', props.selected === n.name ? 'selected' : '']
              .filter(Boolean)
              .join(' ');
            const goes = layout.edges.filter((e) => e.from === n.name).map((e) => `${e.label} ${e.to}`);
            const shownName = n.name.length > 22 ? `${n.name.slice(0, 21)}…` : n.name;
            const typeLine = `${n.runs ? `${n.type} → ${n.runs}` : n.type}${total !== undefined ? ` · ${ms(total)}` : ''}`;
            // The name starts with the box's visible text (WCAG 2.5.3), then what the drawing shows around it.
            const label = [
              `${shownName} ${typeLine}`,
              shownName !== n.name ? `(${n.name})` : '',
              goes.length ? `, goes to ${goes.join(', ')}` : '',
              status ? `: ${state?.failing ? 'failed the run' : status}` : '',
            ].join('');
            const select = () => props.onSelect(n.name);
            return (
              // biome-ignore lint/a11y/useSemanticElements: an SVG group cannot be a <button>; it takes the role, a name and the keys of one.
              <g
                key={n.name}
                class={cls}
                role="button"
                tabindex={0}
                aria-label={label}
                aria-pressed={props.selected === n.name}
                data-action={n.name}
                data-status={status ?? undefined}
                data-failing={state?.failing ? 'true' : undefined}
                transform={`translate(${n.x},${n.y})`}
                onClick={select}
                onKeyDown={(e) => {
                  if (e.key === 'Enter' || e.key === ' ') {
                    e.preventDefault();
                    select();
                  }
                }}
              >
                <title>{label}</title>
                <rect width={BOX_W} height={BOX_H} rx={6} />
                {/* One text, so its content reads "name type" as the label does (the space starts the second line). */}
                <text x={10} y={20}>
                  <tspan class="node-name">{shownName}</tspan>
                  <tspan class="node-type" x={10} dy={18}>
                    {` ${typeLine}`}
                  </tspan>
                </text>
              </g>
            );
          })}
        </svg>
      </section>
    </figure>
  );
}
