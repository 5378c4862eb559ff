// Compile-time proof that the Database types check builder calls: each @ts-expect-error below must meet
// an error, so `npm run typecheck` fails if a misspelt table, column or checked value ever compiles again
// (say, an index signature crept back into the generated interface). Never run, only type-checked.
import type { Kysely } from 'kysely';
import type { Database } from './schema.ts';

export function misspeltNamesDoNotCompile(db: Kysely<Database>): void {
  // @ts-expect-error there is no table "user"
  db.selectFrom('user');
  // @ts-expect-error users has no column "nmae"
  db.selectFrom('users').select('nmae');
  // @ts-expect-error users has no column "user_nmae"
  db.selectFrom('users').select('id').where('user_nmae', '=', 'x');
  // @ts-expect-error tenants has no column "nmae"
  db.insertInto('tenants').values({ nmae: 'Acme' });
  // @ts-expect-error user_name is a column of users, not of tenants
  db.updateTable('tenants').set({ user_name: 'x' });
  // @ts-expect-error the join names a column webhook_subscriptions does not have
  db.selectFrom('webhook_invocations').innerJoin('webhook_subscriptions', 'webhook_subscriptions.subscriptionid', 'webhook_invocations.subscription_id');
  // @ts-expect-error "cron" is not in the CHECK (trigger in ('schedule', 'manual')) list
  db.insertInto('extraction_schedule_runs').values({ tenant_id: 't', schedule_id: 's', trigger: 'cron' });

  // The same calls spelt right compile.
  db.selectFrom('users').select(['id', 'name']).where('user_name', '=', 'x');
  db.insertInto('tenants').values({ name: 'Acme', slug: 'acme' });
  db.insertInto('extraction_schedule_runs').values({ tenant_id: 't', schedule_id: 's', trigger: 'manual' });
}
