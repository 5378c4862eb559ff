// The event catalogue as an integrator reads it: every event with the detail fields its filters can
// test, and the payload a subscription receives for an event on a document type (the tenant's newest
// real one, else one built from the catalogue), with a copy button.

import { useState } from 'preact/hooks';
import { enc, getJson } from '../api.ts';
import type { Answer } from '../api-types.ts';
import { BackTo, CopyButton, ErrorBox, Field, useLoad } from '../ui.tsx';

export type CatalogueEvent = Catalogue['events'][number];
type Catalogue = Answer<'/api/v3/webhook-events'>;
type Example = Answer<'/api/v3/webhook-events/example'>;

export function WebhookEventsPage() {
  const catalogue = useLoad(() => getJson<Catalogue>('/api/v3/webhook-events'), []);
  const [documentType, setDocumentType] = useState('');
  const [actionType, setActionType] = useState('Created');
  const c = catalogue.data;
  const type = documentType || c?.documentTypes[0]?.fullName || '';
  const example = useLoad(
    () =>
      type
        ? getJson<Example>(`/api/v3/webhook-events/example?documentType=${enc(type)}${actionType ? `&actionType=${enc(actionType)}` : ''}`)
        : Promise.resolve(undefined),
    [type, actionType],
  );
  const text = example.data ? JSON.stringify(example.data.payload, null, 2) : '';
  return (
    <section>
      <BackTo to="/webhooks" label="Webhooks" />
      <h1>Event catalogue</h1>
      <p>
        A subscription names one event (its action type) on one document type. Its detail filters test the event's detail fields. Every delivery is a JSON body
        signed as Standard Webhooks (<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>).
      </p>
      <ErrorBox error={catalogue.error} />
      {c ? (
        <>
          <div class="scroll">
            <table class="catalogue" aria-label="Events">
              <thead>
                <tr>
                  <th scope="col">Action type</th>
                  <th scope="col">Group</th>
                  <th scope="col">Fires when</th>
                  <th scope="col">Detail fields</th>
                </tr>
              </thead>
              <tbody>
                {c.events.map((e) => (
                  <tr key={e.actionType}>
                    <td>
                      <code>{e.actionType}</code>
                    </td>
                    <td>{e.group}</td>
                    <td>{e.firesWhen}</td>
                    <td>
                      {e.detailFields === 'dynamic'
                        ? 'every changed property of the document'
                        : e.detailFields.length
                          ? e.detailFields.map((f) => <code key={f}>{f} </code>)
                          : 'none'}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <h2>Example payload</h2>
          <div class="row">
            <Field label="Document type">
              <select value={type} onChange={(e) => setDocumentType(e.currentTarget.value)}>
                {c.documentTypes.map((t) => (
                  <option key={t.fullName} value={t.fullName}>
                    {t.name}
                  </option>
                ))}
              </select>
            </Field>
            <Field label="Event">
              <select value={actionType} onChange={(e) => setActionType(e.currentTarget.value)}>
                <option value="">any (the newest)</option>
                {c.events.map((e) => (
                  <option key={e.actionType} value={e.actionType}>
                    {e.actionType}
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <ErrorBox error={example.error} />
          {example.data ? (
            <>
              <p role="status" data-testid="example-source">
                {example.data.source === 'event'
                  ? `The tenant's newest ${example.data.actionType} event on this document type, as a subscription receives it.`
                  : `No ${example.data.actionType} event on this document type yet: built from the catalogue.`}
              </p>
              <section
                aria-label="Example payload"
                // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus for keyboard users to scroll it
                tabIndex={0}
                class="payload"
              >
                <pre data-testid="example-payload">{text}</pre>
              </section>
              <CopyButton text={text} label="Copy payload" />
            </>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
