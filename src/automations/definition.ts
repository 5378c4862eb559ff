// An automation definition in the platform's published format, and its validation on save: every error
// carries the JSON path of what is wrong (`/actions/3/next`), so a definition written for the platform can
// be fixed from the answer alone.
import { Liquid } from 'liquidjs';
import { parseDuration } from '../config.ts';
import { CronError, validateCron } from '../platform/cron.ts';
import { upgradeDefinition } from '../platform/db/migrations/0031_automations_platform_format.ts';
import type { FieldError } from '../platform/errors.ts';
import { ExpressionError, parseTemplate, referencedNames } from './expressions.ts';
import { jsonBytes } from './size.ts';

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
export type Action = { [k: string]: Json };

export interface Workflow {
  name: string;
  actions: Action[];
}

export interface Scheduler {
  unit?: number;
  periodicity?: 'Minutes' | 'Hours' | 'Days' | 'Weeks' | 'Months';
  startDateUtc?: string;
  userId?: string | null;
  isActive?: boolean;
  /** Atrium's alternative to unit/periodicity: five-field cron, UTC. */
  cronExpression?: string;
  /** The platform's notification settings (shape not documented): kept as given. */
  notification?: { [k: string]: Json };
}

export interface Definition {
  name: string;
  active: boolean;
  logLevelType: 'Info' | 'Warning' | 'Error';
  requiresAuthentication: boolean;
  actions: Action[];
  subWorkflows: Workflow[];
  scheduler: Scheduler | null;
}

/** Case-insensitive read of an action's field (the platform matches JSON names without regard to case). */
export function field(action: Action, name: string): Json | undefined {
  if (Object.hasOwn(action, name)) return action[name];
  const lower = name.toLowerCase();
  for (const k of Object.keys(action)) if (k.toLowerCase() === lower) return action[k];
  return undefined;
}

/** The key under which an action holds a field (for error paths), or the field's own name. */
const keyOf = (action: Action, name: string): string => Object.keys(action).find((k) => k.toLowerCase() === name.toLowerCase()) ?? name;

/**
 * An action's type: the platform's key `actionType` (Atrium's older `type` is read as a synonym), its value
 * matched without regard to case (the platform's own template writes `removeFromList`) and answered in the
 * canonical spelling, or the value as written when it names no known type.
 */
export function actionTypeOf(action: Action): string | undefined {
  let v = field(action, 'actionType');
  if (v === undefined || v === null) v = field(action, 'type');
  if (typeof v !== 'string') return undefined;
  if (Object.hasOwn(ACTION_TYPES, v)) return v;
  const lower = v.toLowerCase();
  for (const k of Object.keys(ACTION_TYPES)) if (k.toLowerCase() === lower) return k;
  return v;
}

/** The key an action's type is written under (for error paths): `actionType` unless only `type` is there. */
const typeKeyOf = (action: Action): string => {
  const v = field(action, 'actionType');
  return v === undefined || v === null ? (field(action, 'type') !== undefined ? keyOf(action, 'type') : 'actionType') : keyOf(action, 'actionType');
};

/**
 * The action as stored: its type under `actionType` in the canonical spelling, first; `type` (the older key)
 * dropped when it only repeated the type.
 */
function canonicalAction(a: Action): Action {
  const type = actionTypeOf(a) as string;
  const out: Action = { actionType: type };
  for (const [k, v] of Object.entries(a)) {
    const lower = k.toLowerCase();
    if (lower === 'actiontype' || lower === 'type') continue;
    out[k] = v;
  }
  return out;
}

/**
 * Each action type and the fields it cannot run without, by the platform's field names (fact sheet §5).
 * `Atrium*` types are Atrium's extensions: older actions with no platform equivalent (older-shape.ts).
 */
export const ACTION_TYPES: Readonly<Record<string, readonly string[]>> = {
  Start: [],
  Result: [],
  Case: ['test', 'nextActions'],
  Loop: ['body', 'subWorkflow'],
  Reduce: ['data', 'GroupBy', 'Operation', 'OperationResult'],
  Await: ['duration'],
  ExecuteSubWorkflow: ['subWorkflow'],
  ExecuteIntegrationWorkflow: ['targetWorkflowId'],
  EnqueueBackgroundWork: ['targetWorkflowId'],
  ClearContext: [],
  Rest: ['method', 'url'],
  SftpListFiles: ['ftpHostIp', 'ftpUsername'],
  SftpDownload: ['ftpHostIp', 'ftpUsername', 'fileName|filePath'],
  SftpUpload: ['ftpHostIp', 'ftpUsername', 'ftpPath', 'fileName'],
  SftpMoveTo: ['ftpHostIp', 'ftpUsername', 'fileName|filePath', 'ftpToPath|toFilePath'],
  Email: ['toAddress', 'subject', 'body'],
  CreateCsv: ['data'],
  CSVMap: ['data'],
  ReadFileData: ['fileName'],
  Download: ['url'],
  OAuth2Authentication: ['oauthBaseUrl|url'],
  AzureAdAuthentication: ['tenantId', 'clientId', 'clientSecret|CertificatePfx'],
  AzureAdCertificateAuthentication: ['tenantId', 'clientId', 'CertificatePfx'],
  Map: ['values'],
  MapFromObject: ['data', 'body'],
  Merge: ['payload', 'values'],
  ConvertFromJsonDataTable: ['columns', 'rows'],
  ValidateJson: ['payload'],
  SetParameter: ['parameterName', 'value'],
  ConfigurationKeys: ['value'],
  AnalyticsNamedQuery: ['namedQuery'],
  CreateList: ['listName'],
  AddToList: ['listName', 'listValues'],
  RemoveFromList: ['listName', 'RemoveValues'],
  ApplyTemplate: ['data|template'],
  XmlMap: ['xmldata', 'values'],
  CreatePdfFromDocument: ['documentType', 'documentId', 'layoutId'],
  AtriumFold: ['body', 'subWorkflow'],
  AtriumObjectEntries: ['body'],
  AtriumMergeList: ['parts'],
};

const REDUCE_OPERATIONS = ['SUM', 'MIN', 'MAX', 'AVG', 'NONE'];
const INNER_ARRAY_STRATEGIES = ['NONE', 'MIN', 'MAX', 'FIRST', 'LAST'];
/** Fields naming an entry of the run's context: what expressions may read besides the actions' names. */
const CONTEXT_NAME_FIELDS = ['parameterName', 'listName'];
const EMPTY_GUID = '00000000-0000-0000-0000-000000000000';

/** Fields that hold something other than expressions (Liquid source is not ours to parse). */
const NOT_EXPRESSIONS: Record<string, string[]> = { ApplyTemplate: ['template', 'data'] };
const PERIODICITIES = ['Minutes', 'Hours', 'Days', 'Weeks', 'Months'];
export const liquidParser = new Liquid({ relativeReference: false, root: [], partials: [], layouts: [], parseLimit: 256 * 1024 });
/** Errors a 400 lists: the first ones, then how many more there were. */
const MAX_ERRORS = 50;

/** A definition's limits (ATRIUM_AUTOMATION_MAX_DEFINITION_BYTES, ATRIUM_AUTOMATION_MAX_ACTIONS). */
export interface DefinitionLimits {
  maxBytes: number;
  maxActions: number;
  /**
   * Built-in action types of other surfaces (UserFeed) with their required fields, beyond the engine's own
   * (ACTION_TYPES): the ones the process's run services have handlers for (runtime.ts, actionTypesFor).
   */
  actionTypes?: Readonly<Record<string, readonly string[]>>;
}
export const DEFAULT_LIMITS: DefinitionLimits = { maxBytes: 1024 * 1024, maxActions: 1000 };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/**
 * The sub-workflows: `subWorkflows` (the structure page) or `subWorkflow` (the platform's Loop example spells
 * the top-level array so); when both are lists, both are read, `subWorkflows` first.
 */
function subWorkflowsOf(body: Action): Json | undefined {
  const plural = field(body, 'subWorkflows');
  const singular = field(body, 'subWorkflow');
  if (singular === undefined || singular === null) return plural;
  if (plural === undefined || plural === null) return singular;
  if (Array.isArray(plural) && Array.isArray(singular)) return [...plural, ...singular];
  return plural;
}

/**
 * Validates a body as the platform's definition; answers it normalised, or the errors with their paths (the
 * first 50 and a count). Size and action count are checked first, before anything is walked per action.
 */
export function validateDefinition(body: unknown, limits: DefinitionLimits = DEFAULT_LIMITS): { definition: Definition | null; errors: FieldError[] } {
  const errors: FieldError[] = [];
  let more = 0;
  const err = (path: string, message: string) => {
    if (errors.length < MAX_ERRORS) errors.push({ path, message });
    else more++;
  };
  if (!isObject(body)) return { definition: null, errors: [{ path: '', message: 'must be an automation definition (an object)' }] };
  const bytes = jsonBytes(body, limits.maxBytes);
  if (bytes > limits.maxBytes)
    return {
      definition: null,
      errors: [{ path: '', message: `the definition is larger than ${limits.maxBytes} bytes (ATRIUM_AUTOMATION_MAX_DEFINITION_BYTES)` }],
    };
  const count = (v: unknown) => (Array.isArray(v) ? v.length : 0);
  const subsDeclared = subWorkflowsOf(body as Action);
  const declared =
    count(field(body as Action, 'actions')) +
    (Array.isArray(subsDeclared) ? subsDeclared.reduce<number>((n, s) => n + (isObject(s) ? count(field(s as Action, 'actions')) : 0), 0) : 0);
  if (declared > limits.maxActions)
    return {
      definition: null,
      errors: [{ path: '/actions', message: `the definition declares ${declared} actions; the limit is ${limits.maxActions} (ATRIUM_AUTOMATION_MAX_ACTIONS)` }],
    };
  // Atrium's older shape is read as a synonym of the platform's (older-shape.ts); what is stored is the platform's.
  const result = validateFields(upgradeDefinition(body as Json) as Record<string, unknown>, err, () => errors.length > 0, limits.actionTypes ?? {});
  if (more > 0) errors.push({ path: '', message: `and ${more} more errors` });
  return errors.length > 0 ? { definition: null, errors } : result;
}

function validateFields(
  body: Record<string, unknown>,
  err: (path: string, message: string) => void,
  failed: () => boolean,
  moreTypes: Readonly<Record<string, readonly string[]>>,
): { definition: Definition | null; errors: FieldError[] } {
  const get = (name: string) => field(body as Action, name);
  const name = get('name');
  if (typeof name !== 'string' || name.trim() === '') err('/name', 'is required');
  else if (name.length > 200) err('/name', 'must be at most 200 characters');
  const logLevelType = get('logLevelType') ?? 'Info';
  if (!['Info', 'Warning', 'Error'].includes(logLevelType as string)) err('/logLevelType', 'must be Info, Warning or Error');
  for (const flag of ['active', 'requiresAuthentication']) {
    const v = get(flag);
    if (v !== undefined && v !== null && typeof v !== 'boolean') err(`/${flag}`, 'must be true or false');
  }
  const actions = get('actions');
  const subs = subWorkflowsOf(body as Action) ?? [];
  if (!Array.isArray(actions)) err('/actions', 'is required: the list of actions');
  if (!Array.isArray(subs)) err('/subWorkflows', 'must be a list');
  const workflows: { path: string; wf: Workflow }[] = [];
  if (Array.isArray(actions)) workflows.push({ path: '', wf: { name: '', actions: actions as Action[] } });
  const subNames = new Set<string>();
  if (Array.isArray(subs)) {
    subs.forEach((s, i) => {
      if (!isObject(s)) {
        err(`/subWorkflows/${i}`, 'must be an object with name and actions');
        return;
      }
      const sname = field(s as Action, 'name');
      const sactions = field(s as Action, 'actions');
      if (typeof sname !== 'string' || sname === '') err(`/subWorkflows/${i}/name`, 'is required');
      else if (subNames.has(sname)) err(`/subWorkflows/${i}/name`, `"${sname}" names another sub-workflow too`);
      else subNames.add(sname);
      if (!Array.isArray(sactions)) err(`/subWorkflows/${i}/actions`, 'is required: the list of actions');
      else workflows.push({ path: `/subWorkflows/${i}`, wf: { name: String(sname), actions: sactions as Action[] } });
    });
  }
  const allNames = new Set<string>();
  for (const { wf } of workflows)
    for (const a of wf.actions) {
      if (!isObject(a)) continue;
      if (typeof a.name === 'string') allNames.add(a.name);
      // SetParameter and list names are entries of the context too: expressions read them like action results.
      for (const f of CONTEXT_NAME_FIELDS) {
        const v = field(a, f);
        if (typeof v === 'string' && v !== '') {
          allNames.add(v);
          // Read in any case (the platform's own example stores `Mylist` and reads `MyList`).
          allNames.add(`\u0000${v.toLowerCase()}`);
        }
      }
    }
  for (const { path, wf } of workflows) validateWorkflow(wf, path, subNames, allNames, err, moreTypes);
  const scheduler = validateScheduler(get('scheduler'), err);
  if (failed()) return { definition: null, errors: [] };
  return {
    definition: {
      name: (name as string).trim(),
      active: get('active') !== false,
      logLevelType: logLevelType as Definition['logLevelType'],
      requiresAuthentication: get('requiresAuthentication') === true,
      actions: (actions as Action[]).map(canonicalAction),
      subWorkflows: workflows.slice(1).map((w) => ({ name: w.wf.name, actions: w.wf.actions.map(canonicalAction) })),
      scheduler,
    },
    errors: [],
  };
}

function validateWorkflow(
  wf: Workflow,
  base: string,
  subNames: Set<string>,
  allNames: Set<string>,
  err: (p: string, m: string) => void,
  moreTypes: Readonly<Record<string, readonly string[]>>,
): void {
  const names = new Map<string, number>();
  let starts = 0;
  let results = 0;
  wf.actions.forEach((a, i) => {
    const p = `${base}/actions/${i}`;
    if (!isObject(a)) {
      err(p, 'must be an action object');
      return;
    }
    const name = field(a, 'name');
    const type = actionTypeOf(a);
    if (typeof name !== 'string' || name === '') err(`${p}/name`, 'is required');
    else if (names.has(name)) err(`${p}/name`, `"${name}" names another action too (action names are unique)`);
    else names.set(name, i);
    const required =
      typeof type !== 'string'
        ? undefined
        : Object.hasOwn(ACTION_TYPES, type)
          ? ACTION_TYPES[type]
          : Object.hasOwn(moreTypes, type)
            ? moreTypes[type]
            : undefined;
    if (typeof type !== 'string' || !required) {
      err(`${p}/${typeKeyOf(a)}`, typeof type === 'string' ? `unknown action type "${type}"` : 'is required');
      return;
    }
    if (type === 'Start') starts++;
    if (type === 'Result') {
      results++;
      if (field(a, 'next') !== undefined && field(a, 'next') !== null) err(`${p}/${keyOf(a, 'next')}`, 'a Result ends the workflow and has no next');
    }
    // 'a|b': either field will do (the platform's name first, then a spelling also accepted).
    for (const req of required) {
      const names = req.split('|');
      const present = names.some((n) => {
        const v = field(a, n);
        return v !== undefined && v !== null && v !== '';
      });
      if (!present) err(`${p}/${keyOf(a, names[0])}`, `is required for a ${type} action`);
    }
    const sub = field(a, 'subWorkflow');
    if ((type === 'Loop' || type === 'AtriumFold' || type === 'ExecuteSubWorkflow') && typeof sub === 'string' && !subNames.has(sub))
      err(`${p}/${keyOf(a, 'subWorkflow')}`, `names no sub-workflow: "${sub}"`);
    if (type === 'Await') {
      const d = field(a, 'duration');
      if (typeof d === 'string' && !d.includes('{{') && parseDuration(d) === null)
        err(`${p}/${keyOf(a, 'duration')}`, 'must be a duration such as 500ms, 1s or 1m');
    }
    if (type === 'ApplyTemplate') {
      // The Liquid source: `data` (the platform's field), or `template` in Atrium's older shape.
      const key = field(a, 'template') !== undefined ? 'template' : 'data';
      const t = field(a, key);
      if (typeof t === 'string') {
        try {
          liquidParser.parse(t);
        } catch (e) {
          err(`${p}/${keyOf(a, key)}`, `is not a valid Liquid template: ${(e as Error).message.split('\n')[0]}`);
        }
      }
    }
    if (type === 'Reduce') checkReduce(a, p, err);
    if (type === 'ValidateJson') {
      const req = field(a, 'requiredProperties');
      const schema = field(a, 'schema');
      if ((req === undefined || req === null) && (schema === undefined || schema === null))
        err(`${p}/requiredProperties`, 'is required for a ValidateJson action (a list of property names)');
      else if (req !== undefined && req !== null && !Array.isArray(req) && !(typeof req === 'string' && req.includes('{{')))
        err(`${p}/${keyOf(a, 'requiredProperties')}`, 'must be a list of property names');
    }
    if (type === 'EnqueueBackgroundWork') {
      const session = field(a, 'sessionId');
      if (typeof session === 'string' && !session.includes('{{') && session.length > 60) err(`${p}/${keyOf(a, 'sessionId')}`, 'must be at most 60 characters');
    }
    if (type === 'ClearContext') {
      const lv = field(a, 'listValues');
      if (lv !== undefined && lv !== null && !Array.isArray(lv)) err(`${p}/${keyOf(a, 'listValues')}`, 'must be a list of context entry names');
    }
    if (type === 'Case') {
      // A default branch is advised, not required (fact sheet §10.8: the two pages disagree; Atrium takes the
      // reading that refuses fewer definitions). Without one, a value no branch matches fails the Case.
      const branches = field(a, 'nextActions');
      if (branches !== undefined && !Array.isArray(branches)) err(`${p}/${keyOf(a, 'nextActions')}`, 'must be a list of {default, value, name}');
    }
    const skip = new Set((NOT_EXPRESSIONS[type] ?? []).map((f) => f.toLowerCase()));
    for (const [k, v] of Object.entries(a)) if (!skip.has(k.toLowerCase())) checkExpressions(v, `${p}/${k}`, allNames, err);
  });
  const label = base ? `sub-workflow ${wf.name}` : 'the automation';
  const where = `${base}/actions`;
  if (starts !== 1) err(where, `${label} must have exactly one Start action (it has ${starts})`);
  if (results < 1) err(where, `${label} must have at least one Result action`);
  checkGraph(wf, base, names, err);
}

function checkReduce(a: Action, p: string, err: (p: string, m: string) => void): void {
  const groupBy = field(a, 'GroupBy');
  if (groupBy !== undefined && groupBy !== null && !(Array.isArray(groupBy) && groupBy.every((g) => typeof g === 'string')) && typeof groupBy !== 'string')
    err(`${p}/${keyOf(a, 'GroupBy')}`, 'must be a list of property names');
  const op = field(a, 'Operation');
  if (typeof op === 'string' && !op.includes('{{') && !REDUCE_OPERATIONS.includes(op.toUpperCase()))
    err(`${p}/${keyOf(a, 'Operation')}`, `must be one of ${REDUCE_OPERATIONS.join(', ')}`);
  const inner = field(a, 'InnerArrayStrategy');
  if (typeof inner === 'string' && !inner.includes('{{') && !INNER_ARRAY_STRATEGIES.includes(inner.toUpperCase()))
    err(`${p}/${keyOf(a, 'InnerArrayStrategy')}`, `must be one of ${INNER_ARRAY_STRATEGIES.join(', ')}`);
}

/** Every string parses as a template, and names only actions of the definition (or a #-value of the run). */
function checkExpressions(v: unknown, path: string, allNames: Set<string>, err: (p: string, m: string) => void): void {
  if (typeof v === 'string') {
    if (!v.includes('{{')) return;
    try {
      const t = parseTemplate(v);
      for (const n of referencedNames(t))
        if (!n.startsWith('#') && !allNames.has(n) && !allNames.has(`\u0000${n.toLowerCase()}`))
          err(path, `the expression reads ['${n}'], which is no action of this automation`);
    } catch (e) {
      if (e instanceof ExpressionError) err(path, `the expression does not parse at character ${e.position + 1}: ${e.message}`);
      else throw e;
    }
  } else if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) checkExpressions(v[i], `${path}/${i}`, allNames, err);
  } else if (isObject(v)) for (const [k, x] of Object.entries(v)) checkExpressions(x, `${path}/${k}`, allNames, err);
}

/** The names an action may go on to, with the path of each reference. */
export function successors(a: Action): { name: string; key: string }[] {
  const out: { name: string; key: string }[] = [];
  for (const f of ['next', 'nextOnError']) {
    const v = field(a, f);
    if (typeof v === 'string' && v !== '') out.push({ name: v, key: keyOf(a, f) });
  }
  const branches = field(a, 'nextActions');
  if (Array.isArray(branches))
    branches.forEach((b, i) => {
      const n = isObject(b) ? field(b as Action, 'name') : undefined;
      if (typeof n === 'string' && n !== '') out.push({ name: n, key: `${keyOf(a, 'nextActions')}/${i}/name` });
    });
  return out;
}

/** Every successor exists, and every action can reach an end (a Result, or an action with nowhere to go). */
function checkGraph(wf: Workflow, base: string, names: Map<string, number>, err: (p: string, m: string) => void): void {
  const edges: number[][] = wf.actions.map(() => []);
  wf.actions.forEach((a, i) => {
    if (!isObject(a)) return;
    for (const s of successors(a)) {
      const target = names.get(s.name);
      if (target === undefined) err(`${base}/actions/${i}/${s.key}`, `names no action of this workflow: "${s.name}"`);
      else edges[i].push(target);
    }
  });
  const ends = new Set<number>();
  wf.actions.forEach((a, i) => {
    if (isObject(a) && (actionTypeOf(a) === 'Result' || edges[i].length === 0)) ends.add(i);
  });
  const reverse: number[][] = wf.actions.map(() => []);
  edges.forEach((targets, i) => {
    for (const t of targets) reverse[t].push(i);
  });
  const canEnd = new Set(ends);
  const queue = [...ends];
  while (queue.length) {
    const n = queue.pop() as number;
    for (const p of reverse[n])
      if (!canEnd.has(p)) {
        canEnd.add(p);
        queue.push(p);
      }
  }
  wf.actions.forEach((a, i) => {
    if (isObject(a) && !canEnd.has(i)) err(`${base}/actions/${i}`, `"${String(a.name)}" is in a cycle with no way out (no path from it reaches a Result)`);
  });
}

function validateScheduler(raw: unknown, err: (p: string, m: string) => void): Scheduler | null {
  if (raw === undefined || raw === null) return null;
  if (!isObject(raw)) {
    err('/scheduler', 'must be null or {unit, periodicity, startDateUtc, userId, isActive} (or {cronExpression})');
    return null;
  }
  const s = raw as Action;
  const out: Scheduler = { isActive: field(s, 'isActive') !== false };
  const cron = field(s, 'cronExpression');
  if (cron !== undefined && cron !== null) {
    if (typeof cron !== 'string') err('/scheduler/cronExpression', 'must be a five-field cron expression');
    else
      try {
        validateCron(cron);
        out.cronExpression = cron;
      } catch (e) {
        if (e instanceof CronError) err('/scheduler/cronExpression', e.message);
        else throw e;
      }
  } else {
    const unit = field(s, 'unit');
    const periodicity = field(s, 'periodicity');
    if (typeof unit !== 'number' || !Number.isInteger(unit) || unit < 1 || unit > 100_000)
      err('/scheduler/unit', 'must be a whole number of periods, at least 1');
    else out.unit = unit;
    if (typeof periodicity !== 'string' || !PERIODICITIES.includes(periodicity)) err('/scheduler/periodicity', `must be one of ${PERIODICITIES.join(', ')}`);
    else out.periodicity = periodicity as Scheduler['periodicity'];
  }
  // The platform: startDateUtc must not be left at its default, userId must not be the empty GUID (§8.4).
  const start = field(s, 'startDateUtc');
  if (start !== undefined && start !== null) {
    if (typeof start !== 'string' || Number.isNaN(Date.parse(start))) err('/scheduler/startDateUtc', 'must be a date-time');
    else if (Date.parse(start) <= Date.parse('0001-01-02T00:00:00Z'))
      err('/scheduler/startDateUtc', 'must be set: the default date-time (0001-01-01) is not a start');
    else out.startDateUtc = new Date(start).toISOString();
  } else if (cron === undefined || cron === null) err('/scheduler/startDateUtc', 'is required: when the schedule starts (UTC)');
  const userId = field(s, 'userId');
  if (userId !== undefined && userId !== null) {
    if (String(userId).toLowerCase() === EMPTY_GUID) err('/scheduler/userId', 'must not be the empty GUID (leave it out or null instead)');
    else out.userId = String(userId);
  }
  const notification = field(s, 'notification');
  if (notification !== undefined && notification !== null) {
    if (!isObject(notification)) err('/scheduler/notification', 'must be an object');
    else out.notification = notification as { [k: string]: Json };
  }
  return out;
}
