// The webhook worker: dispatches outbox events into invocations, delivers them (signed, with
// concurrency), records every attempt and schedules retries. At-least-once: what it delivers is leased
// first (a dispatch batch, renewed while the worker lives, or a claimed invocation row) and recorded
// after, so a worker killed mid-delivery leaves a lease that lapses and the invocation is delivered
// again, under the same webhook-id.
import { createSecretKey, type KeyObject } from 'node:crypto';
import { Kysely, PostgresDialect } from 'kysely';
import pg from 'pg';
import type { Agent } from 'undici';
import type { Config } from '../../config.ts';
import type { SecretBox } from '../../platform/auth/hashing.ts';
import type { Notifications } from '../../platform/db/notifications.ts';
import type { Database } from '../../platform/db/schema.ts';
import { type Logger, silentLogger } from '../../platform/log.ts';
import { createOutboundAgent } from '../../platform/outbound.ts';
import { contextOf, failSpan, type Span, SpanKind, tracingOn, withSpan } from '../../platform/tracing.ts';
import { signingKey } from '../sign.ts';
import { nextDelayMs, postAttempt } from './attempt.ts';
import { type Delivery, type DispatchBatch, dispatchOnce, releaseLapsedBatch } from './dispatch.ts';
import { observeAttempt } from './observe.ts';
import { claimDue, recordSettled, releaseLeases, renewBatches, type Settled } from './record.ts';

const IDLE_DISPATCH_MS = 50;
const IDLE_CLAIM_MS = 100;
const IDLE_FLUSH_MS = 1000;
const DISPATCH_BATCH = 1000;
/**
 * With no room to deliver, the dispatcher still runs this often, into due invocation rows, so that the outbox
 * keeps moving (for other workers, and the history). A worker holds about four seconds of work, so one whose
 * room has not come back in five is slower than its recent pace.
 */
const FULL_DISPATCH_MS = 5000;
/** Most deliveries one process holds (queued or in flight). */
const MAX_LEASED = 2 * DISPATCH_BATCH;
/** An attempt starts only when its lease outlasts it (the timeout) by this much. */
const LEASE_MARGIN_MS = 1000;
/** Finished attempts are recorded when this many wait, or when the first has waited FLUSH_LINGER_MS. */
const FLUSH_BATCH = 256;
const FLUSH_LINGER_MS = 20;
/** Batch leases are renewed this often: well inside the lease's slack over the timeout (5 s). */
const RENEW_MS = 1000;
/** How often a worker looks for batches whose worker died, when it found none the last time. */
const LAPSE_CHECK_MS = 1000;

type LoopName = 'dispatch' | 'claim' | 'flush' | 'renew';

export interface WebhookWorkerOptions {
  connectionString: string;
  box: SecretBox;
  config: Config;
  /** The process logger's child for webhooks; silent when not given. */
  log?: Logger;
  /** Called after each dispatcher pass that reached the database: the dispatcher is alive. */
  onDispatchTick?: () => void;
  /** The process's LISTEN connection: a commit that wrote events wakes the dispatcher (the poll stays as the safety net). */
  notifications?: Notifications;
}

export class WebhookWorker {
  readonly #pool: pg.Pool;
  readonly #db: Kysely<Database>;
  readonly #box: SecretBox;
  readonly #config: Config;
  readonly #agent: Agent;
  readonly #log: Logger;
  readonly #onDispatchTick: () => void;
  readonly #notifications: Notifications | undefined;
  #unlisten: (() => void) | null = null;
  readonly #leaseMs: number;
  readonly #stop = new AbortController();
  readonly #inFlight = new Set<Promise<void>>();
  readonly #secrets = new Map<string, { key: KeyObject; plain: string }>();
  readonly #queue: Delivery[] = [];
  readonly #wakers = new Map<LoopName, () => void>();
  readonly #woken = new Set<LoopName>();
  /** This worker's dispatch batches with deliveries not recorded yet: their leases are renewed. */
  readonly #batches = new Set<DispatchBatch>();
  #settled: Settled[] = [];
  /** Claimed but never started: handed back by the flush loop. */
  #unused: Delivery[] = [];
  #loops: Promise<void>[] = [];
  #lastLapseCheck = 0;
  /** When the oldest finished attempt not yet recorded finished. */
  #settledSince = 0;
  /** Recent attempt duration (moving average): how fast this process gets through its queue. */
  #attemptMs = 100;
  #lastDispatch = 0;
  #dispatchWaitsForRoom = false;

  constructor(opts: WebhookWorkerOptions) {
    // One connection for each loop (the recorder may use two) and one for a subscription's deactivation.
    // Every statement of the worker finds its rows by key or by index. Without seq scans the planner keeps to
    // those even when the statistics still describe an empty table (a fresh deployment, a sudden burst):
    // else it would scan the invocations once per row of a batch, and keep that plan for its prepared statements.
    this.#pool = new pg.Pool({
      connectionString: opts.connectionString,
      max: 6,
      application_name: 'atrium-webhooks',
      options: '-c enable_seqscan=off',
    });
    this.#pool.on('error', () => {});
    this.#db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: this.#pool }) });
    this.#box = opts.box;
    this.#config = opts.config;
    this.#log = opts.log ?? silentLogger;
    this.#onDispatchTick = opts.onDispatchTick ?? (() => {});
    this.#notifications = opts.notifications;
    // Long enough for an attempt to time out and be recorded; after it, another worker may take over.
    this.#leaseMs = opts.config.webhookTimeoutMs + 5000;
    this.#agent = createOutboundAgent({
      allowPrivate: opts.config.webhookAllowPrivateNetworks,
      connections: opts.config.webhookConcurrency,
      connectTimeoutMs: Math.min(opts.config.webhookTimeoutMs, 10_000),
    });
  }

  start(): void {
    this.#notifications
      ?.listen('atrium_events', () => this.#wake('dispatch'))
      .then((stop) => {
        if (this.#stop.signal.aborted) stop();
        else this.#unlisten = stop;
      });
    this.#loops = [
      this.#loop('dispatch', async () => {
        const idleMs = await this.#dispatchTick();
        this.#onDispatchTick();
        return idleMs;
      }),
      this.#loop('claim', () => this.#claimTick()),
      this.#loop('flush', () => this.#flushTick()),
      this.#loop('renew', () => this.#renewTick()),
    ];
  }

  /** Stops taking work, lets attempts in flight finish (they are bounded by the timeout) and records them. */
  async stop(): Promise<void> {
    if (this.#stop.signal.aborted) return;
    this.#stop.abort();
    this.#unlisten?.();
    for (const wake of this.#wakers.values()) wake();
    await Promise.allSettled(this.#loops);
    await Promise.allSettled([...this.#inFlight]);
    // Not started: handed back so that another worker need not wait for the leases to lapse. A batch's
    // invocation becomes due (which finishes its batch); a claimed one is released.
    for (const d of this.#queue.splice(0)) {
      if (d.lease.kind === 'row') this.#unused.push(d);
      else if (!d.lease.batch.abandoned) this.#settled.push(unattempted(d));
    }
    await this.#flushTick().catch(() => {});
    await this.#agent.close().catch(() => {});
    await this.#db.destroy();
  }

  /**
   * Deliveries this process may hold, queued or in flight: as many as it expects to start within the lease's
   * slack over the timeout at the recent pace (a fast receiver: up to MAX_LEASED; a slow one: twice the
   * concurrency), so that work it cannot start soon is left for other workers.
   */
  get #capacity(): number {
    const concurrency = this.#config.webhookConcurrency;
    const slackMs = this.#leaseMs - this.#config.webhookTimeoutMs - LEASE_MARGIN_MS;
    const expected = Math.floor((concurrency * slackMs) / Math.max(1, this.#attemptMs));
    return Math.max(2 * concurrency, Math.min(MAX_LEASED, expected));
  }

  get #room(): number {
    return this.#capacity - this.#inFlight.size - this.#queue.length;
  }

  /** Enough room for a dispatch or claim batch to be worth a round trip. */
  get #minRoom(): number {
    return Math.max(1, Math.floor(this.#capacity / 4));
  }

  async #loop(name: LoopName, tick: () => Promise<number>): Promise<void> {
    while (!this.#stop.signal.aborted) {
      let idleMs = 0;
      try {
        idleMs = await tick();
      } catch (err) {
        if (this.#stop.signal.aborted) return;
        // Nothing is lost: the leases of unrecorded deliveries lapse and they are delivered again.
        this.#log.warn({ loop: name, err }, 'webhook loop failed; it rests a second and goes on');
        idleMs = 1000;
      }
      if (idleMs > 0) await this.#idle(name, idleMs);
    }
  }

  /** Rests up to ms, or until woken; a wake that came while the loop was busy ends the rest at once. */
  #idle(name: LoopName, ms: number): Promise<void> {
    if (this.#woken.delete(name)) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.#wakers.delete(name);
        this.#woken.delete(name);
        this.#stop.signal.removeEventListener('abort', done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.#wakers.set(name, done);
      this.#stop.signal.addEventListener('abort', done);
    });
  }

  #wake(name: LoopName): void {
    const wake = this.#wakers.get(name);
    if (wake) wake();
    else this.#woken.add(name);
  }

  /**
   * One dispatcher pass; answers how long to rest (0: the outbox has more right now). With room, it takes
   * only the events whose invocations it can deliver itself, as one leased batch. With its slots full it
   * waits for room, but dispatches every few seconds into invocation rows that any worker can claim.
   */
  async #dispatchTick(): Promise<number> {
    const firstDelayMs = this.#config.webhookRetryScheduleMs[0] ?? 0;
    const room = this.#room;
    const leasing = firstDelayMs === 0 && room >= this.#minRoom;
    if (firstDelayMs === 0 && !leasing && Date.now() - this.#lastDispatch < FULL_DISPATCH_MS) {
      this.#dispatchWaitsForRoom = true;
      return IDLE_DISPATCH_MS;
    }
    const result = await dispatchOnce(this.#db, {
      publicUrl: this.#config.publicUrl,
      tenantHostPattern: this.#config.tenantHostPattern,
      // Most events match one subscription or none: reading more than the room would mostly be read again.
      batchSize: leasing ? Math.min(DISPATCH_BATCH, room) : DISPATCH_BATCH,
      firstDelayMs,
      leaseCount: leasing ? room : 0,
      cutAtLeaseCount: leasing,
      leaseMs: this.#leaseMs,
    });
    this.#lastDispatch = Date.now();
    this.#take(result.deliveries);
    if (result.due > 0) this.#wake('claim');
    return result.more ? 0 : IDLE_DISPATCH_MS;
  }

  /** Queues a dispatch batch's deliveries; the batch's lease is renewed until they are all recorded. */
  #take(deliveries: Delivery[]): void {
    if (deliveries.length === 0) return;
    const first = deliveries[0].lease;
    if (first.kind === 'batch') this.#batches.add(first.batch);
    this.#queue.push(...deliveries);
    this.#pump();
  }

  /**
   * Leases due invocations (retries, resends, tests, lapsed leases) up to the room, after handing the
   * invocations of a dispatch batch whose worker died to this claim path; answers how long to rest.
   */
  async #claimTick(): Promise<number> {
    const free = Math.min(this.#room, DISPATCH_BATCH);
    // Claim in batches so a busy worker spends its round trips on deliveries, not on claims.
    if (free < Math.max(1, Math.floor(this.#config.webhookConcurrency / 2))) {
      await Promise.race([...this.#inFlight]);
      return 0;
    }
    if (Date.now() - this.#lastLapseCheck >= LAPSE_CHECK_MS) {
      const released = await releaseLapsedBatch(this.#db);
      // Found one: there may be more, so look again at once; its invocations are claimed below.
      if (released === null) this.#lastLapseCheck = Date.now();
      else this.#log.info({ released }, 'a lapsed dispatch batch handed its unsettled invocations to the claim path');
    }
    const claimed = await claimDue(this.#pool, this.#leaseMs, free);
    this.#queue.push(...claimed);
    this.#pump();
    return claimed.length === free ? 0 : IDLE_CLAIM_MS;
  }

  /** Decrypted once per sealed secret: the signing key and the text for X-Webhook-Secret. */
  #secret(sealed: string): { key: KeyObject; plain: string } {
    let secret = this.#secrets.get(sealed);
    if (!secret) {
      const plain = this.#box.decrypt(sealed);
      secret = { key: createSecretKey(signingKey(plain)), plain };
      if (this.#secrets.size > 10_000) this.#secrets.clear();
      this.#secrets.set(sealed, secret);
    }
    return secret;
  }

  /** Whether a delivery may start: its lease must outlast the attempt, or another worker could deliver it too. */
  #mayStart(d: Delivery): boolean {
    const latest = Date.now() + this.#config.webhookTimeoutMs + LEASE_MARGIN_MS;
    if (d.lease.kind === 'row') {
      if (latest <= d.lease.deadline) return true;
      this.#unused.push(d);
      this.#wake('flush');
      return false;
    }
    const batch = d.lease.batch;
    if (!batch.abandoned && latest > batch.deadline) this.#abandon(batch);
    return !batch.abandoned;
  }

  /** Gives up a batch: nothing more of it starts here; its lease lapses and its unsettled invocations become due. */
  #abandon(batch: DispatchBatch): void {
    if (batch.abandoned) return;
    batch.abandoned = true;
    this.#batches.delete(batch);
    this.#log.warn({ batch: batch.id }, 'dispatch batch given up here; its invocations become due when its lease lapses');
  }

  #pump(): void {
    while (this.#inFlight.size < this.#config.webhookConcurrency && this.#queue.length > 0) {
      const delivery = this.#queue.shift() as Delivery;
      if (!this.#mayStart(delivery)) continue;
      const task = this.#attempt(delivery)
        .then((settled) => {
          observeAttempt(this.#log, settled);
          // The recorder gathers attempts for a moment: one statement per handful would cost more per row.
          if (this.#settled.push(settled) === 1) this.#settledSince = Date.now();
          if (this.#settled.length === 1 || this.#settled.length >= FLUSH_BATCH) this.#wake('flush');
        })
        .catch((err) => this.#log.error({ err, invocation: delivery.id }, 'webhook delivery failed before its attempt was recorded'))
        .finally(() => {
          this.#inFlight.delete(task);
          if (!this.#stop.signal.aborted) this.#pump();
        });
      this.#inFlight.add(task);
    }
    if (this.#dispatchWaitsForRoom && this.#room >= this.#minRoom) {
      this.#dispatchWaitsForRoom = false;
      this.#wake('dispatch');
    }
  }

  async #attempt(invocation: Delivery): Promise<Settled> {
    if (!tracingOn()) return this.#attemptIn(invocation, undefined);
    // A CLIENT span under the dispatch that made the invocation; its traceparent goes out with the POST.
    // The URL is not recorded (a receiver's URL may carry a token in its query): only its host.
    return withSpan(
      'webhook delivery attempt',
      {
        kind: SpanKind.CLIENT,
        parent: contextOf(invocation.traceContext),
        attributes: {
          'atrium.tenant.id': invocation.tenantId,
          'atrium.webhook.invocation.id': invocation.id,
          'atrium.webhook.subscription.id': invocation.subscriptionId,
          'atrium.webhook.attempt': invocation.attemptCount + 1,
          'http.request.method': 'POST',
          'server.address': hostOf(invocation.url),
        },
      },
      (span) => this.#attemptIn(invocation, span),
    );
  }

  async #attemptIn(invocation: Delivery, span: Span | undefined): Promise<Settled> {
    const startedOnUtc = new Date();
    const started = performance.now();
    const secret = this.#secret(invocation.secret);
    const outcome = await postAttempt({
      agent: this.#agent,
      url: invocation.url,
      webhookId: invocation.id,
      payload: invocation.payload,
      key: secret.key,
      legacySecret: this.#config.webhookLegacySecretHeader ? secret.plain : null,
      timeoutMs: this.#config.webhookTimeoutMs,
    });
    const durationMs = Math.round(performance.now() - started);
    this.#attemptMs += 0.05 * (durationMs - this.#attemptMs);
    if (span) {
      if (outcome.statusCode !== null) span.setAttribute('http.response.status_code', outcome.statusCode);
      if (outcome.error !== null) failSpan(span, outcome.error);
      else if (outcome.statusCode !== null && outcome.statusCode >= 400) failSpan(span, `HTTP ${outcome.statusCode}`);
    }
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
    return {
      delivery: invocation,
      attempt: invocation.attemptCount + 1,
      startedOnUtc,
      durationMs,
      outcome,
      status,
      nextAttemptOnUtc,
      roundAttempts,
    };
  }

  /** Records finished attempts and hands back unused leases, a batch at a time; answers how long to rest. */
  async #flushTick(): Promise<number> {
    const waited = Date.now() - this.#settledSince;
    if (this.#settled.length > 0 && this.#settled.length < FLUSH_BATCH && waited < FLUSH_LINGER_MS && this.#unused.length === 0 && !this.#stop.signal.aborted)
      return FLUSH_LINGER_MS - waited;
    const settled = this.#settled;
    const unused = this.#unused;
    this.#settled = [];
    this.#unused = [];
    if (settled.length === 0 && unused.length === 0) return IDLE_FLUSH_MS;
    // Batches whose last delivery is recorded here are deleted by the same statement.
    const finished: DispatchBatch[] = [];
    for (const s of settled) {
      if (s.delivery.lease.kind !== 'batch') continue;
      const batch = s.delivery.lease.batch;
      if (--batch.outstanding === 0 && !batch.abandoned) {
        finished.push(batch);
        this.#batches.delete(batch);
      }
    }
    try {
      await Promise.all([
        recordSettled(this.#pool, this.#db, settled, finished, this.#config.webhookDisableAfterMs, this.#log),
        releaseLeases(this.#pool, unused),
      ]);
    } catch (err) {
      // Unrecorded: claimed invocations' leases lapse, and these batches' invocations become due when theirs does.
      for (const s of settled) if (s.delivery.lease.kind === 'batch') this.#abandon(s.delivery.lease.batch);
      throw err;
    }
    return this.#settled.length > 0 || this.#unused.length > 0 ? 0 : IDLE_FLUSH_MS;
  }

  /** Extends the leases of this worker's unfinished batches; one that was taken over is given up. */
  async #renewTick(): Promise<number> {
    const live = [...this.#batches];
    if (live.length === 0) return RENEW_MS;
    const started = Date.now();
    const kept = await renewBatches(this.#pool, live, this.#leaseMs);
    for (const batch of live) {
      if (kept.has(batch.id)) batch.deadline = started + this.#leaseMs;
      else if (this.#batches.has(batch)) this.#abandon(batch);
    }
    return RENEW_MS;
  }
}

/** A batch delivery handed back unattempted: written as a due invocation, for any worker to claim. */
function unattempted(d: Delivery): Settled {
  return {
    delivery: d,
    attempt: d.attemptCount,
    startedOnUtc: new Date(),
    durationMs: 0,
    outcome: null,
    status: 'Pending',
    nextAttemptOnUtc: null,
    roundAttempts: 0,
  };
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
