// The custom tables page's forms: a new table or new columns (typed, VarcharOther with its length),
// and a table's Read / Save roles.

import { useState } from 'preact/hooks';
import { enc, getJson } from '../api.ts';
import type { Answer } from '../api-types.ts';
import { ErrorBox, Field, FormActions, useAction, useLoad } from '../ui.tsx';
import { TYPE_NAMES } from './column-types.ts';

export type Column = Table['Columns'][number];
export type Table = Answer<'/api/v3/custom-tables'>[number];

export const T = '/api/v3/custom-tables';

function TypeSelect(props: { label: string; value: number; onChange: (v: number) => void }) {
  return (
    <Field label={props.label}>
      <select value={String(props.value)} onChange={(e) => props.onChange(Number(e.currentTarget.value))}>
        {Object.entries(TYPE_NAMES).map(([id, name]) => (
          <option key={id} value={id}>
            {name}
          </option>
        ))}
      </select>
    </Field>
  );
}

function ColumnsEditor(props: { columns: Column[]; onChange: (c: Column[]) => void }) {
  const set = (i: number, patch: Partial<Column>) => props.onChange(props.columns.map((c, j) => (j === i ? { ...c, ...patch } : c)));
  return (
    <fieldset>
      <legend>Columns</legend>
      {props.columns.map((c, i) => (
        <div class="row" key={i}>
          <Field label={`Column ${i + 1} name`}>
            <input required pattern="[A-Za-z][A-Za-z0-9_]{0,62}" value={c.ColumnName} onInput={(e) => set(i, { ColumnName: e.currentTarget.value })} />
          </Field>
          <TypeSelect label={`Column ${i + 1} type`} value={c.ColumnDataTypeId} onChange={(v) => set(i, { ColumnDataTypeId: v })} />
          {c.ColumnDataTypeId === 11 ? (
            <Field label={`Column ${i + 1} length`}>
              <input type="number" min={1} required value={c.Length ?? ''} onInput={(e) => set(i, { Length: Number(e.currentTarget.value) })} />
            </Field>
          ) : null}
          <button type="button" class="secondary" aria-label={`Remove column ${i + 1}`} onClick={() => props.onChange(props.columns.filter((_, j) => j !== i))}>
            Remove
          </button>
        </div>
      ))}
      <button type="button" class="secondary" onClick={() => props.onChange([...props.columns, { ColumnName: '', ColumnDataTypeId: 6 }])}>
        Add column
      </button>
    </fieldset>
  );
}

export function TableForm(props: { existing?: Table; onSaved: (name: string) => void; onCancel: () => void }) {
  const e = props.existing;
  const [name, setName] = useState(e?.TableName ?? '');
  const [key, setKey] = useState(e?.KeyColumnName ?? 'Code');
  const [keyType, setKeyType] = useState(e?.KeyDataTypeId ?? 5);
  const [columns, setColumns] = useState<Column[]>([]);
  const save = useAction();
  return (
    <form
      onSubmit={(ev) => {
        ev.preventDefault();
        void save.run(async () => {
          await getJson(`${T}/${enc(name)}`, { method: 'POST', json: { KeyColumnName: key, KeyDataTypeId: keyType, Columns: columns } });
          props.onSaved(name);
        });
      }}
    >
      {e ? (
        <p>New columns are added to {e.TableName}; existing ones stay as they are.</p>
      ) : (
        <>
          <Field label="Table name" hint="A letter, then letters, digits and _">
            <input name="tableName" required pattern="[A-Za-z][A-Za-z0-9_]{0,62}" value={name} onInput={(ev) => setName(ev.currentTarget.value)} />
          </Field>
          <div class="row">
            <Field label="Key column">
              <input name="keyColumn" required value={key} onInput={(ev) => setKey(ev.currentTarget.value)} />
            </Field>
            <TypeSelect label="Key type" value={keyType} onChange={setKeyType} />
          </div>
        </>
      )}
      <ColumnsEditor columns={columns} onChange={setColumns} />
      <ErrorBox error={save.error} />
      <FormActions busy={save.busy} label={e ? 'Add columns' : 'Create table'} onCancel={props.onCancel} />
    </form>
  );
}

export function PermissionsForm(props: { table: Table; onDone: () => void }) {
  const roles = useLoad(() => getJson<Answer<'/api/v3/users'>>('/api/v3/users'), []);
  const [read, setRead] = useState(props.table.ReadRoles);
  const [save, setSave] = useState(props.table.SaveRoles);
  const action = useAction();
  const names = roles.data?.roles.map((r) => r.name) ?? [];
  const toggle = (list: string[], set: (l: string[]) => void, role: string, on: boolean) => set(on ? [...list, role] : list.filter((r) => r !== role));
  return (
    <form
      onSubmit={(e) => {
        e.preventDefault();
        void action.run(async () => {
          await getJson(`/api/v3/custom-table-definitions/${props.table.Id}`, { method: 'PUT', json: { ReadRoles: read, SaveRoles: save } });
          props.onDone();
        });
      }}
    >
      <p class="muted">An empty list lets every user of the tenant; Administrators always may.</p>
      <div class="row">
        <fieldset>
          <legend>Read roles</legend>
          {names.map((r) => (
            <label class="check" key={r}>
              <input type="checkbox" checked={read.includes(r)} onChange={(e) => toggle(read, setRead, r, e.currentTarget.checked)} /> {r}
            </label>
          ))}
        </fieldset>
        <fieldset>
          <legend>Save roles</legend>
          {names.map((r) => (
            <label class="check" key={r}>
              <input type="checkbox" checked={save.includes(r)} onChange={(e) => toggle(save, setSave, r, e.currentTarget.checked)} /> {r}
            </label>
          ))}
        </fieldset>
      </div>
      <ErrorBox error={action.error ?? roles.error} />
      <FormActions busy={action.busy} label="Save permissions" onCancel={props.onDone} />
    </form>
  );
}
