// Data actions: Map, MapFromObject, Merge, ConvertFromJsonDataTable, ValidateJson, SetParameter,
// ConfigurationKeys, AnalyticsNamedQuery, CreateList, AddToList, RemoveFromList, and Atrium's extensions for
// older definitions (AtriumObjectEntries, AtriumMergeList). Tenant data is read in a transaction of the run's
// tenant only.
import { Value } from 'typebox/value';
import type { Principal } from '../../platform/auth/principal.ts';
import { HttpProblem } from '../../platform/errors.ts';
import { type ActionCall, ActionError, type Handler } from '../engine.ts';
import { asText, type Budget, ExpressionError, evaluateValue, type Scope } from '../expressions.ts';
import { collectSecrets } from '../mask.ts';
import { linearPattern, PatternError } from '../regex.ts';
import { secretsOf } from '../secret.ts';
import { jsonBytes } from '../size.ts';
import { jsonText } from './flow.ts';

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function withItem(scope: Scope, item: unknown, index: number): Scope {
  return (name) => (name === '#Item' ? { found: true, value: item } : name === '#Index' ? { found: true, value: index } : scope(name));
}

/** Evaluates per item within the action's one budget: all items together stay under the output limit. */
function evaluate(raw: unknown, scope: Scope, budget: Budget): unknown {
  try {
    return evaluateValue(raw, scope, budget);
  } catch (err) {
    if (err instanceof ExpressionError) throw new ActionError(err.message);
    throw err;
  }
}

/**
 * The platform reads the product of Map, Merge and the like both at the root (`{{['Map']$.name}}`) and
 * under `Content` (§5 "Where an action's product lives": AMBIGUOUS): an object gets a `Content` that is the
 * object itself, not enumerable, so it is never serialised, walked by `..` or counted twice.
 */
export function withContent<T>(value: T): T {
  if (isObject(value) && !Object.hasOwn(value, 'Content')) Object.defineProperty(value, 'Content', { value, enumerable: false });
  return value;
}

/**
 * Map: `values` evaluated, an object of the names the author chose; output that object. Atrium's extension:
 * with `source` (a list), `values` is evaluated once per item, which it reads as ['#Item'].
 */
const map: Handler = async (call) => {
  const rawSource = call.raw('source');
  if (rawSource === undefined || rawSource === null) return { output: withContent(call.get('values') ?? null) };
  const source = call.get('source');
  if (!Array.isArray(source)) throw new ActionError('source must be a list');
  const max = call.run.services.config.automationMaxLoopIterations;
  if (source.length > max) throw new ActionError(`source has ${source.length} items; the limit is ${max}`);
  const values = call.raw('values');
  return { output: source.map((item, i) => evaluate(values, withItem(call.scope, item, i), call.budget)) };
};

/**
 * MapFromObject: `data` is a template (object or its JSON text) whose values name properties of `body`; the
 * output has the template's keys with the values read from `body` (a missing property gives null; a nested
 * template object is applied to the same body).
 */
const mapFromObject: Handler = async (call) => {
  const template = jsonText(call.get('data'));
  const body = jsonText(call.get('body'));
  if (!isObject(template)) throw new ActionError('data must be an object (or its JSON text) naming, per output property, a property of body');
  if (!isObject(body)) throw new ActionError('body must be an object (or its JSON text)');
  const apply = (t: Record<string, unknown>, depth: number): Record<string, unknown> => {
    if (depth > 32) throw new ActionError('data nests more than 32 levels');
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(t)) {
      if (typeof v === 'string') out[k] = ownCi(body, v) ?? null;
      else if (isObject(v)) out[k] = apply(v, depth + 1);
      else out[k] = v;
    }
    return out;
  };
  return { output: withContent(apply(template, 0)) };
};

function ownCi(obj: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(obj, name)) return obj[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(obj)) if (k.toLowerCase() === lower) return obj[k];
  return undefined;
}

/** Merge: `payload` (an object or its JSON text) with the properties of `values` set on it (new ones added). */
const merge: Handler = async (call) => {
  const payload = jsonText(call.get('payload'));
  const values = jsonText(call.get('values'));
  if (!isObject(payload)) throw new ActionError('payload must be an object (or its JSON text)');
  if (values !== undefined && values !== null && !isObject(values)) throw new ActionError('values must be an object of the properties to set');
  return { output: withContent({ ...payload, ...(values ?? {}) }) };
};

const DATA_TABLE_TYPES = ['bool', 'datetime', 'dynamic', 'guid', 'int', 'long', 'real', 'string', 'decimal'];

function typed(v: unknown, type: string): unknown {
  if (v === null || v === undefined) return null;
  switch (type) {
    case 'bool':
      return v === true || v === 1 || (typeof v === 'string' && ['true', '1'].includes(v.trim().toLowerCase()));
    case 'int':
    case 'long': {
      const n = typeof v === 'number' ? v : Number(v);
      return Number.isFinite(n) ? Math.trunc(n) : null;
    }
    case 'real':
    case 'decimal': {
      const n = typeof v === 'number' ? v : Number(v);
      return Number.isFinite(n) ? n : null;
    }
    case 'datetime': {
      const t = Date.parse(String(v));
      return Number.isNaN(t) ? String(v) : new Date(t).toISOString();
    }
    case 'dynamic':
      return jsonText(v);
    default:
      return typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }
}

/**
 * ConvertFromJsonDataTable: `columns [{name, type}]` and `rows [[...]]` (as Application Insights answers) into
 * a list of objects, one per row, each value converted to its column's type.
 */
const convertFromJsonDataTable: Handler = async (call) => {
  const columns = jsonText(call.get('columns'));
  const rows = jsonText(call.get('rows'));
  if (!Array.isArray(columns) || !columns.every(isObject)) throw new ActionError('columns must be a list of {name, type}');
  if (!Array.isArray(rows)) throw new ActionError('rows must be a list of rows (each a list of values)');
  const cols = columns.map((c, i) => {
    const name = asName(ownCi(c, 'name'), `columns/${i}/name`);
    const type = String(ownCi(c, 'type') ?? 'string').toLowerCase();
    if (!DATA_TABLE_TYPES.includes(type)) throw new ActionError(`columns/${i}/type must be one of ${DATA_TABLE_TYPES.join(', ')}`);
    return { name, type };
  });
  const out = rows.map((r, i) => {
    if (!Array.isArray(r)) throw new ActionError(`rows/${i} must be a list of values`);
    const o: Record<string, unknown> = {};
    cols.forEach((c, j) => {
      o[c.name] = typed(r[j], c.type);
    });
    return o;
  });
  return { output: out };
};

function asName(v: unknown, where: string): string {
  if (typeof v !== 'string' || v === '') throw new ActionError(`${where} must be a name`);
  return v;
}

/** AtriumObjectEntries (Atrium's older MapFromObject): an object's properties as a list of {Key, Value} (or, with `source`, `body` per entry as ['#Item']). */
const objectEntries: Handler = async (call) => {
  const obj = call.get(call.raw('source') === undefined ? 'body' : 'source');
  if (!isObject(obj)) throw new ActionError('the value to map from must be an object');
  const entries = Object.entries(obj).map(([Key, v]) => ({ Key, Value: v }));
  if (call.raw('source') === undefined) return { output: entries };
  const body = call.raw('body');
  return { output: entries.map((e, i) => evaluate(body, withItem(call.scope, e, i), call.budget)) };
};

/** AtriumMergeList (Atrium's older Merge): `parts` is a list; objects are merged (later properties win), lists concatenated. */
const mergeList: Handler = async (call) => {
  const parts = call.get('parts');
  if (!Array.isArray(parts)) throw new ActionError('parts must be a list of objects, or of lists, to merge');
  if (parts.every(Array.isArray)) return { output: parts.flat() };
  if (parts.every((p) => isObject(p) || p === null)) return { output: Object.assign({}, ...parts.filter(Boolean)) };
  throw new ActionError('body must hold only objects, or only lists');
};

/** ConfigurationKeys: the configuration key named by `value`; its secrets as Secret values (secret.ts). */
const configurationKeys: Handler = async (call) => {
  const key = call.text('value');
  const { services, tenantId } = call.run;
  let value: unknown;
  try {
    value = await services.configurationKey(tenantId, key);
  } catch (err) {
    if (err instanceof HttpProblem) throw new ActionError(err.message);
    throw err;
  }
  collectSecrets(value, call.run.secrets);
  // Secret-named properties stay secrets: usable in credential fields, ******** anywhere else.
  return { output: secretsOf(value) };
};

async function principal(call: ActionCall): Promise<Principal> {
  const { tenantId, runAsAppId } = call.run.automation;
  if (!runAsAppId) throw new ActionError('this action needs the automation to be saved by an app (it acts as that app)');
  const roles = await call.run.services.appRoles(tenantId, runAsAppId);
  return { tenantId, appId: runAsAppId, userId: null, userName: null, roles: new Set(roles), via: 'token' };
}

/** AnalyticsNamedQuery: one page of a named query (`body` as dynamic-execute takes it), as the saving app. */
const analyticsNamedQuery: Handler = async (call) => {
  const name = call.text('namedQuery');
  // The platform writes `body` as JSON text; an object is taken as it is.
  const body = jsonText(call.get('body'));
  const p = await principal(call);
  try {
    const page = await call.run.services.namedQuery(p, name, isObject(body) ? body : { queryBuilder: { skip: 0, take: 100 } });
    // The page as an object ({{['Q']$.totalCount}}, {{['Q']$.data[0].JobId}}), not its text.
    return { output: JSON.parse(page) };
  } catch (err) {
    if (err instanceof HttpProblem) throw new ActionError(`${name}: ${err.message}${err.errors ? ` ${JSON.stringify(err.errors)}` : ''}`);
    throw err;
  }
};

/** Keywords whose values are data, not schemas: their objects are left as they are. */
const DATA_KEYWORDS = new Set(['const', 'enum', 'default', 'examples']);

/**
 * A copy of the schema whose `pattern`s are linear-time matchers (TypeBox tests a non-string `pattern` with
 * its own `test`); `patternProperties` is refused, as its patterns are object keys that TypeBox would hand
 * to JavaScript's backtracking RegExp.
 */
function linearSchema(schema: unknown, path: string): unknown {
  if (Array.isArray(schema)) return schema.map((s, i) => linearSchema(s, `${path}/${i}`));
  if (!isObject(schema)) return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'patternProperties') throw new ActionError(`schema${path}/patternProperties is not supported (use propertyNames with a pattern)`);
    if (k === 'pattern' && typeof v === 'string') {
      try {
        out[k] = linearPattern(v);
      } catch (err) {
        if (err instanceof PatternError) throw new ActionError(`schema${path}/pattern: ${err.message}`);
        throw err;
      }
    } else out[k] = DATA_KEYWORDS.has(k) ? v : linearSchema(v, `${path}/${k}`);
  }
  return out;
}

/** Whether a required property is there: present, not null, not empty text, not an empty list. */
const present = (v: unknown): boolean => v !== undefined && v !== null && v !== '' && !(Array.isArray(v) && v.length === 0);

/**
 * ValidateJson: every name of `requiredProperties` must be a property of `payload` (an object or its JSON
 * text) that is present, not null and not empty. Valid: output the payload, on to `next`. Invalid: output
 * the list of errors `[{property, message}]`, on to `nextOnError` (without one the action fails). Atrium's
 * extension `schema` (a JSON Schema) is checked too when given; its failure fails the action.
 */
const validateJson: Handler = async (call) => {
  const payload = jsonText(call.get('payload'));
  const required = jsonText(call.get('requiredProperties'));
  if (required !== undefined && required !== null) {
    if (!Array.isArray(required)) throw new ActionError('requiredProperties must be a list of property names');
    const errors: { property: string; message: string }[] = [];
    for (const r of required) {
      const name = asText(r);
      const v = isObject(payload) ? ownCi(payload, name) : undefined;
      if (!present(v)) errors.push({ property: name, message: v === undefined ? 'is missing' : v === null ? 'is null' : 'is empty' });
    }
    if (errors.length) {
      const onError = call.raw('nextOnError');
      if (typeof onError === 'string' && onError !== '') return { output: errors, next: onError };
      throw new ActionError(`payload is missing required properties: ${errors.map((e) => `${e.property} ${e.message}`).join('; ')}`);
    }
  }
  if (call.raw('schema') === undefined) return { output: payload ?? null };
  const body = payload;
  const given = call.get('schema');
  if (!isObject(given)) throw new ActionError('schema must be a JSON Schema object');
  const schema = linearSchema(given, '');
  let errors: { path: string; message: string }[];
  try {
    errors = Value.Check(schema as never, body)
      ? []
      : [...Value.Errors(schema as never, body)].slice(0, 20).map((e) => ({ path: e.instancePath, message: e.message }));
  } catch (err) {
    throw new ActionError(`schema is not a usable JSON Schema: ${(err as Error).message}`);
  }
  if (errors.length) throw new ActionError(`payload does not match the schema: ${errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`);
  return { output: body ?? null };
};

/** `listValues` as a list: a list as it is, one value as a list of it, nothing as an empty list. */
function listValues(call: ActionCall, field: string): unknown[] {
  const v = jsonText(call.get(field));
  return Array.isArray(v) ? v : v === undefined || v === null ? [] : [v];
}

const empty = (v: unknown): boolean => !present(v) || (isObject(v) && Object.keys(v).length === 0);
const same = (a: unknown, b: unknown): boolean => a === b || (typeof a === 'object' && typeof b === 'object' && JSON.stringify(a) === JSON.stringify(b));

/**
 * Appends values to a list with the flags `distinct` (no value the list already holds, nor twice) and
 * `ignoreEmpty` (also read as `ignoreValues`: null, empty text, empty lists and objects skipped).
 */
function append(call: ActionCall, name: string, list: unknown[], values: unknown[]): void {
  const distinct = call.bool('distinct');
  const ignoreEmpty = call.raw('ignoreEmpty') !== undefined ? call.bool('ignoreEmpty') : call.bool('ignoreValues');
  const max = call.run.services.config.automationMaxLoopIterations;
  for (const value of values) {
    if (ignoreEmpty && empty(value)) continue;
    if (distinct && list.some((x) => same(x, value))) continue;
    if (list.length >= max) throw new ActionError(`list "${name}" already holds ${max} items (the limit)`);
    call.run.keep(jsonBytes(value ?? null, call.run.services.config.automationMaxOutputBytes), String(call.action.name));
    list.push(value ?? null);
  }
}

/** The list named `listName`, which a CreateList made (an entry of the context, whichever workflow made it). */
function namedList(call: ActionCall): { name: string; list: unknown[] } {
  const name = call.text('listName');
  const target = call.workflow.global(name);
  const found = target.found ? target : call.scope(name);
  if (!found.found || !Array.isArray(found.value)) throw new ActionError(`"${name}" is not a list a CreateList action made`);
  return { name, list: found.value };
}

/** CreateList: a list stored in the context under `listName` (visible to every workflow of the run), from `listValues`. */
const createList: Handler = async (call) => {
  const name = call.text('listName');
  if (name === '') throw new ActionError('listName is required');
  const list: unknown[] = [];
  append(call, name, list, listValues(call, 'listValues'));
  call.workflow.globals.set(name, list);
  return { output: list };
};

/** AddToList: appends `listValues` to the list `listName`. */
const addToList: Handler = async (call) => {
  const { name, list } = namedList(call);
  append(call, name, list, listValues(call, 'listValues'));
  return { output: { List: name, Count: list.length } };
};

/** RemoveFromList: removes every element equal to one of `RemoveValues` from the list `listName`. */
const removeFromList: Handler = async (call) => {
  const { name, list } = namedList(call);
  const remove = listValues(call, 'RemoveValues');
  let removed = 0;
  for (let i = list.length - 1; i >= 0; i--)
    if (remove.some((r) => same(r, list[i]) || (typeof list[i] !== 'object' && asText(r) === asText(list[i])))) {
      list.splice(i, 1);
      removed++;
    }
  return { output: { List: name, Count: list.length, Removed: removed } };
};

/** SetParameter: `value` stored in the context under `parameterName`, visible to every workflow of the run. */
const setParameter: Handler = async (call) => {
  const name = call.text('parameterName') || String(call.action.name);
  const value = call.get('value') ?? null;
  call.workflow.globals.set(name, value);
  return { output: value };
};

export const DATA_HANDLERS: Record<string, Handler> = {
  Map: map,
  MapFromObject: mapFromObject,
  Merge: merge,
  ConvertFromJsonDataTable: convertFromJsonDataTable,
  SetParameter: setParameter,
  ConfigurationKeys: configurationKeys,
  AnalyticsNamedQuery: analyticsNamedQuery,
  ValidateJson: validateJson,
  CreateList: createList,
  AddToList: addToList,
  RemoveFromList: removeFromList,
  AtriumObjectEntries: objectEntries,
  AtriumMergeList: mergeList,
};
