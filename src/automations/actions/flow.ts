// Flow actions: Start, Result, Case, Loop, Reduce, Await, ExecuteSubWorkflow, ExecuteIntegrationWorkflow,
// EnqueueBackgroundWork, ClearContext, and AtriumFold (Atrium's older Reduce, kept for stored definitions).

import { RunFailure } from '../../platform/errors.ts';
import { field } from '../definition.ts';
import { type ActionCall, ActionError, durationMs, type Handler, type HttpRequestValue, type HttpResponseValue, runNested } from '../engine.ts';
import { asText, evaluateValue } from '../expressions.ts';

/** Result: `httpResponse {statusCode, headers, body}` (default 200, no headers, no body). */
const result: Handler = async (call) => {
  const raw = call.get('httpResponse');
  const r = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const pick = (name: string) => {
    const key = Object.keys(r).find((k) => k.toLowerCase() === name.toLowerCase());
    return key === undefined ? undefined : r[key];
  };
  const status = Number(pick('statusCode') ?? 200);
  if (!Number.isInteger(status) || status < 100 || status > 599)
    throw new ActionError(`httpResponse.statusCode must be an HTTP status (got ${asText(pick('statusCode'))})`);
  const headers: Record<string, string> = {};
  const h = pick('headers');
  if (Array.isArray(h)) {
    for (const pair of h)
      if (pair && typeof pair === 'object') headers[asText((pair as any).name ?? (pair as any).Name)] = asText((pair as any).value ?? (pair as any).Value);
  } else if (h && typeof h === 'object') for (const [k, v] of Object.entries(h)) headers[k] = asText(v);
  const response: HttpResponseValue = { statusCode: status, headers, body: pick('body') ?? null };
  return { output: response, response };
};

/**
 * Case: `test` compared (as text, exactly) with each branch of `nextActions [{default, value, name}]`; the
 * first match wins, else the default branch; with neither the Case fails (its nextOnError may take it).
 */
const caseAction: Handler = async (call) => {
  const value = call.raw('test') !== undefined ? call.get('test') : (call.get('value') ?? call.get('expression'));
  const branches = (call.raw('nextActions') as unknown[]) ?? [];
  let chosen: string | null = null;
  let fallback: string | null = null;
  for (const b of branches) {
    if (!b || typeof b !== 'object') continue;
    const branch = b as Record<string, unknown>;
    const name = asText(field(branch as any, 'name'));
    if (field(branch as any, 'default') === true) {
      fallback ??= name;
      continue;
    }
    const bv = field(branch as any, 'value');
    const expected = asText(evaluateValue(bv, call.scope, call.budget));
    if (asText(value) === expected) {
      chosen = name;
      break;
    }
  }
  const next = chosen ?? fallback;
  if (next === null) throw new ActionError(`no branch matches "${asText(value).slice(0, 100)}" and there is no default branch`);
  return { output: { Value: value ?? null, Next: next }, next };
};

function items(call: ActionCall): unknown[] {
  const body = call.get('body');
  if (!Array.isArray(body)) throw new ActionError(`body must be a list to iterate over (got ${body === null ? 'null' : typeof body})`);
  const max = call.run.services.config.automationMaxLoopIterations;
  if (body.length > max)
    throw new RunFailure(
      `action "${String(call.action.name)}" would iterate ${body.length} times; the limit is ${max} (ATRIUM_AUTOMATION_MAX_LOOP_ITERATIONS)`,
    );
  return body;
}

/** The body a sub-workflow answers: its Result's body (or the whole response when it has none). */
const subOutput = (r: HttpResponseValue | null): unknown => (r ? r.body : null);

/**
 * Loop: runs `subWorkflow` once per item of `body`, in order; inside, the item is `['#<subWorkflowName>']`
 * (the platform's reading) and `['#Item']`, its position `['#Index']`. Output: each iteration's Result body.
 */
const loop: Handler = async (call) => {
  const list = items(call);
  const name = String(call.raw('subWorkflow'));
  const sub = call.workflow.sub(name);
  const out: unknown[] = [];
  for (let i = 0; i < list.length; i++) {
    const { response } = await sub.execute(list[i], { [`#${name}`]: list[i], '#Item': list[i], '#Index': i }, call.scope);
    const value = subOutput(response);
    try {
      call.budget.charge(value);
    } catch (err) {
      throw new RunFailure(`action "${String(call.action.name)}": after ${i + 1} iterations, ${(err as Error).message}`);
    }
    out.push(value);
  }
  return { output: out };
};

/** AtriumFold (Atrium's older Reduce): like Loop, with `['#Accumulator']` starting at `initialValue`; each iteration's result is the next accumulator. */
const fold: Handler = async (call) => {
  const list = items(call);
  const sub = call.workflow.sub(String(call.raw('subWorkflow')));
  let acc: unknown = call.get('initialValue') ?? null;
  for (let i = 0; i < list.length; i++) {
    const { response } = await sub.execute(list[i], { '#Item': list[i], '#Index': i, '#Accumulator': acc }, call.scope);
    acc = subOutput(response);
  }
  return { output: acc };
};

const awaitAction: Handler = async (call) => {
  const ms = durationMs(call.text('duration'));
  await call.run.wait(ms);
  return { output: { WaitedMs: ms } };
};

/** ExecuteSubWorkflow: the sub-workflow reads `body` (JSON text parsed) as `['#<subWorkflowName>']`, `['#Input']` and its Start's output. */
const executeSubWorkflow: Handler = async (call) => {
  const name = String(call.raw('subWorkflow'));
  const sub = call.workflow.sub(name);
  const input = jsonText(call.get('body')) ?? null;
  const { response } = await sub.execute(input, { [`#${name}`]: input, '#Input': input }, call.scope);
  return { output: subOutput(response) };
};

/** A field the platform writes as JSON text (`"body": "{\"a\": 1}"`): parsed when it is an object's or a list's text. */
export function jsonText(v: unknown): unknown {
  if (typeof v !== 'string') return v;
  const t = v.trim();
  if (!(t.startsWith('{') && t.endsWith('}')) && !(t.startsWith('[') && t.endsWith(']'))) return v;
  try {
    return JSON.parse(t);
  } catch {
    return v;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** A value as a number for an aggregate: numbers, and text that is a number; anything else is skipped. */
function numeric(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

function innerArray(v: unknown, strategy: string): unknown {
  if (!Array.isArray(v)) return v;
  switch (strategy) {
    case 'FIRST':
      return v.length ? v[0] : null;
    case 'LAST':
      return v.length ? v[v.length - 1] : null;
    case 'MIN':
    case 'MAX': {
      const ns = v.map(numeric).filter((n): n is number => n !== null);
      if (!ns.length) return null;
      return strategy === 'MIN' ? Math.min(...ns) : Math.max(...ns);
    }
    default:
      return v;
  }
}

/**
 * Reduce: groups `data` by the `GroupBy` properties and aggregates `OperationResult` per group with
 * `Operation` (SUM, MIN, MAX, AVG over the numbers; NONE the group's first value); array values are first
 * brought to one value by `InnerArrayStrategy`. Output: one object per group, in the order groups first
 * appear, holding the GroupBy properties and the aggregated property.
 */
const reduce: Handler = async (call) => {
  const data = jsonText(call.get('data'));
  if (!Array.isArray(data)) throw new ActionError(`data must be a list of objects (got ${data === null ? 'null' : typeof data})`);
  const max = call.run.services.config.automationMaxLoopIterations * 100;
  if (data.length > max) throw new ActionError(`data has ${data.length} items; Reduce takes at most ${max}`);
  const rawGroup = call.get('GroupBy');
  const groupBy = (Array.isArray(rawGroup) ? rawGroup : rawGroup === undefined || rawGroup === null || rawGroup === '' ? [] : [rawGroup]).map((g) => asText(g));
  const operation = asText(call.get('Operation')).toUpperCase();
  if (!['SUM', 'MIN', 'MAX', 'AVG', 'NONE'].includes(operation)) throw new ActionError(`Operation must be SUM, MIN, MAX, AVG or NONE (got "${operation}")`);
  const property = asText(call.get('OperationResult'));
  const strategy = asText(call.get('InnerArrayStrategy') ?? 'NONE').toUpperCase() || 'NONE';
  const groups = new Map<string, { keys: Record<string, unknown>; values: unknown[] }>();
  for (const item of data) {
    const row = isRecord(item) ? item : {};
    const keys: Record<string, unknown> = {};
    for (const g of groupBy) keys[g] = ownValue(row, g) ?? null;
    const id = JSON.stringify(groupBy.map((g) => keys[g]));
    let group = groups.get(id);
    if (!group) {
      group = { keys, values: [] };
      groups.set(id, group);
    }
    group.values.push(innerArray(ownValue(row, property), strategy));
  }
  const out: Record<string, unknown>[] = [];
  for (const { keys, values } of groups.values()) {
    let value: unknown;
    if (operation === 'NONE') value = values.length ? values[0] : null;
    else {
      const ns = values.map(numeric).filter((n): n is number => n !== null);
      if (operation === 'SUM') value = Math.round(ns.reduce((a, b) => a + b, 0) * 1e10) / 1e10;
      else if (!ns.length) value = null;
      else if (operation === 'MIN') value = Math.min(...ns);
      else if (operation === 'MAX') value = Math.max(...ns);
      else value = Math.round((ns.reduce((a, b) => a + b, 0) / ns.length) * 1e10) / 1e10;
    }
    out.push({ ...keys, [property]: value });
  }
  return { output: out };
};

/** The object's own property, exactly or without regard to case. */
function ownValue(row: Record<string, unknown>, name: string): unknown {
  if (Object.hasOwn(row, name)) return row[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(row)) if (k.toLowerCase() === lower) return row[k];
  return undefined;
}

/** ClearContext: drops the named context entries (`listValues`), or all of them (`clearAll`); output the names dropped. */
const clearContext: Handler = async (call) => {
  const outputs = call.outputs;
  const self = String(call.action.name);
  if (call.bool('clearAll')) {
    const names = [...outputs.keys(), ...call.workflow.globals.keys()].filter((n) => n !== self);
    for (const n of names) outputs.delete(n);
    call.workflow.globals.clear();
    return { output: { Cleared: [...new Set(names)] } };
  }
  const list = call.get('listValues');
  const names = (Array.isArray(list) ? list : list === undefined || list === null ? [] : [list]).map((n) => asText(n));
  const cleared: string[] = [];
  for (const n of names) {
    const a = outputs.delete(n);
    const b = call.workflow.forget(n);
    if (a || b) cleared.push(n);
  }
  return { output: { Cleared: cleared } };
};

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `wait` as the platform writes a time span: `dd:HH:mm:ss` or `HH:mm:ss` (the template's three parts), in ms. */
export function timeSpanMs(text: string): number | null {
  const m = /^(?:(\d{1,4})[:.])?(\d{1,2}):(\d{1,2}):(\d{1,2})$/.exec(text.trim());
  if (!m) return null;
  const [d, h, min, sec] = [Number(m[1] ?? 0), Number(m[2]), Number(m[3]), Number(m[4])];
  if (h > 23 || min > 59 || sec > 59) return null;
  return (((d * 24 + h) * 60 + min) * 60 + sec) * 1000;
}

/** Longest a background run may be put off (executeOnUtc or wait). */
const MAX_DELAY_MS = 366 * 86_400_000;

/**
 * EnqueueBackgroundWork: asks for a run of the automation `targetWorkflowId` with `body` as its request body
 * and goes on without waiting. The run is a job (pg-boss), so it survives a restart; `executeOnUtc` or `wait`
 * puts it off; runs sharing a `sessionId` execute one after another. Output: the job.
 */
const enqueueBackgroundWork: Handler = async (call) => {
  const id = call.text('targetWorkflowId');
  if (!GUID.test(id)) throw new ActionError(`targetWorkflowId must be an automation id (a GUID), got "${id.slice(0, 60)}"`);
  const body = jsonText(call.get('body') ?? null);
  const session = call.text('sessionId');
  if (session.length > 60) throw new ActionError('sessionId must be at most 60 characters');
  let startAfter = Date.now();
  const at = call.text('executeOnUtc');
  if (at !== '') {
    const t = Date.parse(/[zZ]|[+-]\d\d:?\d\d$/.test(at) ? at : `${at}Z`);
    if (Number.isNaN(t)) throw new ActionError(`executeOnUtc must be a date-time such as 2024-09-18T18:30:00 (got "${at.slice(0, 40)}")`);
    startAfter = Math.max(startAfter, t);
  }
  const wait = call.text('wait');
  if (wait !== '') {
    const ms = timeSpanMs(wait);
    if (ms === null) throw new ActionError(`wait must be a time span dd:HH:mm:ss or HH:mm:ss (got "${wait.slice(0, 40)}")`);
    startAfter += ms;
  }
  if (startAfter - Date.now() > MAX_DELAY_MS) throw new ActionError('the background run would start more than 366 days from now');
  const run = call.run;
  const jobId = await run.services.enqueueBackgroundWork(run.tenantId, {
    automationId: id,
    body,
    sessionId: session === '' ? null : session,
    startAfter: new Date(startAfter).toISOString(),
    callerId: run.automation.id,
    runAsAppId: run.automation.runAsAppId,
  });
  return { output: { JobId: jobId, TargetWorkflowId: id, SessionId: session || null, ExecuteOnUtc: new Date(startAfter).toISOString() } };
};

/** Another automation of the tenant, as if its execute URL received a POST with `body`; output its response. */
const executeIntegrationWorkflow: Handler = async (call) => {
  const id = call.text('targetWorkflowId');
  const target = await call.run.services.loadAutomation(call.run.tenantId, id);
  if (!target) throw new ActionError(`no automation ${id} in this tenant`);
  const caller = call.run.automation;
  const request: HttpRequestValue = {
    Scheme: 'internal',
    Host: 'atrium',
    Path: `/api/integration-workflows/${id}/execute`,
    Method: 'POST',
    Query: {},
    Headers: { 'content-type': 'application/json', 'x-calling-automation': caller.id },
    Body: jsonText(call.get('body')) ?? null,
  };
  const response = await runNested(call.run, { ...target, runAsAppId: target.runAsAppId ?? caller.runAsAppId }, request);
  return { output: response ?? { statusCode: 204, headers: {}, body: null } };
};

export const FLOW_HANDLERS: Record<string, Handler> = {
  Start: async (call) => ({ output: call.scope('#HttpRequest').value ?? null }),
  Result: result,
  Case: caseAction,
  Loop: loop,
  Reduce: reduce,
  AtriumFold: fold,
  Await: awaitAction,
  ExecuteSubWorkflow: executeSubWorkflow,
  ExecuteIntegrationWorkflow: executeIntegrationWorkflow,
  EnqueueBackgroundWork: enqueueBackgroundWork,
  ClearContext: clearContext,
};
