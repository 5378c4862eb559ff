// Atrium's older definition shape, read as a synonym of the platform's: the API accepts it on input, and
// migration 0031 rewrites stored definitions with it (decision 0050). Each rewrite keeps what the action did:
// where the platform has the same feature under other names the fields are renamed (Case `value` → `test`,
// Map `body` → `values`, AddToList `list`+`value` → `listName`+`listValues`, ValidateJson `body` → `payload`,
// ApplyTemplate `template` → `data`); where it has none, the action becomes one of Atrium's extension types
// with its old fields (`AtriumFold` for the old Reduce, `AtriumObjectEntries` for the old MapFromObject,
// `AtriumMergeList` for the old Merge). A definition already in the platform's shape comes back unchanged.

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
