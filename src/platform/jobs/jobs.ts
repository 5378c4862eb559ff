// Background jobs and cron schedules on pg-boss, in the same database. Surfaces declare their
// queues here; a process with ATRIUM_ROLE=api only sends, one with worker or all also works them.
import { PgBoss, type QueueOptions, type QueuePolicy } from 'pg-boss';
import type { DatabaseHandle } from '../db/database.ts';
import { contextOf, linkTo, SpanKind, traceparentOf, tracingOn, withSpan } from '../tracing.ts';
import { WorkStatus } from './work-status.ts';

export interface QueueDefinition<T extends object = object> {
  name: string;
  /** Five-field cron (UTC) when the queue runs on a schedule. */
  cron?: string;
  batchSize?: number;
  pollingIntervalSeconds?: number;
  /** Jobs worked at once in this process (each with its own fetch loop); default 1. */
  localConcurrency?: number;
  /** Expiry, retries and retention of the queue's jobs (pg-boss defaults otherwise). */
  options?: QueueOptions;
  /** The queue's policy, set when it is created (pg-boss cannot change it later); standard otherwise. */
  policy?: QueuePolicy;
  work: (jobs: { id: string; data: T; createdOn: Date }[]) => Promise<void>;
  /** Called once the workers run (processes that work jobs only). */
  onStart?: () => Promise<void>;
}

export const PGBOSS_SCHEMA = 'pgboss';

export class Jobs {
  readonly boss: PgBoss;
  /** Heartbeats and backlogs of this process's background work (readiness and metrics). */
  readonly status = new WorkStatus();
  readonly #queues: QueueDefinition<any>[] = [];
  readonly #stopHooks: { before: (() => Promise<void>)[]; after: (() => Promise<void>)[] } = { before: [], after: [] };
  #started = false;
  #working = false;
  #lastError: { at: number; message: string } | null = null;

  constructor(db: DatabaseHandle, opts: { onError?: (err: Error) => void } = {}) {
    this.boss = new PgBoss({
      connectionString: db.connectionString,
      schema: PGBOSS_SCHEMA,
      max: 4,
      application_name: 'atrium-jobs',
      useListenNotify: true,
      // Cron occurrences reach their queue within a few seconds (defaults: a pass every 30 s).
      cronMonitorIntervalSeconds: 5,
      cronWorkerIntervalSeconds: 1,
    });
    this.boss.on('error', (err: Error) => {
      this.#lastError = { at: Date.now(), message: err.message };
      opts.onError?.(err);
    });
  }

  define<T extends object>(queue: QueueDefinition<T>): void {
    this.#queues.push(queue);
  }

  /** Installs pg-boss's schema if needed; with `work`, starts the workers and schedules. */
  async start({ work }: { work: boolean }): Promise<void> {
    await this.boss.start();
    this.#started = true;
    for (const q of this.#queues) {
      // createQueue leaves an existing queue as it is; updateQueue brings its options up to date.
      await this.boss.createQueue(q.name, q.policy ? { ...q.options, policy: q.policy } : q.options).catch(() => {});
      if (q.options) await this.boss.updateQueue(q.name, q.options);
      if (!work) continue;
      if (q.cron) await this.boss.schedule(q.name, q.cron, {}, { tz: 'UTC' });
      await this.boss.work(
        q.name,
        {
          batchSize: q.batchSize ?? 20,
          pollingIntervalSeconds: q.pollingIntervalSeconds ?? 1,
          localConcurrency: q.localConcurrency ?? 1,
          includeMetadata: true,
        },
        async (jobs) => {
          const batch = jobs.map((j) => ({ id: j.id, data: j.data as any, createdOn: j.createdOn }));
          if (!tracingOn()) return q.work(batch);
          await tracedWork(q.name, batch, q.work);
        },
      );
      await q.onStart?.();
    }
    this.#working = work;
  }

  /** pg-boss started in this process and works its queues (false in ATRIUM_ROLE=api, and once stopped). */
  get working(): boolean {
    return this.#started && this.#working;
  }

  /** pg-boss's last error (its maintenance or polling failed), for readiness to show. */
  get lastError(): { at: number; message: string } | null {
    return this.#lastError;
  }

  async send(name: string, data: object, options?: Parameters<PgBoss['send']>[2]): Promise<string | null> {
    // Traced: the job carries the sender's span, and its worker's span continues that trace.
    const traceparent = traceparentOf();
    return this.boss.send(name, traceparent ? { ...data, [TRACE_KEY]: traceparent } : data, options);
  }

  /** Work of the process's own that must end before pg-boss stops (`before`), or may end after (`after`). */
  onStop(when: 'before' | 'after', fn: () => Promise<void>): void {
    this.#stopHooks[when].push(fn);
  }

  async stop(): Promise<void> {
    for (const fn of this.#stopHooks.before.splice(0)) await fn();
    if (this.#started) {
      this.#started = false;
      this.#working = false;
      await this.boss.stop({ graceful: true, timeout: 10_000 });
    }
    for (const fn of this.#stopHooks.after.splice(0)) await fn();
  }
}

/** Where a job's data carries the traceparent of the span that sent it (taken out before the queue's work sees it). */
const TRACE_KEY = '_traceparent';

/**
 * A CONSUMER span per batch of a queue: the child of the sender's span for a batch of one traced job, else a
 * root span linking to each traced job's sender (a batch serves several traces at once).
 */
function tracedWork<T extends object>(queue: string, batch: { id: string; data: T; createdOn: Date }[], work: QueueDefinition<T>['work']): Promise<void> {
  const senders: (string | null)[] = [];
  for (const job of batch) {
    const data = job.data as Record<string, unknown>;
    const traceparent = typeof data?.[TRACE_KEY] === 'string' ? (data[TRACE_KEY] as string) : null;
    senders.push(traceparent);
    if (traceparent !== null) {
      const { [TRACE_KEY]: _, ...rest } = data;
      job.data = rest as T;
    }
  }
  const links = batch.length > 1 ? senders.map(linkTo).filter((l) => l !== null) : [];
  return withSpan(
    `job ${queue}`,
    {
      kind: SpanKind.CONSUMER,
      parent: batch.length === 1 ? contextOf(senders[0]) : contextOf(null),
      links,
      attributes: {
        'messaging.system': 'pg-boss',
        'messaging.destination.name': queue,
        'messaging.batch.message_count': batch.length,
        ...(batch.length === 1 ? { 'messaging.message.id': batch[0].id } : {}),
      },
    },
    () => work(batch),
  );
}
