// Custom tables: the tables and their columns, create and add columns, rows browsed and edited
// inline with an input per column type, import and export files, and Read / Save roles.

import { useState } from 'preact/hooks';
import { call, download, enc, getJson, hasRole, session } from '../api.ts';
import type { Answer } from '../api-types.ts';
import { navigate } from '../router.ts';
import { BackTo, DataTable, Dialog, EmptyState, ErrorBox, Link, useAction, useLoad, when } from '../ui.tsx';
import { inputType, jsonValue, MAX_LENGTH, TYPE_NAMES, textOf } from './column-types.ts';
import { PermissionsForm, T, type Table, TableForm } from './custom-table-forms.tsx';

type Row = Answer<'/api/v3/custom-tables/{tableName}/rows/values'>[number];

const PAGE = 50;

export function CustomTablesPage() {
  const list = useLoad(() => getJson<Table[]>(T), []);
  const [creating, setCreating] = useState(false);
  return (
    <section>
      <h1>Custom tables</h1>
      <button type="button" onClick={() => setCreating(true)}>
        New table
      </button>
      <ErrorBox error={list.error} />
      <DataTable label="Custom tables" headers={['Table', 'Key', 'Columns', 'Read / Save roles', 'Modified (UTC)']}>
        {(list.data ?? []).map((t) => (
          <tr key={t.Id}>
            <td>
              <Link to={`/custom-tables/${enc(t.TableName)}`}>{t.TableName}</Link>
            </td>
            <td>
              {t.KeyColumnName} <span class="type">{TYPE_NAMES[t.KeyDataTypeId]}</span>
            </td>
            <td>{t.Columns.map((c) => c.ColumnName).join(', ')}</td>
            <td>
              {t.ReadRoles.join(', ') || 'anyone'} / {t.SaveRoles.join(', ') || 'anyone'}
            </td>
            <td>{when(t.ModifiedOn)}</td>
          </tr>
        ))}
      </DataTable>
      {list.data && !list.data.length ? (
        <EmptyState>
          No custom tables you may read.{' '}
          {hasRole(session(), 'CustomTablesSave')
            ? 'Choose New table to make one: a key column and typed columns; rows are then edited here or imported from a file.'
            : 'A table shows here once someone with CustomTablesSave creates it and its Read roles include one of yours.'}
        </EmptyState>
      ) : null}
      <Dialog title="New custom table" open={creating} onClose={() => setCreating(false)}>
        <TableForm
          onCancel={() => setCreating(false)}
          onSaved={(name) => {
            setCreating(false);
            navigate(`/custom-tables/${enc(name)}`);
          }}
        />
      </Dialog>
    </section>
  );
}

function CellInput(props: { label: string; typeId: number; value: unknown; onChange: (v: string | boolean) => void; required?: boolean }) {
  const type = inputType(props.typeId);
  if (type === 'checkbox')
    return <input type="checkbox" aria-label={props.label} checked={props.value === true} onChange={(e) => props.onChange(e.currentTarget.checked)} />;
  return (
    <input
      type={type}
      aria-label={props.label}
      required={props.required}
      step={props.typeId === 2 ? 'any' : props.typeId === 3 ? 1 : undefined}
      maxLength={MAX_LENGTH[props.typeId]}
      value={textOf(props.value)}
      onInput={(e) => props.onChange(e.currentTarget.value)}
    />
  );
}

export function CustomTablePage({ name }: { name: string }) {
  const [skip, setSkip] = useState(0);
  const table = useLoad(() => getJson<Answer<'/api/v3/custom-tables/{tableName}'>>(`${T}/${enc(name)}`), [name]);
  const rows = useLoad(() => getJson<Row[]>(`${T}/${enc(name)}/rows/values?skip=${skip}&take=${PAGE}`), [name, skip]);
  // Edits not yet saved, per key (null key: the new row).
  const [edits, setEdits] = useState<Record<string, Record<string, unknown>>>({});
  const [newRow, setNewRow] = useState<Record<string, unknown> | null>(null);
  const [addingColumns, setAddingColumns] = useState(false);
  const [perms, setPerms] = useState(false);
  const action = useAction();
  const t = table.data;
  const reload = () => {
    table.reload();
    rows.reload();
  };

  const saveRow = (key: string, values: Record<string, unknown>, isNew: boolean) =>
    action.run(async () => {
      if (!t) return;
      const model = {
        KeyValue: jsonValue(t.KeyDataTypeId, textOf(key)) as string,
        Columns: Object.entries(values)
          .filter(([c]) => c !== t.KeyColumnName)
          .map(([ColumnName, v]) => ({ ColumnName, Value: jsonValue(t.Columns.find((c) => c.ColumnName === ColumnName)?.ColumnDataTypeId ?? 8, v as string) })),
      };
      // A new row is an upsert of one; an existing one an Update (404 if someone deleted it meanwhile).
      const body = isNew ? { OperationType: 'UpsertMany', UpsertManyModel: [model] } : { OperationType: 'Update', UpdateModel: model };
      await getJson(`${T}/${enc(name)}/rows`, { method: 'PUT', json: body });
      if (isNew) setNewRow(null);
      else setEdits(({ [key]: _, ...rest }) => rest);
      reload();
    });

  return (
    <section>
      <BackTo to="/custom-tables" label="Custom tables" />
      <ErrorBox error={table.error} />
      {t ? (
        <>
          <h1>{t.TableName}</h1>
          <p class="muted">
            {t.RowCount?.toLocaleString('en')} rows · key {t.KeyColumnName} ({TYPE_NAMES[t.KeyDataTypeId]}) · read: {t.ReadRoles.join(', ') || 'anyone'} · save:{' '}
            {t.SaveRoles.join(', ') || 'anyone'}
          </p>
          <div class="actions">
            <button type="button" onClick={() => setNewRow({})}>
              Add row
            </button>
            <button type="button" class="secondary" onClick={() => setAddingColumns(true)}>
              Add columns
            </button>
            <button type="button" class="secondary" onClick={() => action.run(() => download(`${T}/${enc(name)}/export`, {}, `${t.TableName}.json`))}>
              Export
            </button>
            <label class="button secondary">
              Import file
              <input
                type="file"
                accept="application/json,.json"
                class="sr-only"
                onChange={(e) => {
                  const file = e.currentTarget.files?.[0];
                  if (file)
                    void action.run(async () => {
                      await call(`${T}/${enc(name)}/import`, { method: 'PUT', body: file, headers: { 'content-type': 'application/json' } });
                      reload();
                    });
                }}
              />
            </label>
            {hasRole(session(), 'Administrator') ? (
              <button type="button" class="secondary" onClick={() => setPerms(true)}>
                Permissions
              </button>
            ) : null}
            <button
              type="button"
              class="danger"
              onClick={() =>
                confirm(`Drop the table ${t.TableName} and all its rows?`) &&
                action.run(async () => {
                  await getJson(`${T}/${enc(name)}`, { method: 'DELETE' });
                  navigate('/custom-tables');
                })
              }
            >
              Drop table
            </button>
          </div>
          <ErrorBox error={action.error ?? rows.error} />
          <div class="scroll">
            <table aria-label={`Rows of ${t.TableName}`} class="grid">
              <thead>
                <tr>
                  <th scope="col">
                    {t.KeyColumnName} <span class="type">{TYPE_NAMES[t.KeyDataTypeId]}</span>
                  </th>
                  {t.Columns.map((c) => (
                    <th scope="col" key={c.ColumnName}>
                      {c.ColumnName} <span class="type">{TYPE_NAMES[c.ColumnDataTypeId]}</span>
                    </th>
                  ))}
                  <th scope="col">
                    <span class="sr-only">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {newRow ? (
                  <tr class="editing">
                    <td>
                      <CellInput
                        label={`New row ${t.KeyColumnName}`}
                        typeId={t.KeyDataTypeId}
                        required
                        value={newRow[t.KeyColumnName]}
                        onChange={(v) => setNewRow({ ...newRow, [t.KeyColumnName]: v })}
                      />
                    </td>
                    {t.Columns.map((c) => (
                      <td key={c.ColumnName}>
                        <CellInput
                          label={`New row ${c.ColumnName}`}
                          typeId={c.ColumnDataTypeId}
                          value={newRow[c.ColumnName]}
                          onChange={(v) => setNewRow({ ...newRow, [c.ColumnName]: v })}
                        />
                      </td>
                    ))}
                    <td class="actions">
                      <button type="button" disabled={action.busy} onClick={() => saveRow(textOf(newRow[t.KeyColumnName]), newRow, true)}>
                        Save
                      </button>
                      <button type="button" class="secondary" onClick={() => setNewRow(null)}>
                        Cancel
                      </button>
                    </td>
                  </tr>
                ) : null}
                {(rows.data ?? []).map((r) => {
                  const edit = edits[r.KeyValue];
                  const shown = (c: string) => (edit && c in edit ? edit[c] : r.Columns.find((x) => x.ColumnName === c)?.Value);
                  return (
                    <tr key={r.KeyValue} class={edit ? 'editing' : ''}>
                      <th scope="row">{r.KeyValue}</th>
                      {t.Columns.map((c) => (
                        <td key={c.ColumnName}>
                          <CellInput
                            label={`${r.KeyValue} ${c.ColumnName}`}
                            typeId={c.ColumnDataTypeId}
                            value={shown(c.ColumnName)}
                            onChange={(v) => setEdits({ ...edits, [r.KeyValue]: { ...edit, [c.ColumnName]: v } })}
                          />
                        </td>
                      ))}
                      <td class="actions">
                        <button type="button" disabled={!edit || action.busy} onClick={() => edit && saveRow(r.KeyValue, edit, false)}>
                          Save<span class="sr-only"> {r.KeyValue}</span>
                        </button>
                        <button
                          type="button"
                          class="secondary"
                          disabled={action.busy}
                          onClick={() =>
                            confirm(`Delete the row ${r.KeyValue}?`) &&
                            action.run(async () => {
                              await getJson(`${T}/${enc(name)}/rows`, {
                                method: 'DELETE',
                                json: { OperationType: 'Delete', DeleteModel: { KeyValue: r.KeyValue } },
                              });
                              reload();
                            })
                          }
                        >
                          Delete<span class="sr-only"> {r.KeyValue}</span>
                        </button>
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
          <div class="actions">
            <button type="button" class="secondary" disabled={skip === 0} onClick={() => setSkip(Math.max(0, skip - PAGE))}>
              Previous
            </button>
            <span>
              Rows {t.RowCount ? skip + 1 : 0}–{Math.min(skip + PAGE, t.RowCount ?? 0)} of {t.RowCount ?? 0}
            </span>
            <button type="button" class="secondary" disabled={skip + PAGE >= (t.RowCount ?? 0)} onClick={() => setSkip(skip + PAGE)}>
              Next
            </button>
          </div>
          <Dialog title={`Add columns to ${t.TableName}`} open={addingColumns} onClose={() => setAddingColumns(false)}>
            <TableForm
              existing={t}
              onCancel={() => setAddingColumns(false)}
              onSaved={() => {
                setAddingColumns(false);
                reload();
              }}
            />
          </Dialog>
          <Dialog title={`Permissions of ${t.TableName}`} open={perms} onClose={() => setPerms(false)}>
            <PermissionsForm
              table={t}
              onDone={() => {
                setPerms(false);
                reload();
              }}
            />
          </Dialog>
        </>
      ) : null}
    </section>
  );
}
