// Automations in the platform's published format (decision 0050): definitions stored in Atrium's older shape
// are rewritten in place. Every action's type goes under `actionType` (the older key `type` is dropped), and
// the actions whose fields were Atrium's own take the platform's names, or become Atrium's extension types
// where the platform has no equivalent, so each keeps doing what it did. The rewrite lives here, frozen with the
// migration: the API reads the older shape as a synonym on input with this same `upgradeDefinition`
// (src/automations/definition.ts), so the stored and the incoming older definitions always read alike.
// Saved versions (automation_versions) stay as they were saved: they are the history a run points to.
import { type Kysely, sql } from 'kysely';

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Action = { [k: string]: Json };

const isObject = (v: unknown): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The key an action holds a field under, matched without regard to case, or undefined. */
function keyOf(a: Action, name: string): string | undefined {
  if (Object.hasOwn(a, name)) return name;
  const lower = name.toLowerCase();
  return Object.keys(a).find((k) => k.toLowerCase() === lower);
}

const has = (a: Action, name: string): boolean => {
  const k = keyOf(a, name);
  return k !== undefined && a[k] !== undefined && a[k] !== null;
};

const get = (a: Action, name: string): Json | undefined => {
  const k = keyOf(a, name);
  return k === undefined ? undefined : a[k];
};

/** A copy of the action with `from` renamed `to` (in the position it had). */
function rename(a: Action, from: string, to: string): Action {
  const k = keyOf(a, from);
  if (k === undefined) return a;
  const out: Action = {};
  for (const [key, v] of Object.entries(a)) out[key === k ? to : key] = v;
  return out;
}

function without(a: Action, ...names: string[]): Action {
  const drop = new Set(names.map((n) => n.toLowerCase()));
  const out: Action = {};
  for (const [k, v] of Object.entries(a)) if (!drop.has(k.toLowerCase())) out[k] = v;
  return out;
}

function typeOf(a: Action): string | undefined {
  const t = get(a, 'actionType') ?? get(a, 'type');
  return typeof t === 'string' ? t.toLowerCase() : undefined;
}

/** The action in the platform's shape (its type key is left to the caller: `type` and `actionType` both pass). */
export function upgradeAction(action: Json): Json {
  if (!isObject(action)) return action;
  let a: Action = action;
  const type = typeOf(a);
  const typeKey = keyOf(a, 'actionType') ?? keyOf(a, 'type') ?? 'actionType';
  const setType = (t: string): void => {
    a = { ...a, [typeKey]: t };
  };
  switch (type) {
    case 'case':
      if (!has(a, 'test')) {
        if (has(a, 'value')) a = rename(a, 'value', 'test');
        else if (has(a, 'expression')) a = rename(a, 'expression', 'test');
      }
      break;
    case 'map':
      if (!has(a, 'values') && has(a, 'body')) a = rename(a, 'body', 'values');
      break;
    case 'mapfromobject':
      if (!has(a, 'data')) setType('AtriumObjectEntries');
      break;
    case 'merge':
      if (!has(a, 'payload') && has(a, 'body')) {
        setType('AtriumMergeList');
        a = rename(a, 'body', 'parts');
      }
      break;
    case 'reduce':
      if (!has(a, 'GroupBy') && has(a, 'subWorkflow')) setType('AtriumFold');
      break;
    case 'validatejson':
      if (!has(a, 'payload') && has(a, 'body')) a = rename(a, 'body', 'payload');
      break;
    case 'setparameter':
      if (!has(a, 'parameterName') && typeof get(a, 'name') === 'string') a = { ...a, parameterName: get(a, 'name') as string };
      break;
    case 'createlist':
      if (!has(a, 'listName')) {
        const initial = get(a, 'value');
        a = { ...without(a, 'value'), listName: (get(a, 'name') as Json) ?? null, listValues: initial === undefined || initial === null ? [] : initial };
      }
      break;
    case 'addtolist':
      if (!has(a, 'listName') && has(a, 'list')) {
        const value = get(a, 'value');
        a = { ...without(rename(a, 'list', 'listName'), 'value'), listValues: [value ?? null] };
      }
      break;
    case 'applytemplate':
      if (has(a, 'template')) {
        const model = get(a, 'body') ?? get(a, 'data') ?? null;
        a = { ...without(a, 'template', 'data', 'body'), data: get(a, 'template') as Json, body: model };
      }
      break;
  }
  return a;
}

/** Every action of a definition (main chain and sub-workflows, either spelling) in the platform's shape. */
export function upgradeDefinition(definition: Json): Json {
  if (!isObject(definition)) return definition;
  const out: Record<string, Json> = { ...definition };
  const actions = get(out, 'actions');
  if (Array.isArray(actions)) out[keyOf(out, 'actions') as string] = actions.map(upgradeAction);
  for (const key of ['subWorkflows', 'subWorkflow']) {
    const k = keyOf(out, key);
    const subs = k === undefined ? undefined : out[k];
    if (k !== undefined && Array.isArray(subs))
      out[k] = subs.map((s) => {
        if (!isObject(s)) return s;
        const sa = get(s, 'actions');
        return Array.isArray(sa) ? { ...s, [keyOf(s, 'actions') as string]: sa.map(upgradeAction) } : s;
      });
  }
  return out;
}

/** The action with its type under `actionType`, first. */
function typeKey(a: Json): Json {
  if (!isObject(a)) return a;
  const k = Object.keys(a).find((x) => x.toLowerCase() === 'actiontype') ?? Object.keys(a).find((x) => x.toLowerCase() === 'type');
  if (k === undefined) return a;
  const out: Record<string, Json> = { actionType: a[k] };
  for (const [key, v] of Object.entries(a)) if (key.toLowerCase() !== 'actiontype' && key.toLowerCase() !== 'type') out[key] = v;
  return out;
}

export function migrateDefinition(definition: Json): Json {
  const d = upgradeDefinition(definition);
  if (!isObject(d)) return d;
  const out: Record<string, Json> = { ...d };
  if (Array.isArray(out.actions)) out.actions = out.actions.map(typeKey);
  const subs = out.subWorkflows ?? out.subWorkflow;
  if (Array.isArray(subs)) {
    delete out.subWorkflow;
    out.subWorkflows = subs.map((s) => (isObject(s) && Array.isArray(s.actions) ? { ...s, actions: s.actions.map(typeKey) } : s));
  }
  return out;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  const { rows } = await sql<{ tenant_id: string; id: string; definition: Json }>`select tenant_id, id, definition from automations`.execute(db);
  for (const r of rows) {
    const next = migrateDefinition(r.definition);
    if (JSON.stringify(next) === JSON.stringify(r.definition)) continue;
    await sql`update automations set definition = ${JSON.stringify(next)}::jsonb where tenant_id = ${r.tenant_id} and id = ${r.id}`.execute(db);
  }
}

export async function down(): Promise<void> {
  // The older shape is still read as a synonym on input; nothing to undo in the stored definitions.
}
