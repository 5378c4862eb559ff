// The automation engine: walks a definition's action graph from Start to a Result, evaluating each
// action's fields against the outputs of the actions before it, and records a log entry per action. A
// run is bounded by steps, loop sizes, output size, the bytes it holds at once, nesting and time; reaching
// a bound ends it Failed with the reason, which no nextOnError can catch.
import { setTimeout as sleep, setImmediate as yieldNow } from 'node:timers/promises';
import { parseDuration } from '../config.ts';
import { RunFailure } from '../platform/errors.ts';
import { withSpan } from '../platform/tracing.ts';
import { type Action, actionTypeOf, type Definition, field, type Json, type Workflow } from './definition.ts';
import { Budget, ExpressionError, evaluateValue, type Scope } from './expressions.ts';
import { forLog, maskForLog } from './mask.ts';
import { stringValues } from './pipes.ts';
import type { RunServices } from './run-services.ts';
import { CREDENTIAL_FIELDS, conceal, HEADER_FIELDS, reveal, revealAuthHeaders } from './secret.ts';
import { jsonBytes, MAX_VALUE_DEPTH, nestsDeeperThan } from './size.ts';

/** The request an automation sees as `{{['#HttpRequest']}}`. */
export interface HttpRequestValue {
  Scheme: string;
  Host: string;
  Path: string;
  Method: string;
  /** Values are lists of strings, as the platform hands them (a single string is read as a list of it). */
  Query: Record<string, string | string[]>;
  Headers: Record<string, string | string[]>;
  Body: unknown;
}

/** The request with its Query and Headers values as lists of strings that read as text joined with ",". */
function withStringValues(request: HttpRequestValue): HttpRequestValue {
  const lists = (o: Record<string, string | string[]> | undefined) => {
    const out: Record<string, string[]> = {};
    for (const [k, v] of Object.entries(o ?? {})) out[k] = stringValues(Array.isArray(v) ? v.map(String) : [String(v)]);
    return out;
  };
  return { ...request, Query: lists(request.Query), Headers: lists(request.Headers) };
}

export interface HttpResponseValue {
  statusCode: number;
  headers: Record<string, string>;
  body: unknown;
}

export interface ActionLogEntry {
  name: string;
  type: string;
  workflow: string | null;
  startedOnUtc: string;
  durationMs: number;
  input?: unknown;
  output?: unknown;
  error?: string;
  next?: string | null;
}

export interface RunOutcome {
  status: 'Succeeded' | 'Failed';
  error: string | null;
  startedOnUtc: Date;
  finishedOnUtc: Date;
  actions: ActionLogEntry[];
  result: HttpResponseValue | null;
}

/** An action's own failure: its nextOnError, when it has one, takes the run on. */
export class ActionError extends Error {}

const MAX_LOG_ENTRIES = 1000;
const YIELD_MS = 20;
/** Automations calling automations (ExecuteIntegrationWorkflow), and sub-workflows inside sub-workflows. */
export const MAX_NESTING = 10;
export const MAX_SUB_WORKFLOW_DEPTH = 32;

export interface AutomationToRun {
  tenantId: string;
  id: string;
  version: number;
  definition: Definition;
  runAsAppId: string | null;
  runAsUserId: string | null;
  /** Sealed app credentials for isApiCall (see the automations table), or null. */
  apiCredentials: string | null;
}

/** One run's state shared by its workflows, sub-workflows and nested automations. */
export class RunContext {
  readonly automation: AutomationToRun;
  readonly services: RunServices;
  readonly log: ActionLogEntry[] = [];
  /** Secret values seen in this run (configuration keys): masked wherever they appear in the log. */
  readonly secrets = new Set<string>();
  readonly signal: AbortSignal;
  readonly deadline: number;
  steps = 0;
  depth = 0;
  /** Sub-workflows running inside one another (ExecuteSubWorkflow, Loop, Reduce). */
  subDepth = 0;
  /** Bytes of action outputs the run holds now (ATRIUM_AUTOMATION_MAX_RUN_BYTES). */
  heldBytes = 0;
  /** Bytes added to lists (AddToList), which outlive the sub-workflow that added them. */
  keptBytes = 0;
  logDropped = 0;
  /** Connections an action may keep for later actions of the same run (SFTP), closed when the run ends. */
  readonly connections = new Map<string, { value: Promise<unknown>; close: () => Promise<void> }>();

  readonly #timeout: AbortSignal;
  #lastYield = Date.now();

  /** `stop`: the process is stopping (the run ends Failed, and a webhook worker does not record it). */
  constructor(automation: AutomationToRun, services: RunServices, stop?: AbortSignal) {
    this.automation = automation;
    this.services = services;
    this.deadline = Date.now() + services.config.automationRunTimeoutMs;
    this.#timeout = AbortSignal.timeout(services.config.automationRunTimeoutMs);
    this.signal = stop ? AbortSignal.any([stop, this.#timeout]) : this.#timeout;
  }

  get tenantId(): string {
    return this.automation.tenantId;
  }

  /** Counts an output the run now holds; past the run's budget the run ends. */
  hold(bytes: number, action: string): void {
    this.heldBytes += bytes;
    this.#checkHeld(action);
  }

  /** Counts a value added to a list: it stays until the run ends. */
  keep(bytes: number, action: string): void {
    this.keptBytes += bytes;
    this.#checkHeld(action);
  }

  #checkHeld(action: string): void {
    const limit = this.services.config.automationMaxRunBytes;
    const held = this.heldBytes + this.keptBytes;
    if (held > limit)
      throw new RunFailure(`action "${action}" brought the values the run holds to ${held} bytes; the limit is ${limit} (ATRIUM_AUTOMATION_MAX_RUN_BYTES)`);
  }

  checkTime(): void {
    if (this.#timeout.aborted || Date.now() > this.deadline)
      throw new RunFailure(`the run exceeded its time limit of ${this.services.config.automationRunTimeoutMs} ms (ATRIUM_AUTOMATION_RUN_TIMEOUT)`);
    if (this.signal.aborted) throw new RunFailure('the run was stopped: the worker running it is shutting down');
  }

  /**
   * Lets the event loop turn when the run has computed for YIELD_MS without waiting on anything: actions
   * that do no I/O chain only microtasks, and a long chain would keep timers, pings and other requests out.
   */
  async breathe(): Promise<void> {
    if (Date.now() - this.#lastYield < YIELD_MS) return;
    await yieldNow();
    this.#lastYield = Date.now();
  }

  async wait(ms: number): Promise<void> {
    const left = this.deadline - Date.now();
    if (ms > left) {
      await sleep(Math.max(0, left), undefined, { signal: this.signal }).catch(() => {});
      this.checkTime();
    }
    await sleep(ms, undefined, { signal: this.signal }).catch(() => {});
    this.checkTime();
  }
}

/** What a handler gets: its action's fields evaluated on demand (each read is logged as the action's input). */
export class ActionCall {
  readonly action: Action;
  readonly run: RunContext;
  readonly scope: Scope;
  readonly workflow: WorkflowRunner;
  readonly input: Record<string, unknown> = {};
  /** What the action's fields may still produce (ATRIUM_AUTOMATION_MAX_OUTPUT_BYTES for all of them). */
  readonly budget: Budget;
  /** The outputs of the actions of this (sub-)workflow so far (ClearContext removes from them). */
  outputs: Map<string, unknown> = new Map();

  constructor(action: Action, run: RunContext, scope: Scope, workflow: WorkflowRunner) {
    this.action = action;
    this.run = run;
    this.scope = scope;
    this.workflow = workflow;
    this.budget = new Budget(run.services.config.automationMaxOutputBytes);
  }

  /**
   * The field evaluated (expressions replaced by their values). Configuration-key secrets in it are revealed
   * only when the field consumes credentials (secret.ts); anywhere else they read as ********.
   */
  get(name: string): unknown {
    const raw = field(this.action, name);
    if (raw === undefined) return undefined;
    let value: unknown;
    try {
      value = evaluateValue(raw, this.scope, this.budget);
    } catch (err) {
      if (err instanceof ExpressionError) throw new ActionError(`${name}: ${err.message}`);
      throw err;
    }
    const type = String(actionTypeOf(this.action));
    this.input[name] = conceal(value);
    if (HEADER_FIELDS[type]?.includes(name)) return revealAuthHeaders(value);
    return CREDENTIAL_FIELDS[type]?.includes(name) ? reveal(value) : this.input[name];
  }

  /** The field as written in the definition (not evaluated). */
  raw(name: string): Json | undefined {
    return field(this.action, name);
  }

  text(name: string): string {
    const v = this.get(name);
    return v === undefined || v === null ? '' : typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v);
  }

  bool(name: string, fallback = false): boolean {
    const v = this.get(name);
    if (v === undefined || v === null || v === '') return fallback;
    return v === true || v === 'true' || v === 'True';
  }
}

export interface HandlerResult {
  output: unknown;
  /** Where the run goes next instead of the action's `next` (Case). */
  next?: string | null;
  /** A Result: the workflow ends with this response. */
  response?: HttpResponseValue;
}

export type Handler = (call: ActionCall) => Promise<HandlerResult>;

/** Runs one workflow (the automation's or a sub-workflow) over a scope of names it can read. */
export class WorkflowRunner {
  readonly run: RunContext;
  readonly definition: Definition;
  readonly workflow: Workflow;
  /**
   * The context entries the author names (SetParameter's parameterName, CreateList's listName): kept in the
   * parent context, so one map is shared by the automation's workflow and all its sub-workflows (§5.22, §5.29).
   */
  readonly globals: Map<string, unknown>;
  readonly #byName = new Map<string, Action>();
  readonly #nested: boolean;

  constructor(run: RunContext, definition: Definition, workflow: Workflow, nested = false, globals: Map<string, unknown> = new Map()) {
    this.run = run;
    this.definition = definition;
    this.workflow = workflow;
    this.#nested = nested;
    this.globals = globals;
    for (const a of workflow.actions) this.#byName.set(String(a.name), a);
  }

  /** A context entry by the name its author gave it: exactly, else without regard to case (`Mylist` read as `MyList`). */
  global(name: string): { found: boolean; value: unknown } {
    if (this.globals.has(name)) return { found: true, value: this.globals.get(name) };
    const lower = name.toLowerCase();
    for (const [k, v] of this.globals) if (k.toLowerCase() === lower) return { found: true, value: v };
    return { found: false, value: undefined };
  }

  /** Removes a context entry the author named (ClearContext). */
  forget(name: string): boolean {
    let removed = this.globals.delete(name);
    const lower = name.toLowerCase();
    for (const k of [...this.globals.keys()]) if (k.toLowerCase() === lower) removed = this.globals.delete(k) || removed;
    return removed;
  }

  /** A sub-workflow of the same definition (its runs nest at most MAX_SUB_WORKFLOW_DEPTH deep). */
  sub(name: string): WorkflowRunner {
    const wf = this.definition.subWorkflows.find((w) => w.name === name);
    if (!wf) throw new RunFailure(`no sub-workflow named "${name}"`);
    if (this.run.subDepth >= MAX_SUB_WORKFLOW_DEPTH)
      throw new RunFailure(
        `sub-workflow "${name}" would run ${MAX_SUB_WORKFLOW_DEPTH + 1} sub-workflows deep (a sub-workflow that calls itself without end?); the limit is ${MAX_SUB_WORKFLOW_DEPTH}`,
      );
    return new WorkflowRunner(this.run, this.definition, wf, true, this.globals);
  }

  /**
   * Runs from Start; `input` is Start's output, `names` extra values (#HttpRequest, #Item) and `parent` what
   * the enclosing workflow can read. Answers the Result's response, or null when the walk ended without one.
   */
  async execute(
    input: unknown,
    names: Record<string, unknown>,
    parent: Scope | null,
  ): Promise<{ response: HttpResponseValue | null; outputs: Map<string, unknown> }> {
    // A sub-workflow's outputs are let go when it ends: what the run holds goes down by them again.
    const held = this.run.heldBytes;
    if (this.#nested) this.run.subDepth++;
    try {
      return await this.#execute(input, names, parent);
    } finally {
      if (this.#nested) {
        this.run.subDepth--;
        this.run.heldBytes = held;
      }
    }
  }

  async #execute(
    input: unknown,
    names: Record<string, unknown>,
    parent: Scope | null,
  ): Promise<{ response: HttpResponseValue | null; outputs: Map<string, unknown> }> {
    const outputs = new Map<string, unknown>();
    const scope: Scope = (name) => {
      if (outputs.has(name)) return { found: true, value: outputs.get(name) };
      if (Object.hasOwn(names, name)) return { found: true, value: names[name] };
      const g = this.global(name);
      if (g.found) return g;
      if (parent) return parent(name);
      return name === '#ImportFile' ? importFile(scope) : { found: false, value: undefined };
    };
    let action = this.workflow.actions.find((a) => actionTypeOf(a) === 'Start');
    if (!action) throw new RunFailure('the workflow has no Start action');
    outputs.set(String(action.name), input);
    let first = true;
    while (action) {
      const run = this.run;
      await run.breathe();
      run.checkTime();
      if (++run.steps > run.services.config.automationMaxSteps)
        throw new RunFailure(`the run reached its limit of ${run.services.config.automationMaxSteps} actions (ATRIUM_AUTOMATION_MAX_STEPS)`);
      const type = String(actionTypeOf(action));
      const handler = Object.hasOwn(run.services.handlers, type) ? run.services.handlers[type] : undefined;
      if (!handler) throw new RunFailure(`action "${String(action.name)}": this process has no handler for the action type "${type}"`);
      const call = new ActionCall(action, run, scope, this);
      call.outputs = outputs;
      const started = Date.now();
      let result: HandlerResult;
      let error: string | null = null;
      try {
        result = first
          ? { output: input }
          : await withSpan(`automation action ${type}`, { attributes: { 'atrium.automation.action': String(action.name) } }, () => handler(call));
      } catch (err) {
        if (err instanceof RunFailure) {
          this.#record(call, type, started, undefined, err.message, null);
          throw err;
        }
        error = err instanceof ActionError || err instanceof ExpressionError ? err.message : `${(err as Error).message ?? err}`;
        const onError = field(action, 'nextOnError');
        if (typeof onError !== 'string' || onError === '') {
          this.#record(call, type, started, undefined, error, null);
          throw new RunFailure(`action "${String(action.name)}" failed: ${error}`);
        }
        result = { output: { Error: error }, next: onError };
      }
      first = false;
      const limit = run.services.config.automationMaxOutputBytes;
      if (nestsDeeperThan(result.output, MAX_VALUE_DEPTH)) {
        this.#record(call, type, started, undefined, 'output nests too deeply', null);
        throw new RunFailure(`action "${String(action.name)}" produced a value nesting deeper than ${MAX_VALUE_DEPTH} levels; the limit is ${MAX_VALUE_DEPTH}`);
      }
      const bytes = jsonBytes(result.output, limit);
      if (bytes > limit) {
        this.#record(call, type, started, undefined, 'output too large', null);
        throw new RunFailure(`action "${String(action.name)}" produced too many bytes of output; the limit is ${limit} (ATRIUM_AUTOMATION_MAX_OUTPUT_BYTES)`);
      }
      try {
        run.hold(bytes, String(action.name));
      } catch (err) {
        this.#record(call, type, started, undefined, 'the run holds too much', null);
        throw err;
      }
      outputs.set(String(action.name), result.output);
      const nextName = result.next !== undefined ? result.next : (field(action, 'next') as string | null | undefined);
      this.#record(call, type, started, result.output, error, nextName ?? null);
      if (result.response) return { response: result.response, outputs };
      if (!nextName) return { response: null, outputs };
      action = this.#byName.get(nextName);
      if (!action) throw new RunFailure(`no action named "${nextName}"`);
    }
    return { response: null, outputs };
  }

  #record(call: ActionCall, type: string, started: number, output: unknown, error: string | null, next: string | null): void {
    const run = this.run;
    const level = run.automation.definition.logLevelType;
    if (run.log.length >= MAX_LOG_ENTRIES) {
      run.logDropped++;
      return;
    }
    const entry: ActionLogEntry = {
      name: String(call.action.name),
      type,
      workflow: this.workflow.name || null,
      startedOnUtc: new Date(started).toISOString(),
      durationMs: Date.now() - started,
    };
    // Info keeps every action's input and output; Warning and Error only those of failed actions.
    if (level === 'Info' || error) {
      entry.input = forLog(call.input, run.secrets);
      if (output !== undefined) entry.output = forLog(output, run.secrets);
    }
    if (error) entry.error = maskForLog(error, run.secrets) as string;
    entry.next = next;
    run.log.push(entry);
  }
}

/**
 * `['#ImportFile']` (fact sheet §6.2, never defined by the platform): the file a run imports. Inside a Loop,
 * the current element when it is a file name or a file listing entry (`name`/`fileName`); else the
 * `fileName` (or `ImportFile`) of the request body.
 */
function importFile(scope: Scope): { found: boolean; value: unknown } {
  const nameOf = (v: unknown): unknown => {
    if (typeof v === 'string') return v;
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      for (const k of ['ImportFile', 'fileName', 'FileName', 'name', 'Name']) if (Object.hasOwn(v, k)) return (v as Record<string, unknown>)[k];
    }
    return undefined;
  };
  const item = scope('#Item');
  if (item.found && nameOf(item.value) !== undefined) return { found: true, value: nameOf(item.value) };
  const req = scope('#HttpRequest');
  const body = req.found && req.value && typeof req.value === 'object' ? (req.value as { Body?: unknown }).Body : undefined;
  const v = nameOf(body);
  return v === undefined || typeof body === 'string' ? { found: false, value: undefined } : { found: true, value: v };
}

/** Runs an automation to its end: never throws for what the automation does, only answers how it went. */
export async function runAutomation(
  automation: AutomationToRun,
  services: RunServices,
  request: HttpRequestValue,
  opts: { signal?: AbortSignal } = {},
): Promise<RunOutcome> {
  const startedOnUtc = new Date();
  const run = new RunContext(automation, services, opts.signal);
  try {
    const response = await runNested(run, automation, request);
    // The result is kept and shown like the log: secrets masked (also what the execute URL answers).
    const masked = response ? (maskForLog(conceal(response), run.secrets) as HttpResponseValue) : null;
    return finish(run, startedOnUtc, 'Succeeded', null, masked);
  } catch (err) {
    const message =
      err instanceof RunFailure
        ? err.message
        : err instanceof RangeError && /call stack/i.test(err.message)
          ? "the run's values nest too deeply to handle (Maximum call stack size exceeded)"
          : `unexpected error: ${(err as Error).message ?? err}`;
    return finish(run, startedOnUtc, 'Failed', maskForLog(message, run.secrets) as string, null);
  } finally {
    await Promise.allSettled([...run.connections.values()].map((c) => c.close()));
  }
}

/** The automation's main workflow inside a run (also ExecuteIntegrationWorkflow's nested automations). */
export async function runNested(run: RunContext, automation: AutomationToRun, request: HttpRequestValue): Promise<HttpResponseValue | null> {
  if (run.depth >= MAX_NESTING) throw new RunFailure(`automations call each other more than ${MAX_NESTING} deep`);
  run.depth++;
  try {
    const main = new WorkflowRunner(run, automation.definition, {
      name: run.depth > 1 ? automation.definition.name : '',
      actions: automation.definition.actions,
    });
    if (nestsDeeperThan(request.Body, MAX_VALUE_DEPTH))
      throw new RunFailure(
        `the request body nests deeper than ${MAX_VALUE_DEPTH} levels (objects and lists inside one another); the limit is ${MAX_VALUE_DEPTH}`,
      );
    const req = withStringValues(request);
    const { response } = await main.execute(req, { '#HttpRequest': req }, null);
    return response;
  } finally {
    run.depth--;
  }
}

function finish(run: RunContext, startedOnUtc: Date, status: RunOutcome['status'], error: string | null, result: HttpResponseValue | null): RunOutcome {
  if (run.logDropped > 0)
    run.log.push({
      name: '…',
      type: 'LogTruncated',
      workflow: null,
      startedOnUtc: new Date().toISOString(),
      durationMs: 0,
      error: `${run.logDropped} more actions ran; the log keeps the first ${MAX_LOG_ENTRIES}`,
    });
  return { status, error, startedOnUtc, finishedOnUtc: new Date(), actions: run.log, result };
}

/** Parses an Await duration ("500ms", "1s", "1m"). */
export function durationMs(text: string): number {
  const ms = parseDuration(text);
  if (ms === null) throw new ActionError(`"${text}" is not a duration such as 500ms, 1s or 1m`);
  return ms;
}
