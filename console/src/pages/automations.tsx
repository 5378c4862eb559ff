// Automations: the definitions (the platform's JSON, edited as text and validated by the server, each
// error with its JSON path), run now with an input, and the runs with each action's log.
import { useState } from 'preact/hooks';
import { enc, getJson, hasRole, session } from '../api.ts';
import type { Answer, Schema } from '../api-types.ts';
import { navigate } from '../router.ts';
import { BackTo, DataTable, Dialog, EmptyState, ErrorBox, Field, FormActions, Link, Status, useAction, useLoad, when } from '../ui.tsx';
import { FlowDiagram } from './flow-diagram.tsx';

type Automation = Schema<'Automation'>;
type RunSummary = Schema<'AutomationRunSummary'>;
type Run = Answer<'/api/v3/automations/{id}/runs/{runId}'>;

const BASE = '/api/v3/automations';

/** A new definition starts as the smallest valid one: Start → Result. */
const TEMPLATE = {
  name: 'New automation',
  active: true,
  logLevelType: 'Info',
  requiresAuthentication: true,
  actions: [
    { name: 'Start', type: 'Start', next: 'Answer' },
    { name: 'Answer', type: 'Result', httpResponse: { statusCode: 200, body: { received: "{{['#HttpRequest']$.Body}}" } } },
  ],
  subWorkflows: [],
  scheduler: null,
};

/** The editable part of a definition, as the API takes it. */
const editable = (a: Automation) => ({
  name: a.name,
  active: a.active,
  logLevelType: a.logLevelType,
  requiresAuthentication: a.requiresAuthentication,
  actions: a.actions,
  subWorkflows: a.subWorkflows,
  scheduler: a.scheduler,
});

const duration = (r: RunSummary) => (r.finishedOnUtc ? `${new Date(r.finishedOnUtc).getTime() - new Date(r.startedOnUtc).getTime()} ms` : '—');

export function AutomationsPage() {
  const list = useLoad(() => getJson<Automation[]>(BASE), []);
  const [creating, setCreating] = useState(false);
  return (
    <section>
      <h1>Automations</h1>
      {hasRole(session(), 'AutomationCreate') ? (
        <button type="button" onClick={() => setCreating(true)}>
          New automation
        </button>
      ) : null}
      <ErrorBox error={list.error} />
      <DataTable label="Automations" headers={['Name', 'Actions', 'Version', 'Next scheduled run (UTC)', 'Active']}>
        {(list.data ?? []).map((a) => (
          <tr key={a.id}>
            <td>
              <Link to={`/automations/${a.id}`}>{a.name}</Link>
            </td>
            <td>{a.actions.length}</td>
            <td>{a.version}</td>
            <td>{a.scheduler ? when(a.nextRunUtc) : 'not scheduled'}</td>
            <td>{a.active ? 'yes' : 'no'}</td>
          </tr>
        ))}
      </DataTable>
      {list.data && !list.data.length ? (
        <EmptyState>
          No automations yet.{' '}
          {hasRole(session(), 'AutomationCreate')
            ? 'Choose New automation: it starts as Start → Result, and the diagram beside the JSON shows the flow as you edit it.'
            : 'Someone with the AutomationCreate role can create the first one.'}
        </EmptyState>
      ) : null}
      <Dialog wide title="New automation" open={creating} onClose={() => setCreating(false)}>
        <DefinitionForm
          onCancel={() => setCreating(false)}
          onSaved={(a) => {
            setCreating(false);
            navigate(`/automations/${a.id}`);
          }}
        />
      </Dialog>
    </section>
  );
}

function DefinitionForm(props: { existing?: Automation; onSaved: (a: Automation) => void; onCancel: () => void }) {
  const [text, setText] = useState(JSON.stringify(props.existing ? editable(props.existing) : TEMPLATE, null, 2));
  const save = useAction();
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(text);
  } catch {
    // drawn again once the text parses
  }
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void save.run(async () => {
          const json = JSON.parse(text);
          const e2 = props.existing;
          props.onSaved(
            e2 ? await getJson<Automation>(`${BASE}/${enc(e2.id)}`, { method: 'PUT', json }) : await getJson<Automation>(BASE, { method: 'POST', json }),
          );
        });
      }}
    >
      <div class="editor-split">
        <Field label="Definition (JSON)" hint="The platform's format: name, active, actions from a Start to a Result, subWorkflows, scheduler.">
          <textarea rows={24} spellcheck={false} class="code" value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </Field>
        <div class="editor-diagram">
          {parsed ? <FlowDiagram definition={parsed} label="Flow as written" /> : <p class="muted">The diagram follows once the JSON parses.</p>}
        </div>
      </div>
      <ErrorBox error={save.error} />
      <FormActions busy={save.busy} onCancel={props.onCancel} />
    </form>
  );
}

export function AutomationPage({ id }: { id: string }) {
  const automation = useLoad(() => getJson<Automation>(`${BASE}/${enc(id)}`), [id]);
  const runs = useLoad(() => getJson<RunSummary[]>(`${BASE}/${enc(id)}/runs?take=100`), [id]);
  const [editing, setEditing] = useState(false);
  const [input, setInput] = useState('{}');
  const [shown, setShown] = useState<Run | null>(null);
  const action = useAction();
  const s = session();
  const a = automation.data;
  const open = (runId: string) => action.run(async () => setShown(await getJson<Run>(`${BASE}/${enc(id)}/runs/${enc(runId)}`)));
  return (
    <section>
      <BackTo to="/automations" label="Automations" />
      <ErrorBox error={automation.error} />
      {a ? (
        <>
          <h1>{a.name}</h1>
          <dl class="facts">
            <dt>Version</dt>
            <dd>
              {a.version} (changed {when(a.modifiedOnUtc)})
            </dd>
            <dt>Execute URL</dt>
            <dd>
              <code>
                POST /api/integration-workflows/{a.id}/execute{a.requiresAuthentication ? ' (app headers or a token required)' : ''}
              </code>
            </dd>
            <dt>Scheduler</dt>
            <dd>{a.scheduler ? `${JSON.stringify(a.scheduler)}; next run ${when(a.nextRunUtc)}` : 'none'}</dd>
            <dt>Actions</dt>
            <dd>
              {a.actions.length}
              {a.subWorkflows.length ? `, and ${a.subWorkflows.length} sub-workflow${a.subWorkflows.length === 1 ? '' : 's'}` : ''}
            </dd>
          </dl>
          <div class="actions">
            {hasRole(s, 'AutomationWrite') ? (
              <button type="button" class="secondary" onClick={() => setEditing(true)}>
                Edit definition
              </button>
            ) : null}
            <button type="button" class="secondary" onClick={() => runs.reload()}>
              Refresh runs
            </button>
            {hasRole(s, 'AutomationDelete') ? (
              <button
                type="button"
                class="danger"
                onClick={() =>
                  confirm(`Delete the automation ${a.name} and its runs?`) &&
                  action.run(async () => {
                    await getJson(`${BASE}/${enc(id)}`, { method: 'DELETE' });
                    navigate('/automations');
                  })
                }
              >
                Delete
              </button>
            ) : null}
          </div>
          {hasRole(s, 'AutomationWrite') ? (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void action.run(async () => {
                  const run = await getJson<Run>(`${BASE}/${enc(id)}/run`, { method: 'POST', json: { input: JSON.parse(input) } });
                  setShown(run);
                  runs.reload();
                });
              }}
            >
              <Field label="Run input (JSON)" hint="Read by the automation as {{['#HttpRequest']$.Body}}.">
                <textarea rows={3} spellcheck={false} class="code" value={input} onInput={(e) => setInput(e.currentTarget.value)} />
              </Field>
              <button type="submit" disabled={action.busy}>
                {action.busy ? 'Running…' : 'Run now'}
              </button>
            </form>
          ) : null}
          <ErrorBox error={action.error ?? runs.error} />
          <h2>{shown ? `Flow of the run of ${when(shown.startedOnUtc)}` : 'Flow'}</h2>
          {shown ? (
            <p>
              <button type="button" class="secondary" onClick={() => setShown(null)}>
                Show the definition without the run
              </button>
            </p>
          ) : null}
          <FlowDiagram key={shown?.id ?? 'definition'} definition={a} run={shown} label={a.name} />
          {shown ? <RunLog run={shown} /> : null}
          <h2>Runs</h2>
          <DataTable label="Runs" headers={['Started (UTC)', 'Trigger', 'Version', 'Status', 'Duration', 'Log']}>
            {(runs.data ?? []).map((r) => (
              <tr key={r.id} data-status={r.status}>
                <td>{when(r.startedOnUtc)}</td>
                <td>{r.trigger}</td>
                <td>{r.version}</td>
                <td>
                  <Status status={r.status} error={r.error} />
                </td>
                <td>{duration(r)}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => open(r.id)}>
                    Show log
                  </button>
                </td>
              </tr>
            ))}
          </DataTable>
          {runs.data && !runs.data.length ? (
            <EmptyState>No runs yet. Run it now above, call its execute URL, or give it a scheduler; each run then shows on the flow.</EmptyState>
          ) : null}
          <Dialog wide title="Edit automation" open={editing} onClose={() => setEditing(false)}>
            <DefinitionForm
              existing={a}
              onCancel={() => setEditing(false)}
              onSaved={() => {
                setEditing(false);
                automation.reload();
              }}
            />
          </Dialog>
        </>
      ) : null}
    </section>
  );
}

/** One run: its outcome, the Result's answer, and each action with its input, output, duration and error. */
function RunLog({ run }: { run: Run }) {
  return (
    <section aria-label="Run log">
      <h2>
        Run of {when(run.startedOnUtc)}: <Status status={run.status} />
      </h2>
      {run.error ? <p class="muted">{run.error}</p> : null}
      {run.result ? (
        <details>
          <summary>Result</summary>
          <pre>{JSON.stringify(run.result, null, 2)}</pre>
        </details>
      ) : null}
      <DataTable label="Actions of the run" headers={['Action', 'Type', 'Duration', 'Input and output', 'Error']}>
        {run.actions.map((x, i) => (
          <tr key={`${i}-${x.name}`} data-error={x.error ? 'yes' : undefined}>
            <td>{x.workflow ? `${x.workflow} / ${x.name}` : x.name}</td>
            <td>{x.type}</td>
            <td>{x.durationMs === undefined ? '—' : `${x.durationMs} ms`}</td>
            <td>
              <details>
                <summary>show</summary>
                <pre>{JSON.stringify({ input: x.input, output: x.output }, null, 2)}</pre>
              </details>
            </td>
            <td>{x.error ?? ''}</td>
          </tr>
        ))}
      </DataTable>
    </section>
  );
}
