// Data actions: Map, MapFromObject, Merge, SetParameter, ConfigurationKeys, AnalyticsNamedQuery,
// ValidateJson, CreateList, AddToList. Tenant data is read in a transaction of the run's tenant only.
import { Value } from 'typebox/value';
import type { Principal } from '../../platform/auth/principal.ts';
import { HttpProblem } from '../../platform/errors.ts';
import { type ActionCall, ActionError, type Handler } from '../engine.ts';
import { type Budget, ExpressionError, evaluateValue, type Scope } from '../expressions.ts';
import { collectSecrets } from '../mask.ts';
import { linearPattern, PatternError } from '../regex.ts';
import { secretsOf } from '../secret.ts';
import { jsonBytes } from '../size.ts';

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

/** Map: `body` evaluated; with `source` (a list), `body` is evaluated once per item, which it reads as ['#Item']. */
const map: Handler = async (call) => {
  const rawSource = call.raw('source');
  if (rawSource === undefined || rawSource === null) return { output: call.get('body') ?? null };
  const source = call.get('source');
  if (!Array.isArray(source)) throw new ActionError('source must be a list');
  const max = call.run.services.config.automationMaxLoopIterations;
  if (source.length > max) throw new ActionError(`source has ${source.length} items; the limit is ${max}`);
  const body = call.raw('body');
  return { output: source.map((item, i) => evaluate(body, withItem(call.scope, item, i), call.budget)) };
};

/** MapFromObject: an object's properties as a list of {Key, Value} (or, with `body`, body per entry as ['#Item']). */
const mapFromObject: Handler = async (call) => {
  const obj = call.get(call.raw('source') === undefined ? 'body' : 'source');
  if (!isObject(obj)) throw new ActionError('the value to map from must be an object');
  const entries = Object.entries(obj).map(([Key, v]) => ({ Key, Value: v }));
  if (call.raw('source') === undefined) return { output: entries };
  const body = call.raw('body');
  return { output: entries.map((e, i) => evaluate(body, withItem(call.scope, e, i), call.budget)) };
};

/** Merge: `body` is a list; objects are merged (later properties win), lists concatenated. */
const merge: Handler = async (call) => {
  const parts = call.get('body');
  if (!Array.isArray(parts)) throw new ActionError('body must be a list of objects, or of lists, to merge');
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
  const body = call.get('body');
  const p = await principal(call);
  try {
    const page = await call.run.services.namedQuery(p, name, isObject(body) ? body : { queryBuilder: { skip: 0, take: 100 } });
    return { output: page };
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

/** ValidateJson: `body` against the JSON Schema `schema`; invalid fails the action (nextOnError takes it). */
const validateJson: Handler = async (call) => {
  const body = call.get('body');
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
  if (errors.length) throw new ActionError(`body does not match the schema: ${errors.map((e) => `${e.path || '/'} ${e.message}`).join('; ')}`);
  return { output: body ?? null };
};

/** AddToList: appends `value` to the list a CreateList action (named by `list`) made. */
const addToList: Handler = async (call) => {
  const name = call.text('list');
  const target = call.scope(name);
  if (!target.found || !Array.isArray(target.value)) throw new ActionError(`list "${name}" is not a list a CreateList action made`);
  const value = call.get('value');
  const max = call.run.services.config.automationMaxLoopIterations;
  if (target.value.length >= max) throw new ActionError(`list "${name}" already holds ${max} items (the limit)`);
  call.run.keep(jsonBytes(value ?? null, call.run.services.config.automationMaxOutputBytes), String(call.action.name));
  target.value.push(value ?? null);
  return { output: { List: name, Count: target.value.length } };
};

export const DATA_HANDLERS: Record<string, Handler> = {
  Map: map,
  MapFromObject: mapFromObject,
  Merge: merge,
  SetParameter: async (call) => ({ output: call.get('value') ?? null }),
  ConfigurationKeys: configurationKeys,
  AnalyticsNamedQuery: analyticsNamedQuery,
  ValidateJson: validateJson,
  CreateList: async (call) => {
    const initial = call.get('value');
    return { output: Array.isArray(initial) ? [...initial] : [] };
  },
  AddToList: addToList,
};
