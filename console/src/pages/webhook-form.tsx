// The form of a webhook subscription: name, document type from the lookup, action type from the
// catalogue (or a custom one), URL, active, and detail filters joined by And / Or.

import { useState } from 'preact/hooks';
import { getJson } from '../api.ts';
import type { Answer } from '../api-types.ts';
import { ErrorBox, Field, FormActions, useAction, useLoad } from '../ui.tsx';
import type { DetailFilter, Subscription } from './webhooks.tsx';

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
/** The fields of a subscription the form edits. */
type Draft = Pick<Subscription, 'name' | 'description' | 'url' | 'actionType' | 'documentType' | 'active' | 'businessObjectTypeName' | 'detailFilters'>;

export const bodyOf = (s: Draft) => ({
  Name: s.name,
  Description: s.description || null,
  ActionType: s.actionType,
  DocumentType: s.documentType,
  Url: s.url,
  Active: s.active,
  BusinessObjectTypeName: s.businessObjectTypeName || null,
  DetailFilters: s.detailFilters,
});

const EMPTY: Draft = {
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
  const types = useLoad(() => getJson<Answer<'/api/v3/document-types/lookup'>>('/api/v3/document-types/lookup'), []);
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
      <FormActions busy={save.busy} onCancel={props.onCancel} />
    </form>
  );
}
