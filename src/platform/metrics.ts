// The process's own instruments for background work (webhook deliveries, dispatch, scheduled runs, exports),
// one set per process and rendered at GET /metrics beside the HTTP metrics. Label policy: no tenant, no
// subscription, no schedule label anywhere (their number grows with customers); labels take only values
// from a short fixed list, so every series count is bounded (docs/operations.md lists them).
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export const workRegistry = new Registry();

export type DeliveryOutcome = 'succeeded' | 'retrying' | 'failed';

export const webhookDeliveries = new Counter({
  name: 'atrium_webhook_deliveries_total',
  help: 'Webhook delivery attempts by outcome (succeeded, retrying: failed with attempts left, failed: gave up) and status class (2xx..5xx, or none: no answer)',
  labelNames: ['outcome', 'status_class'] as const,
  registers: [workRegistry],
});

export const webhookAttemptDuration = new Histogram({
  name: 'atrium_webhook_attempt_duration_seconds',
  help: 'Duration of webhook delivery attempts, by outcome',
  labelNames: ['outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [workRegistry],
});

export const webhookSubscriptionsDeactivated = new Counter({
  name: 'atrium_webhook_subscriptions_deactivated_total',
  help: 'Webhook subscriptions set inactive because every delivery failed for ATRIUM_WEBHOOK_DISABLE_AFTER',
  registers: [workRegistry],
});

export const outboxDispatchLag = new Histogram({
  name: 'atrium_outbox_dispatch_lag_seconds',
  help: 'Time from an event entering the outbox (its transaction) to its dispatch into webhook invocations',
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [workRegistry],
});

export const scheduleRuns = new Counter({
  name: 'atrium_schedule_runs_total',
  help: 'Scheduled extraction runs finished by this process, by outcome (succeeded, failed)',
  labelNames: ['outcome'] as const,
  registers: [workRegistry],
});

export const scheduleRunDuration = new Histogram({
  name: 'atrium_schedule_run_duration_seconds',
  help: 'Duration of scheduled extraction runs, by outcome',
  labelNames: ['outcome'] as const,
  buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600],
  registers: [workRegistry],
});

export const automationRuns = new Counter({
  name: 'atrium_automation_runs_total',
  help: 'Automation runs finished by this process, by trigger (webhook, schedule, manual, http, workflow) and outcome (succeeded, failed)',
  labelNames: ['trigger', 'outcome'] as const,
  registers: [workRegistry],
});

export const automationRunDuration = new Histogram({
  name: 'atrium_automation_run_duration_seconds',
  help: 'Duration of automation runs, by trigger and outcome',
  labelNames: ['trigger', 'outcome'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15, 60, 300],
  registers: [workRegistry],
});

export const automationRunsInFlight = new Gauge({
  name: 'atrium_automation_runs_in_flight',
  help: 'Automation runs executing now in this process, by trigger',
  labelNames: ['trigger'] as const,
  registers: [workRegistry],
});

export const exportsInFlight = new Gauge({
  name: 'atrium_exports_in_flight',
  help: 'CSV and NDJSON exports streaming now (HTTP exports and scheduled runs), by format',
  labelNames: ['format'] as const,
  registers: [workRegistry],
});

// Labelled by the replica's position in DATABASE_READ_URL: a handful of values fixed by the configuration.
export const readReplicaLag = new Gauge({
  name: 'atrium_read_replica_lag_seconds',
  help: 'Replication lag of each read replica as last probed (0: caught up with the primary; -1: unknown), by position in DATABASE_READ_URL',
  labelNames: ['replica'] as const,
  registers: [workRegistry],
});

export const readReplicaUp = new Gauge({
  name: 'atrium_read_replica_up',
  help: 'Whether reads go to the replica (1) or, down or lagging past ATRIUM_READ_MAX_LAG, to the primary (0), by position in DATABASE_READ_URL',
  labelNames: ['replica'] as const,
  registers: [workRegistry],
});

/** 2xx..5xx, or none when no HTTP answer came (refused, timed out, connection failed). */
export function statusClass(statusCode: number | null): string {
  return statusCode === null ? 'none' : `${Math.floor(statusCode / 100)}xx`;
}

export const extractionCounts = new Counter({
  name: 'atrium_extraction_counts_total',
  help: 'Data Extraction page totalCounts: hit (kept count, nothing it reads changed), delta (kept count plus the rows inserted since), miss (counted and kept), uncached (counted; reads a table the change log does not track)',
  labelNames: ['result'] as const,
  registers: [workRegistry],
});

export const extractionSeeks = new Counter({
  name: 'atrium_extraction_seeks_total',
  help: "Data Extraction pages with a skip: hit (sought past the kept position of the previous page), stale (a table it reads changed: found from the position's rank now, or skipped), relocated (of the stale: found from the rank, decision 0071), delta (of the stale: ranked from the rows inserted since, not counted, decision 0077), miss (no kept position: skipped)",
  labelNames: ['result'] as const,
  registers: [workRegistry],
});

export const extractionReadAhead = new Counter({
  name: 'atrium_extraction_read_ahead_pages_total',
  help: 'Data Extraction pages read ahead for paging clients (decision 0041): read (computed ahead), hit (answered from them), hit_after_inserts (answered from them although rows were inserted since, all after the page in its key order, decision 0083), hit_shifted (answered moved by the rows inserted before them, decision 0083), encoded (of the hits, answered with the bytes compressed while they waited, decision 0079), stale (a table they read changed: dropped), unused (expired or evicted unanswered)',
  labelNames: ['result'] as const,
  registers: [workRegistry],
});

export const extractionReadAheadBatches = new Counter({
  name: 'atrium_extraction_read_ahead_batches_total',
  help: "Batches of pages read ahead for paging clients (decision 0041), by how their rows were read: range (in the key's order: the rows between the batch's first and last key), keys (any other order: the batch's keys looked up)",
  labelNames: ['result'] as const,
  registers: [workRegistry],
});

export const userFeedRuns = new Counter({
  name: 'atrium_user_feed_runs_total',
  help: 'SFTP user feed runs finished by this process, by outcome (succeeded, failed) and dry_run (true, false)',
  labelNames: ['outcome', 'dry_run'] as const,
  registers: [workRegistry],
});

export const userFeedRows = new Counter({
  name: 'atrium_user_feed_rows_total',
  help: 'SFTP user feed rows read by this process, by outcome (created, updated, deactivated, unchanged, skipped, failed) and dry_run; a file processed before is not counted again',
  labelNames: ['outcome', 'dry_run'] as const,
  registers: [workRegistry],
});

/** Rows of one file by outcome, as a feed run's summary counts them. */
export interface FeedRowCounts {
  alreadyProcessed: boolean;
  created: number;
  updated: number;
  deactivated: number;
  unchanged: number;
  skipped: number;
  failed: number;
}

const FEED_ROW_OUTCOMES = ['created', 'updated', 'deactivated', 'unchanged', 'skipped', 'failed'] as const;

/** Counts a finished user feed run and its files' rows. */
export function observeUserFeedRun(failed: boolean, dryRun: boolean, files: readonly FeedRowCounts[]): void {
  const dry_run = dryRun ? 'true' : 'false';
  userFeedRuns.inc({ outcome: failed ? 'failed' : 'succeeded', dry_run });
  for (const outcome of FEED_ROW_OUTCOMES) {
    let n = 0;
    for (const f of files) if (!f.alreadyProcessed) n += f[outcome];
    if (n > 0) userFeedRows.inc({ outcome, dry_run }, n);
  }
}
