// Flow actions: Start, Result, Case, Loop, Reduce, Await, ExecuteSubWorkflow, ExecuteIntegrationWorkflow.
import { field } from '../definition.ts';
import { type ActionCall, ActionError, durationMs, type Handler, type HttpRequestValue, type HttpResponseValue, RunFailure, runNested } from '../engine.ts';
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

/** Case: `value` compared (as text) with each branch of `nextActions [{default, value, name}]`. */
const caseAction: Handler = async (call) => {
  const value = call.get('value') ?? call.get('expression');
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

/** Loop: runs `subWorkflow` once per item of `body`; inside, `['#Item']` and `['#Index']`. Output: each iteration's result. */
const loop: Handler = async (call) => {
  const list = items(call);
  const sub = call.workflow.sub(String(call.raw('subWorkflow')));
  const out: unknown[] = [];
  for (let i = 0; i < list.length; i++) {
    const { response } = await sub.execute(list[i], { '#Item': list[i], '#Index': i }, call.scope);
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

/** Reduce: like Loop, with `['#Accumulator']` starting at `initialValue`; each iteration's result is the next accumulator. */
const reduce: Handler = async (call) => {
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

const executeSubWorkflow: Handler = async (call) => {
  const sub = call.workflow.sub(String(call.raw('subWorkflow')));
  const input = call.get('body') ?? null;
  const { response } = await sub.execute(input, { '#Input': input }, call.scope);
  return { output: subOutput(response) };
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
    Body: call.get('body') ?? null,
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
  Await: awaitAction,
  ExecuteSubWorkflow: executeSubWorkflow,
  ExecuteIntegrationWorkflow: executeIntegrationWorkflow,
};
