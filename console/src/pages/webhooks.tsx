// Webhooks: subscriptions (list, create, edit with detail filters, activate), a test delivery,
// the invocation history with every attempt, resend, and deliveries per hour by status.
import { useEffect, useState } from 'preact/hooks';
import { enc, getJson, hasRole, session } from '../api.ts';
import type { Schema } from '../api-types.ts';
import { navigate } from '../router.ts';
import { Dialog, ErrorBox, Link, useAction, useLoad, when } from '../ui.tsx';
import { DeliveriesChart } from './deliveries-chart.tsx';
import { bodyOf, SubscriptionForm } from './webhook-form.tsx';

export type DetailFilter = Schema<'DetailFilter'>;
/** What the list and the form use of a subscription (the form edits a draft of these fields alone). */
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

export function WebhooksPage() {
  const list = useLoad(() => getJson<Subscription[]>('/api/webhook-subscriptions'), []);
  const [creating, setCreating] = useState(false);
  const s = session();
  const toggle = useAction();
  // The switch shows the state asked for while it is saved; a new list is the truth again.
  const [asked, setAsked] = useState<Record<string, boolean>>({});
  useEffect(() => setAsked({}), [list.data]);
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
                      checked={asked[w.id] ?? w.active}
                      disabled={!hasRole(s, 'WebhookSubscriptionWrite') || toggle.busy}
                      onChange={(e) => {
                        const active = e.currentTarget.checked;
                        setAsked({ ...asked, [w.id]: active });
                        void toggle.run(async () => {
                          try {
                            await getJson(`/api/webhook-subscriptions/${w.id}`, { method: 'PUT', json: bodyOf({ ...w, active }) });
                          } finally {
                            list.reload();
                          }
                        });
                      }}
                    />{' '}
                    <span class="sr-only">Active: {w.name}</span>
                    {(asked[w.id] ?? w.active) ? 'yes' : 'no'}
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
