// Where automation runs execute: each in a worker thread of its own (ATRIUM_AUTOMATION_ISOLATION=thread,
// the default), so a run that escapes every bound is stopped without stopping the server. A thread has a
// heap limit (resourceLimits, ATRIUM_AUTOMATION_MEMORY_MB), answers pings while its event loop turns (a
// synchronous stall past ATRIUM_AUTOMATION_CPU_STALL stops it), and is stopped when a run in it is past its
// time limit; the runs of a stopped thread end Failed with the reason, and the next runs get a fresh thread.
// A few threads (ATRIUM_AUTOMATION_THREADS) are kept and share the runs (ATRIUM_AUTOMATION_CONCURRENCY in
// all), each going to the thread holding the fewest. The tenant's rows are reached through the run
// services' named operations, answered here for the tenant of a run the thread holds (decision 0042).
import { Worker } from 'node:worker_threads';
import type { AppContext } from '../platform/context.ts';
import { HttpProblem } from '../platform/errors.ts';
import type { Logger } from '../platform/log.ts';
import { automationRunDuration, automationRuns, automationRunsInFlight } from '../platform/metrics.ts';
import { traceparentOf } from '../platform/tracing.ts';
import { type Action, actionTypeOf } from './definition.ts';
import { type AutomationToRun, type HttpRequestValue, type RunOutcome, runAutomation } from './engine.ts';
import { ENGINE_ACTION_TYPES } from './handlers.ts';
import type { BackgroundWork, RunServices } from './run-services.ts';
import type { FromThread, RemoteMethod, ToThread } from './run-thread.ts';
import type { RunTrigger } from './runs.ts';
import { servicesFor } from './runtime.ts';

/** An idle thread is ended after this long without a run. */
const IDLE_MS = 60_000;
/** Past the run's own time limit, how long its thread has to answer before it is stopped. */
const DEADLINE_GRACE_MS = 5_000;
/** A thread still loading the engine: how much longer its runs may wait before it is stopped as stuck. */
const STARTUP_ALLOWANCE_MS = 60_000;

/** Whether every action of the automation (sub-workflows included) is one of the engine's own types. */
export function containable(automation: AutomationToRun): boolean {
  const d = automation.definition;
  for (const wf of [{ actions: d.actions }, ...(d.subWorkflows ?? [])])
    for (const a of wf.actions ?? []) if (!ENGINE_ACTION_TYPES.has(String(actionTypeOf(a as Action)))) return false;
  return true;
}

interface Job {
  automation: AutomationToRun;
  request: HttpRequestValue;
  signal?: AbortSignal;
  /** The traceparent of the run's span (the active one when the run was asked for): the thread's action spans continue it. */
  traceContext: string | null;
  resolve: (outcome: RunOutcome) => void;
}

interface Running {
  job: Job;
  startedOnUtc: Date;
  deadline: number;
  onAbort: () => void;
}

/** One run thread and the runs it holds. */
class RunThread {
  readonly worker: Worker;
  readonly runs = new Map<number, Running>();
  ready = false;
  stopped = false;
  lastPong = Date.now();
  idleTimer: NodeJS.Timeout | null = null;

  constructor(worker: Worker) {
    this.worker = worker;
  }
}

class RunPool {
  readonly #ctx: AppContext;
  readonly #services: RunServices;
  readonly #log: Logger;
  readonly #threads: RunThread[] = [];
  readonly #queue: Job[] = [];
  readonly #watch: NodeJS.Timeout;
  /**
   * The runs listening to each stop signal. One listener per signal, not one per run: a worker hands every
   * run the same signal, and adding and removing a listener per run on it was a visible part of a run's
   * cost in the main thread (bench/automations.ts).
   */
  readonly #bySignal = new Map<AbortSignal, { runs: Set<() => void>; listener: () => void }>();
  #nextRun = 0;
  #closed = false;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#services = servicesFor(ctx);
    this.#log = ctx.log.child({ component: 'automations' });
    // The watch: pings every thread that holds runs, stops one that does not answer or holds a run past its deadline.
    this.#watch = setInterval(() => this.#check(), Math.max(25, Math.floor(ctx.config.automationCpuStallMs / 4)));
    this.#watch.unref();
  }

  get #running(): number {
    let n = 0;
    for (const t of this.#threads) n += t.runs.size;
    return n;
  }

  run(job: Job): void {
    if (this.#closed) {
      job.resolve(failed(new Date(), 'the server is stopping'));
      return;
    }
    if (this.#running >= this.#ctx.config.automationConcurrency) {
      this.#queue.push(job);
      return;
    }
    this.#start(this.#pick(), job);
  }

  /** The thread with the fewest runs, a new one while there are fewer than ATRIUM_AUTOMATION_THREADS. */
  #pick(): RunThread {
    let best: RunThread | null = null;
    for (const t of this.#threads) if (!t.stopped && (!best || t.runs.size < best.runs.size)) best = t;
    if (best && (best.runs.size === 0 || this.#threads.length >= this.#ctx.config.automationThreads)) return best;
    return this.#spawn();
  }

  #spawn(): RunThread {
    const config = this.#ctx.config;
    const worker = new Worker(new URL('./run-thread.ts', import.meta.url), {
      workerData: { config: JSON.parse(JSON.stringify(config)) },
      resourceLimits: { maxOldGenerationSizeMb: config.automationMemoryMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
      // The thread's output goes to this process's.
      stdout: false,
      stderr: false,
    });
    worker.unref();
    const thread = new RunThread(worker);
    this.#threads.push(thread);
    worker.on('message', (m: FromThread) => {
      if (m.type === 'ready' || m.type === 'pong') {
        // A run's time starts once its thread has loaded the engine (a cold thread on a busy machine takes seconds).
        if (!thread.ready) for (const r of thread.runs.values()) r.deadline = Date.now() + config.automationRunTimeoutMs + DEADLINE_GRACE_MS;
        thread.ready = true;
        thread.lastPong = Date.now();
      } else if (m.type === 'done') this.#settle(thread, m.run, m.outcome);
      else if (m.type === 'call') {
        void this.#answer(worker, thread, m.call, m.method, m.args);
      }
    });
    worker.on('error', (err: Error & { code?: string }) => {
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY')
        this.#stopThread(
          thread,
          `the run's thread used more memory than its limit of ${config.automationMemoryMb} MB (ATRIUM_AUTOMATION_MEMORY_MB) and was stopped`,
        );
      else this.#stopThread(thread, `the run's thread failed: ${err.message}`);
    });
    worker.on('exit', (code) => this.#stopThread(thread, `the run's thread ended unexpectedly (exit code ${code})`));
    return thread;
  }

  #start(thread: RunThread, job: Job): void {
    if (thread.idleTimer) clearTimeout(thread.idleTimer);
    thread.idleTimer = null;
    const id = ++this.#nextRun;
    const onAbort = () => thread.worker.postMessage({ type: 'abort', run: id } satisfies ToThread);
    const deadline = Date.now() + this.#ctx.config.automationRunTimeoutMs + DEADLINE_GRACE_MS;
    if (thread.runs.size === 0) thread.lastPong = Date.now();
    thread.runs.set(id, { job, startedOnUtc: new Date(), deadline, onAbort });
    this.#listen(job.signal, onAbort);
    thread.worker.postMessage({
      type: 'run',
      run: id,
      automation: job.automation,
      request: job.request,
      apiBaseUrl: this.#services.apiBaseUrl(),
      traceContext: job.traceContext,
    } satisfies ToThread);
    if (job.signal?.aborted) onAbort();
  }

  #settle(thread: RunThread, id: number, outcome: RunOutcome): void {
    const r = thread.runs.get(id);
    if (!r) return;
    thread.runs.delete(id);
    this.#unlisten(r.job.signal, r.onAbort);
    r.job.resolve(outcome);
    if (thread.runs.size === 0 && !thread.stopped) {
      thread.idleTimer = setTimeout(() => this.#retire(thread), IDLE_MS);
      thread.idleTimer.unref();
    }
    this.#drain();
  }

  #listen(signal: AbortSignal | undefined, onAbort: () => void): void {
    if (!signal) return;
    let entry = this.#bySignal.get(signal);
    if (!entry) {
      const runs = new Set<() => void>();
      const listener = () => {
        for (const f of [...runs]) f();
      };
      entry = { runs, listener };
      this.#bySignal.set(signal, entry);
      signal.addEventListener('abort', listener, { once: true });
    }
    entry.runs.add(onAbort);
  }

  #unlisten(signal: AbortSignal | undefined, onAbort: () => void): void {
    if (!signal) return;
    const entry = this.#bySignal.get(signal);
    if (!entry) return;
    entry.runs.delete(onAbort);
    if (entry.runs.size === 0) {
      signal.removeEventListener('abort', entry.listener);
      this.#bySignal.delete(signal);
    }
  }

  /** Stops a thread: every run it holds ends Failed with the reason (they shared its heap and its CPU). */
  #stopThread(thread: RunThread, reason: string): void {
    if (thread.stopped) return;
    thread.stopped = true;
    const i = this.#threads.indexOf(thread);
    if (i >= 0) this.#threads.splice(i, 1);
    if (thread.idleTimer) clearTimeout(thread.idleTimer);
    const runs = [...thread.runs.values()];
    thread.runs.clear();
    if (runs.length > 0)
      this.#log.warn(
        { reason, runs: runs.map((r) => ({ automationId: r.job.automation.id, tenantId: r.job.automation.tenantId })) },
        'automation run thread stopped',
      );
    const also = runs.length > 1 ? ` (with the ${runs.length - 1} other runs it held)` : '';
    for (const r of runs) {
      this.#unlisten(r.job.signal, r.onAbort);
      r.job.resolve(failed(r.startedOnUtc, reason + also));
    }
    thread.worker.terminate().catch(() => {});
    this.#drain();
  }

  #retire(thread: RunThread): void {
    if (thread.runs.size > 0 || thread.stopped) return;
    thread.stopped = true;
    const i = this.#threads.indexOf(thread);
    if (i >= 0) this.#threads.splice(i, 1);
    void thread.worker.terminate();
  }

  #drain(): void {
    for (let n = this.#queue.length; n > 0 && this.#running < this.#ctx.config.automationConcurrency; n--) {
      const job = this.#queue.shift();
      if (job) this.#start(this.#pick(), job);
    }
  }

  #check(): void {
    const stall = this.#ctx.config.automationCpuStallMs;
    const now = Date.now();
    for (const t of [...this.#threads]) {
      if (t.runs.size === 0 || t.stopped) continue;
      // The clock starts once the thread has loaded the engine (that first load is not a run's CPU).
      if (!t.ready) t.lastPong = now;
      else if (now - t.lastPong > stall) {
        this.#stopThread(t, `the run's thread was busy for more than ${stall} ms without a pause (ATRIUM_AUTOMATION_CPU_STALL) and was stopped`);
        continue;
      }
      for (const r of t.runs.values())
        if (now > r.deadline + (t.ready ? 0 : STARTUP_ALLOWANCE_MS)) {
          this.#stopThread(
            t,
            `the run exceeded its time limit of ${this.#ctx.config.automationRunTimeoutMs} ms (ATRIUM_AUTOMATION_RUN_TIMEOUT) and its thread was stopped`,
          );
          break;
        }
      if (!t.stopped) t.worker.postMessage({ type: 'ping' } satisfies ToThread);
    }
  }

  /** Answers a run service the thread asked for, in the tenant of a run the thread holds. */
  async #answer(worker: Worker, thread: RunThread, call: number, method: RemoteMethod, args: unknown[]): Promise<void> {
    const s = this.#services;
    let msg: ToThread;
    try {
      const tenantId = String(args[0] === null || typeof args[0] !== 'object' ? args[0] : (args[0] as { tenantId?: unknown }).tenantId);
      if (method !== 'openCredentials' && ![...thread.runs.values()].some((r) => r.job.automation.tenantId === tenantId))
        throw new Error('no run of this tenant in the thread');
      let value: unknown;
      switch (method) {
        case 'loadAutomation':
          value = await s.loadAutomation(tenantId, String(args[1]));
          break;
        case 'configurationKey':
          value = await s.configurationKey(tenantId, String(args[1]));
          break;
        case 'appRoles':
          value = await s.appRoles(tenantId, String(args[1]));
          break;
        case 'namedQuery': {
          // The principal is rebuilt here from the tenant and its app's roles as stored.
          const appId = String((args[0] as { appId?: unknown } | null)?.appId);
          const roles = new Set(await s.appRoles(tenantId, appId));
          value = await s.namedQuery({ tenantId, appId, userId: null, userName: null, roles, via: 'token' }, String(args[1]), args[2]);
          break;
        }
        case 'documentView':
          value = await s.documentView(tenantId, String(args[1]), String(args[2]), String(args[3]));
          break;
        case 'issueAppToken':
          value = await s.issueAppToken(tenantId, String(args[1]));
          break;
        case 'enqueueBackgroundWork':
          value = await s.enqueueBackgroundWork(tenantId, args[1] as BackgroundWork);
          break;
        case 'openCredentials':
          if (![...thread.runs.values()].some((r) => r.job.automation.apiCredentials === args[0])) throw new Error('no run holds these credentials');
          value = await s.openCredentials(String(args[0]));
          break;
      }
      msg = { type: 'answer', call, ok: true, value };
    } catch (err) {
      msg =
        err instanceof HttpProblem
          ? { type: 'answer', call, ok: false, status: err.status, message: err.message, errors: err.errors }
          : { type: 'answer', call, ok: false, status: null, message: (err as Error).message ?? String(err) };
    }
    try {
      worker.postMessage(msg);
    } catch {}
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#watch);
    for (const job of this.#queue.splice(0)) job.resolve(failed(new Date(), 'the server is stopping'));
    const threads = this.#threads.splice(0);
    for (const t of threads) t.stopped = true;
    await Promise.allSettled(threads.map((t) => t.worker.terminate()));
  }
}

function failed(startedOnUtc: Date, error: string): RunOutcome {
  return { status: 'Failed', error, startedOnUtc, finishedOnUtc: new Date(), actions: [], result: null };
}

const pools = new WeakMap<AppContext, RunPool>();

/**
 * Runs an automation to its end, contained in a worker thread when isolation is on and every action is the
 * engine's own (an automation with a built-in action of another surface, UserFeed, runs in this thread).
 */
export function runContained(
  ctx: AppContext,
  automation: AutomationToRun,
  request: HttpRequestValue,
  opts: { signal?: AbortSignal; trigger?: RunTrigger } = {},
): Promise<RunOutcome> {
  const trigger = opts.trigger ?? 'manual';
  automationRunsInFlight.inc({ trigger });
  const started = performance.now();
  return startRun(ctx, automation, request, opts).then((outcome) => {
    const outcomeLabel = outcome.status === 'Succeeded' ? 'succeeded' : 'failed';
    automationRunsInFlight.dec({ trigger });
    automationRuns.inc({ trigger, outcome: outcomeLabel });
    automationRunDuration.observe({ trigger, outcome: outcomeLabel }, (performance.now() - started) / 1000);
    if (outcome.status === 'Failed')
      ctx.log.warn(
        { tenantId: automation.tenantId, automationId: automation.id, version: automation.version, trigger, error: outcome.error },
        'automation run failed',
      );
    return outcome;
  });
}

function startRun(ctx: AppContext, automation: AutomationToRun, request: HttpRequestValue, opts: { signal?: AbortSignal }): Promise<RunOutcome> {
  if (ctx.config.automationIsolation === 'none' || !containable(automation)) return runAutomation(automation, servicesFor(ctx), request, opts);
  let pool = pools.get(ctx);
  if (!pool) {
    pool = new RunPool(ctx);
    pools.set(ctx, pool);
  }
  const p = pool;
  const traceContext = traceparentOf();
  return new Promise((resolve) => p.run({ automation, request, signal: opts.signal, traceContext, resolve }));
}

export async function closeRunPool(ctx: AppContext): Promise<void> {
  const pool = pools.get(ctx);
  pools.delete(ctx);
  await pool?.close();
}
