// Scheduled extraction: schedules with their next runs and the cron in words, create/edit with a
// live preview of the next fire times, run now, runs with status and size, and their files.
import { useEffect, useState } from 'preact/hooks';
import { download, enc, getJson, hasRole, session } from '../api.ts';
import type { Answer, Schema } from '../api-types.ts';
import { navigate } from '../router.ts';
import { BackTo, bytes, DataTable, Dialog, EmptyState, ErrorBox, Field, FormActions, Link, Status, useAction, useLoad, when } from '../ui.tsx';

type Schedule = Schema<'Schedule'>;
type Run = Schema<'ScheduleRun'>;

const BASE = '/api/v3/analytics/schedules';

export function SchedulesPage() {
  const list = useLoad(() => getJson<Schedule[]>(BASE), []);
  const [creating, setCreating] = useState(false);
  return (
    <section>
      <h1>Scheduled extraction</h1>
      {hasRole(session(), 'ScheduleWrite') ? (
        <button type="button" onClick={() => setCreating(true)}>
          New schedule
        </button>
      ) : null}
      <ErrorBox error={list.error} />
      <DataTable label="Schedules" headers={['Name', 'Query', 'Format', 'When (UTC)', 'Next run (UTC)', 'Active']}>
        {(list.data ?? []).map((s) => (
          <tr key={s.id}>
            <td>
              <Link to={`/schedules/${s.id}`}>{s.name}</Link>
            </td>
            <td>{s.query}</td>
            <td>{s.format}</td>
            <td>
              {s.cronDescription} <code>{s.cronExpression}</code>
            </td>
            <td>{when(s.nextRunsUtc[0])}</td>
            <td>{s.active ? 'yes' : 'no'}</td>
          </tr>
        ))}
      </DataTable>
      {list.data && !list.data.length ? (
        <EmptyState>
          No schedules yet.{' '}
          {hasRole(session(), 'ScheduleWrite')
            ? 'Choose New schedule: pick a named query, a cron expression (its next fire times show as you type) and the file format.'
            : 'Someone with the ScheduleWrite role can create one.'}
        </EmptyState>
      ) : null}
      <Dialog title="New schedule" open={creating} onClose={() => setCreating(false)}>
        <ScheduleForm
          onCancel={() => setCreating(false)}
          onSaved={(s) => {
            setCreating(false);
            navigate(`/schedules/${s.id}`);
          }}
        />
      </Dialog>
    </section>
  );
}

function ScheduleForm(props: { existing?: Schedule; onSaved: (s: Schedule) => void; onCancel: () => void }) {
  const queries = useLoad(() => getJson<Answer<'/api/v3/analytics/named-queries'>>('/api/v3/analytics/named-queries'), []);
  const e = props.existing;
  const [name, setName] = useState(e?.name ?? '');
  const [query, setQuery] = useState(e?.query ?? '');
  const [format, setFormat] = useState(e?.format ?? 'csv');
  const [cron, setCron] = useState(e?.cronExpression ?? '0 6 * * 1-5');
  const [active, setActive] = useState(e?.active ?? true);
  const [bom, setBom] = useState(e?.bom ?? false);
  const [qb, setQb] = useState(e?.queryBuilder ? JSON.stringify(e.queryBuilder, null, 2) : '');
  const [preview, setPreview] = useState<{ nextRunsUtc: string[]; cronDescription: string } | null>(null);
  const [previewError, setPreviewError] = useState<unknown>(null);
  const save = useAction();

  // The preview follows the expression as it is typed (a pause of 250 ms between keystrokes asks again).
  useEffect(() => {
    const ctl = new AbortController();
    const t = setTimeout(() => {
      getJson<Answer<'/api/v3/analytics/schedules/cron-preview'>>(`${BASE}/cron-preview?cronExpression=${enc(cron)}`, { signal: ctl.signal }).then(
        (p) => {
          setPreview(p);
          setPreviewError(null);
        },
        (err: Error) => {
          if (err.name === 'AbortError') return;
          setPreview(null);
          setPreviewError(err);
        },
      );
    }, 250);
    return () => {
      clearTimeout(t);
      ctl.abort();
    };
  }, [cron]);

  return (
    <form
      onSubmit={(ev) => {
        ev.preventDefault();
        void save.run(async () => {
          let queryBuilder: unknown = null;
          if (qb.trim()) {
            try {
              queryBuilder = JSON.parse(qb);
            } catch {
              throw new Error('The query builder is not valid JSON.');
            }
          }
          const body = { Name: name, Query: query, Format: format, CronExpression: cron, Active: active, Bom: bom, queryBuilder };
          const saved = e
            ? await getJson<Schedule>(`${BASE}/${e.id}`, { method: 'PUT', json: { ...body, parameters: e.parameters } })
            : await getJson<Schedule>(BASE, { method: 'POST', json: body });
          props.onSaved(saved);
        });
      }}
    >
      <Field label="Name">
        <input name="name" required value={name} onInput={(ev) => setName(ev.currentTarget.value)} />
      </Field>
      <Field label="Query">
        <select name="query" required value={query} onChange={(ev) => setQuery(ev.currentTarget.value)}>
          <option value="">Choose a query…</option>
          {(queries.data ?? []).map((q) => (
            <option key={q.name} value={q.name}>
              {q.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Format">
        <select name="format" value={format} onChange={(ev) => setFormat(ev.currentTarget.value)}>
          {['csv', 'json', 'ndjson', 'xlsx'].map((f) => (
            <option key={f} value={f}>
              {f}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Cron expression (UTC)" hint="minute hour day-of-month month day-of-week">
        <input name="cron" required value={cron} onInput={(ev) => setCron(ev.currentTarget.value)} aria-describedby="cron-preview" />
      </Field>
      <div id="cron-preview" class="preview" aria-live="polite">
        {preview ? (
          <>
            <strong>{preview.cronDescription}</strong>
            <ul>
              {preview.nextRunsUtc.map((t) => (
                <li key={t}>{when(t)} UTC</li>
              ))}
            </ul>
          </>
        ) : (
          <ErrorBox error={previewError} />
        )}
      </div>
      <label class="check">
        <input type="checkbox" checked={active} onChange={(ev) => setActive(ev.currentTarget.checked)} /> Active
      </label>
      <label class="check">
        <input type="checkbox" checked={bom} onChange={(ev) => setBom(ev.currentTarget.checked)} /> CSV with a byte order mark (Excel)
      </label>
      <Field label="Query builder (JSON, optional)" hint='e.g. {"filters":[["Status","=","Approved"]]} — the explorer shows the JSON of a query you build'>
        <textarea rows={4} value={qb} onInput={(ev) => setQb(ev.currentTarget.value)} />
      </Field>
      <ErrorBox error={save.error ?? queries.error} />
      <FormActions busy={save.busy} onCancel={props.onCancel} />
    </form>
  );
}

export function SchedulePage({ id }: { id: string }) {
  const schedule = useLoad(() => getJson<Schedule>(`${BASE}/${enc(id)}`), [id]);
  const runs = useLoad(() => getJson<Run[]>(`${BASE}/${enc(id)}/runs?take=100`), [id]);
  const [editing, setEditing] = useState(false);
  const action = useAction();
  const canWrite = hasRole(session(), 'ScheduleWrite');
  const s = schedule.data;
  // While a run is under way its row is asked for again every 2 s.
  const running = runs.data?.some((r) => r.status === 'Running');
  useEffect(() => {
    if (!running) return;
    const t = setInterval(runs.reload, 2000);
    return () => clearInterval(t);
  }, [running]);
  return (
    <section>
      <BackTo to="/schedules" label="Schedules" />
      <ErrorBox error={schedule.error} />
      {s ? (
        <>
          <h1>{s.name}</h1>
          <dl class="facts">
            <dt>Query</dt>
            <dd>
              {s.query} → {s.format}
            </dd>
            <dt>When</dt>
            <dd>
              {s.cronDescription} (<code>{s.cronExpression}</code>)
            </dd>
            <dt>Next runs (UTC)</dt>
            <dd>{s.nextRunsUtc.length ? s.nextRunsUtc.map(when).join(', ') : 'none (inactive)'}</dd>
            <dt>Query builder</dt>
            <dd>
              <code>{s.queryBuilder ? JSON.stringify(s.queryBuilder) : 'all rows'}</code>
            </dd>
          </dl>
          <div class="actions">
            {canWrite ? (
              <button
                type="button"
                disabled={action.busy}
                onClick={() =>
                  action.run(async () => {
                    await getJson(`${BASE}/${enc(id)}/run?wait=10`, { method: 'POST' });
                    runs.reload();
                  })
                }
              >
                {action.busy ? 'Running…' : 'Run now'}
              </button>
            ) : null}
            {canWrite ? (
              <button type="button" class="secondary" onClick={() => setEditing(true)}>
                Edit
              </button>
            ) : null}
            <button type="button" class="secondary" onClick={() => runs.reload()}>
              Refresh runs
            </button>
            {canWrite ? (
              <button
                type="button"
                class="danger"
                onClick={() =>
                  confirm(`Delete the schedule ${s.name}, its runs and files?`) &&
                  action.run(async () => {
                    await getJson(`${BASE}/${enc(id)}`, { method: 'DELETE' });
                    navigate('/schedules');
                  })
                }
              >
                Delete
              </button>
            ) : null}
          </div>
          <ErrorBox error={action.error ?? runs.error} />
          <h2>Runs</h2>
          <DataTable label="Runs" headers={['Started (UTC)', 'Trigger', 'Status', 'Rows', 'Size', 'File']}>
            {(runs.data ?? []).map((r) => (
              <tr key={r.id} data-status={r.status}>
                <td>{when(r.startedOnUtc)}</td>
                <td>{r.trigger}</td>
                <td>
                  <Status status={r.status} error={r.error} />
                </td>
                <td>{r.rows?.toLocaleString('en') ?? '—'}</td>
                <td>{bytes(r.bytes)}</td>
                <td>
                  {r.fileName && !r.fileDeletedOnUtc ? (
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => action.run(() => download(`${BASE}/${enc(id)}/runs/${r.id}/file`, {}, r.fileName ?? 'export'))}
                    >
                      Download {r.fileName}
                    </button>
                  ) : r.fileDeletedOnUtc ? (
                    'deleted'
                  ) : (
                    '—'
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
          <Dialog title="Edit schedule" open={editing} onClose={() => setEditing(false)}>
            <ScheduleForm
              existing={s}
              onCancel={() => setEditing(false)}
              onSaved={() => {
                setEditing(false);
                schedule.reload();
              }}
            />
          </Dialog>
        </>
      ) : null}
    </section>
  );
}
