// Apps and users of the tenant, for its Administrators: app credentials (create, rotate, revoke,
// the secret shown once) and the users with their roles.
import { useState } from 'preact/hooks';
import { enc, getJson } from '../api.ts';
import type { Answer, Schema } from '../api-types.ts';
import { CopyButton, DataTable, Dialog, ErrorBox, Field, FormActions, useAction, useLoad, when } from '../ui.tsx';

type TenantApp = Schema<'TenantApp'>;
type Credentials = Schema<'TenantAppCredentials'>;
type UsersAnswer = Answer<'/api/v3/users'>;

export function AppsPage() {
  const apps = useLoad(() => getJson<TenantApp[]>('/api/v3/apps'), []);
  const users = useLoad(() => getJson<UsersAnswer>('/api/v3/users'), []);
  const [secret, setSecret] = useState<Credentials | null>(null);
  const [creating, setCreating] = useState(false);
  const action = useAction();
  return (
    <section>
      <h1>Apps and users</h1>
      <h2>Apps</h2>
      <button type="button" onClick={() => setCreating(true)}>
        New app
      </button>
      <ErrorBox error={apps.error ?? action.error} />
      <DataTable label="Apps" headers={['Name', 'App id', 'Roles', 'Created (UTC)', 'Secret rotated (UTC)', 'State', <span class="sr-only">Actions</span>]}>
        {(apps.data ?? []).map((a) => (
          <tr key={a.appId}>
            <td>{a.name}</td>
            <td>
              <code>{a.appId}</code>
            </td>
            <td>{a.roles.join(', ') || '—'}</td>
            <td>{when(a.createdOnUtc)}</td>
            <td>{when(a.rotatedOnUtc)}</td>
            <td>{a.revokedOnUtc ? `revoked ${when(a.revokedOnUtc)}` : 'active'}</td>
            <td class="actions">
              {a.revokedOnUtc ? null : (
                <>
                  <button
                    type="button"
                    class="secondary"
                    disabled={action.busy}
                    onClick={() =>
                      confirm(`Rotate the secret of ${a.name}? The current secret stops working at once.`) &&
                      action.run(async () => {
                        setSecret(await getJson<Credentials>(`/api/v3/apps/${enc(a.appId)}/rotate`, { method: 'POST' }));
                        apps.reload();
                      })
                    }
                  >
                    Rotate secret<span class="sr-only"> of {a.name}</span>
                  </button>
                  <button
                    type="button"
                    class="danger"
                    disabled={action.busy}
                    onClick={() =>
                      confirm(`Revoke ${a.name}? Its credentials stop working at once.`) &&
                      action.run(async () => {
                        await getJson(`/api/v3/apps/${enc(a.appId)}`, { method: 'DELETE' });
                        apps.reload();
                      })
                    }
                  >
                    Revoke<span class="sr-only"> {a.name}</span>
                  </button>
                </>
              )}
            </td>
          </tr>
        ))}
      </DataTable>
      <h2>Users</h2>
      <ErrorBox error={users.error} />
      <DataTable label="Users" headers={['User name', 'Name', 'E-mail', 'Active', 'Roles']}>
        {(users.data?.users ?? []).map((u) => (
          <tr key={u.id}>
            <td>{u.userName}</td>
            <td>{u.name}</td>
            <td>{u.email}</td>
            <td>{u.isActive ? 'yes' : 'no'}</td>
            <td>{u.roles.join(', ') || '—'}</td>
          </tr>
        ))}
      </DataTable>
      <Dialog title="New app" open={creating} onClose={() => setCreating(false)}>
        <AppForm
          roles={users.data?.roles.map((r) => r.name) ?? []}
          onCancel={() => setCreating(false)}
          onCreated={(c) => {
            setCreating(false);
            setSecret(c);
            apps.reload();
          }}
        />
      </Dialog>
      <Dialog title="App secret" open={secret !== null} onClose={() => setSecret(null)}>
        {secret ? (
          <div>
            <p>
              <strong>Copy the secret now: it is shown only once.</strong>
            </p>
            <dl class="facts">
              <dt>App id</dt>
              <dd>
                <code>{secret.appId}</code>
              </dd>
              <dt>App secret</dt>
              <dd>
                <code data-testid="app-secret">{secret.appSecret}</code>
              </dd>
            </dl>
            <div class="actions">
              <CopyButton text={secret.appSecret} label="Copy secret" />
              <button type="button" onClick={() => setSecret(null)}>
                Done
              </button>
            </div>
          </div>
        ) : null}
      </Dialog>
    </section>
  );
}

function AppForm(props: { roles: string[]; onCreated: (c: Credentials) => void; onCancel: () => void }) {
  const [name, setName] = useState('');
  const [roles, setRoles] = useState<string[]>([]);
  const action = useAction();
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => props.onCreated(await getJson<Credentials>('/api/v3/apps', { method: 'POST', json: { name, roles } })));
      }}
    >
      <Field label="Name">
        <input name="appName" required value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </Field>
      <fieldset>
        <legend>Roles</legend>
        {props.roles.map((r) => (
          <label class="check" key={r}>
            <input
              type="checkbox"
              checked={roles.includes(r)}
              onChange={(e) => setRoles(e.currentTarget.checked ? [...roles, r] : roles.filter((x) => x !== r))}
            />{' '}
            {r}
          </label>
        ))}
      </fieldset>
      <ErrorBox error={action.error} />
      <FormActions busy={action.busy} label="Create app" onCancel={props.onCancel} />
    </form>
  );
}
