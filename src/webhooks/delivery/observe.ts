// What an operator sees of each delivery attempt: the metrics, and one log line per failed attempt
// (warn while attempts remain, error when the invocation gives up). Lines name the tenant, subscription,
// invocation and receiver host; never the URL's path or query, the Secret, or the receiver's answer.
import type { Logger } from '../../platform/log.ts';
import { type DeliveryOutcome, statusClass, webhookAttemptDuration, webhookDeliveries } from '../../platform/metrics.ts';
import type { Settled } from './record.ts';

export function observeAttempt(log: Logger, s: Settled): void {
  if (s.outcome === null || s.status === 'Pending') return;
  const outcome: DeliveryOutcome = s.status === 'Succeeded' ? 'succeeded' : s.status === 'Retrying' ? 'retrying' : 'failed';
  const statusCode = s.outcome.statusCode;
  webhookDeliveries.inc({ outcome, status_class: statusClass(statusCode) });
  webhookAttemptDuration.observe({ outcome }, s.durationMs / 1000);
  if (outcome === 'succeeded') return;
  const d = s.delivery;
  const fields = {
    tenant: d.tenantId,
    subscription: d.subscriptionId,
    invocation: d.id,
    attempt: s.attempt,
    host: hostOf(d.url),
    statusCode,
    reason: s.outcome.error ?? `answered ${statusCode}`,
    durationMs: s.durationMs,
  };
  if (outcome === 'retrying')
    log.warn({ ...fields, nextAttemptOnUtc: s.nextAttemptOnUtc?.toISOString() }, 'webhook delivery attempt failed; it will be retried');
  else log.error(fields, s.outcome.refused ? 'webhook delivery refused; giving up' : 'webhook delivery failed; giving up (retry schedule exhausted)');
}

function hostOf(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
