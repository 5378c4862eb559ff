// Where automation runs execute: each in a worker thread of its own (ATRIUM_AUTOMATION_ISOLATION=thread,
// the default), so a run that escapes every bound is stopped without stopping the server. A thread has a
// heap limit (resourceLimits, ATRIUM_AUTOMATION_MEMORY_MB), answers pings while its event loop turns (a
// synchronous stall past ATRIUM_AUTOMATION_CPU_STALL stops it), and is stopped past the run's time limit;
// a stopped thread's run ends Failed with the reason, and the next run gets a fresh thread. Threads are
// kept and reused (one run at a time each, at most ATRIUM_AUTOMATION_CONCURRENCY of them). The tenant's
// rows are reached through the run services' named operations, answered here (decision 0042).
import { Worker } from 'node:worker_threads';
import type { AppContext } from '../platform/context.ts';
import { HttpProblem } from '../platform/errors.ts';
import type { Logger } from '../platform/log.ts';
import { type AutomationToRun, type HttpRequestValue, type RunOutcome, runAutomation } from './engine.ts';
import { ENGINE_ACTION_TYPES } from './handlers.ts';
import type { RunServices } from './run-services.ts';
import type { FromThread, RemoteMethod, ToThread } from './run-thread.ts';
import { servicesFor } from './runtime.ts';

/** An idle thread is ended after this long without a run. */
const IDLE_MS = 60_000;
/** Past the run's own time limit, how long its thread has to answer before it is stopped. */
const DEADLINE_GRACE_MS = 5_000;

/** Whether every action of the automation (sub-workflows included) is one of the engine's own types. */
export function containable(automation: AutomationToRun): boolean {
  const d = automation.definition;
  for (const wf of [{ actions: d.actions }, ...(d.subWorkflows ?? [])])
    for (const a of wf.actions ?? []) if (!ENGINE_ACTION_TYPES.has(String((a as { type?: unknown }).type))) return false;
  return true;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  idleTimer: NodeJS.Timeout | null;
}

interface Job {
  automation: AutomationToRun;
  request: HttpRequestValue;
  signal?: AbortSignal;
  resolve: (outcome: RunOutcome) => void;
}

class RunPool {
  readonly #ctx: AppContext;
  readonly #services: RunServices;
  readonly #log: Logger;
  readonly #idle: Slot[] = [];
  readonly #busy = new Set<Slot>();
  readonly #queue: Job[] = [];
  #closed = false;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#services = servicesFor(ctx);
    this.#log = ctx.log.child({ component: 'automations' });
  }

  run(job: Job): void {
    if (this.#closed) {
      job.resolve(failed(new Date(), 'the server is stopping'));
      return;
    }
    const slot = this.#idle.pop();
    if (slot) this.#start(slot, job);
    else if (this.#busy.size < this.#ctx.config.automationConcurrency) this.#start(this.#spawn(), job);
    else this.#queue.push(job);
  }

  #spawn(): Slot {
    const config = this.#ctx.config;
    const worker = new Worker(new URL('./run-thread.ts', import.meta.url), {
      workerData: { config: JSON.parse(JSON.stringify(config)) },
      resourceLimits: { maxOldGenerationSizeMb: config.automationMemoryMb, maxYoungGenerationSizeMb: 16, stackSizeMb: 4 },
      // The thread's own output goes to this process's; its environment is this process's.
      stdout: false,
      stderr: false,
    });
    worker.unref();
    // A thread's error after its run was settled (it was being stopped) must not go unheard: an 'error'
    // event without a listener would end this process.
    worker.on('error', (err) => this.#log.debug({ err }, 'automation run thread ended with an error'));
    const slot: Slot = { worker, ready: false, idleTimer: null };
    // The stall clock starts once the thread has loaded the engine (that first load is not the run's CPU).
    worker.on('message', (m: FromThread) => {
      if (m.type === 'ready') slot.ready = true;
    });
    return slot;
  }

  #start(slot: Slot, job: Job): void {
    if (slot.idleTimer) clearTimeout(slot.idleTimer);
    slot.idleTimer = null;
    this.#busy.add(slot);
    const { worker } = slot;
    const config = this.#ctx.config;
    const startedOnUtc = new Date();
    let lastPong = Date.now();
    let settled = false;
    let stopReason: string | null = null;

    const finish = (outcome: RunOutcome, reuse: boolean) => {
      if (settled) return;
      settled = true;
      clearInterval(pinger);
      clearTimeout(deadline);
      job.signal?.removeEventListener('abort', onAbort);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      this.#busy.delete(slot);
      job.resolve(outcome);
      if (reuse && !this.#closed) this.#release(slot);
      else {
        worker.terminate().catch(() => {});
        this.#next();
      }
    };
    const stop = (reason: string) => {
      if (settled || stopReason) return;
      stopReason = reason;
      this.#log.warn({ automationId: job.automation.id, tenantId: job.automation.tenantId, reason }, 'automation run stopped');
      finish(failed(startedOnUtc, reason), false);
    };
    const onMessage = (m: FromThread) => {
      if (m.type === 'pong' || m.type === 'ready') lastPong = Date.now();
      else if (m.type === 'done') finish(m.outcome, true);
      else if (m.type === 'call') void this.#answer(worker, job.automation.tenantId, m.call, m.method, m.args);
    };
    const onError = (err: Error & { code?: string }) => {
      if (err.code === 'ERR_WORKER_OUT_OF_MEMORY')
        stop(`the run used more memory than its limit of ${config.automationMemoryMb} MB (ATRIUM_AUTOMATION_MEMORY_MB) and was stopped`);
      else stop(`the run's thread failed: ${err.message}`);
    };
    const onExit = (code: number) => stop(`the run's thread ended unexpectedly (exit code ${code})`);
    const onAbort = () => worker.postMessage({ type: 'abort' } satisfies ToThread);

    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.on('exit', onExit);
    job.signal?.addEventListener('abort', onAbort, { once: true });
    if (job.signal?.aborted) onAbort();

    const stall = config.automationCpuStallMs;
    const pinger = setInterval(
      () => {
        if (!slot.ready) lastPong = Date.now();
        else if (Date.now() - lastPong > stall)
          stop(`the run kept its thread busy for more than ${stall} ms without a pause (ATRIUM_AUTOMATION_CPU_STALL) and was stopped`);
        else worker.postMessage({ type: 'ping' } satisfies ToThread);
      },
      Math.max(25, Math.floor(stall / 4)),
    );
    pinger.unref();
    const deadline = setTimeout(
      () => stop(`the run exceeded its time limit of ${config.automationRunTimeoutMs} ms (ATRIUM_AUTOMATION_RUN_TIMEOUT) and its thread was stopped`),
      config.automationRunTimeoutMs + DEADLINE_GRACE_MS,
    );
    deadline.unref();
    worker.postMessage({
      type: 'run',
      automation: job.automation,
      request: job.request,
      apiBaseUrl: this.#services.apiBaseUrl(),
    } satisfies ToThread);
  }

  #release(slot: Slot): void {
    const job = this.#queue.shift();
    if (job) {
      this.#start(slot, job);
      return;
    }
    slot.idleTimer = setTimeout(() => {
      const i = this.#idle.indexOf(slot);
      if (i >= 0) this.#idle.splice(i, 1);
      void slot.worker.terminate();
    }, IDLE_MS);
    slot.idleTimer.unref();
    this.#idle.push(slot);
  }

  #next(): void {
    const job = this.#queue.shift();
    if (job) this.run(job);
  }

  /** Answers a run service the thread asked for, always in the run's own tenant. */
  async #answer(worker: Worker, tenantId: string, call: number, method: RemoteMethod, args: unknown[]): Promise<void> {
    const s = this.#services;
    let msg: ToThread;
    try {
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
          // The principal is rebuilt here from the run's tenant and its app's roles as stored.
          const appId = String((args[0] as { appId?: unknown } | null)?.appId);
          const roles = new Set(await s.appRoles(tenantId, appId));
          value = await s.namedQuery({ tenantId, appId, userId: null, userName: null, roles, via: 'token' }, String(args[1]), args[2]);
          break;
        }
        case 'issueAppToken':
          value = await s.issueAppToken(tenantId, String(args[1]));
          break;
        case 'openCredentials':
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
    for (const job of this.#queue.splice(0)) job.resolve(failed(new Date(), 'the server is stopping'));
    const all = [...this.#idle.splice(0), ...this.#busy];
    await Promise.allSettled(all.map((s) => s.worker.terminate()));
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
  opts: { signal?: AbortSignal } = {},
): Promise<RunOutcome> {
  if (ctx.config.automationIsolation === 'none' || !containable(automation)) return runAutomation(automation, servicesFor(ctx), request, opts);
  let pool = pools.get(ctx);
  if (!pool) {
    pool = new RunPool(ctx);
    pools.set(ctx, pool);
  }
  const p = pool;
  return new Promise((resolve) => p.run({ automation, request, signal: opts.signal, resolve }));
}

export async function closeRunPool(ctx: AppContext): Promise<void> {
  const pool = pools.get(ctx);
  pools.delete(ctx);
  await pool?.close();
}
