// The automation worker (processes with ATRIUM_ROLE worker or all): runs the invocations the webhook
// dispatcher made for IsAutomation subscriptions, and scheduled automations.
// - Webhook runs are at-least-once like URL deliveries: an invocation is leased (lease_token/lease_until)
//   before its run and settled after, so a worker that dies mid-run leaves a lease that lapses, and the
//   event runs again (the run records the event id, so a repeat can be recognised).
// - A scheduler occurrence is claimed with FOR UPDATE SKIP LOCKED on the automation's next_fire_utc and
//   written as a run unique per (automation, fire time): each fire time runs once across workers.
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { CLIENT_DOCUMENT_TYPES, type DocumentDef, documentView, requireRead } from '../client-api/service.ts';
import { appRoles } from '../platform/auth/service.ts';
import type { AppContext } from '../platform/context.ts';
import type { Jobs } from '../platform/jobs/jobs.ts';
import type { Logger } from '../platform/log.ts';
import { contextOf, failSpan, SpanKind, tracingOn, withSpan } from '../platform/tracing.ts';
import { defineBackgroundWork } from './background.ts';
import { closeRunPool } from './contained.ts';
import type { Definition } from './definition.ts';
import type { AutomationToRun, HttpRequestValue, RunOutcome } from './engine.ts';
import { runAndRecord } from './run-and-record.ts';
import type { runColumns } from './runs.ts';
import { toRunnable } from './runs.ts';
import { closeServices } from './runtime.ts';
import { nextFireTime } from './scheduler.ts';
import { sweepRuns } from './service.ts';

const IDLE_CLAIM_MS = 100;
const IDLE_SCHEDULER_MS = 1000;
const FLUSH_LINGER_MS = 20;
const FLUSH_BATCH = 200;
const SWEEP_EVERY_MS = 60_000;
const RESPONSE_BODY_LIMIT = 4096;
/** An event's document larger than this (as JSON) is not added to the run's Body (its id and the event still are). */
const DOCUMENT_BODY_LIMIT = 256 * 1024;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** At stop, runs in flight get this long to finish; the rest are stopped and their events run again elsewhere. */
const STOP_GRACE_MS = 10_000;

interface Claimed {
  tenant_id: string;
  id: string;
  event_id: string | null;
  payload: string;
  attempt_count: number;
  automation_id: string | null;
  trace_context: string | null;
}

interface Settled {
  invocation: Claimed;
  outcome: RunOutcome;
  /** The automation run's row (runAndRecord's 'caller' recording); null when there was no automation to run. */
  run: ReturnType<typeof runColumns> | null;
}

export class AutomationWorker {
  readonly #ctx: AppContext;
  readonly #log: Logger;
  readonly #stop = new AbortController();
  /** Aborts the runs still going when the stop's grace period is over. */
  readonly #abortRuns = new AbortController();
  /** Invocations whose runs were stopped at shutdown: their leases are handed back, unrecorded. */
  readonly #abandoned: Claimed[] = [];
  readonly #inFlight = new Set<Promise<void>>();
  readonly #leaseMs: number;
  #settled: Settled[] = [];
  #loops: Promise<void>[] = [];
  #wakeClaim: (() => void) | null = null;
  #lastSweep = 0;

  constructor(ctx: AppContext) {
    this.#ctx = ctx;
    this.#log = ctx.log.child({ component: 'automations' });
    // A run ends by its time limit; the lease outlasts it so no other worker starts the same event meanwhile.
    this.#leaseMs = ctx.config.automationRunTimeoutMs + 60_000;
  }

  start(): void {
    this.#loops = [
      this.#loop('claim', () => this.#claimTick()),
      this.#loop('flush', () => this.#flushTick()),
      this.#loop('scheduler', () => this.#schedulerTick()),
    ];
  }

  async stop(): Promise<void> {
    if (this.#stop.signal.aborted) return;
    this.#stop.abort();
    this.#wakeClaim?.();
    await Promise.allSettled(this.#loops);
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([Promise.allSettled([...this.#inFlight]), new Promise((resolve) => (grace = setTimeout(resolve, STOP_GRACE_MS)))]);
    clearTimeout(grace);
    this.#abortRuns.abort();
    await Promise.allSettled([...this.#inFlight]);
    try {
      while (this.#settled.length > 0) await this.#flush();
      if (this.#abandoned.length > 0)
        await sql`update webhook_invocations set lease_token = null, lease_until = null
          where (tenant_id, id) in (select * from unnest(${this.#abandoned.map((a) => a.tenant_id)}::uuid[], ${this.#abandoned.map((a) => a.id)}::uuid[]))`.execute(
          this.#ctx.db.kysely,
        );
    } catch (err) {
      this.#log.warn({ err }, 'automation runs not recorded at stop; their invocations run again when the leases lapse');
    }
  }

  get #free(): number {
    return this.#ctx.config.automationConcurrency - this.#inFlight.size;
  }

  async #loop(name: string, tick: () => Promise<number>): Promise<void> {
    while (!this.#stop.signal.aborted) {
      let idle: number;
      try {
        idle = await tick();
      } catch (err) {
        if (this.#stop.signal.aborted) return;
        this.#log.warn({ loop: name, err }, 'automation loop failed; it rests a second and goes on');
        idle = 1000;
      }
      if (idle > 0 && !this.#stop.signal.aborted)
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(timer);
            if (name === 'claim') this.#wakeClaim = null;
            this.#stop.signal.removeEventListener('abort', done);
            resolve();
          };
          const timer = setTimeout(done, idle);
          if (name === 'claim') this.#wakeClaim = done;
          this.#stop.signal.addEventListener('abort', done);
        });
    }
  }

  /** Leases waiting invocations of automation subscriptions, as many as there are free slots, and starts their runs. */
  async #claimTick(): Promise<number> {
    const free = this.#free;
    if (free <= 0) {
      await Promise.race([...this.#inFlight]);
      return 0;
    }
    const token = randomUUID();
    const { rows } = await sql<Claimed>`
      update webhook_invocations i
      set lease_token = ${token}::uuid, lease_until = now() + ${this.#leaseMs} * interval '1 millisecond', attempt_count = i.attempt_count + 1
      from (
        select tenant_id, id from webhook_invocations
        where destination = 'automation' and status = 'Pending' and (lease_until is null or lease_until < now())
        order by seq
        limit ${free}
        for update skip locked
      ) c, webhook_subscriptions s
      where i.tenant_id = c.tenant_id and i.id = c.id and s.tenant_id = i.tenant_id and s.id = i.subscription_id
      returning i.tenant_id, i.id, i.event_id, i.payload, i.attempt_count, s.automation_id, i.trace_context`.execute(this.#ctx.db.kysely);
    if (rows.length === 0) return IDLE_CLAIM_MS;
    const automations = await this.#load(rows);
    const documents = await this.#documents(rows, automations);
    for (const inv of rows)
      this.#track(this.#runInvocation(inv, automations.get(`${inv.tenant_id}/${inv.automation_id}`) ?? null, documents.get(inv.id) ?? null));
    return rows.length === free ? 0 : IDLE_CLAIM_MS;
  }

  /** The automations a batch of invocations names, in one read (as the owner: the batch spans tenants). */
  async #load(rows: Claimed[]): Promise<Map<string, AutomationToRun>> {
    const wanted = rows.filter((r) => r.automation_id);
    const out = new Map<string, AutomationToRun>();
    if (wanted.length === 0) return out;
    const { rows: found } = await sql<{
      tenant_id: string;
      id: string;
      version: number;
      definition: Definition;
      run_as_app_id: string | null;
      run_as_user_id: string | null;
      api_credentials: string | null;
    }>`
      select a.tenant_id, a.id, a.version, a.definition, a.run_as_app_id, a.run_as_user_id, a.api_credentials from automations a
      where a.active and (a.tenant_id, a.id) in (select * from unnest(${wanted.map((r) => r.tenant_id)}::uuid[], ${wanted.map((r) => r.automation_id)}::uuid[]))`.execute(
      this.#ctx.db.kysely,
    );
    for (const a of found) out.set(`${a.tenant_id}/${a.id}`, toRunnable(a));
    return out;
  }

  /**
   * The documents the batch's events are about, as the Client API shows them (GET /api/v3/<type>s/{id}), read
   * as the app each automation acts as (its Read role; none: no document) in one transaction per tenant.
   * What the platform hands an event-triggered automation as Body is the document's fields (§6.3, §8.1:
   * `Body.Name` of a created project). A document that is gone (Deleted) or too large is left out.
   */
  async #documents(rows: Claimed[], automations: Map<string, AutomationToRun>): Promise<Map<string, Record<string, unknown>>> {
    const out = new Map<string, Record<string, unknown>>();
    const byTenant = new Map<string, { inv: Claimed; appId: string; type: string; id: string }[]>();
    for (const inv of rows) {
      const appId = automations.get(`${inv.tenant_id}/${inv.automation_id}`)?.runAsAppId;
      if (!appId) continue;
      const document = documentOf(inv.payload);
      if (!document || !CLIENT_DOCUMENT_TYPES.find(document.type)) continue;
      const list = byTenant.get(inv.tenant_id) ?? [];
      list.push({ inv, appId, ...document });
      byTenant.set(inv.tenant_id, list);
    }
    for (const [tenantId, list] of byTenant)
      try {
        await this.#ctx.db.withTenant(tenantId, async (trx) => {
          const roles = new Map<string, Set<string>>();
          const readable: { item: (typeof list)[number]; def: DocumentDef }[] = [];
          for (const item of list) {
            const def = CLIENT_DOCUMENT_TYPES.find(item.type);
            if (!def) continue;
            let appRoleSet = roles.get(item.appId);
            if (!appRoleSet) {
              appRoleSet = new Set(await appRoles(trx, item.appId));
              roles.set(item.appId, appRoleSet);
            }
            try {
              requireRead({ tenantId, appId: item.appId, userId: null, userName: null, roles: appRoleSet, via: 'token' }, def);
              readable.push({ item, def });
            } catch {}
          }
          // Which of them exist, one read per table: most events of a busy tenant are of a few types.
          const existing = new Set<string>();
          for (const def of new Set(readable.map((r) => r.def))) {
            const ids = readable.filter((r) => r.def === def).map((r) => r.item.id.toLowerCase());
            const { rows: found } = await sql<{ id: string }>`select id from ${sql.table(def.table)} where id = any(${ids}::uuid[])`.execute(trx);
            for (const f of found) existing.add(`${def.table}/${f.id}`);
          }
          for (const { item, def } of readable) {
            if (!existing.has(`${def.table}/${item.id.toLowerCase()}`)) continue;
            const view = await documentView(trx, def, item.id);
            if (JSON.stringify(view).length <= DOCUMENT_BODY_LIMIT) out.set(item.inv.id, view);
          }
        });
      } catch (err) {
        // The runs go on with the event as it is: a document that cannot be read is not a reason to hold them.
        this.#log.warn({ err, tenantId }, "automation runs: the events' documents could not be read; their Body has the event's fields only");
      }
    return out;
  }

  #track(task: Promise<void>): void {
    const t = task
      .catch((err) => this.#log.error({ err }, 'automation run failed before it was recorded'))
      .finally(() => {
        this.#inFlight.delete(t);
        if (this.#free > 0) this.#wakeClaim?.();
      });
    this.#inFlight.add(t);
  }

  async #runInvocation(inv: Claimed, automation: AutomationToRun | null, document: Record<string, unknown> | null): Promise<void> {
    if (!automation) {
      const now = new Date();
      const outcome: RunOutcome = {
        status: 'Failed',
        error: `the subscription's automation ${inv.automation_id ?? '(none)'} does not exist or is not active`,
        startedOnUtc: now,
        finishedOnUtc: now,
        actions: [],
        result: null,
      };
      this.#settled.push({ invocation: inv, outcome, run: null });
      return;
    }
    let body: unknown = inv.payload;
    try {
      body = eventBody(JSON.parse(inv.payload), document);
    } catch {}
    const request: HttpRequestValue = {
      Scheme: 'https',
      Host: new URL(this.#ctx.config.publicUrl).host,
      Path: `/api/integration-workflows/${automation.id}/execute`,
      Method: 'POST',
      Query: {},
      Headers: { 'content-type': 'application/json', 'webhook-id': inv.id },
      Body: body,
    };
    // Traced: the run continues the trace of the event's dispatch (and so of the request that raised it).
    // Recorded by the caller: a batch of runs is written with their invocations' outcome (#flush).
    const { outcome, values } = await tracedRun(automation, inv.trace_context, inv.id, () =>
      runAndRecord(this.#ctx, automation, request, {
        trigger: 'webhook',
        recording: 'caller',
        eventId: inv.event_id,
        invocationId: inv.id,
        signal: this.#abortRuns.signal,
      }),
    );
    // Stopped by the shutdown, not by anything the automation did: the event runs again on another worker.
    if (this.#abortRuns.signal.aborted && outcome.status === 'Failed') {
      this.#abandoned.push(inv);
      return;
    }
    this.#settled.push({ invocation: inv, outcome, run: values });
  }

  async #flushTick(): Promise<number> {
    if (this.#settled.length === 0) return FLUSH_LINGER_MS;
    await this.#flush();
    return this.#settled.length >= FLUSH_BATCH ? 0 : FLUSH_LINGER_MS;
  }

  /** Records finished webhook runs a batch at a time: the runs, the invocations' outcome, one attempt each. */
  async #flush(): Promise<void> {
    const batch = this.#settled.splice(0, FLUSH_BATCH);
    if (batch.length === 0) return;
    const runs = batch.flatMap((s) => (s.run ? [{ ...s.run, actions: s.outcome.actions, result: s.outcome.result }] : []));
    const settled = batch.map((s) => ({
      tenant_id: s.invocation.tenant_id,
      id: s.invocation.id,
      status: s.outcome.status,
      attempt: s.invocation.attempt_count,
      started_on_utc: s.outcome.startedOnUtc.toISOString(),
      duration_ms: s.outcome.finishedOnUtc.getTime() - s.outcome.startedOnUtc.getTime(),
      status_code: s.outcome.result?.statusCode ?? null,
      response_body: s.outcome.result ? responseText(s.outcome.result.body) : null,
      error: s.outcome.error,
    }));
    try {
      await this.#ctx.db.kysely.transaction().execute(async (trx) => {
        if (runs.length)
          await sql`
          insert into automation_runs (tenant_id, automation_id, version, trigger, status, event_id, invocation_id, started_on_utc, finished_on_utc, error, actions, result)
          select x.tenant_id, x.automation_id, x.version, x.trigger, x.status, x.event_id, x.invocation_id, x.started_on_utc, x.finished_on_utc, x.error,
            coalesce(x.actions, '[]'::jsonb), x.result
          from jsonb_to_recordset(${JSON.stringify(runs)}::jsonb) as x(tenant_id uuid, automation_id uuid, version integer, trigger text, status text,
            event_id uuid, invocation_id uuid, started_on_utc timestamptz, finished_on_utc timestamptz, error text, actions jsonb, result jsonb)`.execute(trx);
        await sql`
          with x as (
            select * from jsonb_to_recordset(${JSON.stringify(settled)}::jsonb) as x(tenant_id uuid, id uuid, status text, attempt integer,
              started_on_utc timestamptz, duration_ms integer, status_code integer, response_body text, error text)
          ), done as (
            update webhook_invocations i set status = x.status, completed_on_utc = now(), lease_token = null, lease_until = null
            from x where i.tenant_id = x.tenant_id and i.id = x.id
            returning i.tenant_id, i.id
          )
          insert into webhook_attempts (tenant_id, invocation_id, attempt, started_on_utc, duration_ms, status_code, response_body, error)
          select x.tenant_id, x.id, x.attempt, x.started_on_utc, x.duration_ms, x.status_code, x.response_body, x.error
          from x join done using (tenant_id, id)
          on conflict (tenant_id, invocation_id, attempt) do nothing`.execute(trx);
      });
    } catch (err) {
      // Not recorded: the leases lapse and these events run again (at-least-once).
      this.#log.error({ err, runs: batch.length }, 'automation runs not recorded; their invocations run again when the leases lapse');
    }
  }

  /** Claims the scheduler occurrences that are due, one run row each, and starts them. */
  async #schedulerTick(): Promise<number> {
    if (Date.now() - this.#lastSweep > SWEEP_EVERY_MS) {
      this.#lastSweep = Date.now();
      await this.#sweepStuck();
    }
    if (this.#free <= 0) return IDLE_SCHEDULER_MS;
    const claimed = await this.#ctx.db.kysely.transaction().execute(async (trx) => {
      const { rows } = await sql<{
        tenant_id: string;
        id: string;
        version: number;
        definition: Definition;
        next_fire_utc: Date;
        created_on_utc: Date;
        run_as_app_id: string | null;
        run_as_user_id: string | null;
        api_credentials: string | null;
      }>`
        select tenant_id, id, version, definition, next_fire_utc, created_on_utc, run_as_app_id, run_as_user_id, api_credentials from automations
        where active and next_fire_utc <= now()
        order by next_fire_utc
        limit ${this.#free}
        for update skip locked`.execute(trx);
      const out: { automation: AutomationToRun; runId: string; fireTime: Date }[] = [];
      const now = new Date();
      for (const a of rows) {
        const next = nextFireTime(a.definition.scheduler, now, a.created_on_utc);
        await sql`update automations set next_fire_utc = ${next} where tenant_id = ${a.tenant_id} and id = ${a.id}`.execute(trx);
        const { rows: inserted } = await sql<{ id: string }>`
          insert into automation_runs (tenant_id, automation_id, version, trigger, fire_time_utc)
          values (${a.tenant_id}, ${a.id}, ${a.version}, 'schedule', ${a.next_fire_utc})
          on conflict (tenant_id, automation_id, fire_time_utc) do nothing
          returning id`.execute(trx);
        if (inserted[0]) out.push({ automation: toRunnable(a), runId: inserted[0].id, fireTime: a.next_fire_utc });
      }
      return out;
    });
    for (const c of claimed) this.#track(this.#runScheduled(c.automation, c.runId, c.fireTime));
    return claimed.length > 0 ? 0 : IDLE_SCHEDULER_MS;
  }

  async #runScheduled(automation: AutomationToRun, runId: string, fireTime: Date): Promise<void> {
    const request: HttpRequestValue = {
      Scheme: 'internal',
      Host: 'atrium',
      Path: `/api/v3/automations/${automation.id}/run`,
      Method: 'POST',
      Query: {},
      Headers: { 'x-fire-time-utc': fireTime.toISOString() },
      Body: { FireTimeUtc: fireTime.toISOString() },
    };
    // The run's row is the one the claim wrote (its fire time makes an occurrence run once).
    await tracedRun(automation, null, null, () =>
      runAndRecord(this.#ctx, automation, request, { trigger: 'schedule', recording: { claimed: runId }, signal: this.#abortRuns.signal }),
    );
  }

  /** Scheduled runs whose worker died stay Running; past their time limit they are marked Failed. */
  async #sweepStuck(): Promise<void> {
    const limitMs = this.#ctx.config.automationRunTimeoutMs + 5 * 60_000;
    await sql`
      update automation_runs set status = 'Failed', finished_on_utc = now(), error = 'the worker running it stopped before it finished'
      where status = 'Running' and started_on_utc < now() - ${limitMs} * interval '1 millisecond'`.execute(this.#ctx.db.kysely);
  }
}

/** The document an event envelope names (its type and a well-formed id), or null. */
function documentOf(payload: string): { type: string; id: string } | null {
  try {
    const d = (JSON.parse(payload) as { document?: { type?: unknown; id?: unknown } | null }).document;
    return d && typeof d.type === 'string' && typeof d.id === 'string' && UUID.test(d.id) ? { type: d.type, id: d.id } : null;
  } catch {
    return null;
  }
}

/**
 * What an event hands an automation as `['#HttpRequest'].Body`: the platform hands the document's fields
 * (`Body.Name`, `Body.Id`, §6.3/§8.1). Body is the envelope URL subscriptions receive (`id`, `action`,
 * `actionType`, `document`, `detail`, `occurredOnUtc`, …, all still read as before), with the document's
 * id as `Id`, then the document's fields as the Client API shows it (`Name`, `Number`, `Stage`, … when the
 * worker could read it: `document`), then the detail's fields, each added where it does not collide with a
 * name already there (compared without regard to case). Decision 0050.
 */
export function eventBody(envelope: unknown, document: Record<string, unknown> | null = null): unknown {
  if (envelope === null || typeof envelope !== 'object' || Array.isArray(envelope)) return envelope;
  const e = envelope as Record<string, unknown>;
  const out: Record<string, unknown> = { ...e };
  const doc = e.document as { id?: unknown } | null | undefined;
  if (doc && typeof doc === 'object' && doc.id !== undefined && !Object.hasOwn(out, 'Id')) out.Id = doc.id;
  const taken = new Set(Object.keys(out).map((k) => k.toLowerCase()));
  const add = (fields: unknown) => {
    if (!fields || typeof fields !== 'object' || Array.isArray(fields)) return;
    for (const [k, v] of Object.entries(fields))
      if (!taken.has(k.toLowerCase())) {
        out[k] = v;
        taken.add(k.toLowerCase());
      }
  };
  add(document);
  add(e.detail);
  return out;
}

/** The run's span (decision 0048): its actions' spans are its children; untraced, the run as it is. */
function tracedRun<R extends { outcome: RunOutcome }>(
  automation: AutomationToRun,
  traceContext: string | null,
  invocationId: string | null,
  run: () => Promise<R>,
): Promise<R> {
  if (!tracingOn()) return run();
  const attributes = { 'atrium.tenant.id': automation.tenantId, 'atrium.automation.id': automation.id, 'atrium.automation.version': automation.version };
  return withSpan(
    'automation run',
    {
      kind: SpanKind.CONSUMER,
      parent: contextOf(traceContext),
      attributes: invocationId ? { ...attributes, 'atrium.webhook.invocation.id': invocationId } : attributes,
    },
    async (span) => {
      const ran = await run();
      span?.setAttribute('atrium.automation.status', ran.outcome.status);
      if (ran.outcome.status === 'Failed') failSpan(span, ran.outcome.error ?? 'failed');
      return ran;
    },
  );
}

function responseText(body: unknown): string | null {
  if (body === null || body === undefined) return null;
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return text.length > RESPONSE_BODY_LIMIT ? text.slice(0, RESPONSE_BODY_LIMIT) : text;
}

export function defineAutomations(jobs: Jobs, ctx: AppContext): void {
  defineBackgroundWork(jobs, ctx);
  if (ctx.config.role !== 'api') {
    const worker = new AutomationWorker(ctx);
    worker.start();
    jobs.onStop('before', () => worker.stop());
  }
  jobs.onStop('after', async () => {
    await closeRunPool(ctx);
    await closeServices(ctx);
  });
}

/** The maintenance job's sweep: finished runs past ATRIUM_EVENT_RETENTION. */
export const sweepAutomationRuns = (ctx: AppContext): Promise<number> => sweepRuns(ctx.db.kysely, ctx.config.eventRetentionMs);
