// The SFTP user feed: its settings (on/off, schedule, dry-run default), run now (or a dry run), and its
// runs per file and per row. The SFTP-HRFEED configuration key itself is set through the Integration API.
import { useState } from 'preact/hooks';
import { enc, getJson, hasRole, session } from '../api.ts';
import type { Schema } from '../api-types.ts';
import { DataTable, EmptyState, ErrorBox, Field, Status, useAction, useLoad, when } from '../ui.tsx';

type Settings = Schema<'UserFeed'>;
type FeedRun = Schema<'UserFeedRun'>;

const BASE = '/api/v3/user-feed';
const COUNTS = ['rows', 'created', 'updated', 'deactivated', 'unchanged', 'skipped', 'failed'] as const;

export function UserFeedPage() {
  const settings = useLoad(() => getJson<Settings>(BASE), []);
  const runs = useLoad(() => getJson<FeedRun[]>(`${BASE}/runs?take=50`), []);
  const [shown, setShown] = useState<FeedRun | null>(null);
  const action = useAction();
  const canWrite = hasRole(session(), 'AutomationWrite');
  const runNow = (dryRun: boolean) =>
    action.run(async () => {
      const run = await getJson<FeedRun>(`${BASE}/run?dryRun=${dryRun}`, { method: 'POST' });
      // A long file answers 202 while it goes on: its row is in the list, and its detail when it ends.
      setShown(run.status === 'Running' ? null : await getJson<FeedRun>(`${BASE}/runs/${enc(run.id)}`));
      runs.reload();
    });
  return (
    <section>
      <h1>User feed</h1>
      <p class="muted">
        HR files <code>AD_UserAccounts_YYYYMMDDHHmmss.csv</code> read from the SFTP server of the <code>SFTP-HRFEED</code> configuration key provision, update
        and deactivate users (docs/user-feed.md).
      </p>
      <ErrorBox error={settings.error} />
      {settings.data ? <SettingsForm settings={settings.data} canWrite={canWrite} onSaved={settings.reload} /> : null}
      {canWrite ? (
        <div class="actions">
          <button type="button" disabled={action.busy} onClick={() => runNow(false)}>
            {action.busy ? 'Running…' : 'Run now'}
          </button>
          <button type="button" class="secondary" disabled={action.busy} onClick={() => runNow(true)}>
            Dry run
          </button>
          <button type="button" class="secondary" onClick={() => runs.reload()}>
            Refresh runs
          </button>
        </div>
      ) : null}
      <ErrorBox error={action.error ?? runs.error} />
      {shown ? <RunDetail run={shown} /> : null}
      <h2>Runs</h2>
      <DataTable label="Feed runs" headers={['Started (UTC)', 'Trigger', 'Status', 'Files', 'Rows (created / updated / deactivated / failed)', 'Detail']}>
        {(runs.data ?? []).map((r) => {
          const sum = (k: (typeof COUNTS)[number]) => r.files.reduce((n, f) => n + f[k], 0);
          return (
            <tr key={r.id} data-status={r.status}>
              <td>{when(r.startedOnUtc)}</td>
              <td>
                {r.trigger}
                {r.dryRun ? ' (dry run)' : ''}
              </td>
              <td>
                <Status status={r.status} error={r.error} />
              </td>
              <td>{r.files.length}</td>
              <td>
                {sum('rows')} ({sum('created')} / {sum('updated')} / {sum('deactivated')} / {sum('failed')})
              </td>
              <td>
                <button type="button" class="secondary" onClick={() => action.run(async () => setShown(await getJson<FeedRun>(`${BASE}/runs/${enc(r.id)}`)))}>
                  Show files and rows
                </button>
              </td>
            </tr>
          );
        })}
      </DataTable>
      {runs.data && !runs.data.length ? (
        <EmptyState>
          No runs yet. Run now (or Dry run, which changes nothing) once a file is in the feed's folder; each run lists its files and rows here.
        </EmptyState>
      ) : null}
    </section>
  );
}

function SettingsForm(props: { settings: Settings; canWrite: boolean; onSaved: () => void }) {
  const [enabled, setEnabled] = useState(props.settings.enabled);
  const [schedule, setSchedule] = useState(props.settings.schedule);
  const [dryRun, setDryRun] = useState(props.settings.dryRun);
  const save = useAction();
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void save.run(async () => {
          await getJson(BASE, { method: 'PUT', json: { enabled, schedule, dryRun } });
          props.onSaved();
        });
      }}
    >
      <fieldset disabled={!props.canWrite}>
        <legend>Settings</legend>
        <label class="check">
          <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled (runs on its schedule)
        </label>
        <Field label="Schedule (cron, UTC)" hint={`Next run: ${props.settings.enabled ? when(props.settings.nextRunUtc) : 'none while disabled'}`}>
          <input value={schedule} onInput={(e) => setSchedule(e.currentTarget.value)} />
        </Field>
        <label class="check">
          <input type="checkbox" checked={dryRun} onChange={(e) => setDryRun(e.currentTarget.checked)} /> Dry run by default (report, change nothing)
        </label>
        <ErrorBox error={save.error} />
        <button type="submit" disabled={save.busy}>
          Save settings
        </button>
      </fieldset>
    </form>
  );
}

/** One run: each file with its counts, folder and results file, and each row's outcome. */
function RunDetail({ run }: { run: FeedRun }) {
  return (
    <section aria-label="Feed run">
      <h2>
        Run of {when(run.startedOnUtc)}
        {run.dryRun ? ' (dry run)' : ''}: <Status status={run.status} />
      </h2>
      {run.error ? <p class="muted">{run.error}</p> : null}
      {run.files.length ? null : <p class="muted">No file was waiting.</p>}
      {run.files.map((f) => (
        <details key={f.name} open>
          <summary>
            {f.name}: {f.status}
            {f.alreadyProcessed ? ' (already processed: nothing changed)' : ''} · {COUNTS.map((k) => `${f[k]} ${k}`).join(', ')}
            {f.movedTo ? ` · moved to ${f.movedTo}` : ''}
          </summary>
          {f.message ? <p class="muted">{f.message}</p> : null}
          {f.resultFile ? (
            <p>
              Results file <code>{f.resultFile}</code>
            </p>
          ) : null}
          <div class="scroll">
            <table aria-label={`Rows of ${f.name}`}>
              <thead>
                <tr>
                  <th scope="col">Row</th>
                  <th scope="col">External id</th>
                  <th scope="col">Outcome</th>
                  <th scope="col">User</th>
                  <th scope="col">Message</th>
                </tr>
              </thead>
              <tbody>
                {(f.rowResults ?? []).map((r) => (
                  <tr key={r.row} data-outcome={r.outcome}>
                    <td>{r.row}</td>
                    <td>{r.externalId ?? ''}</td>
                    <td>{r.outcome}</td>
                    <td>{r.userId ? <code>{r.userId}</code> : ''}</td>
                    <td>{r.message ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </details>
      ))}
    </section>
  );
}
