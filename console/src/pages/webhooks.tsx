// Webhooks: subscriptions (list, create, edit with detail filters, activate), a test delivery,
// the invocation history with every attempt, resend, and deliveries per hour by status.
import { useState } from 'preact/hooks';
import { enc, getJson, hasRole, session } from '../api.ts';
import { navigate } from '../router.ts';
import { Dialog, ErrorBox, Field, Link, useAction, useLoad, when } from '../ui.tsx';
import { DeliveriesChart } from './deliveries-chart.tsx';

export interface DetailFilter {
  groupCondition: 'And' | 'Or';
  jsonPathExpression: string;
  condition: 'Equal' | 'NotEqual' | 'Contains' | 'NotContains';
  value: string;
}
export interface Subscription {
  id: string;
  name: string;
  description: string | null;
  url: string | null;
  actionType: string;
  documentType: string;
  active: boolean;
  businessObjectTypeName: string | null;
  detailFilters: DetailFilter[];
  modifiedOnUtc: string;
}
export interface Attempt {
  attempt: number;
  startedOnUtc: string;
  durationMs: number;
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
}
export interface Invocation {
  id: string;
  kind: 'event' | 'test';
  actionType: string;
  documentType: string;
  documentId: string | null;
  createdOnUtc: string;
  status: 'Pending' | 'Retrying' | 'Succeeded' | 'Failed';
  attempts: Attempt[];
  nextAttemptOnUtc: string | null;
}

const ACTION_TYPES = [
  'Created',
  'Updated',
  'Deleted',
  'StageUpdated',
  'TimeUpdated',
  'BatchExecuted',
  'Executed',
  'FileDownloaded',
  'UserRoleAdded',
  'UserRoleRemoved',
];

/** The body of POST/PUT: Secret is left out, so a PUT keeps the current one. */
const bodyOf = (s: Omit<Subscription, 'id' | 'modifiedOnUtc'>) => ({
  Name: s.name,
  Description: s.description || null,
  ActionType: s.actionType,
  DocumentType: s.documentType,
  Url: s.url,
  Active: s.active,
  BusinessObjectTypeName: s.businessObjectTypeName || null,
  DetailFilters: s.detailFilters,
});

export function WebhooksPage() {
  const list = useLoad(() => getJson<Subscription[]>('/api/webhook-subscriptions'), []);
  const [creating, setCreating] = useState(false);
  const s = session();
  const toggle = useAction();
  return (
    <section>
      <h1>Webhooks</h1>
      {hasRole(s, 'WebhookSubscriptionCreate') ? (
        <button type="button" onClick={() => setCreating(true)}>
          New subscription
        </button>
      ) : null}
      <ErrorBox error={list.error ?? toggle.error} />
      <div class="scroll">
        <table>
          <caption class="sr-only">Webhook subscriptions</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Event</th>
              <th scope="col">URL</th>
              <th scope="col">Active</th>
              <th scope="col">Modified (UTC)</th>
            </tr>
          </thead>
          <tbody>
            {(list.data ?? []).map((w) => (
              <tr key={w.id}>
                <td>
                  <Link to={`/webhooks/${w.id}`}>{w.name}</Link>
                </td>
                <td>
                  {w.actionType} · {w.documentType.split('.').pop()}
                </td>
                <td class="url">{w.url}</td>
                <td>
                  <label>
                    <input
                      type="checkbox"
                      checked={w.active}
                      disabled={!hasRole(s, 'WebhookSubscriptionWrite') || toggle.busy}
                      onChange={(e) => {
                        const active = e.currentTarget.checked;
                        void toggle.run(async () => {
                          await getJson(`/api/webhook-subscriptions/${w.id}`, { method: 'PUT', json: bodyOf({ ...w, active }) });
                          list.reload();
                        });
                      }}
                    />{' '}
                    <span class="sr-only">Active: {w.name}</span>
                    {w.active ? 'yes' : 'no'}
                  </label>
                </td>
                <td>{when(w.modifiedOnUtc)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {list.data && !list.data.length ? <p class="muted">No subscriptions yet.</p> : null}
      <Dialog title="New webhook subscription" open={creating} onClose={() => setCreating(false)}>
        <SubscriptionForm
          onCancel={() => setCreating(false)}
          onSaved={(w) => {
            setCreating(false);
            navigate(`/webhooks/${w.id}`);
          }}
        />
      </Dialog>
    </section>
  );
}

const EMPTY: Omit<Subscription, 'id' | 'modifiedOnUtc'> = {
  name: '',
  description: '',
  url: 'https://',
  actionType: 'Created',
  documentType: '',
  active: true,
  businessObjectTypeName: '',
  detailFilters: [],
};

export function SubscriptionForm(props: { existing?: Subscription; onSaved: (w: Subscription & { secret?: string }) => void; onCancel: () => void }) {
  const types = useLoad(() => getJson<{ name: string; fullName: string }[]>('/api/v3/document-types/lookup'), []);
  const [w, setW] = useState(props.existing ?? EMPTY);
  const save = useAction();
  const set = (patch: Partial<Subscription>) => setW({ ...w, ...patch });
  const setFilter = (i: number, patch: Partial<DetailFilter>) => set({ detailFilters: w.detailFilters.map((f, j) => (j === i ? { ...f, ...patch } : f)) });
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void save.run(async () => {
          const saved = props.existing
            ? await getJson<Subscription>(`/api/webhook-subscriptions/${props.existing.id}`, { method: 'PUT', json: bodyOf(w) })
            : await getJson<Subscription>('/api/webhook-subscriptions', { method: 'POST', json: bodyOf(w) });
          props.onSaved(saved);
        });
      }}
    >
      <Field label="Name">
        <input name="name" required value={w.name} onInput={(e) => set({ name: e.currentTarget.value })} />
      </Field>
      <Field label="Description">
        <input name="description" value={w.description ?? ''} onInput={(e) => set({ description: e.currentTarget.value })} />
      </Field>
      <Field label="Document type">
        <select name="documentType" required value={w.documentType} onChange={(e) => set({ documentType: e.currentTarget.value })}>
          <option value="">Choose…</option>
          {(types.data ?? []).map((t) => (
            <option key={t.fullName} value={t.fullName}>
              {t.name}
            </option>
          ))}
        </select>
      </Field>
      <Field label="Action type" hint="An event of the catalogue, or a custom value raised with POST /api/v3/events">
        <input name="actionType" list="action-types" required value={w.actionType} onInput={(e) => set({ actionType: e.currentTarget.value })} />
      </Field>
      <datalist id="action-types">
        {ACTION_TYPES.map((a) => (
          <option key={a} value={a} />
        ))}
      </datalist>
      <Field label="URL">
        <input name="url" type="url" required value={w.url ?? ''} onInput={(e) => set({ url: e.currentTarget.value })} />
      </Field>
      <label class="check">
        <input type="checkbox" name="active" checked={w.active} onChange={(e) => set({ active: e.currentTarget.checked })} /> Active
      </label>
      <fieldset>
        <legend>Detail filters</legend>
        {w.detailFilters.map((f, i) => (
          <div class="row" key={i}>
            {i > 0 ? (
              <Field label={`Join ${i + 1}`}>
                <select value={f.groupCondition} onChange={(e) => setFilter(i, { groupCondition: e.currentTarget.value as 'And' | 'Or' })}>
                  <option value="And">And</option>
                  <option value="Or">Or</option>
                </select>
              </Field>
            ) : null}
            <Field label={`Property ${i + 1}`}>
              <input
                required
                value={f.jsonPathExpression}
                placeholder="Name or $.a.b"
                onInput={(e) => setFilter(i, { jsonPathExpression: e.currentTarget.value })}
              />
            </Field>
            <Field label={`Condition ${i + 1}`}>
              <select value={f.condition} onChange={(e) => setFilter(i, { condition: e.currentTarget.value as DetailFilter['condition'] })}>
                {['Equal', 'NotEqual', 'Contains', 'NotContains'].map((c) => (
                  <option key={c} value={c}>
                    {c}
                  </option>
                ))}
              </select>
            </Field>
            <Field label={`Value ${i + 1}`}>
              <input value={f.value} onInput={(e) => setFilter(i, { value: e.currentTarget.value })} />
            </Field>
            <button
              type="button"
              class="secondary"
              aria-label={`Remove detail filter ${i + 1}`}
              onClick={() => set({ detailFilters: w.detailFilters.filter((_, j) => j !== i) })}
            >
              Remove
            </button>
          </div>
        ))}
        <button
          type="button"
          class="secondary"
          onClick={() => set({ detailFilters: [...w.detailFilters, { groupCondition: 'And', jsonPathExpression: '', condition: 'Equal', value: '' }] })}
        >
          Add detail filter
        </button>
      </fieldset>
      <ErrorBox error={save.error ?? types.error} />
      <div class="actions">
        <button type="submit" disabled={save.busy}>
          Save
        </button>
        <button type="button" class="secondary" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

export function WebhookPage({ id }: { id: string }) {
  const sub = useLoad(() => getJson<Subscription & { secret: string }>(`/api/webhook-subscriptions/${enc(id)}`), [id]);
  const history = useLoad(() => getJson<Invocation[]>(`/api/webhook-subscriptions/${enc(id)}/invocation-history?take=1000`), [id]);
  const [editing, setEditing] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const action = useAction();
  const s = session();
  const canWrite = hasRole(s, 'WebhookSubscriptionWrite');
  const w = sub.data;
  return (
    <section>
      <p>
        <Link to="/webhooks">← Webhooks</Link>
      </p>
      <ErrorBox error={sub.error} />
      {w ? (
        <>
          <h1>{w.name}</h1>
          <dl class="facts">
            <dt>Event</dt>
            <dd>
              {w.actionType} on {w.documentType}
            </dd>
            <dt>URL</dt>
            <dd class="url">{w.url}</dd>
            <dt>Active</dt>
            <dd>{w.active ? 'yes' : 'no'}</dd>
            <dt>Detail filters</dt>
            <dd>
              {w.detailFilters.length
                ? w.detailFilters.map((f, i) => `${i ? `${f.groupCondition} ` : ''}${f.jsonPathExpression} ${f.condition} "${f.value}"`).join(' ')
                : 'none'}
            </dd>
          </dl>
          <div class="actions">
            {canWrite ? (
              <button type="button" onClick={() => setEditing(true)}>
                Edit
              </button>
            ) : null}
            {canWrite ? (
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  action.run(async () => {
                    await getJson(`/api/webhook-subscriptions/${enc(id)}/test`, { method: 'POST' });
                    history.reload();
                  })
                }
              >
                Send test
              </button>
            ) : null}
            <button type="button" class="secondary" onClick={() => history.reload()}>
              Refresh history
            </button>
            {hasRole(s, 'WebhookSubscriptionDelete') ? (
              <button
                type="button"
                class="danger"
                onClick={() =>
                  confirm(`Delete the subscription ${w.name}?`) &&
                  action.run(async () => {
                    await getJson(`/api/webhook-subscriptions/${enc(id)}`, { method: 'DELETE' });
                    navigate('/webhooks');
                  })
                }
              >
                Delete
              </button>
            ) : null}
          </div>
          <ErrorBox error={action.error ?? history.error} />
          <h2>Deliveries per hour, last 24 hours</h2>
          <DeliveriesChart invocations={history.data ?? []} />
          <h2>Invocation history</h2>
          <div class="scroll">
            <table aria-label="Invocation history">
              <thead>
                <tr>
                  <th scope="col">Created (UTC)</th>
                  <th scope="col">Kind</th>
                  <th scope="col">Status</th>
                  <th scope="col">Attempts</th>
                  <th scope="col">Last answer</th>
                  <th scope="col">Duration</th>
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {(history.data ?? []).map((inv) => {
                  const last = inv.attempts[inv.attempts.length - 1];
                  return [
                    <tr key={inv.id} data-status={inv.status}>
                      <td>{when(inv.createdOnUtc)}</td>
                      <td>{inv.kind}</td>
                      <td>
                        <span class={`status ${inv.status.toLowerCase()}`}>{inv.status}</span>
                      </td>
                      <td>{inv.attempts.length}</td>
                      <td>{last ? (last.statusCode ?? last.error ?? '—') : '—'}</td>
                      <td>{last ? `${last.durationMs} ms` : '—'}</td>
                      <td class="actions">
                        <button type="button" class="secondary" aria-expanded={open === inv.id} onClick={() => setOpen(open === inv.id ? null : inv.id)}>
                          Attempts
                        </button>
                        {canWrite ? (
                          <button
                            type="button"
                            class="secondary"
                            disabled={action.busy}
                            onClick={() =>
                              action.run(async () => {
                                await getJson(`/api/webhook-subscriptions/${enc(id)}/invocations/${inv.id}/resend`, { method: 'POST' });
                                history.reload();
                              })
                            }
                          >
                            Resend
                          </button>
                        ) : null}
                      </td>
                    </tr>,
                    open === inv.id ? (
                      <tr key={`${inv.id}-attempts`}>
                        <td colSpan={7}>
                          <ol class="attempts">
                            {inv.attempts.map((a) => (
                              <li key={a.attempt}>
                                {when(a.startedOnUtc)} · {a.statusCode ?? 'no answer'} · {a.durationMs} ms{a.error ? ` · ${a.error}` : ''}
                                {a.responseBody ? <pre>{a.responseBody}</pre> : null}
                              </li>
                            ))}
                          </ol>
                          {inv.nextAttemptOnUtc ? <p>Next attempt {when(inv.nextAttemptOnUtc)}</p> : null}
                        </td>
                      </tr>
                    ) : null,
                  ];
                })}
              </tbody>
            </table>
          </div>
          <Dialog title="Edit webhook subscription" open={editing} onClose={() => setEditing(false)}>
            <SubscriptionForm
              existing={w}
              onCancel={() => setEditing(false)}
              onSaved={() => {
                setEditing(false);
                sub.reload();
              }}
            />
          </Dialog>
        </>
      ) : null}
    </section>
  );
}
