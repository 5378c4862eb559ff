// The webhook worker: dispatches outbox events into invocations, delivers them (signed, with
// concurrency), records every attempt and schedules retries. At-least-once: an invocation is leased
// before its attempt and settled after it, so a worker killed mid-delivery leaves a lease that expires
// and the invocation is delivered again, under the same webhook-id.
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { Agent } from 'undici';
import type { Config } from '../config.ts';
import type { SecretBox } from '../platform/auth/hashing.ts';
import type { Trx } from '../platform/db/database.ts';
import type { Database } from '../platform/db/schema.ts';
import { appendEvents } from '../platform/events/outbox.ts';
import { dispatchOnce, type LeasedInvocation } from './dispatch.ts';
import { createOutboundAgent, OutboundRefused } from './outbound.ts';
import { signatureHeaders, signingKey } from './sign.ts';

const IDLE_DISPATCH_MS = 50;
const IDLE_CLAIM_MS = 100;
const DISPATCH_BATCH = 1000;
/** Bytes of a response kept on the attempt; the rest of a large answer is not read. */
export const RESPONSE_KEEP_BYTES = 4096;
const RESPONSE_READ_LIMIT = 64 * 1024;

export interface AttemptOutcome {
  statusCode: number | null;
  responseBody: string | null;
  error: string | null;
  retryAfterMs: number | null;
  refused: boolean;
}

/** Delay before the next attempt: the schedule's entry ±20%, or Retry-After within twice the entry. */
export function nextDelayMs(scheduledMs: number, retryAfterMs: number | null, random = Math.random()): number {
  if (retryAfterMs !== null) return Math.max(0, Math.min(retryAfterMs, 2 * scheduledMs));
  return Math.round(scheduledMs * (0.8 + 0.4 * random));
}

/** Retry-After as seconds or an HTTP date, in ms; null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = Array.isArray(value) ? value[0] : value;
  if (!text) return null;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

interface Settled {
  invocation: LeasedInvocation;
  attempt: number;
  startedOnUtc: Date;
  durationMs: number;
  outcome: AttemptOutcome;
  status: 'Succeeded' | 'Retrying' | 'Failed';
  nextAttemptOnUtc: Date | null;
  roundAttempts: number;
}

export interface WebhookWorkerOptions {
  connectionString: string;
  box: SecretBox;
  config: Config;
  log?: (line: string) => void;
}

export class WebhookWorker {
  readonly #db: Kysely<Database>;
  readonly #box: SecretBox;
  readonly #config: Config;
  readonly #agent: Agent;
  readonly #log: (line: string) => void;
  readonly #leaseMs: number;
  readonly #stop = new AbortController();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #secrets = new Map<string, { key: Buffer; plain: string }>();
  readonly #queue: LeasedInvocation[] = [];
  #settled: Settled[] = [];
  #loops: Promise<void>[] = [];
  #wakeClaim: (() => void) | null = null;
  #wakeFlush: (() => void) | null = null;

  constructor(opts: WebhookWorkerOptions) {
    const pool = new pg.Pool({ connectionString: opts.connectionString, max: 4, application_name: 'atrium-webhooks' });
    pool.on('error', () => {});
    this.#db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    this.#box = opts.box;
    this.#config = opts.config;
    this.#log = opts.log ?? (() => {});
    // Long enough for an attempt to time out and be recorded; after it, another worker may take over.
    this.#leaseMs = opts.config.webhookTimeoutMs + 5000;
    this.#agent = createOutboundAgent({
      allowPrivate: opts.config.webhookAllowPrivateNetworks,
      connections: opts.config.webhookConcurrency,
      connectTimeoutMs: Math.min(opts.config.webhookTimeoutMs, 10_000),
    });
  }

  start(): void {
    this.#loops = [this.#loop('dispatch', () => this.#dispatchTick()), this.#loop('claim', () => this.#claimTick()), this.#flushLoop()];
  }

  /** Stops taking work, lets attempts in flight finish (they are bounded by the timeout) and records them. */
  async stop(): Promise<void> {
    if (this.#stop.signal.aborted) return;
    this.#stop.abort();
    this.#wakeClaim?.();
    this.#wakeFlush?.();
    await Promise.allSettled(this.#loops);
    await Promise.allSettled([...this.#inFlight]);
    await this.#flush().catch(() => {});
    await this.#releaseQueued().catch(() => {});
    await this.#agent.close().catch(() => {});
    await this.#db.destroy();
  }

  /** Leased but not started: handed back so that another worker need not wait for the leases to expire. */
  async #releaseQueued(): Promise<void> {
    const queued = this.#queue.splice(0);
    if (queued.length === 0) return;
    await sql`update webhook_invocations i set lease_until = null, lease_token = null
      from unnest(${queued.map((q) => q.tenantId)}::uuid[], ${queued.map((q) => q.id)}::uuid[], ${queued.map((q) => q.leaseToken)}::uuid[]) as k(tenant_id, id, token)
      where i.tenant_id = k.tenant_id and i.id = k.id and i.lease_token = k.token`.execute(this.#db);
  }

  /** Leases this process may still take: up to twice the concurrency, so claims come in batches. */
  get #free(): number {
    return 2 * this.#config.webhookConcurrency - this.#inFlight.size - this.#queue.length;
  }

  async #loop(name: string, tick: () => Promise<number>): Promise<void> {
    while (!this.#stop.signal.aborted) {
      let idleMs = 0;
      try {
        idleMs = await tick();
      } catch (err) {
        if (this.#stop.signal.aborted) return;
        this.#log(`webhooks ${name}: ${(err as Error).message}`);
        idleMs = 1000;
      }
      if (idleMs > 0) await this.#idle(idleMs, name === 'claim');
    }
  }

  #idle(ms: number, claim: boolean): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (claim) this.#wakeClaim = null;
        this.#stop.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      if (claim) this.#wakeClaim = done;
      this.#stop.signal.addEventListener('abort', done);
    });
  }

  /** One dispatcher pass; answers how long to rest (0: the outbox has more right now). */
  async #dispatchTick(): Promise<number> {
    const result = await dispatchOnce(this.#db, {
      publicUrl: this.#config.publicUrl,
      batchSize: DISPATCH_BATCH,
      firstDelayMs: this.#config.webhookRetryScheduleMs[0] ?? 0,
      leaseCount: Math.max(0, this.#free),
      leaseMs: this.#leaseMs,
    });
    for (const invocation of result.leased) this.#deliver(invocation);
    if (result.invocations > result.leased.length) this.#wakeClaim?.();
    return result.events === DISPATCH_BATCH ? 0 : IDLE_DISPATCH_MS;
  }

  /** Leases due invocations up to the free delivery slots; answers how long to rest. */
  async #claimTick(): Promise<number> {
    const free = this.#free;
    // Claim in batches so a busy worker spends its round trips on deliveries, not on claims.
    if (free < Math.max(1, Math.floor(this.#config.webhookConcurrency / 2))) {
      await Promise.race([...this.#inFlight]);
      return 0;
    }
    const token = randomUUID();
    const { rows } = await sql<{
      tenant_id: string;
      id: string;
      subscription_id: string;
      payload: string;
      url: string | null;
      secret: string;
      attempt_count: number;
      round_attempts: number;
    }>`
      update webhook_invocations i
      set lease_until = now() + ${this.#leaseMs} * interval '1 millisecond', lease_token = ${token}::uuid
      from (
        select tenant_id, id from webhook_invocations
        where status in ('Pending', 'Retrying') and destination = 'url' and next_attempt_on_utc <= now()
          and (lease_until is null or lease_until < now())
        order by next_attempt_on_utc
        limit ${free}
        for update skip locked
      ) due, webhook_subscriptions s
      where i.tenant_id = due.tenant_id and i.id = due.id and s.tenant_id = i.tenant_id and s.id = i.subscription_id
      returning i.tenant_id, i.id, i.subscription_id, i.payload, s.url, s.secret, i.attempt_count, i.round_attempts`.execute(this.#db);
    for (const r of rows) {
      this.#deliver({
        tenantId: r.tenant_id,
        id: r.id,
        subscriptionId: r.subscription_id,
        payload: r.payload,
        url: r.url ?? '',
        secret: r.secret,
        attemptCount: r.attempt_count,
        roundAttempts: r.round_attempts,
        leaseToken: token,
      });
    }
    return rows.length === free ? 0 : IDLE_CLAIM_MS;
  }

  /** Decrypted once per sealed secret: the signing key and the text for X-Webhook-Secret. */
  #secret(sealed: string): { key: Buffer; plain: string } {
    let secret = this.#secrets.get(sealed);
    if (!secret) {
      const plain = this.#box.decrypt(sealed);
      secret = { key: signingKey(plain), plain };
      if (this.#secrets.size > 10_000) this.#secrets.clear();
      this.#secrets.set(sealed, secret);
    }
    return secret;
  }

  #deliver(invocation: LeasedInvocation): void {
    this.#queue.push(invocation);
    this.#pump();
  }

  #pump(): void {
    while (this.#inFlight.size < this.#config.webhookConcurrency && this.#queue.length > 0) {
      const invocation = this.#queue.shift() as LeasedInvocation;
      const task = this.#attempt(invocation)
        .then((settled) => {
          this.#settled.push(settled);
          this.#wakeFlush?.();
        })
        .catch((err) => this.#log(`webhooks deliver: ${(err as Error).message}`))
        .finally(() => {
          this.#inFlight.delete(task);
          if (!this.#stop.signal.aborted) this.#pump();
        });
      this.#inFlight.add(task);
    }
  }

  async #attempt(invocation: LeasedInvocation): Promise<Settled> {
    const startedOnUtc = new Date();
    const started = performance.now();
    const outcome = await this.#post(invocation);
    const durationMs = Math.round(performance.now() - started);
    const schedule = this.#config.webhookRetryScheduleMs;
    const roundAttempts = invocation.roundAttempts + 1;
    const ok = outcome.statusCode !== null && outcome.statusCode >= 200 && outcome.statusCode < 300;
    let status: Settled['status'] = 'Succeeded';
    let nextAttemptOnUtc: Date | null = null;
    if (!ok) {
      if (outcome.refused || roundAttempts >= schedule.length) status = 'Failed';
      else {
        status = 'Retrying';
        nextAttemptOnUtc = new Date(Date.now() + nextDelayMs(schedule[roundAttempts], outcome.retryAfterMs));
      }
    }
    return { invocation, attempt: invocation.attemptCount + 1, startedOnUtc, durationMs, outcome, status, nextAttemptOnUtc, roundAttempts };
  }

  async #post(invocation: LeasedInvocation): Promise<AttemptOutcome> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Atrium-Webhooks/1',
      ...signatureHeaders(this.#secret(invocation.secret).key, invocation.id, invocation.payload),
    };
    if (this.#config.webhookLegacySecretHeader) headers['x-webhook-secret'] = this.#secret(invocation.secret).plain;
    const timeout = AbortSignal.timeout(this.#config.webhookTimeoutMs);
    try {
      const res = await this.#agent.request({
        origin: new URL(invocation.url).origin,
        path: pathOf(invocation.url),
        method: 'POST',
        headers,
        body: invocation.payload,
        signal: timeout,
        headersTimeout: this.#config.webhookTimeoutMs,
        bodyTimeout: this.#config.webhookTimeoutMs,
      });
      const body = await readLimited(res.body);
      return {
        statusCode: res.statusCode,
        responseBody: body,
        error: null,
        retryAfterMs: retryAfterOf(res.statusCode, res.headers['retry-after']),
        refused: false,
      };
    } catch (err) {
      const refused = findRefusal(err);
      if (refused) return { statusCode: null, responseBody: null, error: refused.message, retryAfterMs: null, refused: true };
      const message = timeout.aborted ? `timed out after ${this.#config.webhookTimeoutMs} ms` : describeError(err);
      return { statusCode: null, responseBody: null, error: message, retryAfterMs: null, refused: false };
    }
  }

  async #flushLoop(): Promise<void> {
    while (!this.#stop.signal.aborted) {
      if (this.#settled.length === 0) {
        await new Promise<void>((resolve) => {
          this.#wakeFlush = () => {
            this.#wakeFlush = null;
            resolve();
          };
          if (this.#stop.signal.aborted) resolve();
        });
        continue;
      }
      try {
        await this.#flush();
      } catch (err) {
        // The leases will expire and the invocations will be delivered again: at-least-once holds.
        this.#log(`webhooks record: ${(err as Error).message}`);
        await sleep(500);
      }
    }
  }

  /** Records settled attempts in one transaction; an attempt whose lease was lost is not recorded. */
  async #flush(): Promise<void> {
    const batch = this.#settled;
    this.#settled = [];
    if (batch.length === 0) return;
    const rows = batch.map((s) => ({
      tenant_id: s.invocation.tenantId,
      id: s.invocation.id,
      subscription_id: s.invocation.subscriptionId,
      lease_token: s.invocation.leaseToken,
      attempt: s.attempt,
      round_attempts: s.roundAttempts,
      started: s.startedOnUtc.toISOString(),
      duration_ms: s.durationMs,
      status_code: s.outcome.statusCode,
      response_body: s.outcome.responseBody,
      error: s.outcome.error,
      status: s.status,
      next_attempt: s.nextAttemptOnUtc?.toISOString() ?? null,
    }));
    // One statement settles the batch (atomic on its own); only failures need the follow-up transaction.
    const { rows: recorded } = await sql<{ tenant_id: string; subscription_id: string; status: string }>`
      with r as (
        select * from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as x(tenant_id uuid, id uuid, subscription_id uuid, lease_token uuid,
          attempt int, round_attempts int, started timestamptz, duration_ms int, status_code int, response_body text, error text, status text,
          next_attempt timestamptz)
      ), settled as (
        update webhook_invocations i
        set status = r.status, attempt_count = r.attempt, round_attempts = r.round_attempts, next_attempt_on_utc = r.next_attempt,
          lease_until = null, lease_token = null,
          completed_on_utc = case when r.status in ('Succeeded', 'Failed') then now() end
        from r
        where i.tenant_id = r.tenant_id and i.id = r.id and i.lease_token = r.lease_token
        returning i.tenant_id, i.id
      ), attempts as (
        insert into webhook_attempts (tenant_id, invocation_id, attempt, started_on_utc, duration_ms, status_code, response_body, error)
        select r.tenant_id, r.id, r.attempt, r.started, r.duration_ms, r.status_code, r.response_body, r.error
        from r join settled using (tenant_id, id)
        on conflict do nothing
      ), recovered as (
        -- A success closes the subscription's failure window.
        update webhook_subscriptions s set failing_since = null
        from (select distinct r.tenant_id, r.subscription_id from r join settled using (tenant_id, id) where r.status = 'Succeeded') ok
        where s.tenant_id = ok.tenant_id and s.id = ok.subscription_id and s.failing_since is not null
      )
      select r.tenant_id, r.subscription_id, r.status from r join settled using (tenant_id, id)`.execute(this.#db);
    const failed = recorded.filter((r) => r.status !== 'Succeeded');
    if (failed.length === 0) return;
    const succeeded = new Set(recorded.filter((r) => r.status === 'Succeeded').map((r) => `${r.tenant_id}/${r.subscription_id}`));
    const stillFailing = failed.filter((r) => !succeeded.has(`${r.tenant_id}/${r.subscription_id}`));
    if (stillFailing.length === 0) return;
    await this.#db.transaction().execute((trx) => this.#trackFailures(trx as unknown as Trx, stillFailing));
  }

  /**
   * A failed attempt opens a subscription's failure window (a success closes it, above). When the window has
   * lasted ATRIUM_WEBHOOK_DISABLE_AFTER (5 days), the subscription is set inactive and an event records it.
   */
  async #trackFailures(trx: Trx, recorded: { tenant_id: string; subscription_id: string }[]): Promise<void> {
    const failed = unique(recorded);
    const keys = sql`unnest(${failed.map((s) => s.tenant)}::uuid[], ${failed.map((s) => s.id)}::uuid[]) as k(tenant_id, id)`;
    await sql`update webhook_subscriptions s set failing_since = now()
      from ${keys} where s.tenant_id = k.tenant_id and s.id = k.id and s.failing_since is null`.execute(trx);
    const { rows: justDisabled } = await sql<{ tenant_id: string; id: string; failing_since: Date }>`
      update webhook_subscriptions s set active = false, modified_on_utc = now()
      from ${keys}
      where s.tenant_id = k.tenant_id and s.id = k.id and s.active
        and s.failing_since <= now() - ${this.#config.webhookDisableAfterMs} * interval '1 millisecond'
      returning s.tenant_id, s.id, s.failing_since`.execute(trx);
    if (justDisabled.length === 0) return;
    await appendEvents(
      trx,
      justDisabled.map((d) => ({
        tenantId: d.tenant_id,
        actionType: 'Updated',
        documentType: 'WebhookSubscription',
        documentId: d.id,
        detail: {
          Active: false,
          Reason: `every delivery has failed since ${d.failing_since.toISOString()}`,
          FailingSinceUtc: d.failing_since.toISOString(),
        },
      })),
    );
    for (const d of justDisabled)
      this.#log(`webhooks: subscription ${d.id} of tenant ${d.tenant_id} set inactive (failing since ${d.failing_since.toISOString()})`);
  }
}

function unique(rows: { tenant_id: string; subscription_id: string }[]): { key: string; tenant: string; id: string }[] {
  const map = new Map<string, { key: string; tenant: string; id: string }>();
  for (const r of rows)
    map.set(`${r.tenant_id}/${r.subscription_id}`, { key: `${r.tenant_id}/${r.subscription_id}`, tenant: r.tenant_id, id: r.subscription_id });
  return [...map.values()];
}

function pathOf(url: string): string {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
}

function retryAfterOf(status: number, header: string | string[] | undefined): number | null {
  return status === 429 || status === 503 ? parseRetryAfter(header) : null;
}

/** The first RESPONSE_KEEP_BYTES of the answer; reading stops at RESPONSE_READ_LIMIT. */
async function readLimited(body: AsyncIterable<Buffer> & { destroy: () => void }): Promise<string> {
  const chunks: Buffer[] = [];
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (read - chunk.length < RESPONSE_KEEP_BYTES) chunks.push(chunk);
    if (read >= RESPONSE_READ_LIMIT) {
      body.destroy();
      break;
    }
  }
  return Buffer.concat(chunks).subarray(0, RESPONSE_KEEP_BYTES).toString('utf8');
}

function findRefusal(err: unknown): OutboundRefused | null {
  let current: unknown = err;
  for (let i = 0; i < 5 && current; i++) {
    if (current instanceof OutboundRefused) return current;
    if (current instanceof AggregateError) {
      const inner = current.errors.find((e) => e instanceof OutboundRefused);
      if (inner) return inner;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return null;
}

function describeError(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = e.code ?? e.cause?.code;
  const message = e.message || e.cause?.message || String(err);
  return code ? `${code}: ${message}` : message;
}
