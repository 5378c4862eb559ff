// Webhooks: subscriptions (list, create, edit with detail filters, activate), a test delivery,
// the invocation history with every attempt, resend, and deliveries per hour by status.
import { useEffect, useState } from 'preact/hooks';
import { enc, getJson, hasRole, session } from '../api.ts';
import type { Answer, Schema } from '../api-types.ts';
import { navigate } from '../router.ts';
import { BackTo, CopyButton, DataTable, Dialog, EmptyState, ErrorBox, Field, Link, Status, useAction, useLoad, when } from '../ui.tsx';
import { DeliveriesChart } from './deliveries-chart.tsx';
import { bodyOf, SubscriptionForm } from './webhook-form.tsx';

export type DetailFilter = Schema<'DetailFilter'>;
/** What the list and the form use of a subscription (the form edits a draft of these fields alone). */
export type Subscription = Answer<'/api/webhook-subscriptions'>[number];
export type Attempt = Invocation['attempts'][number];
export type Invocation = Answer<'/api/webhook-subscriptions/{id}/invocation-history'>[number];

export function WebhooksPage() {
  const list = useLoad(() => getJson<Subscription[]>('/api/webhook-subscriptions'), []);
  const [creating, setCreating] = useState(false);
  // The new subscription's signing secret, shown once right after it is created.
  const [created, setCreated] = useState<(Subscription & { secret?: string }) | null>(null);
  const s = session();
  const toggle = useAction();
  // The switch shows the state asked for while it is saved; a new list is the truth again.
  const [asked, setAsked] = useState<Record<string, boolean>>({});
  useEffect(() => setAsked({}), [list.data]);
  return (
    <section>
      <h1>Webhooks</h1>
      <div class="actions">
        {hasRole(s, 'WebhookSubscriptionCreate') ? (
          <button type="button" onClick={() => setCreating(true)}>
            New subscription
          </button>
        ) : null}
        <Link to="/webhooks/events" class="button secondary">
          Event catalogue
        </Link>
      </div>
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
      {list.data && !list.data.length ? (
        <EmptyState>
          No subscriptions yet.{' '}
          {hasRole(s, 'WebhookSubscriptionCreate')
            ? 'Choose New subscription to send an event to your URL; the event catalogue shows what each event carries.'
            : 'Someone with the WebhookSubscriptionCreate role can create one; the event catalogue shows what each event carries.'}
        </EmptyState>
      ) : null}
      <Dialog title="New webhook subscription" open={creating} onClose={() => setCreating(false)}>
        <SubscriptionForm
          onCancel={() => setCreating(false)}
          onSaved={(w) => {
            setCreating(false);
            setCreated(w);
          }}
        />
      </Dialog>
      <Dialog
        title="Subscription created"
        open={created !== null}
        onClose={() => {
          if (created) navigate(`/webhooks/${created.id}`);
          setCreated(null);
        }}
      >
        {created ? (
          <>
            <p>
              <strong>Copy the signing secret now.</strong> Your receiver verifies each delivery with it (Standard Webhooks). It is shown once here; later only
              on demand, on the subscription's page.
            </p>
            <dl class="facts">
              <dt>Signing secret</dt>
              <dd>
                <code class="secret" data-testid="created-secret">
                  {created.secret}
                </code>
              </dd>
            </dl>
            <div class="actions">
              <CopyButton text={created.secret ?? ''} label="Copy secret" />
              <button
                type="button"
                onClick={() => {
                  navigate(`/webhooks/${created.id}`);
                  setCreated(null);
                }}
              >
                Done
              </button>
            </div>
          </>
        ) : null}
      </Dialog>
    </section>
  );
}

const STATUSES = ['Pending', 'Retrying', 'Succeeded', 'Failed'] as const;
/** The event of an invocation as the log's filter names it: `test`, or the event's action type. */
const eventOf = (inv: Invocation) => (inv.kind === 'test' ? 'test' : inv.actionType);

export function WebhookPage({ id }: { id: string }) {
  const sub = useLoad(() => getJson<Subscription & { secret: string }>(`/api/webhook-subscriptions/${enc(id)}`), [id]);
  const history = useLoad(() => getJson<Invocation[]>(`/api/webhook-subscriptions/${enc(id)}/invocation-history?take=1000`), [id]);
  const [editing, setEditing] = useState(false);
  const [open, setOpen] = useState<string | null>(null);
  const [revealed, setRevealed] = useState(false);
  const [status, setStatus] = useState('');
  const [event, setEvent] = useState('');
  const [sent, setSent] = useState('');
  const action = useAction();
  const s = session();
  const canWrite = hasRole(s, 'WebhookSubscriptionWrite');
  const w = sub.data;
  const all = history.data ?? [];
  const events = [...new Set(all.map(eventOf))].sort();
  const shownHistory = all.filter((inv) => (!status || inv.status === status) && (!event || eventOf(inv) === event));
  return (
    <section>
      <BackTo to="/webhooks" label="Webhooks" />
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
            <dt>Signing secret</dt>
            <dd>
              {revealed ? (
                <>
                  <code class="secret" data-testid="revealed-secret">
                    {w.secret}
                  </code>{' '}
                  <CopyButton text={w.secret} label="Copy secret" />{' '}
                  <button type="button" class="secondary" onClick={() => setRevealed(false)}>
                    Hide secret
                  </button>
                </>
              ) : (
                <>
                  <span aria-hidden="true">••••••••••••</span>{' '}
                  <button type="button" class="secondary" onClick={() => setRevealed(true)}>
                    Reveal secret
                  </button>
                </>
              )}
            </dd>
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
            {canWrite ? (
              <button
                type="button"
                class="secondary"
                disabled={action.busy}
                onClick={() =>
                  action.run(async () => {
                    setSent('');
                    const r = await getJson<Answer<'/api/webhook-subscriptions/{id}/send-example', 'post'>>(
                      `/api/webhook-subscriptions/${enc(id)}/send-example`,
                      { method: 'POST' },
                    );
                    setSent(
                      r.source === 'event'
                        ? `Example sent: the newest ${w.actionType} event of this tenant, as a test.`
                        : `Example sent, built from the catalogue (no ${w.actionType} event yet), as a test.`,
                    );
                    history.reload();
                  })
                }
              >
                Send example
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
          {sent ? (
            <p role="status" data-testid="sent-example">
              {sent}
            </p>
          ) : null}
          <h2>Deliveries per hour, last 24 hours</h2>
          <DeliveriesChart invocations={history.data ?? []} />
          <h2>Invocation history</h2>
          <div class="row">
            <ChoiceFilter label="Status" value={status} choices={STATUSES} onChange={setStatus} />
            <ChoiceFilter label="Event" value={event} choices={events} onChange={setEvent} />
            <p class="muted" role="status" data-testid="history-count">
              {shownHistory.length} of {all.length} newest invocations
            </p>
          </div>
          <DataTable
            label="Invocation history"
            headers={['Created (UTC)', 'Event', 'Status', 'Attempts', 'Last answer', 'Duration', <span class="sr-only">Actions</span>]}
          >
            {shownHistory.map((inv) => {
              const last = inv.attempts[inv.attempts.length - 1];
              return [
                <tr key={inv.id} data-status={inv.status}>
                  <td>{when(inv.createdOnUtc)}</td>
                  <td>{inv.kind === 'test' ? 'test' : `event: ${inv.actionType}`}</td>
                  <td>
                    <Status status={inv.status} />
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
          </DataTable>
          {history.data && !shownHistory.length ? (
            <EmptyState>
              {all.length
                ? 'No invocation matches these filters: choose "all" to see every one.'
                : canWrite
                  ? 'Nothing delivered yet. Send test or Send example to see a delivery, its signature check and your endpoint’s answer here.'
                  : 'Nothing delivered yet: deliveries show here as events happen.'}
            </EmptyState>
          ) : null}
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

/** A filter of the invocation history: one of the values shown, or all. */
function ChoiceFilter(props: { label: string; value: string; choices: readonly string[]; onChange: (v: string) => void }) {
  return (
    <Field label={props.label}>
      <select value={props.value} onChange={(e) => props.onChange(e.currentTarget.value)}>
        <option value="">all</option>
        {props.choices.map((x) => (
          <option key={x} value={x}>
            {x}
          </option>
        ))}
      </select>
    </Field>
  );
}
