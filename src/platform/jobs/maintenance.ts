// Housekeeping on a cron: expired refresh tokens and idempotency records older than a day, then the
// sweeps the surfaces above the platform hand in (event and webhook history retention), one after another.
import { sql } from 'kysely';
import type { DatabaseHandle } from '../db/database.ts';
import type { Jobs } from './jobs.ts';

/** A sweep of a surface's own: it bounds its own time and transactions (the job runs it as the owner). */
export type MaintenanceSweep = () => Promise<void>;

export function defineMaintenance(jobs: Jobs, db: DatabaseHandle, sweeps: MaintenanceSweep[] = []): void {
  jobs.define({
    name: 'platform-maintenance',
    cron: '*/15 * * * *',
    work: async () => {
      await db.asOwner(async (trx) => {
        await sql`delete from refresh_tokens where expires_on_utc < now() - interval '1 day' or used_on_utc < now() - interval '1 day'`.execute(trx);
        await sql`delete from idempotency_keys where created_on_utc < now() - interval '24 hours'`.execute(trx);
      });
      for (const sweep of sweeps) await sweep();
    },
  });
}
