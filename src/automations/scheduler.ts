// When a scheduled automation fires: every `unit` `periodicity` from `startDateUtc` (the platform's form),
// or at the times of a five-field UTC cron (the scheduled-extraction cron module).
import { nextRuns } from '../platform/cron.ts';
import type { Scheduler } from './definition.ts';

const PERIOD_MS: Record<string, number> = { Minutes: 60_000, Hours: 3_600_000, Days: 86_400_000, Weeks: 7 * 86_400_000 };

/** The first fire time strictly after `after`; null when the scheduler is off. `anchor` stands in for a missing startDateUtc. */
export function nextFireTime(s: Scheduler | null, after: Date, anchor: Date): Date | null {
  if (!s || s.isActive === false) return null;
  if (s.cronExpression) return nextRuns(s.cronExpression, after, 1)[0] ?? null;
  if (!s.unit || !s.periodicity) return null;
  const start = s.startDateUtc ? new Date(s.startDateUtc) : anchor;
  if (start > after) return start;
  if (s.periodicity === 'Months') {
    // Calendar months from the start (the 31st falls on each month's last day when shorter).
    const months = (after.getUTCFullYear() - start.getUTCFullYear()) * 12 + after.getUTCMonth() - start.getUTCMonth();
    for (let k = Math.max(0, Math.floor(months / s.unit) - 1); ; k++) {
      const t = addMonths(start, k * s.unit);
      if (t > after) return t;
    }
  }
  const period = PERIOD_MS[s.periodicity] * s.unit;
  const k = Math.floor((after.getTime() - start.getTime()) / period) + 1;
  return new Date(start.getTime() + k * period);
}

function addMonths(d: Date, n: number): Date {
  const y = d.getUTCFullYear();
  const m = d.getUTCMonth() + n;
  const last = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return new Date(Date.UTC(y, m, Math.min(d.getUTCDate(), last), d.getUTCHours(), d.getUTCMinutes(), d.getUTCSeconds(), d.getUTCMilliseconds()));
}
