// Housekeeping on a cron: expired refresh tokens and idempotency records older than a day.
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/database.ts';
import type { Jobs } from './jobs.ts';

export function defineMaintenance(jobs: Jobs, db: DatabaseHandle): void {
  jobs.define({
    name: 'platform-maintenance',
    cron: '*/15 * * * *',
    work: async () => {
      await db.asOwner(async (trx) => {
        await sql`delete from refresh_tokens where expires_on_utc < now() - interval '1 day' or used_on_utc < now() - interval '1 day'`.execute(trx);
        await sql`delete from idempotency_keys where created_on_utc < now() - interval '24 hours'`.execute(trx);
      });
    },
  });
}
