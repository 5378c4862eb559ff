// Saved queries in the explorer: save what is on screen (the query, its builder and the table or chart
// settings) under a name, list yours and the tenant's shared ones, open one by its link, rename, share, delete.

import { useState } from 'preact/hooks';
import { getJson } from '../api.ts';
import type { Answer } from '../api-types.ts';
import { BASE } from '../router.ts';
import { DataTable, ErrorBox, Field, Link, useAction, useLoad } from '../ui.tsx';

export type SavedQuery = Answer<'/api/v3/saved-queries/{id}'>;

export const savedPath = (id: string) => `/explorer/saved/${id}`;

export function SavedQueriesPanel(props: {
  /** What would be saved now: null when no query is chosen. */
  current: () => Pick<SavedQuery, 'query' | 'queryBuilder' | 'view'> | null;
  openId?: string;
}) {
  const list = useLoad(() => getJson<Answer<'/api/v3/saved-queries'>>('/api/v3/saved-queries'), []);
  const [name, setName] = useState('');
  const [share, setShare] = useState(false);
  const [saved, setSaved] = useState<SavedQuery | null>(null);
  const action = useAction();
  const save = () =>
    action.run(async () => {
      const current = props.current();
      if (!current) throw new Error('Choose a named query first.');
      const body = { name: name.trim() || current.query, ...current, shared: share };
      // Saving over the query that is open (and yours) updates it; anything else saves a new one.
      const open = list.data?.data.find((q) => q.id === props.openId && q.mine);
      const result = open
        ? await getJson<SavedQuery>(`/api/v3/saved-queries/${open.id}`, { method: 'PATCH', json: body })
        : await getJson<SavedQuery>('/api/v3/saved-queries', { method: 'POST', json: body });
      setSaved(result);
      list.reload();
    });
  const patch = (q: SavedQuery, json: Partial<SavedQuery>) =>
    action.run(async () => {
      await getJson(`/api/v3/saved-queries/${q.id}`, { method: 'PATCH', json });
      list.reload();
    });
  const remove = (q: SavedQuery) =>
    action.run(async () => {
      if (!confirm(`Delete the saved query ${q.name}?`)) return;
      await getJson(`/api/v3/saved-queries/${q.id}`, { method: 'DELETE' });
      list.reload();
    });
  const rows = list.data?.data ?? [];
  return (
    <details class="saved-queries">
      <summary>Saved queries ({list.data?.totalCount ?? '…'})</summary>
      <div class="toolbar">
        <Field label="Save as">
          <input value={name} placeholder="Name of this query" maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
        </Field>
        <label class="check">
          <input type="checkbox" checked={share} onChange={(e) => setShare(e.currentTarget.checked)} /> Share with the tenant
        </label>
        <div class="actions">
          <button type="button" class="secondary" onClick={save} disabled={action.busy}>
            Save query
          </button>
        </div>
      </div>
      {saved ? (
        <p role="status">
          Saved as <strong>{saved.name}</strong>:{' '}
          <a href={`${BASE}${savedPath(saved.id)}`} data-testid="saved-link">
            link to this query
          </a>
        </p>
      ) : null}
      <ErrorBox error={list.error ?? action.error} />
      {rows.length ? (
        <DataTable headers={['Name', 'Named query', 'Shared', <span class="sr-only">Actions</span>]}>
          {rows.map((q) => (
            <tr key={q.id}>
              <td>
                <Link to={savedPath(q.id)}>{q.name}</Link>
              </td>
              <td>{q.query}</td>
              <td>{q.shared ? 'with the tenant' : 'no'}</td>
              <td>
                {q.mine ? (
                  <>
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`Rename ${q.name}`}
                      onClick={() => {
                        const n = prompt('New name', q.name);
                        if (n?.trim()) void patch(q, { name: n.trim() });
                      }}
                    >
                      Rename
                    </button>{' '}
                    <button
                      type="button"
                      class="secondary"
                      aria-label={`${q.shared ? 'Unshare' : 'Share'} ${q.name}`}
                      onClick={() => patch(q, { shared: !q.shared })}
                    >
                      {q.shared ? 'Unshare' : 'Share'}
                    </button>{' '}
                    <button type="button" class="secondary" aria-label={`Delete ${q.name}`} onClick={() => remove(q)}>
                      Delete
                    </button>
                  </>
                ) : (
                  <span class="muted">shared with you</span>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      ) : (
        <p class="muted">No saved queries yet: choose a query, set its filters, table or chart, then save it here to reopen it by its link.</p>
      )}
    </details>
  );
}
